"""How long one lease round takes for N tables against Redis: table by table, as the rounds
asked before, against every table in one pipeline (``RedisLeases.renew_many``).

``--busy-ms`` stands in for a loaded node: another task holds the event loop that long each
time it runs, as a node's tables, sockets and database work do. A round that awaits Redis
table by table waits behind it once per table; a pipelined round once.

    python bench/lease_round.py [--redis redis://127.0.0.1:6379/0] [--tables 100]
                                [--rounds 30] [--busy-ms 0 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.cardroom.cluster import RedisLeases  # noqa: E402

LEASE_SECONDS = 5.0


async def busy(milliseconds: float) -> None:
    """Hold the loop ``milliseconds`` at a time, then let others run once."""
    while True:
        until = time.perf_counter() + milliseconds / 1000
        while time.perf_counter() < until:
            pass
        await asyncio.sleep(0)


async def timed(rounds: int, round_: Callable[[], Awaitable[object]]) -> list[float]:
    took = []
    for _ in range(rounds):
        started = time.perf_counter()
        await round_()
        took.append((time.perf_counter() - started) * 1000)
    return took


async def measure(url: str, tables: int, rounds: int, busy_ms: float) -> dict[str, list[float]]:
    leases = RedisLeases(url, f"bench-{secrets.token_hex(3)}", LEASE_SECONDS)
    ids = list(range(1, tables + 1))
    try:
        for table_id in ids:
            assert await leases.acquire(table_id)

        async def each() -> None:
            for table_id in ids:
                assert await leases.renew(table_id)

        async def batch() -> None:
            assert all((await leases.renew_many(ids)).values())

        loaded = asyncio.create_task(busy(busy_ms)) if busy_ms > 0 else None
        try:
            return {
                "table by table": await timed(rounds, each),
                "one pipeline": await timed(rounds, batch),
            }
        finally:
            if loaded is not None:
                loaded.cancel()
    finally:
        for table_id in ids:
            await leases.release(table_id)
        await leases.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0?channel_prefix=bench-lease:")
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--busy-ms", type=float, nargs="+", default=[0.0, 2.0])
    args = parser.parse_args()
    print(f"{args.tables} tables, {args.rounds} rounds; load average {os.getloadavg()}")
    for busy_ms in args.busy_ms:
        results = asyncio.run(measure(args.redis, args.tables, args.rounds, busy_ms))
        for name, took in results.items():
            took.sort()
            print(
                f"busy {busy_ms:g} ms  {name:15}  p50 {statistics.median(took):7.1f} ms"
                f"  p90 {took[int(len(took) * 0.9)]:7.1f} ms  max {took[-1]:7.1f} ms"
            )


if __name__ == "__main__":
    main()
