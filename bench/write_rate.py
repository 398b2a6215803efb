"""The write-ahead's load on one PostgreSQL: its CPU an action, and the actions it takes a core.

On a database of its own (``STUD_TEST_POSTGRES_URL``'s server, made, migrated and dropped
here), ``--tables`` tables (the most of the steps) are made with eight players between them,
and each step splits its first N tables over ``--nodes`` processes. Each process is a node:
its own engine and one :class:`~server.store.write_ahead.WriteAhead`, its tables claimed
(``claim_table``: a fence of its own each) and a hand started at each through
:class:`~server.store.table_store.DatabaseTableStore`; then every table writes its actions
through ``store.record_action`` at ``--rate`` actions a second (the gaps drawn from 0.5 to 1.5
times the mean; 0: one after another, as fast as the write-ahead answers). The node writes
what all its tables have waiting in one transaction (group commit), so the groups' size
follows the load.

After ``--warmup`` seconds it measures ``--seconds``: the actions written a second, the
groups' size (the write-ahead's own counts; and the actions per transaction by the database's
``pg_stat_database.xact_commit``), each ``record_action``'s latency (p50, p99), the CPU of
the PostgreSQL server (utime + stime of every ``postgres`` process in ``/proc``, less the
backends of other databases) and of the nodes, and the WAL written (the whole server's).
It prints PostgreSQL's CPU an action, the actions a second one PostgreSQL core takes at
that rate, and the cores 100,000 tables at 0.9 actions a second would take.

    python bench/write_rate.py [--tables 500,1000,2000] [--nodes 2] [--rate 1]
                               [--seconds 30] [--warmup 10]
    python bench/write_rate.py --tables 200 --rate 0      # as fast as it can
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import asyncpg
import uvloop

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "server"), str(ROOT / "tests" / "cluster")]

from play import seed  # noqa: E402

from server.db import migrate  # noqa: E402
from server.db.session import make_engine, make_sessionmaker  # noqa: E402
from server.store import tables  # noqa: E402
from server.store.deck_seal import DeckSeal  # noqa: E402
from server.store.fencing import claim_table  # noqa: E402
from server.store.records import LiveHandState  # noqa: E402
from server.store.table_store import DatabaseTableStore  # noqa: E402
from server.store.write_ahead import WriteAhead  # noqa: E402

ACTION = {"kind": "bet", "player": "p0", "amount": 20, "action_id": "a1b2c3d4"}
PLAYERS = [f"p{n}" for n in range(8)]
TICKS = os.sysconf("SC_CLK_TCK")
TABLES_AT_SCALE, RATE_AT_SCALE = 100_000, 0.9  # the cardroom the figures are for


@dataclass
class Step:
    """One run's settings, as every node is told them."""

    url: str
    hand: int  # the hand number started at every table (a new one each step)
    rate: float
    start: float  # time.monotonic() at which the tables begin
    measure_from: float
    measure_to: float


@dataclass
class NodeResult:
    written: int  # actions written in the window (the write-ahead's count)
    groups: int  # transactions the write-ahead committed in the window
    latencies: list[int]  # ns, of the records begun in the window
    refused: int  # errors of record_action (none expected)


# ---------------------------------------------------------------------- a node


def node(table_ids: list[int], step: Step, pipe: Connection) -> None:
    """A node's process: claims its tables, starts a hand at each, says "ready"; then, told
    to go, writes their actions until the window's end, sends its :class:`NodeResult` and
    closes its connections when told."""
    uvloop.run(_node(table_ids, step, pipe))


