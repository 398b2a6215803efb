"""Players at one table, as the demo's house bots play (server.demo: the public client, the
``rules`` strategy), until killed: ``python table_players.py URL TABLE_ID NAME...``, the
accounts' password in ``STUD_PLAYERS_PASSWORD``. A process of its own, so none of its
sockets outlive it in the tests' process."""

from __future__ import annotations

import asyncio
import os
import sys

from server.demo import HouseBot, run_house_bots


def main(url: str, table_id: str, *names: str) -> None:
    password = os.environ["STUD_PLAYERS_PASSWORD"]
    bots = [HouseBot(name, password, int(table_id), "rules") for name in names]
    asyncio.run(run_house_bots(url, bots, 0.05))


if __name__ == "__main__":
    main(*sys.argv[1:])
