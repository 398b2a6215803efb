"""Players at one table, as the demo's house bots play (server.demo: the public client, the
``rules`` strategy), until killed: ``python table_players.py URL TABLE_ID NAME...``, the
accounts' password in ``STUD_PLAYERS_PASSWORD``. A process of its own, so none of its
sockets outlive it in the tests' process; ``playing_at`` runs it for a test."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from server.demo import HouseBot, run_house_bots


@contextmanager
def playing_at(url: str, table_id: int, names: Sequence[str], password: str) -> Iterator[None]:
    """The players ``names`` (registered with ``password``) playing at the table until the
    block ends."""
    playing = subprocess.Popen(
        [sys.executable, str(Path(__file__)), url, str(table_id), *names],
        env={**os.environ, "STUD_PLAYERS_PASSWORD": password},
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        playing.kill()
        playing.wait(15)


def main(url: str, table_id: str, *names: str) -> None:
    password = os.environ["STUD_PLAYERS_PASSWORD"]
    bots = [HouseBot(name, password, int(table_id), "rules") for name in names]
    asyncio.run(run_house_bots(url, bots, 0.05))


if __name__ == "__main__":
    main(*sys.argv[1:])