async def _node(table_ids: list[int], step: Step, pipe: Connection) -> None:
    engine = make_engine(step.url, pool_size=4, pool_overflow=4)
    sessionmaker = make_sessionmaker(engine)
    write_ahead = WriteAhead(engine)
    seal = DeckSeal.generate()
    async with sessionmaker() as session, session.begin():
        fences = {t: await claim_table(session, table_id=t) for t in table_ids}
    stores = {
        t: DatabaseTableStore(sessionmaker, seal=seal, fence=fence, write_ahead=write_ahead)
        for t, fence in fences.items()
    }
    deck = {"order": ["As", "Kd", "Qh", "Jc"], "seed": None}
    players = [(seat, player, 500) for seat, player in enumerate(PLAYERS)]
    starting = asyncio.Semaphore(4)

    async def start(table_id: int) -> None:
        async with starting:
            live = LiveHandState(table_id, step.hand, deck, players)
            await stores[table_id].start_hand(live)

    await asyncio.gather(*(start(t) for t in table_ids))
    pipe.send("ready")
    loop = asyncio.get_running_loop()
    step = await loop.run_in_executor(None, pipe.recv)  # "go": the step with its times

    latencies: list[int] = []
    refused = 0
    counts: dict[str, tuple[int, int]] = {}

    async def table(table_id: int) -> None:
        nonlocal refused
        store = stores[table_id]
        period = 1 / step.rate if step.rate else 0.0
        due = step.start + random.random() * period
        position = 0
        while True:
            if period:
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                due += period * random.uniform(0.5, 1.5)
            now = time.monotonic()
            if now >= step.measure_to:
                return
            began = time.perf_counter_ns()
            try:
                await store.record_action(table_id, step.hand, position, ACTION)
            except Exception:  # noqa: BLE001 - counted, reported
                refused += 1
            position += 1
            if step.measure_from <= now:
                latencies.append(time.perf_counter_ns() - began)
            if period:
                due = max(due, time.monotonic() - period)  # behind: no burst to catch up
            else:
                await asyncio.sleep(0)

    async def sample(name: str, at: float) -> None:
        await asyncio.sleep(max(0.0, at - time.monotonic()))
        counts[name] = (write_ahead.written, write_ahead.groups)

    await asyncio.sleep(max(0.0, step.start - time.monotonic()))
    await asyncio.gather(
        sample("from", step.measure_from),
        sample("to", step.measure_to),
        *(table(t) for t in table_ids),
    )
    written = counts["to"][0] - counts["from"][0]
    groups = counts["to"][1] - counts["from"][1]
    pipe.send(NodeResult(written, groups, latencies, refused))
    # The connections (their backends' CPU) stay until the main process has read them.
    await loop.run_in_executor(None, pipe.recv)
    await write_ahead.close()
    await engine.dispose()


# ---------------------------------------------------------------------- measuring


