"""The bots of ``bench/load.py``: many seated players a process, each a bare websocket.

A bot speaks the protocol of docs/protocol.md and nothing more: ``auth``, ``sit``, and on
each ``turn`` of its seat an ``act`` after a think time (check or call mostly, now and then
the least bet or raise, rarely a fold). It keeps no view of the table, so a process carries
hundreds of them on one event loop. Each bot times its actions from the ``act`` sent to the
``action`` event it caused, as its player would see it.

A worker process runs the bots it is given and answers its parent over a pipe:

- ``("add", [BotSpec, ...])``: connects and seats them; answers ``("added", failures)``;
- ``("reset",)``: forgets what was counted; answers ``("reset",)``;
- ``("report",)``: answers ``("report", Stats)`` with what was counted since, then forgets it;
- ``("stop",)``: closes every connection and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
import time
from collections import Counter
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

import orjson
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

# Events that say a table broke (its hand voided, its actor rebuilt): counted as errors.
TROUBLE = frozenset({"hand_cancelled", "table_restarted", "table_paused"})
RECONNECTS = 5  # a bot gives up after this many lost connections in a row
REQUEST_TIMEOUT = 30.0
SHED_TRIES = 30  # a set-up step shed by a node that is behind (server_busy) is tried this often
ACT_ID = "act"  # the id of every act (its reply is not waited for; an error frame is counted)


@dataclass(frozen=True, slots=True)
class BotSpec:
    """One bot: its account's token, the node it connects to and the table it sits at."""

    name: str
    token: str
    url: str  # ws://host:port/ws
    table: int
    buy_in: int
    seed: int
    reports_table: bool  # one bot a table counts the table's troubles


@dataclass
class Stats:
    """What the bots of one process saw between two reports."""

    acts: int = 0  # actions answered by their own ``action`` event
    latencies: list[float] = field(default_factory=list)  # seconds, act sent to its event
    errors: Counter[str] = field(default_factory=Counter)  # error frames by code
    trouble: Counter[str] = field(default_factory=Counter)  # TROUBLE events by kind
    disconnects: int = 0
    timeouts: int = 0  # own actions the clock made (the bot was too late)
    cpu_seconds: float = 0.0  # the worker process's own CPU time over the interval


