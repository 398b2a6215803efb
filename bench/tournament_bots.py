"""The players of ``bench/tournament.py``: many entrants a process, each a ``StudClient`` on
one websocket, playing through the client library's tournament support
(``stud_client.tournaments``).

An entrant follows its own part of the tournament (``Tournaments.follow(everything=False)``:
its ``seated`` and ``moved`` events, its elimination; after a reconnect the state says again
where it sits), watches the table of its seat and acts there on each of its turns after a
think time (check or call mostly, now and then the least bet or raise, rarely a fold), sits
in again if its clock ran out, goes to its new table when moved, and hangs up once out.

What it counts, as its player would see it:

- each action's latency, from the ``act`` sent to the ``action`` event it caused (the
  client's ``ActResult.latency``), with the wall-clock time it was sent, so the parent can
  cut the run into minutes;
- each pause between two hands of its table: from ``hand_ended`` to the next ``hand_number``,
  with whether the hand ended in a showdown (the table waits longer after one). Every entrant
  at a table sees the same pause; the parent keeps one per table and hand.

And what of a latency was the bots' own process's, not the server's: how late the process's
event loop ran a timer due every 50 ms (an ``action`` event that arrives meanwhile waits as
long), and each pass of its garbage collector over 10 ms.

A worker holds 500 players' clients at 1,000 entrants: with CPython's own collector, its
passes over them took up to 0.7 s, every action of those players waiting them out, and
counted as the server's latency. So a worker runs the node's collector on its own loop
(``server.collector.Collector``: a young pass every tenth of a second, what survives frozen),
as a player's own process, with one client, never pauses that long.

A worker process answers its parent over a pipe like ``load_bots``'s: ``("add", [EntrantSpec,
...])`` connects, signs in and follows the tournament (answers ``("added", failures)``),
``("report",)`` answers ``("report", TournamentStats)`` and forgets, ``("stop",)`` hangs up
and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import random
import time
from collections import Counter
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

import httpx
from load_bots import _cpu_seconds

from server.collector import Collector
from stud_client import (
    Action,
    ConnectionLost,
    LegalActions,
    ServerError,
    StudClient,
    StudError,
    Table,
    TournamentFollow,
    TournamentSeat,
)

CHECK_SECONDS = 2.0  # how often an entrant checks it sits where its tournament says
CONNECT_TRIES = 30  # a sign-in shed by a busy node is tried again this often
LOOP_TICK = 0.05  # the worker's own event loop timed this often
LONG_COLLECTION = 0.010  # a pass of the worker's garbage collector noted from this long
# No full pass of the worker's collector within a run (a pass over 500 clients is 0.4 s): a
# cycle among its frozen objects waits for the process's end, an hour's run at most.
WORKER_THAW_SECONDS = 3600.0


@dataclass(frozen=True, slots=True)
class EntrantSpec:
    """One registered entrant: its token and the node it connects to."""

    name: str
    token: str
    url: str  # http://host:port
    tournament: int
    seed: int


@dataclass
class TournamentStats:
    """What the entrants of one process saw between two reports."""

    acts: int = 0
    # (wall-clock time the act was sent, seconds until its ``action`` event came back)
    latencies: list[tuple[float, float]] = field(default_factory=list)
    # (table, hand, seconds from the last hand's end to this hand's number, after a showdown,
    # the wall-clock time of this hand's number)
    pauses: list[tuple[int, int, float, bool, float]] = field(default_factory=list)
    first_hands: dict[int, float] = field(default_factory=dict)  # table: its hand 1, wall clock
    numbers: dict[int, int] = field(default_factory=dict)  # table id: its number in the event
    errors: Counter[str] = field(default_factory=Counter)
    trouble: Counter[str] = field(default_factory=Counter)
    disconnects: int = 0
    timeouts: int = 0  # own actions the clock made (the entrant was too late)
    seated: int = 0  # tables an entrant sat down at (the start's, and each move's)
    eliminated: int = 0
    cpu_seconds: float = 0.0
    # (wall-clock time, seconds the worker's loop ran a due timer late)
    loop_lags: list[tuple[float, float]] = field(default_factory=list)
    # (wall-clock time, seconds) of the worker's collector's passes over LONG_COLLECTION
    collections: list[tuple[float, float]] = field(default_factory=list)


def choose(legal: LegalActions, rng: random.Random) -> Action:
    """Check or call mostly; the least bet or raise one time in eight; rarely a fold."""
    roll = rng.random()
    if legal.wager is not None and legal.wager in legal.kinds and roll < 0.12:
        return Action(legal.wager, min(legal.to_choices) if legal.to_choices else legal.min_to)
    for kind in ("bring_in", "check"):
        if kind in legal.kinds:
            return Action(kind)
    if "call" in legal.kinds:
        return Action("fold" if roll > 0.97 else "call")
    return Action(legal.kinds[0])


class Entrant:
    """A tournament player on one ``StudClient`` (see the module)."""

    def __init__(
        self,
        spec: EntrantSpec,
        think: tuple[float, float],
        worker: TournamentWorker,
        http: httpx.AsyncClient,
    ) -> None:
        self.spec = spec
        self.think = think
        self.worker = worker
        self.rng = random.Random(spec.seed)
        self.client = StudClient(spec.url, token=spec.token, http=http)
        self.follow: TournamentFollow | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._hand: dict[int, int] = {}  # table: the number of its hand in play
        self._hand_ended: dict[int, tuple[int, float, bool]] = {}  # table: (hand, at, showdown)
        self._showdown = False

    @property
    def stats(self) -> TournamentStats:
        return self.worker.stats

    async def start(self) -> None:
        """Connect, sign in and follow the tournament (a busy node's refusal tried again)."""
        for tries_left in range(CONNECT_TRIES, 0, -1):
            try:
                await self.client.connect()
                self.follow = await self.client.tournaments.follow(
                    self.spec.tournament, everything=False
                )
                return
            except (ServerError, ConnectionLost, TimeoutError, OSError):
                if tries_left == 1:
                    raise
                await self.client.close()
                await asyncio.sleep(0.5 + self.rng.random())

    async def run(self) -> None:
        """Wherever its seat is, until it is out or the tournament over; then hang up."""
        follow = self.follow
        assert follow is not None
        try:
            while not follow.over_for_me:
                seat = follow.seat
                if seat is None:
                    await follow.wait_for(lambda f: f.seat is not None or f.over_for_me)
                    continue
                await self._sit_at(seat)
            if follow.you is not None and follow.you.get("status") in ("out", "disqualified"):
                self.stats.eliminated += 1
        finally:
            await self.close()

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await self.client.close()

    async def _sit_at(self, seat: TournamentSeat) -> None:
        """Play at the seat's table until the follow says it sits elsewhere or is done."""
        follow = self.follow
        assert follow is not None
        try:
            table = await self.client.watch(seat.table)
        except ServerError as error:
            self.stats.trouble[f"watch refused {error.code}"] += 1
            await asyncio.sleep(CHECK_SECONDS)
            with contextlib.suppress(StudError, TimeoutError):
                await follow.refresh()
            return
        except (ConnectionLost, TimeoutError):
            await asyncio.sleep(CHECK_SECONDS / 4)
            return
        self.stats.seated += 1
        self.stats.numbers[seat.table] = seat.table_number
        playing = asyncio.create_task(self._play_at(table, seat))
        moved = asyncio.create_task(follow.wait_for(lambda f: f.seat != seat or f.over_for_me))
        try:
            await asyncio.wait({playing, moved}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (playing, moved):
                task.cancel()
            await asyncio.gather(playing, moved, return_exceptions=True)
            with contextlib.suppress(StudError, TimeoutError):
                await table.unwatch()

    async def _play_at(self, table: Table, seat: TournamentSeat) -> None:
        acted: int | None = None
        sat_in_at: int | None = None
        stream = table.events()
        try:
            async for event in stream:
                self._time(table.id, event.kind, event.data)
                mine = event.kind == "action" and event.data.get("seat") == table.seat
                if mine and event.data.get("timeout"):
                    self.stats.timeouts += 1
                view = table.view
                me = view.me
                if me is None:
                    continue
                if me.sitting_out and sat_in_at != view.seq:
                    sat_in_at = view.seq  # its clock ran out: back in
                    self._spawn(self._quietly(table.sit_in()))
                    continue
                if view.my_turn and view.turn_seq != acted and view.legal is not None:
                    acted = view.turn_seq
                    self._spawn(self._take_turn(table, view.legal, view.turn_seq, seat))
        finally:
            await stream.aclose()

    def _time(self, table: int, kind: str, data: Any) -> None:
        """The pauses between hands, as this entrant sees them."""
        if kind == "showdown":
            self._showdown = True
        elif kind == "hand_ended":
            hand = self._hand.get(table, 0)
            self._hand_ended[table] = (hand, time.monotonic(), self._showdown)
            self._showdown = False
        elif kind == "hand_number":
            hand = self._hand[table] = int(data["hand"])
            ended = self._hand_ended.pop(table, None)
            if hand == 1:
                self.stats.first_hands.setdefault(table, time.time())
            elif ended is not None and ended[0] == hand - 1:
                pause = time.monotonic() - ended[1]
                self.stats.pauses.append((table, hand, pause, ended[2], time.time()))
        elif kind in ("hand_cancelled", "table_restarted", "table_paused"):
            self.stats.trouble[kind] += 1

    async def _take_turn(
        self, table: Table, legal: LegalActions, turn_seq: int | None, seat: TournamentSeat
    ) -> None:
        await asyncio.sleep(self.rng.uniform(*self.think))
        follow = self.follow
        if table.view.turn_seq != turn_seq or follow is None or follow.seat != seat:
            return  # the clock acted meanwhile, or it was moved (never act where it left)
        sent = time.time()
        try:
            done = await table.act(choose(legal, self.rng))
        except (ServerError, ConnectionLost, TimeoutError):
            return  # counted by the client (its stats), by code
        self.stats.acts += 1
        self.stats.latencies.append((sent, done.latency))

    async def _quietly(self, work: Coroutine[Any, Any, Any]) -> None:
        with contextlib.suppress(ServerError, ConnectionLost, TimeoutError):
            await work

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


class TournamentWorker:
    """The entrants of one process, one HTTP client they share, and the pipe to its parent."""

    def __init__(self, pipe: Connection, think: tuple[float, float]) -> None:
        self.pipe = pipe
        self.think = think
        self.stats = TournamentStats()
        self.entrants: list[Entrant] = []
        self.runs: list[asyncio.Task[None]] = []
        self._cpu = _cpu_seconds()
        self._collecting_since = 0.0

    async def serve(self) -> None:
        timing = asyncio.create_task(self._time_loop())
        gc.callbacks.append(self._time_collection)
        collector = Collector(thaw_seconds=WORKER_THAW_SECONDS)
        collector.start(asyncio.get_running_loop())
        try:
            await self._serve()
        finally:
            collector.stop()
            gc.callbacks.remove(self._time_collection)
            timing.cancel()

    async def _time_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + LOOP_TICK
            await asyncio.sleep(LOOP_TICK)
            self.stats.loop_lags.append((time.time(), loop.time() - due))

    def _time_collection(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._collecting_since = time.perf_counter()
            return
        took = time.perf_counter() - self._collecting_since
        if took >= LONG_COLLECTION:
            self.stats.collections.append((time.time(), took))

    async def _serve(self) -> None:
        async with httpx.AsyncClient(timeout=30) as http:
            while True:
                message = await asyncio.to_thread(self.pipe.recv)
                command = message[0]
                if command == "add":
                    self.pipe.send(("added", await self.add(message[1], http)))
                elif command == "report":
                    self.pipe.send(("report", self.report()))
                elif command == "stop":
                    for run in self.runs:
                        run.cancel()
                    await asyncio.gather(*self.runs, return_exceptions=True)
                    await asyncio.gather(
                        *(e.close() for e in self.entrants), return_exceptions=True
                    )
                    return

    async def add(self, specs: Sequence[EntrantSpec], http: httpx.AsyncClient) -> list[str]:
        """Connect, sign in and follow, a few at a time; what failed, one line each."""
        gate = asyncio.Semaphore(32)
        failures: list[str] = []

        async def start(spec: EntrantSpec) -> None:
            entrant = Entrant(spec, self.think, self, http)
            async with gate:
                try:
                    await entrant.start()
                except (StudError, TimeoutError, OSError) as error:
                    failures.append(f"{spec.name}: {error!r}")
                    await entrant.close()
                    return
            self.entrants.append(entrant)
            self.runs.append(asyncio.create_task(entrant.run()))

        await asyncio.gather(*(start(spec) for spec in specs))
        return failures

    def report(self) -> TournamentStats:
        """What was seen since the last report (the clients' errors and reconnects so far)."""
        stats, self.stats = self.stats, TournamentStats()
        for entrant in self.entrants:
            stats.errors.update(entrant.client.stats.errors)
            stats.disconnects += entrant.client.stats.reconnects
        cpu = _cpu_seconds()
        stats.cpu_seconds, self._cpu = cpu - self._cpu, cpu
        return stats


def worker_main(pipe: Connection, think: tuple[float, float]) -> None:
    """A worker process's entry point: serve the pipe on uvloop until told to stop."""
    import uvloop

    uvloop.run(TournamentWorker(pipe, think).serve())
