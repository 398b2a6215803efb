"""The Redis server's CPU an event of the bus: what one Redis, and each master of a Cluster, take.

Each table's events are published once to Redis (channel ``table:{id}``) and each node
subscribed to the table receives them once (``server.bus.redis_bus``). Here ``--publishers``
processes, each a node running its share of ``--tables`` tables, publish table events as the
actor does (``publish_now``, an envelope of about 110 bytes) at ``--rate`` events a second in
all (0: as fast as they can); ``--nodes`` other processes, each a node subscribed to every
table's channel (``--watchers`` local subscriptions a table, one reader task each), receive
them. The publishers never run more than ``--window`` events ahead of the slowest node, so
no subscriber falls behind Redis's output buffer.

After ``--warmup`` seconds it measures ``--seconds``: the events published a second, the
events a pipeline (the bus's batches), the deliveries a node, and for each Redis server the
events it took (its ``PUBLISH`` or ``SPUBLISH`` calls, ``INFO commandstats``), its CPU
(utime + stime of the ``redis-server`` process in ``/proc``: every thread of it; Redis runs
commands on one), **its CPU an event**, and the events a second one core of it would take at
that CPU an event (one Redis is single-threaded: that is its bound). "other commands" counts
what else the server ran meanwhile (a shared Redis's other users, the bench's own INFO).

The Redis is the machine's (``--redis``, its pid from ``INFO server``; the channels under a
prefix of their own) or, with ``--cluster``, a Redis Cluster of three masters started here
(``tests/server/redis_cluster.py``), the tables spread over its slots by their hash tag,
each master measured and all of them together. Each of ``--nodes`` (subscribing nodes) and
``--rate`` (events a second) may list several steps; every pair is run.

    python bench/bus_rate.py [--redis redis://127.0.0.1:6379/0 | --cluster]
                             [--tables 1000] [--nodes 1,2] [--publishers 2]
                             [--rate 10000,0] [--seconds 10] [--warmup 3]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import multiprocessing
import os
import secrets
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.sharedctypes import SynchronizedArray
from pathlib import Path
from typing import Any

import redis
import uvloop

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "tests" / "server")]

from bus import event  # noqa: E402  (a table event as the actor publishes it)
from redis_cluster import LocalRedisCluster  # noqa: E402

from server.bus.memory import Subscription, table_channel  # noqa: E402
from server.bus.redis_bus import RedisBus  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
TABLES_AT_SCALE, RATE_AT_SCALE = 100_000, 0.9  # the cardroom the figures are for


@dataclass
class Step:
    """What every process of a run is told: the bus, the pace and the window."""

    url: str
    tables: int
    watchers: int
    rate: float  # events a second, all publishers together (0: as fast as they can)
    publishers: int
    window: int
    start: float = 0.0  # time.monotonic()
    measure_from: float = 0.0
    measure_to: float = 0.0


async def until(at: float) -> None:
    await asyncio.sleep(max(0.0, at - time.monotonic()))


# ---------------------------------------------------------------------- the processes


def subscriber(index: int, step: Step, delivered: SynchronizedArray[int], pipe: Connection) -> None:
    """A node subscribed to every table: says "ready", told the times, counts deliveries
    (into ``delivered[index]`` as they come); sends (in the window, dropped, reconnects)."""

    async def main() -> None:
        bus = RedisBus(step.url)
        counts = delivered.get_obj()  # type: ignore[attr-defined]

        async def read(subscription: Subscription) -> None:
            async for _ in subscription:
                counts[index] += 1

        subscriptions = [
            bus.subscribe(table_channel(t), size=100_000)
            for t in range(step.tables)
            for _ in range(step.watchers)
        ]
        readers = [asyncio.create_task(read(s)) for s in subscriptions]
        await bus.wait_ready(30)
        pipe.send("ready")
        timed: Step = await asyncio.get_running_loop().run_in_executor(None, pipe.recv)
        await until(timed.measure_from)
        first = counts[index]
        await until(timed.measure_to)
        last = counts[index]
        await asyncio.sleep(0.5)
        pipe.send((last - first, sum(s.dropped for s in subscriptions), bus.reconnects))
        for subscription in subscriptions:
            subscription.close()
        await asyncio.gather(*readers)
        await bus.close()

    uvloop.run(main())


def publisher(
    index: int,
    step: Step,
    published: SynchronizedArray[int],
    delivered: SynchronizedArray[int],
    pipe: Connection,
) -> None:
    """A node running tables ``index``, ``index + publishers``, ...: publishes their events
    from the start to the window's end; sends (events, pipelines) in the window, and lost."""
    logging.basicConfig(format=f"%(asctime)s publisher {index}: %(message)s")

    async def main() -> None:
        bus = RedisBus(step.url)
        await bus.wait_ready(30)
        pipe.send("ready")
        timed: Step = await asyncio.get_running_loop().run_in_executor(None, pipe.recv)
        mine = list(range(index, timed.tables, timed.publishers))
        sent = published.get_obj()  # type: ignore[attr-defined]
        heard = delivered.get_obj()  # type: ignore[attr-defined]
        fanout = timed.watchers
        rate = timed.rate / timed.publishers
        samples: dict[str, tuple[int, int]] = {}

        async def sample(name: str, at: float) -> None:
            await until(at)
            samples[name] = (bus.published, bus.batches)

        async def publish() -> None:
            await until(timed.start)
            count = 0
            burst = max(1, timed.window // (4 * timed.publishers))
            while (now := time.monotonic()) < timed.measure_to:
                due = int((now - timed.start) * rate) if rate else count + burst
                # Never more than the window ahead of the slowest node.
                ahead = sum(sent) - min(heard) // fanout
                due = min(due, count + max(0, timed.window - ahead))
                while count < due:
                    table = mine[count % len(mine)]
                    bus.publish_now(table_channel(table), event(table, count))
                    count += 1
                    sent[index] += 1
                await asyncio.sleep(0.0005)

        await asyncio.gather(
            sample("from", timed.measure_from), sample("to", timed.measure_to), publish()
        )
        await asyncio.sleep(0.5)
        events = samples["to"][0] - samples["from"][0]
        pipe.send((events, samples["to"][1] - samples["from"][1], bus.lost))
        await bus.close()

    uvloop.run(main())


# ---------------------------------------------------------------------- the servers


@dataclass
class Server:
    name: str
    pid: int
    client: redis.Redis


@dataclass
class Reading:
    ticks: int
    publishes: int
    commands: int


def cpu_ticks(pid: int) -> int:
    """utime + stime of a process (every thread), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of stat(5)


def read(server: Server) -> Reading:
    stats = server.client.info("commandstats")
    publishes = sum(
        stats.get(f"cmdstat_{verb}", {}).get("calls", 0) for verb in ("publish", "spublish")
    )
    commands = int(server.client.info("stats")["total_commands_processed"])
    return Reading(cpu_ticks(server.pid), publishes, commands)


# ---------------------------------------------------------------------- a step


async def run_step(
    servers: list[Server], step: Step, nodes: int, warmup: float, seconds: float
) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    published = context.Array("q", step.publishers)
    delivered = context.Array("q", nodes)
    loop = asyncio.get_running_loop()
    pipes: list[Connection] = []
    processes = []
    for index in range(nodes):
        mine, theirs = multiprocessing.Pipe()
        process = context.Process(target=subscriber, args=(index, step, delivered, theirs))
        process.start()
        pipes.append(mine)
        processes.append(process)
    for index in range(step.publishers):
        mine, theirs = multiprocessing.Pipe()
        process = context.Process(
            target=publisher, args=(index, step, published, delivered, theirs)
        )
        process.start()
        pipes.append(mine)
        processes.append(process)
    for pipe in pipes:
        assert await loop.run_in_executor(None, pipe.recv) == "ready"
    step.start = time.monotonic() + 0.3
    step.measure_from = step.start + warmup
    step.measure_to = step.measure_from + seconds
    for pipe in pipes:
        pipe.send(step)
    await until(step.measure_from)
    first = [read(s) for s in servers]
    load = os.getloadavg()[0]
    await until(step.measure_to)
    last = [read(s) for s in servers]
    load_end = os.getloadavg()[0]
    results = [await loop.run_in_executor(None, pipe.recv) for pipe in pipes]
    for process in processes:
        process.join(30)
    heard, published_here = results[:nodes], results[nodes:]
    events = sum(r[0] for r in published_here)
    per_server = [
        {
            "name": s.name,
            "events": b.publishes - a.publishes,
            "cpu": (b.ticks - a.ticks) / TICKS,
            "other": (b.commands - a.commands) - (b.publishes - a.publishes),
        }
        for s, a, b in zip(servers, first, last, strict=True)
    ]
    return {
        "nodes": nodes,
        "rate": step.rate,
        "events_s": events / seconds,
        "batch": events / max(1, sum(r[1] for r in published_here)),
        "lost": sum(r[2] for r in published_here),
        "deliveries_s": [r[0] / seconds for r in heard],
        "dropped": sum(r[1] for r in heard),
        "reconnects": sum(r[2] for r in heard),
        "servers": per_server,
        "load": (load, load_end),
    }


def print_rows(rows: list[dict[str, Any]], target: str, seconds: float) -> None:
    print(
        f"| {target} | nodes | rate asked | events/s | events a pipeline | deliveries/s a node "
        "| server | its events/s | its CPU (cores) | **CPU an event** | events/s a core "
        "| other commands | load average |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        servers = row["servers"]
        if len(servers) > 1:
            together = {
                "name": "all masters",
                "events": sum(s["events"] for s in servers),
                "cpu": sum(s["cpu"] for s in servers),
                "other": sum(s["other"] for s in servers),
            }
            servers = [*servers, together]
        for server in servers:
            us = 1e6 * server["cpu"] / server["events"] if server["events"] else 0.0
            per_core = 1e6 / us if us else 0.0
            asked = f"{row['rate']:,.0f}" if row["rate"] else "max"
            deliveries = " / ".join(f"{d:,.0f}" for d in row["deliveries_s"])
            print(
                f"| | {row['nodes']} | {asked} | {row['events_s']:,.0f} | {row['batch']:.1f} "
                f"| {deliveries} | {server['name']} | {server['events'] / seconds:,.0f} "
                f"| {server['cpu'] / seconds:.2f} | **{us:.1f} µs** | {per_core:,.0f} "
                f"| {server['other']:,} | {row['load'][0]:.2f}-{row['load'][1]:.2f} |"
            )
    for row in rows:
        if row["dropped"] or row["lost"] or row["reconnects"]:
            print(
                f"{row['nodes']} nodes at {row['rate']:g}: {row['dropped']} dropped, "
                f"{row['lost']} lost, {row['reconnects']} reconnects"
            )


async def run(args: argparse.Namespace, url: str, servers: list[Server], target: str) -> None:
    steps = [(int(n), float(r)) for n in args.nodes.split(",") for r in args.rate.split(",")]
    print(
        f"{target}: {args.tables:,} tables, {args.watchers} watcher(s) a table a node, "
        f"{args.publishers} publishing processes, {args.seconds:g} s measured after "
        f"{args.warmup:g} s; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} "
        "at the start",
        flush=True,
    )
    rows = []
    for nodes, rate in steps:
        step = Step(url, args.tables, args.watchers, rate, args.publishers, args.window)
        rows.append(await run_step(servers, step, nodes, args.warmup, args.seconds))
        print(
            f"  {nodes} node(s), rate {rate:g}: {rows[-1]['events_s']:,.0f} events/s, load "
            f"average {rows[-1]['load'][0]:.2f} -> {rows[-1]['load'][1]:.2f}",
            flush=True,
        )
    print_rows(rows, target, args.seconds)
    at_scale = TABLES_AT_SCALE * RATE_AT_SCALE
    print(
        f"({TABLES_AT_SCALE:,} tables at {RATE_AT_SCALE} actions a second: {at_scale:,.0f} "
        "actions/s, times the events an action, over the events/s a core above)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--cluster", action="store_true", help="a 3-master cluster of its own")
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--watchers", type=int, default=1)
    parser.add_argument("--nodes", default="1,2", help="subscribing nodes, steps")
    parser.add_argument("--publishers", type=int, default=2)
    parser.add_argument("--rate", default="10000,0", help="events a second, steps (0: max)")
    parser.add_argument("--window", type=int, default=4000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    args = parser.parse_args()
    prefix = f"channel_prefix=bench-{secrets.token_hex(4)}:"
    if not args.cluster:
        client = redis.Redis.from_url(args.redis)
        pid = int(client.info("server")["process_id"])
        url = f"{args.redis}{'&' if '?' in args.redis else '?'}{prefix}"
        version = client.info("server")["redis_version"]
        uvloop.run(run(args, url, [Server("redis", pid, client)], f"Redis {version}"))
        return 0
    with tempfile.TemporaryDirectory() as directory:
        cluster = LocalRedisCluster(Path(directory))
        cluster.start()
        try:
            servers = []
            for index, (port, process) in enumerate(
                zip(cluster.ports, cluster.processes, strict=True)
            ):
                assert process is not None
                client = redis.Redis(host="127.0.0.1", port=port)
                servers.append(Server(f"master {index + 1}", process.pid, client))
            version = servers[0].client.info("server")["redis_version"]
            target = f"Redis Cluster {version}, 3 masters"
            uvloop.run(run(args, f"{cluster.url}&{prefix}", servers, target))
        finally:
            cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
