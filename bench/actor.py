"""How long a table actor takes from a command entering it to its events leaving on the bus.

An 8-seat seven-card stud table on the embedded default (the in-memory bus, the SQLite store
of ``server.store.table_store``, fenced as a node runs it), eight players acting at random with
legal actions. For each ``act`` command the clock starts as the command is put in the
actor's inbox (``TableActor.submit``) and stops when the bus delivers the last event the
command caused (the dealing of the next hand, which starts at once, is not counted). Every
action is written to the database before its events go out, so the figure includes that
write. Prints the median and the 99th percentile, and the same for the first event out.
``--store postgresql`` runs the store on a scratch database of the PostgreSQL at
``--postgres-url`` (made and dropped by the run); ``--store memory`` has no database at all.

    python bench/actor.py [--hands 300] [--store sqlite|postgresql|memory] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import platform
import random
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.play import random_action  # noqa: E402
from engine.variants import TableConfig  # noqa: E402
from server.accounts import registry  # noqa: E402
from server.accounts.passwords import Passwords  # noqa: E402
from server.bus.memory import MemoryBus, table_channel  # noqa: E402
from server.db import migrate  # noqa: E402
from server.db.models import Role  # noqa: E402
from server.db.session import make_engine, make_sessionmaker  # noqa: E402
from server.store import tables
from server.store.deck_seal import DeckSeal  # noqa: E402
from server.store.fencing import claim_table  # noqa: E402
from server.store.records import FinishedHand, LiveHandState
from server.store.table_store import DatabaseTableStore  # noqa: E402
from server.table.actor import TableActor  # noqa: E402
from server.table.commands import Act, Sit  # noqa: E402
from server.table.ports import TableSettings, TableStore  # noqa: E402

SEATS = 8
BUY_IN = 5_000


class StampingBus(MemoryBus):
    """The in-memory bus, noting when each message is delivered (and of what kind)."""

    def __init__(self) -> None:
        super().__init__()
        self.stamps: list[tuple[int, str]] = []

    def publish_now(self, channel: str, message: dict[str, Any]) -> None:
        super().publish_now(channel, message)
        self.stamps.append((time.perf_counter_ns(), str(message.get("kind"))))


class MemoryStore:
    """No database at all: to see what the store costs."""

    async def buy_in(self, table_id: int, player: str, amount: int, *, seat: int) -> None:
        return None

    async def cash_out(self, table_id: int, player: str, amount: int) -> None:
        return None

    async def save_hand(self, hand: FinishedHand) -> None:
        return None

    async def start_hand(self, live: LiveHandState) -> None:
        return None

    async def record_action(
        self, table_id: int, number: int, position: int, action: dict[str, Any]
    ) -> None:
        return None


async def database_store(url: str) -> tuple[TableStore, int, AsyncEngine]:
    engine = make_engine(url)
    await migrate.upgrade(engine)
    sessionmaker = make_sessionmaker(engine)
    passwords = Passwords(time_cost=1, memory_kib=8, parallelism=1)
    async with sessionmaker() as session:
        for n in range(SEATS):
            await registry.register(
                session,
                passwords=passwords,
                username=f"player{n}",
                password="x" * 8,
                role=Role.PLAYER,
                bankroll=10 * BUY_IN,
            )
        record = await tables.create(
            session, name="bench", config={}, seats=SEATS, min_buy_in=100, max_buy_in=BUY_IN
        )
        await session.commit()
    async with sessionmaker() as session, session.begin():
        fence = await claim_table(session, table_id=record.id)
    store = DatabaseTableStore(sessionmaker, seal=DeckSeal.generate(), fence=fence)
    return store, record.id, engine


@contextlib.asynccontextmanager
async def scratch_postgres(url: str) -> AsyncIterator[str]:
    """A database of the run's own on that server, dropped at the end."""
    base = make_url(url)
    name = f"stud_bench_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(
        user=base.username,
        password=base.password,
        host=base.host,
        port=base.port,
        database=base.database,
    )
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield base.set(database=name).render_as_string(hide_password=False)
        finally:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


def percentile(values: list[int], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] / 1000


async def run(hands: int, store_kind: str, seed: int, postgres_url: str) -> None:
    async with contextlib.AsyncExitStack() as stack:
        engine: AsyncEngine | None = None
        if store_kind == "sqlite":
            directory = stack.enter_context(tempfile.TemporaryDirectory())
            url = f"sqlite+aiosqlite:///{Path(directory) / 'bench.db'}"
            store, table_id, engine = await database_store(url)
        elif store_kind == "postgresql":
            url = await stack.enter_async_context(scratch_postgres(postgres_url))
            store, table_id, engine = await database_store(url)
        else:
            store, table_id = MemoryStore(), 1
        bus = StampingBus()
        bus.subscribe(table_channel(table_id), size=1_000_000)  # one watcher, never full
        rng = random.Random(seed)
        actor = TableActor(
            table_id,
            TableConfig(),
            bus=bus,
            store=store,
            settings=TableSettings(
                seat_count=SEATS,
                min_buy_in=100,
                max_buy_in=BUY_IN,
                action_clock=3600.0,
                pause_between_hands=0.0,
            ),
            rng_factory=lambda: random.Random(rng.random()),
        )
        actor.start()
        for n in range(SEATS):
            await actor.submit(Sit(player=f"player{n}", buy_in=BUY_IN, seat=n))
        last: list[int] = []
        first: list[int] = []
        players = 0
        started = time.perf_counter()
        start_number = actor.hand_number
        while actor.hand_number - start_number <= hands:
            hand = actor.table.hand
            if hand is None or hand.is_over():
                await asyncio.sleep(0)
                continue
            if not hand.actions:
                players += hand.n
            action = random_action(hand, rng)
            occupant = actor.table.seats[action.seat]
            assert occupant is not None
            command = Act(
                player=occupant.player,
                action_id=f"a{len(last)}",
                kind=action.kind,
                amount=action.amount,
            )
            mark = len(bus.stamps)
            began = time.perf_counter_ns()
            await actor.submit(command)
            caused = []
            for stamp, kind in bus.stamps[mark:]:
                if kind == "hand_number":
                    break
                caused.append(stamp)
            last.append(caused[-1] - began)
            first.append(caused[0] - began)
        elapsed = time.perf_counter() - started
        await actor.stop()
        if engine is not None:
            await engine.dispose()
    played = actor.hand_number - start_number - 1
    print(
        f"actor latency, {SEATS}-seat seven-card stud, store={store_kind}, "
        f"Python {platform.python_version()}"
    )
    print(
        f"  {played} hands, {len(last)} act commands, {players / max(1, played + 1):.1f} "
        f"players a hand, {len(last) / elapsed:,.0f} commands/s driven"
    )
    print(
        f"  command in -> last event out: median {percentile(last, 0.5):.0f} us, "
        f"p99 {percentile(last, 0.99):.0f} us, mean {statistics.fmean(last) / 1000:.0f} us"
    )
    print(
        f"  command in -> first event out: median {percentile(first, 0.5):.0f} us, "
        f"p99 {percentile(first, 0.99):.0f} us"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--store", choices=("sqlite", "postgresql", "memory"), default="sqlite")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--postgres-url",
        default="postgresql+asyncpg://postgres@127.0.0.1:5432/postgres",
        help="a database on the PostgreSQL server to use; the run makes its own beside it",
    )
    args = parser.parse_args()
    asyncio.run(run(args.hands, args.store, args.seed, args.postgres_url))


if __name__ == "__main__":
    main()
