"""The abuse tests' cardroom: a real server (``python -m server`` in a subprocess) with the
gateway's default limits, tables where two seated players act as their turns come, each
timing its actions from the ``act`` sent to its ``action`` event received (the fixtures
that make it are in conftest.py)."""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients"))
from live_server import PASSWORD, LiveServer  # noqa: E402

from server.settings import Settings  # noqa: E402

ABUSERS = Path(__file__).resolve().parent / "abusers.py"
# The gateway's limits as they ship (live_server.py opens them for the client tests).
LIMITS = (
    "login_per_address_per_minute",
    "login_per_account_per_minute",
    "register_per_address_per_minute",
    "starting_grants_per_address",
    "ws_sockets_per_address",
)
DEFAULT_LIMITS = {
    f"STUD_{name.upper()}": str(Settings.model_fields[name].default) for name in LIMITS
}
_names = itertools.count(1)
THINK_SECONDS = 0.08


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


@dataclass
class Seated:
    """A player at the table acting on every turn (check, call, or bring in) after a short
    think, within the actions' bucket of its connection (10 a second)."""

    url: str
    token: str
    name: str
    table: int
    buy_in: int
    seat: int | None = None
    timings: list[tuple[float, float]] = field(default_factory=list)  # (when, latency)
    errors: Counter[str] = field(default_factory=Counter)
    _sent: float | None = None

    async def play(self) -> None:
        async with connect(self.url.replace("http", "ws", 1) + "/ws", max_queue=None) as ws:
            await ws.recv()  # hello
            await ws.send(json.dumps({"type": "auth", "id": "auth", "token": self.token}))
            await ws.send(
                json.dumps({"type": "sit", "id": "sit", "table": self.table, "buy_in": self.buy_in})
            )
            actions = itertools.count()
            try:
                async for text in ws:
                    frame = json.loads(text)
                    if frame["type"] == "error":
                        self.errors[frame["code"]] += 1
                        continue
                    if frame["type"] != "event" or frame.get("table") != self.table:
                        continue
                    kind, data = frame["kind"], frame["data"]
                    if kind == "seat_taken" and data["player"] == self.name:
                        self.seat = data["seat"]
                    elif kind == "turn" and data["seat"] == self.seat:
                        kinds = data["kinds"]
                        choice = next(
                            k for k in ("check", "call", "bring_in", "fold") if k in kinds
                        )
                        await asyncio.sleep(THINK_SECONDS)
                        self._sent = time.perf_counter()
                        act = {
                            "type": "act",
                            "id": "act",
                            "table": self.table,
                            "action_id": f"{self.name}-{self.table}-{next(actions)}",
                            "kind": choice,
                        }
                        await ws.send(json.dumps(act))
                    elif kind == "action" and data["seat"] == self.seat and self._sent:
                        now = time.perf_counter()
                        self.timings.append((now, now - self._sent))
                        self._sent = None
            except ConnectionClosed:
                pass

    def latencies(self, since: float, until: float) -> list[float]:
        return [latency for at, latency in self.timings if since <= at <= until]


@dataclass
class Room:
    live: LiveServer
    table: int
    players: list[Seated]
    tasks: list[asyncio.Task[None]]
    operator: str

    @property
    def url(self) -> str:
        return self.live.url

    def latencies(self, since: float, until: float) -> list[float]:
        return [x for p in self.players for x in p.latencies(since, until)]

    async def measure(self, seconds: float) -> list[float]:
        start = time.perf_counter()
        await asyncio.sleep(seconds)
        return self.latencies(start, time.perf_counter())

    async def abuse(
        self, mode: str, *, at_least: float = 5.0, **args: Any
    ) -> tuple[dict[str, int], list[float]]:
        """Run the abusers in their own process; what they were answered, and the seated
        players' latencies meanwhile (and up to ``at_least`` seconds from the start: a
        burst's after-effects count)."""
        start = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(ABUSERS),
            mode,
            self.url,
            json.dumps(args),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate()
        assert process.returncode == 0, err.decode()[-3000:]
        await asyncio.sleep(max(0.0, start + at_least - time.perf_counter()))
        return json.loads(out), self.latencies(start, time.perf_counter())


async def new_account(client: httpx.AsyncClient, prefix: str) -> tuple[str, str]:
    name = f"{prefix}{next(_names)}"
    registered = await client.post("/auth/register", json={"username": name, "password": PASSWORD})
    assert registered.status_code == 201, registered.text
    login = await client.post("/auth/login", json={"username": name, "password": PASSWORD})
    assert login.status_code == 200, login.text
    return name, str(login.json()["access_token"])