class RequestFailed(Exception):
    """A command of the set-up (``auth``, ``sit``) was refused."""

    def __init__(self, code: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.retry_after = retry_after


def shed_wait(error: Exception) -> float | None:
    """The seconds to wait when a node that is behind shed the step (``server_busy``: a
    handshake refused 503, a ``sit`` refused with ``retry_after``); None: another failure."""
    if isinstance(error, InvalidStatus) and error.response.status_code == 503:
        return float(error.response.headers.get("Retry-After", "1"))
    if isinstance(error, RequestFailed) and error.code == "server_busy":
        return error.retry_after or 1.0
    return None


class Bot:
    """A seated player on one websocket, acting on its turns after ``think`` seconds."""

    def __init__(self, spec: BotSpec, think: tuple[float, float], stats: Stats) -> None:
        self.spec = spec
        self.think = think
        self.stats = stats  # the worker's current Stats (replaced at each report)
        self.rng = random.Random(spec.seed)
        self.seat: int | None = None
        self.stack = spec.buy_in  # the bot's chips as of its table's last hand
        self.ws: ClientConnection | None = None
        self._ids = itertools.count(1)
        self._actions = itertools.count(1)
        self._replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._sent_at: float | None = None  # when the pending act went out
        self._reader: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # acts thinking, top-ups under way
        self.closing = False
        self._idle = 60.0  # the server's idle time, as its hello says
        self._last_sent = time.monotonic()
        self._pinger: asyncio.Task[None] | None = None

    # -------------------------------------------------------------- connection

    async def start(self) -> None:
        """Connect, sign in and take a seat (raises if any of it fails); a step the server
        sheds while it is behind is tried again after its retry hint."""
        for tries_left in range(SHED_TRIES, 0, -1):
            try:
                if self.ws is None:
                    await self._connect()
                reply = await self.request("sit", table=self.spec.table, buy_in=self.spec.buy_in)
            except (InvalidStatus, RequestFailed) as error:
                wait = shed_wait(error)
                if wait is None or tries_left == 1:
                    raise
                await asyncio.sleep(wait * (0.5 + self.rng.random()))
                continue
            self.seat = int(reply["seat"])
            return

    async def _connect(self) -> None:
        self.ws = await connect(
            self.spec.url, compression=None, ping_interval=None, open_timeout=REQUEST_TIMEOUT
        )
        hello = orjson.loads(await self.ws.recv())
        # As docs/protocol.md asks of clients: a ping within the server's idle time (a bot
        # that folds early and waits out a long hand may say nothing else for a minute).
        self._idle = float(hello.get("idle_seconds") or self._idle)
        self._reader = asyncio.create_task(self._read(self.ws), name=f"read-{self.spec.name}")
        if self._pinger is None:
            self._pinger = asyncio.create_task(self._keep_alive(), name=f"ping-{self.spec.name}")
        await self.request("auth", token=self.spec.token)

    async def _keep_alive(self) -> None:
        """A ping whenever a third of the idle time has passed with nothing sent."""
        while not self.closing:
            every = self._idle / 3
            quiet = time.monotonic() - self._last_sent
            if quiet >= every:
                await self.send("ping")
                quiet = 0.0
            await asyncio.sleep(every - quiet)

    async def run(self) -> None:
        """Read until closed; reconnect (and resync) after a lost connection. (A turn that
        came while it was away is left to the action clock: counted as late.) A send or a
        read on a connection that closes under it is let go: this counts the loss."""
        failures = 0
        while not self.closing:
            if self._reader is not None:
                await asyncio.gather(self._reader, return_exceptions=True)
            if self.closing:
                return
            self.stats.disconnects += 1
            failures += 1
            if failures > RECONNECTS:
                return
            await asyncio.sleep(0.5 * failures)
            try:
                await self._connect()
                await self.request("resync", table=self.spec.table)
                failures = 0
            except (OSError, ConnectionClosed, InvalidHandshake, RequestFailed, TimeoutError):
                continue

    async def close(self) -> None:
        self.closing = True
        if self._pinger is not None:
            self._pinger.cancel()
        if self.ws is not None:
            await self.ws.close()

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Send a command and wait for its reply's result (RequestFailed on an error)."""
        assert self.ws is not None
        message_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[message_id] = future
        self._last_sent = time.monotonic()
        await self.ws.send(orjson.dumps({"type": kind, "id": message_id, **fields}).decode())
        try:
            return await asyncio.wait_for(future, REQUEST_TIMEOUT)
        finally:
            self._replies.pop(message_id, None)

    async def send(self, kind: str, **fields: Any) -> None:
        """Send a command whose reply nobody waits for (an error frame is counted)."""
        assert self.ws is not None
        self._last_sent = time.monotonic()
        with contextlib.suppress(ConnectionClosed, OSError):
            await self.ws.send(orjson.dumps({"type": kind, "id": 0, **fields}).decode())

    # -------------------------------------------------------------- frames

    async def _read(self, ws: ClientConnection) -> None:
        with contextlib.suppress(ConnectionClosed, OSError):
            async for raw in ws:
                self._frame(orjson.loads(raw))
        if not self.closing:  # why the server closed it (None: the connection was lost)
            self.stats.trouble[f"closed {ws.close_code}"] += 1

    def _frame(self, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind == "event":
            self._event(frame["kind"], frame["data"])
        elif kind == "reply":
            future = self._replies.get(frame["id"])
            if future is not None and not future.done():
                future.set_result(frame["result"])
        elif kind == "error":
            self.stats.errors[frame["code"]] += 1
            future = self._replies.get(frame["id"])
            if future is not None and not future.done():
                future.set_exception(
                    RequestFailed(frame["code"], frame["message"], frame.get("retry_after"))
                )
            elif frame["id"] == ACT_ID:
                self._sent_at = None  # the act was refused

    def _event(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "turn":
            if data["seat"] == self.seat:
                self._spawn(self._act(data))
        elif kind == "action":
            if data["seat"] == self.seat:
                if data.get("timeout"):
                    self.stats.timeouts += 1
                elif self._sent_at is not None:
                    self.stats.acts += 1
                    self.stats.latencies.append(time.perf_counter() - self._sent_at)
                self._sent_at = None
        elif kind == "hand_ended":
            for seat in data["stacks"]:
                if seat["seat"] == self.seat:
                    self.stack = int(seat["stack"])
        elif kind == "sat_out":
            if data["seat"] == self.seat and data.get("busted"):
                self._spawn(self._top_up())
        elif kind in TROUBLE and self.spec.reports_table:
            self.stats.trouble[kind] += 1

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)  # held: the loop keeps only a weak reference
        task.add_done_callback(self._tasks.discard)

    async def _act(self, turn: dict[str, Any]) -> None:
        await asyncio.sleep(self.rng.uniform(*self.think))
        kind, amount = choose(turn, self.rng)
        fields: dict[str, Any] = {"table": self.spec.table, "kind": kind}
        if amount is not None:
            fields["amount"] = amount
        fields["action_id"] = f"{self.spec.name}-{next(self._actions)}"
        self._sent_at = time.perf_counter()
        assert self.ws is not None
        with contextlib.suppress(ConnectionClosed, OSError):
            self._last_sent = time.monotonic()
            await self.ws.send(orjson.dumps({"type": "act", "id": ACT_ID, **fields}).decode())

    async def _top_up(self) -> None:
        """Back to a whole buy-in: a bot busted with a few chips left adds what it lacks (a
        whole buy-in more would pass the table's most)."""
        amount = max(1, self.spec.buy_in - self.stack)
        await self.send("add_chips", table=self.spec.table, amount=amount)
        await self.send("sit_in", table=self.spec.table)


def choose(turn: dict[str, Any], rng: random.Random) -> tuple[str, int | None]:
    """Check or call mostly; the least bet or raise one time in eight; rarely a fold."""
    kinds: Sequence[str] = turn["kinds"]
    wager = turn.get("wager")
    roll = rng.random()
    if wager is not None and wager in kinds and roll < 0.12:
        return wager, int(turn["min_to"])
    for kind in ("bring_in", "check"):
        if kind in kinds:
            return kind, None
    if "call" in kinds:
        return ("fold" if roll > 0.97 else "call"), None
    return kinds[0], None


# ---------------------------------------------------------------------- the worker


class Worker:
    """The bots of one process and the pipe to its parent."""

    def __init__(self, pipe: Connection, think: tuple[float, float]) -> None:
        self.pipe = pipe
        self.think = think
        self.stats = Stats()
        self.bots: list[Bot] = []
        self.runs: list[asyncio.Task[None]] = []
        self._cpu = _cpu_seconds()

    async def serve(self) -> None:
        while True:
            message = await asyncio.to_thread(self.pipe.recv)
            command = message[0]
            if command == "add":
                self.pipe.send(("added", await self.add(message[1])))
            elif command == "reset":
                self.reset()
                self.pipe.send(("reset",))
            elif command == "report":
                stats = self.reset()
                self.pipe.send(("report", stats))
            elif command == "stop":
                for bot in self.bots:
                    bot.closing = True
                await asyncio.gather(*(bot.close() for bot in self.bots), return_exceptions=True)
                await asyncio.gather(*self.runs, return_exceptions=True)
                return

    async def add(self, specs: Sequence[BotSpec]) -> list[str]:
        """Connect and seat the bots, a few at a time; what failed, one line each."""
        gate = asyncio.Semaphore(32)
        failures: list[str] = []

        async def start(spec: BotSpec) -> None:
            bot = Bot(spec, self.think, self.stats)
            async with gate:
                try:
                    await bot.start()
                except (
                    OSError,
                    ConnectionClosed,
                    InvalidHandshake,
                    RequestFailed,
                    TimeoutError,
                ) as error:
                    failures.append(f"{spec.name}: {error!r}")
                    await bot.close()
                    return
            self.bots.append(bot)
            self.runs.append(asyncio.create_task(bot.run()))

        await asyncio.gather(*(start(spec) for spec in specs))
        return failures

    def reset(self) -> Stats:
        """The stats so far (with this process's CPU time since the last reset); a new count."""
        stats, self.stats = self.stats, Stats()
        cpu = _cpu_seconds()
        stats.cpu_seconds, self._cpu = cpu - self._cpu, cpu
        for bot in self.bots:
            bot.stats = self.stats
        return stats


def _cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def worker_main(pipe: Connection, think: tuple[float, float]) -> None:
    """A worker process's entry point: serve the pipe on uvloop until told to stop."""
    import uvloop

    uvloop.run(Worker(pipe, think).serve())
