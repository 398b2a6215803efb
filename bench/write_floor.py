"""The floor of an action's write: what writing one action ahead costs the node's CPU.

Every action is in the database before its events go out (``server.store.write_ahead``). On a
database of its own, one table with a hand in progress, this writes ``--actions`` actions
one after another (a group of one each, as on a quiet node) two ways and prints the CPU of
this process (every thread) and the time, per action:

- ``write-ahead``: :meth:`server.store.write_ahead.WriteAhead.record`, as a table does;
- ``driver``: the least the driver can do for the same transaction (the fence check,
  the insert, the commit), its SQL written out: ``sqlite3`` on SQLite, ``asyncpg`` on
  PostgreSQL (``STUD_TEST_POSTGRES_URL``'s server, a database of its own, dropped after).

    python bench/write_floor.py [--backend sqlite|postgresql] [--actions 2000]
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import uvloop

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "server"), str(ROOT / "tests" / "cluster")]

from play import seed  # noqa: E402

from server.db import migrate  # noqa: E402
from server.db.session import make_engine, make_sessionmaker  # noqa: E402
from server.store.deck_seal import DeckSeal  # noqa: E402
from server.store.fencing import claim_table  # noqa: E402
from server.store.records import LiveHandState  # noqa: E402
from server.store.table_store import DatabaseTableStore  # noqa: E402
from server.store.write_ahead import WriteAhead  # noqa: E402

ACTION = {"kind": "bet", "player": "p0", "amount": 20, "action_id": "a1b2c3d4"}
INSERT = (
    "INSERT INTO live_actions (table_id, number, position, action, created_at) "
    "VALUES ({}) ON CONFLICT DO NOTHING"
)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def timed(name: str, count: int, write: Callable[[int], Awaitable[None]]) -> None:
    cpu, wall = cpu_seconds(), time.perf_counter()
    for position in range(count):
        await write(position)
    cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
    print(
        f"{name:>12}: {1e6 * cpu / count:7.1f} us CPU, {1e6 * wall / count:7.1f} us wall an action"
    )


async def run(url: str, count: int, driver: Callable[..., Awaitable[Any]]) -> None:
    engine = make_engine(url)
    await migrate.upgrade(engine)
    sessionmaker = make_sessionmaker(engine)
    write_ahead = WriteAhead(engine)
    table_id = await seed(sessionmaker, ["p0", "p1"], name="floor")
    async with sessionmaker() as session, session.begin():
        fence = await claim_table(session, table_id=table_id)
    store = DatabaseTableStore(
        sessionmaker, seal=DeckSeal.generate(), fence=fence, write_ahead=write_ahead
    )
    deck = {"order": ["As", "Kd"], "seed": None}
    await store.start_hand(LiveHandState(table_id, 1, deck, [(0, "p0", 100), (1, "p1", 100)]))

    async def through_write_ahead(position: int) -> None:
        await store.record_action(table_id, 1, position, ACTION)

    await timed("write-ahead", count, through_write_ahead)
    await write_ahead.close()
    await engine.dispose()
    await driver(table_id, fence, count)


async def sqlite_driver(path: str, table_id: int, fence: int, count: int) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    for pragma in ("foreign_keys=ON", "journal_mode=WAL", "synchronous=NORMAL"):
        connection.execute(f"PRAGMA {pragma}")
    insert = INSERT.format("?, ?, ?, ?, ?")

    async def write(position: int) -> None:
        connection.execute("BEGIN IMMEDIATE")
        held = connection.execute(
            "UPDATE tables SET fence = fence WHERE id = ? AND fence = ?", (table_id, fence)
        )
        assert held.rowcount == 1
        created = time.strftime("%Y-%m-%d %H:%M:%S.000000", time.gmtime())
        values = (table_id, 1, count + position, orjson.dumps(ACTION).decode(), created)
        connection.execute(insert, values)
        connection.execute("COMMIT")

    await timed("driver", count, write)
    connection.close()


async def postgresql_driver(url: str, table_id: int, fence: int, count: int) -> None:
    import asyncpg  # type: ignore[import-untyped]

    connection = await asyncpg.connect(url.replace("postgresql+asyncpg", "postgresql"))
    await connection.set_type_codec(
        "jsonb", encoder=lambda v: orjson.dumps(v).decode(), decoder=orjson.loads,
        schema="pg_catalog",
    )  # fmt: skip
    check = await connection.prepare(
        "UPDATE tables SET fence = fence WHERE id = $1 AND fence = $2 RETURNING id"
    )
    insert = await connection.prepare(INSERT.format("$1, $2, $3, $4, now()"))

    async def write(position: int) -> None:
        async with connection.transaction():
            await connection.execute("SET LOCAL synchronous_commit TO OFF")
            assert await check.fetchval(table_id, fence) == table_id
            await insert.fetch(table_id, 1, count + position, ACTION)

    await timed("driver", count, write)
    await connection.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--actions", type=int, default=2000)
    args = parser.parse_args()
    print(f"{args.backend}: {args.actions} actions, one a transaction; load average", end=" ")
    print(" ".join(f"{v:.2f}" for v in os.getloadavg()))
    if args.backend == "sqlite":
        with tempfile.TemporaryDirectory() as directory:
            path = f"{directory}/floor.db"

            async def driver(table_id: int, fence: int, count: int) -> None:
                await sqlite_driver(path, table_id, fence, count)

            uvloop.run(run(f"sqlite+aiosqlite:///{path}", args.actions, driver))
        return 0
    from cluster_harness import PostgresDatabase

    database = PostgresDatabase()
    database.create()
    try:

        async def pg_driver(table_id: int, fence: int, count: int) -> None:
            await postgresql_driver(database.url(), table_id, fence, count)

        uvloop.run(run(database.url(), args.actions, pg_driver))
    finally:
        database.drop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
