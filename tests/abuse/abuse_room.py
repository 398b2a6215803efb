"""The abuse tests' cardroom: a real server (``python -m server`` in a subprocess) with the
gateway's default limits, tables where two seated players act as their turns come, each
timing its actions from the ``act`` sent to its ``action`` event received.

The tests (tests/abuse) and the benchmark (bench/abuse.py) share it: the tests check what
holds on any machine (every action accepted, the abusers refused at the edge, the tables
dealing on), the benchmark prints the latencies.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients"))
from live_server import OPERATOR, PASSWORD, LiveServer  # noqa: E402

from server.settings import Settings  # noqa: E402

ABUSERS = Path(__file__).resolve().parent / "abusers.py"
# The gateway's limits as they ship (live_server.py opens them for the client tests).
LIMITS = (
    "login_failures_per_address_per_minute",
    "register_per_address_per_minute",
    "starting_grants_per_address",
    "ws_sockets_per_address",
)
DEFAULT_LIMITS = {
    f"STUD_{name.upper()}": str(Settings.model_fields[name].default) for name in LIMITS
}
_names = itertools.count(1)
THINK_SECONDS = 0.08
# Tables of two seated players (the same two at each), all measured: some 40 actions a
# second in all, so that a percentile over a few seconds is not simply the one slowest action.
TABLES = 4


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else float("nan")


@dataclass(frozen=True)
class Window:
    """The seated players' actions over a stretch of time: their latencies, and how long."""

    latencies: list[float]
    seconds: float

    @property
    def rate(self) -> float:
        """Actions a second: how fast the tables deal."""
        return len(self.latencies) / self.seconds

    @property
    def p50(self) -> float:
        return percentile(self.latencies, 0.50)

    @property
    def p99(self) -> float:
        return percentile(self.latencies, 0.99)

    def describe(self) -> str:
        return (
            f"p50 {self.p50 * 1000:.1f} ms, p99 {self.p99 * 1000:.1f} ms, "
            f"{self.rate:.1f} actions/s ({len(self.latencies)} in {self.seconds:.1f} s)"
        )


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

    def waiting(self) -> float:
        """How long its last action has gone unanswered (0: none is)."""
        return 0.0 if self._sent is None else time.perf_counter() - self._sent


Metrics = dict[tuple[str, frozenset[tuple[str, str]]], float]


@dataclass
class Room:
    live: LiveServer
    table: int
    players: list[Seated]
    tasks: list[asyncio.Task[None]]
    operator: str
    abusers_nice: int = 19  # the abusers' priority (19: the lowest; see abusers.py)

    @property
    def url(self) -> str:
        return self.live.url

    def latencies(self, since: float, until: float) -> list[float]:
        return [x for p in self.players for x in p.latencies(since, until)]

    def window(self, since: float, until: float) -> Window:
        return Window(self.latencies(since, until), until - since)

    async def measure(self, seconds: float) -> Window:
        start = time.perf_counter()
        await asyncio.sleep(seconds)
        return self.window(start, time.perf_counter())

    async def metrics(self) -> Metrics:
        """The node's ``GET /metrics``: each sample by name and labels."""
        async with httpx.AsyncClient(base_url=self.url, timeout=30) as client:
            text = (await client.get("/metrics")).text
        return {
            (sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        }

    async def abuse(
        self, mode: str, *, at_least: float = 5.0, **args: Any
    ) -> tuple[dict[str, int], Window]:
        """Run the abusers in their own process; what they were answered, and the seated
        players' actions meanwhile (and up to ``at_least`` seconds from the start: a
        burst's after-effects count)."""
        start = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(ABUSERS),
            mode,
            self.url,
            json.dumps({**args, "nice": self.abusers_nice}),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate()
        assert process.returncode == 0, err.decode()[-3000:]
        await asyncio.sleep(max(0.0, start + at_least - time.perf_counter()))
        return json.loads(out), self.window(start, time.perf_counter())


def metric(samples: Metrics, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


@contextlib.asynccontextmanager
async def open_room(live: LiveServer, tables: int = TABLES) -> AsyncIterator[Room]:
    """``tables`` tables of two seats on ``live``, the same two players at each, playing
    (their first actions already timed) until the room is closed."""
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as client:
        login = await client.post("/auth/login", json={"username": OPERATOR, "password": PASSWORD})
        operator = str(login.json()["access_token"])
        # Two accounts (the registrations an address may make are counted by the tests),
        # each seated at every table.
        accounts = [await new_account(client, "seated") for _ in range(2)]
        players = []
        numbers = []
        for number in range(tables):
            made = await client.post(
                "/admin/tables",
                headers={"Authorization": f"Bearer {operator}"},
                json={"name": f"Abused {number + 1}", "seats": 2},
            )
            assert made.status_code == 201, made.text
            table = made.json()
            numbers.append(table["id"])
            for name, token in accounts:
                players.append(Seated(live.url, token, name, table["id"], table["max_buy_in"]))
    tasks = [asyncio.create_task(p.play()) for p in players]
    room = Room(live, numbers[0], players, tasks, operator)
    try:
        deadline = time.monotonic() + 60  # gross: the server never dealt
        while len(room.latencies(0, float("inf"))) < 20 * tables:  # play is under way
            assert time.monotonic() < deadline, [p.errors for p in players]
            await asyncio.sleep(0.05)
        yield room
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def new_account(client: httpx.AsyncClient, prefix: str) -> tuple[str, str]:
    name = f"{prefix}{next(_names)}"
    registered = await client.post("/auth/register", json={"username": name, "password": PASSWORD})
    assert registered.status_code == 201, registered.text
    login = await client.post("/auth/login", json={"username": name, "password": PASSWORD})
    assert login.status_code == 200, login.text
    return name, str(login.json()["access_token"])