def cpu_ticks(pid: int) -> int | None:
    """utime + stime of a process, in clock ticks (None: gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of stat(5)


def postgres_pids() -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as f:
                    if f.read().strip() == "postgres":
                        pids.append(int(entry))
            except OSError:
                continue
    return pids


@dataclass
class Sample:
    """What the main process reads at each end of the window."""

    postgres: dict[int, int]  # pid -> ticks, every postgres process but other databases'
    backends: dict[int, int]  # those serving this database's connections
    everything: int  # ticks of every postgres process
    nodes: dict[int, int]
    commits: int  # pg_stat_database.xact_commit of the database
    wal: int  # pg_current_wal_lsn, bytes


async def sample(connection: asyncpg.Connection, database: str, nodes: list[int]) -> Sample:
    rows = await connection.fetch("SELECT pid, datname, backend_type FROM pg_stat_activity")
    others = {r["pid"] for r in rows if r["datname"] is not None and r["datname"] != database}
    backends = {
        r["pid"] for r in rows if r["datname"] == database and r["backend_type"] == "client backend"
    }
    ticks = {pid: cpu_ticks(pid) for pid in postgres_pids()}
    known = {pid: t for pid, t in ticks.items() if t is not None}
    commits = await connection.fetchval(
        "SELECT xact_commit FROM pg_stat_database WHERE datname = $1", database
    )
    wal = await connection.fetchval("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")
    node_ticks = {pid: cpu_ticks(pid) or 0 for pid in nodes}
    return Sample(
        {p: t for p, t in known.items() if p not in others},
        {p: t for p, t in known.items() if p in backends},
        sum(known.values()),
        node_ticks,
        int(commits),
        int(wal),
    )


def spent(before: dict[int, int], after: dict[int, int]) -> float:
    """CPU seconds between two samples (a process new since the first: all of it)."""
    return sum(t - before.get(pid, 0) for pid, t in after.items()) / TICKS


# ---------------------------------------------------------------------- a step


async def run_step(
    url: str,
    dsn: str,
    database: str,
    table_ids: list[int],
    nodes: int,
    hand: int,
    args: argparse.Namespace,
) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    step = Step(url, hand, args.rate, 0.0, 0.0, 0.0)
    shares = [table_ids[n::nodes] for n in range(nodes)]
    pipes, processes = [], []
    loop = asyncio.get_running_loop()
    setup = time.monotonic()
    for share in shares:
        mine, theirs = multiprocessing.Pipe()
        process = context.Process(target=node, args=(share, step, theirs))
        process.start()
        pipes.append(mine)
        processes.append(process)
    for pipe in pipes:
        assert await loop.run_in_executor(None, pipe.recv) == "ready"
    setup = time.monotonic() - setup
    start = time.monotonic() + 0.2
    go = Step(url, hand, args.rate, start, start + args.warmup, start + args.warmup + args.seconds)
    for pipe in pipes:
        pipe.send(go)
    connection = await asyncpg.connect(dsn)
    pids = [p.pid for p in processes if p.pid is not None]
    await asyncio.sleep(max(0.0, go.measure_from - time.monotonic()))
    first = await sample(connection, database, pids)
    load = os.getloadavg()
    await asyncio.sleep(max(0.0, go.measure_to - time.monotonic()))
    last = await sample(connection, database, pids)
    load_end = os.getloadavg()
    await connection.close()
    results: list[NodeResult] = [await loop.run_in_executor(None, p.recv) for p in pipes]
    for pipe in pipes:
        pipe.send("close")
    for process in processes:
        process.join(30)
    seconds = args.seconds
    written = sum(r.written for r in results)
    groups = sum(r.groups for r in results)
    latencies = sorted(x for r in results for x in r.latencies)
    cuts = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [0.0] * 99
    postgres = spent(first.postgres, last.postgres)
    return {
        "tables": len(table_ids),
        "nodes": nodes,
        "setup": setup,
        "actions_s": written / seconds,
        "group": written / groups if groups else 0.0,
        "per_xact": written / max(1, last.commits - first.commits),
        "p50_ms": cuts[49] / 1e6,
        "p99_ms": cuts[98] / 1e6,
        "pg_cores": postgres / seconds,
        "backends": spent(first.backends, last.backends) / postgres if postgres else 0.0,
        "pg_all_cores": (last.everything - first.everything) / TICKS / seconds,
        "pg_us": 1e6 * postgres / written if written else 0.0,
        "nodes_us": 1e6 * spent(first.nodes, last.nodes) / written if written else 0.0,
        "wal_bytes": (last.wal - first.wal) / written if written else 0.0,
        "refused": sum(r.refused for r in results),
        "load": (load[0], load_end[0]),
    }


async def make_tables(url: str, count: int) -> list[int]:
    """Eight players and ``count`` tables (each as ``tables.create`` makes one: the row and
    its chip pool); their ids."""
    engine = make_engine(url)
    await migrate.upgrade(engine)
    sessionmaker = make_sessionmaker(engine)
    ids = [await seed(sessionmaker, PLAYERS, name="rate-0")]
    async with sessionmaker() as session:
        for n in range(1, count):
            record = await tables.create(
                session, name=f"rate-{n}", config={}, min_buy_in=20, max_buy_in=500
            )
            ids.append(record.id)
            if n % 500 == 0:
                await session.commit()
        await session.commit()
    await engine.dispose()
    return ids


async def run(url: str, dsn: str, database: str, args: argparse.Namespace) -> None:
    steps = [int(n) for n in args.tables.split(",")]
    made = time.monotonic()
    table_ids = await make_tables(url, max(steps))
    made = time.monotonic() - made
    rate = f"{args.rate:g} a second a table" if args.rate else "as fast as it can"
    print(
        f"PostgreSQL write-ahead, {args.nodes} nodes, {rate}, {args.seconds:g} s measured after "
        f"{args.warmup:g} s; {max(steps)} tables made in {made:.1f} s; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start"
    )
    rows = []
    for hand, count in enumerate(steps, start=1):
        row = await run_step(url, dsn, database, table_ids[:count], args.nodes, hand, args)
        rows.append(row)
        print(
            f"  {count} tables: set up in {row['setup']:.1f} s, load average "
            f"{row['load'][0]:.2f} -> {row['load'][1]:.2f}, {row['refused']} refused",
            flush=True,
        )
    print(
        "| tables | nodes | actions/s | actions a group | actions a commit (pg_stat) "
        "| record p50 | record p99 | PostgreSQL cores (all its processes) "
        "| **PostgreSQL CPU an action** | of which backends | actions/s a PostgreSQL core "
        "| nodes' CPU an action "
        "| WAL an action | load average |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        per_core = 1e6 / row["pg_us"] if row["pg_us"] else 0.0
        print(
            f"| {row['tables']:,} | {row['nodes']} | {row['actions_s']:,.0f} "
            f"| {row['group']:.2f} | {row['per_xact']:.2f} "
            f"| {row['p50_ms']:.2f} ms | {row['p99_ms']:.2f} ms "
            f"| {row['pg_cores']:.2f} ({row['pg_all_cores']:.2f}) "
            f"| **{row['pg_us']:.0f} µs** | {row['backends']:.0%} | {per_core:,.0f} "
            f"| {row['nodes_us']:.0f} µs "
            f"| {row['wal_bytes']:.0f} B | {row['load'][0]:.2f}-{row['load'][1]:.2f} |"
        )
    at_scale = TABLES_AT_SCALE * RATE_AT_SCALE
    for row in rows:
        print(
            f"{row['tables']:,} tables: {TABLES_AT_SCALE:,} tables at {RATE_AT_SCALE} actions a "
            f"second ({at_scale:,.0f} actions/s) would take {at_scale * row['pg_us'] / 1e6:.1f} "
            f"PostgreSQL cores at this CPU an action"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tables", default="500,1000,2000", help="steps, comma-separated")
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--rate", type=float, default=1.0, help="actions a second a table")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=10.0)
    args = parser.parse_args()
    from cluster_harness import PostgresDatabase

    database = PostgresDatabase()
    database.create()
    try:
        dsn = database.url().replace("postgresql+asyncpg", "postgresql")
        uvloop.run(run(database.url(), dsn, database.name, args))
    finally:
        database.drop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
