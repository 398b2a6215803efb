"""The seated players' latency while a node is abused: each abuse of tests/abuse against a
live node of its own, and the p50 and p99 of the seated players' actions (``act`` sent ->
``action`` event received) before and during it.

The node runs as ``python -m server`` (SQLite, the in-memory bus) with the gateway's limits as
they ship; four tables of two seats deal all along, the same two players at each, thinking
80 ms a turn (some 40 actions a second in all). The abusers run in a process of their own, at
the lowest priority, as other machines would be. Modes:

- ``login``: 200 wrong passwords for one account, 50 at once;
- ``register``: 30 registrations at once from one address;
- ``snapshots``: 400 anonymous sockets watching a table and resyncing in a loop (4 s);
- ``socket-cap``: 400 sockets from one address against its cap of 50 (3 s);
- ``chat``: eight sockets of an account seated nowhere sending chat as fast as they go (4 s);
- ``ping``: five sockets sending pings as fast as they go (4 s).

The target (docs/benchmarks.md): the seated players' p99 under 100 ms during every abuse.

    python bench/abuse.py [--modes login,register,...] [--baseline-seconds 3] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "abuse")]

from abuse_room import DEFAULT_LIMITS, LiveServer, Room, Window, new_account, open_room  # noqa: E402

TARGET_P99 = 0.100


@dataclass(frozen=True)
class Mode:
    settings: dict[str, str]
    run: Callable[[Room], Awaitable[tuple[dict[str, int], Window]]]


async def login(room: Room) -> tuple[dict[str, int], Window]:
    async with httpx.AsyncClient(base_url=room.url) as client:
        victim, _ = await new_account(client, "victim")
    return await room.abuse("login", username=victim, count=200, at_once=50)


async def register(room: Room) -> tuple[dict[str, int], Window]:
    return await room.abuse("register", prefix="burst", count=30)


async def snapshots(room: Room) -> tuple[dict[str, int], Window]:
    return await room.abuse("snapshots", table=room.table, sockets=400, seconds=4)


async def chat(room: Room) -> tuple[dict[str, int], Window]:
    async with httpx.AsyncClient(base_url=room.url) as client:
        _, token = await new_account(client, "spammer")
    return await room.abuse(
        "flood", type="chat", token=token, table=room.table, sockets=8, rate=1000, seconds=4,
        reconnect=True,
    )  # fmt: skip


async def ping(room: Room) -> tuple[dict[str, int], Window]:
    return await room.abuse("flood", type="ping", sockets=5, rate=1000, seconds=4, reconnect=True)


STRIKES = {"STUD_WS_RATE_STRIKES": "3"}  # a flooding socket is closed after three refusals
MODES = {
    "login": Mode({}, login),
    "register": Mode({}, register),
    "snapshots": Mode({"STUD_WS_SOCKETS_PER_ADDRESS": "1000"}, snapshots),
    "socket-cap": Mode({}, snapshots),
    "chat": Mode(STRIKES, chat),
    "ping": Mode(STRIKES, ping),
}


async def measure(name: str, mode: Mode, baseline_seconds: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="stud-abuse-") as directory:
        live = LiveServer(Path(directory), **{**DEFAULT_LIMITS, **mode.settings})
        live.create_operator()
        live.start()
        try:
            async with open_room(live) as room:
                before = await room.measure(baseline_seconds)
                started = time.perf_counter()
                seen, during = await mode.run(room)
                abuse_seconds = time.perf_counter() - started
        finally:
            live.stop()
    return {
        "mode": name,
        "before": figures(before),
        "during": figures(during),
        "abuse_seconds": round(abuse_seconds, 1),
        "answers": seen,
    }


def figures(window: Window) -> dict[str, float]:
    return {
        "p50_ms": round(window.p50 * 1000, 1),
        "p99_ms": round(window.p99 * 1000, 1),
        "actions_per_second": round(window.rate, 1),
        "actions": len(window.latencies),
    }


def row(result: dict[str, Any]) -> str:
    before, during = result["before"], result["during"]
    verdict = "meets" if during["p99_ms"] < TARGET_P99 * 1000 else "misses"
    return (
        f"| {result['mode']} | {before['p50_ms']} / {before['p99_ms']} | "
        f"{during['p50_ms']} / {during['p99_ms']} | "
        f"{before['actions_per_second']} -> {during['actions_per_second']} | {verdict} |"
    )


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--modes", default=",".join(MODES), help="comma-separated, of: " + ", ".join(MODES)
    )
    parser.add_argument("--baseline-seconds", type=float, default=3.0)
    parser.add_argument("--json", action="store_true", help="one JSON line a mode, too")
    options = parser.parse_args(argv)
    unknown = set(options.modes.split(",")) - set(MODES)
    if unknown:
        parser.error(f"no mode {', '.join(sorted(unknown))}")
    return options


def main(argv: Sequence[str] | None = None) -> int:
    options = parse(argv)
    target = f"target: p99 < {TARGET_P99 * 1000:.0f} ms during"
    print(f"seated players' latency, p50 / p99 in ms ({target})")
    print("| abuse | before | during | actions/s | target |")
    print("|---|---|---|---|---|")
    for name in options.modes.split(","):
        result = asyncio.run(measure(name, MODES[name], options.baseline_seconds))
        print(row(result), flush=True)
        if options.json:
            print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
