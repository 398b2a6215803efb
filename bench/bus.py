"""Events per second and delivery latency through the bus: in memory against Redis.

A node's view: ``--tables`` tables, each with ``--watchers`` subscriptions to its public
channel (one per websocket), a publisher sending table events shaped as the actor sends
them (``publish_now``), and one reader task per subscription. Two runs per backend:

- throughput: ``--events`` events as fast as the bus takes them (at most ``--window`` not
  yet delivered everywhere, so no subscriber falls behind); events published per second and
  deliveries per second, from the first publish to the last delivery;
- latency: events at a steady ``--rate`` per second for ``--seconds``; each delivery's delay
  from ``publish_now`` to the reader holding the message, p50 and p99.

With ``--nodes 2`` the Redis runs also put the subscribers in a second process (another
gateway node): the delays are then the cross-node ones (both processes read the same
monotonic clock).

    python bench/bus.py [--redis redis://127.0.0.1:6379/0] [--tables 20] [--watchers 8]
                        [--events 100000] [--rate 5000] [--seconds 5] [--nodes 1|2]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import platform
import secrets
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.bus.backends import bus_from_url
from server.bus.memory import MemoryBus, Subscription, table_channel  # noqa: E402


@dataclass
class Options:
    redis: str
    tables: int
    watchers: int
    events: int
    window: int
    rate: int
    seconds: float


def event(table: int, seq: int) -> dict[str, Any]:
    """A table event as the actor publishes it, stamped with the publish time."""
    return {
        "type": "event",
        "table": table,
        "seq": seq,
        "kind": "bet",
        "data": {"seat": seq % 8, "amount": 20, "to": 40, "stamp": time.perf_counter_ns()},
    }


class Readers:
    """One task per subscription; counts deliveries and, when asked, their delays."""

    def __init__(self, bus: MemoryBus, options: Options, size: int) -> None:
        self.subscriptions: list[Subscription] = [
            bus.subscribe(table_channel(t), size=size)
            for t in range(options.tables)
            for _ in range(options.watchers)
        ]
        self.delivered = 0
        self.delays: list[int] = []
        self.timing = False
        self.last = 0
        self.changed = asyncio.Event()
        self.tasks = [asyncio.create_task(self._read(s)) for s in self.subscriptions]

    async def _read(self, subscription: Subscription) -> None:
        async for message in subscription:
            now = time.perf_counter_ns()
            self.delivered += 1
            self.last = now
            if self.timing:
                self.delays.append(now - message["data"]["stamp"])
            self.changed.set()

    async def until(self, condition: Callable[[], bool], timeout: float = 120.0) -> None:
        async with asyncio.timeout(timeout):
            while not condition():
                self.changed.clear()
                await self.changed.wait()

    def dropped(self) -> int:
        return sum(s.dropped for s in self.subscriptions)

    async def stop(self) -> None:
        for subscription in self.subscriptions:
            subscription.close()
        await asyncio.gather(*self.tasks)


async def throughput(
    bus: MemoryBus, delivered: Callable[[], int], options: Options, fanout: int
) -> tuple[float, float]:
    """Publish ``options.events`` events; events and deliveries per second."""
    start = time.perf_counter()
    published = 0
    while published < options.events:
        # One burst per tick, the bus's unit of batching; then let the readers run.
        burst = min(options.window // 4, options.events - published)
        for n in range(burst):
            table = (published + n) % options.tables
            bus.publish_now(table_channel(table), event(table, published + n))
        published += burst
        while (published * fanout) - delivered() > options.window * fanout:
            await asyncio.sleep(0)
    await wait_for(lambda: delivered() >= options.events * fanout)
    elapsed = time.perf_counter() - start
    return options.events / elapsed, options.events * fanout / elapsed


async def steady(bus: MemoryBus, options: Options) -> int:
    """Publish at ``options.rate`` events a second for ``options.seconds``; how many."""
    start = time.perf_counter()
    sent = 0
    while (elapsed := time.perf_counter() - start) < options.seconds:
        due = int(elapsed * options.rate)
        while sent < due:
            table = sent % options.tables
            bus.publish_now(table_channel(table), event(table, sent))
            sent += 1
        await asyncio.sleep(0.0005)
    return sent


async def wait_for(condition: Callable[[], bool], timeout: float = 120.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.001)


def percentiles(delays: list[int]) -> tuple[float, float]:
    """p50 and p99 in microseconds."""
    cuts = statistics.quantiles(delays, n=100)
    return cuts[49] / 1000, cuts[98] / 1000


async def one_node(url: str | None, options: Options) -> dict[str, float]:
    """Publisher and subscribers on one node (one process, one event loop)."""
    bus = bus_from_url(url)
    fanout = options.watchers
    readers = Readers(bus, options, size=options.window * 2)
    if hasattr(bus, "wait_ready"):
        await bus.wait_ready(10)
    events_s, deliveries_s = await throughput(bus, lambda: readers.delivered, options, fanout)
    base = readers.delivered
    readers.timing = True
    sent = await steady(bus, options)
    await readers.until(lambda: readers.delivered - base >= sent * fanout)
    p50, p99 = percentiles(readers.delays)
    dropped = readers.dropped()
    await readers.stop()
    await bus.close()
    return {
        "events_s": events_s,
        "deliveries_s": deliveries_s,
        "p50_us": p50,
        "p99_us": p99,
        "dropped": dropped,
    }


# ---------------------------------------------------------------------- two nodes


def subscriber_node(url: str, options: Options, pipe: Connection) -> None:
    """The second process: subscribers only. Sends ("count", n) every millisecond and, when
    told "stop", ("result", delays, dropped); told "time", it starts timing deliveries."""

    async def main() -> None:
        bus = bus_from_url(url)
        readers = Readers(bus, options, size=options.window * 2)
        await bus.wait_ready(10)  # type: ignore[attr-defined]
        pipe.send(("count", 0))
        loop = asyncio.get_running_loop()
        commands = loop.run_in_executor(None, pipe.recv)
        while True:
            done, _ = await asyncio.wait({commands}, timeout=0.001)
            pipe.send(("count", readers.delivered))
            if not done:
                continue
            command = commands.result()
            if command == "time":
                readers.timing = True
                commands = loop.run_in_executor(None, pipe.recv)
            else:
                pipe.send(("result", readers.delays, readers.dropped()))
                await readers.stop()
                await bus.close()
                return

    asyncio.run(main())


async def two_nodes(url: str, options: Options) -> dict[str, float]:
    """Publisher here, subscribers in another process on the same Redis."""
    mine, theirs = multiprocessing.Pipe()
    node = multiprocessing.get_context("spawn").Process(
        target=subscriber_node, args=(url, options, theirs)
    )
    node.start()
    loop = asyncio.get_running_loop()
    remote: dict[str, Any] = {"count": -1}
    result: asyncio.Future[tuple[list[int], int]] = loop.create_future()

    def listen() -> None:  # a thread: the other node's counts, as they come
        while True:
            kind, *values = mine.recv()
            if kind == "count":
                remote["count"] = values[0]
            else:
                loop.call_soon_threadsafe(result.set_result, (values[0], values[1]))
                return

    listener = loop.run_in_executor(None, listen)
    await wait_for(lambda: remote["count"] >= 0, 30)
    bus = bus_from_url(url)
    await bus.wait_ready(10)  # type: ignore[attr-defined]
    fanout = options.watchers
    events_s, deliveries_s = await throughput(bus, lambda: remote["count"], options, fanout)
    base = remote["count"]
    mine.send("time")
    await asyncio.sleep(0.01)
    sent = await steady(bus, options)
    await wait_for(lambda: remote["count"] >= base + sent * fanout)
    mine.send("stop")
    delays, dropped = await result
    await listener
    node.join(10)
    await bus.close()
    p50, p99 = percentiles(delays)
    return {
        "events_s": events_s,
        "deliveries_s": deliveries_s,
        "p50_us": p50,
        "p99_us": p99,
        "dropped": dropped,
    }


# ---------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--watchers", type=int, default=8)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--window", type=int, default=2_000)
    parser.add_argument("--rate", type=int, default=5_000)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--nodes", type=int, choices=(1, 2), default=1)
    args = parser.parse_args()
    options = Options(
        args.redis, args.tables, args.watchers, args.events, args.window, args.rate, args.seconds
    )
    # A prefix of its own: a shared Redis's other users hear nothing of the benchmark.
    redis = (
        f"{args.redis}{'&' if '?' in args.redis else '?'}channel_prefix=bench-"
        f"{secrets.token_hex(4)}:"
    )
    runs: list[tuple[str, dict[str, float]]] = [
        ("memory, one node", asyncio.run(one_node(None, options))),
        ("Redis, one node", asyncio.run(one_node(redis, options))),
    ]
    if args.nodes == 2:
        runs.append(("Redis, two nodes", asyncio.run(two_nodes(redis, options))))
    print(
        f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.2f}, "
        f"{options.tables} tables x "
        f"{options.watchers} watchers, {options.events:,} events (throughput), "
        f"{options.rate:,} events/s for {options.seconds:g} s (latency)"
    )
    print("| bus | events/s | deliveries/s | p50 delivery | p99 delivery | dropped |")
    print("|---|---|---|---|---|---|")
    for name, run in runs:
        print(
            f"| {name} | {run['events_s']:,.0f} | {run['deliveries_s']:,.0f} | "
            f"{run['p50_us']:,.0f} µs | {run['p99_us']:,.0f} µs | {run['dropped']:.0f} |"
        )


if __name__ == "__main__":
    main()
