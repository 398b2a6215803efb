"""What a hand's two writes cost the node's CPU: its start (deck and players written before
the deal) and its record (the hand, each player's part, the seats' chips, the books checked).

A table writes both once a hand, besides each action (``bench/write_floor.py``). On a
database of its own, one table of eight seated players (made as ``bench/actor.py`` makes
its store), this writes ``--hands`` hands one after another through
:class:`server.store.table_store.DatabaseTableStore` and prints the CPU of this process (every
thread) per hand for each write, and, for scale, what a fenced transaction with nothing in
it and one statement on its own cost through the same engine. ``--backend postgresql``
runs on a scratch database of ``--postgres-url``'s server (made and dropped by the run).

    python bench/hand_writes.py [--backend sqlite|postgresql] [--hands 300]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import resource
import sys
import tempfile
from pathlib import Path

import uvloop
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actor import BUY_IN, SEATS, database_store, scratch_postgres  # noqa: E402

from server.store.records import FinishedHand, LiveHandState  # noqa: E402
from server.store.table_store import DatabaseTableStore  # noqa: E402

CARDS = [rank + suit for rank in "23456789TJQKA" for suit in "cdhs"]
EVENTS_A_HAND = 60  # about what a hand of eight logs


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def play(store: DatabaseTableStore, table_id: int, hands: int) -> tuple[float, float]:
    """CPU seconds per hand of the start and of the record."""
    stacks = {f"player{seat}": BUY_IN for seat in range(SEATS)}
    for seat in range(SEATS):
        await store.buy_in(table_id, f"player{seat}", BUY_IN, seat=seat)
    events = [
        {"kind": "action", "data": {"seat": n % SEATS, "action": "call", "amount": 20}}
        for n in range(EVENTS_A_HAND)
    ]
    phh = "variant = 'F7S'\nactions = [" + ", ".join(["'p1 cc'"] * EVENTS_A_HAND) + "]\n"
    config = {"variant": "seven_card_stud"}
    rng = random.Random(1)
    starting_cpu = recording_cpu = 0.0
    for number in range(1, hands + 1):
        live = LiveHandState(
            table_id=table_id,
            number=number,
            deck={"order": rng.sample(CARDS, len(CARDS)), "seed": rng.randrange(2**31)},
            players=[(seat, f"player{seat}", stacks[f"player{seat}"]) for seat in range(SEATS)],
            config=config,
        )
        began = cpu()
        await store.start_hand(live)
        starting_cpu += cpu() - began
        starting = dict(stacks)
        winner = f"player{rng.randrange(SEATS)}"
        for player in stacks:  # every other player's ante to the winner
            if player != winner:
                stacks[player] -= 5
                stacks[winner] += 5
        hand = FinishedHand(
            table_id=table_id,
            number=number,
            events=events,
            result={"winners": [winner]},
            players={seat: f"player{seat}" for seat in range(SEATS)},
            starting=starting,
            stacks=dict(stacks),
            phh=phh,
            config=config,
        )
        began = cpu()
        await store.save_hand(hand)
        recording_cpu += cpu() - began
    return starting_cpu / hands, recording_cpu / hands


async def transaction_costs(store: DatabaseTableStore, table_id: int) -> tuple[float, float]:
    """CPU seconds of a fenced write with nothing in it, and of one more statement in it."""
    rounds = 300
    began = cpu()
    for _ in range(rounds):
        async with store._write(table_id):
            pass  # the fence's check and the commit, and nothing else
    empty = (cpu() - began) / rounds
    began = cpu()
    for _ in range(rounds):
        async with store._write(table_id) as session:
            await session.execute(text("SELECT 1"))
    return empty, (cpu() - began) / rounds - empty


async def run(backend: str, hands: int, postgres_url: str) -> None:
    async with contextlib.AsyncExitStack() as stack:
        if backend == "postgresql":
            url = await stack.enter_async_context(scratch_postgres(postgres_url))
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory())
            url = f"sqlite+aiosqlite:///{folder}/hands.db"
        store, table_id, engine = await database_store(url)
        assert isinstance(store, DatabaseTableStore)
        try:
            start, record = await play(store, table_id, hands)
            empty, statement = await transaction_costs(store, table_id)
        finally:
            await store.write_ahead.close()
            await engine.dispose()
    print(f"{backend}: {hands} hands of {SEATS}; CPU of this process (every thread)")
    print(f"  start of a hand:   {start * 1000:5.2f} ms")
    print(f"  record of a hand:  {record * 1000:5.2f} ms")
    print(f"  a fenced write with nothing in it: {empty * 1000:5.2f} ms")
    print(f"  one statement more in it:          {statement * 1000:5.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get(
            "STUD_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
        ),
    )
    args = parser.parse_args()
    uvloop.run(run(args.backend, args.hands, args.postgres_url))


if __name__ == "__main__":
    main()
