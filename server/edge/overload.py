"""Shedding new work while the node's event loop is behind, so the tables already playing keep
their pace.

Every table, socket and request of a node shares one event loop. When the loop is behind (more
work ready than it gets through), every hop of a seated player's action waits longer, and new
work (players connecting, logging in, sitting down, browsing the lobby) only makes it worse.
So the node measures how far behind its loop is, and while it stays too far behind it refuses
the work that can wait with ``server_busy`` and a retry hint (HTTP 503 with ``Retry-After``,
an ``error`` frame with ``retry_after`` on the websocket, a websocket handshake refused with
503), and keeps doing the work of the tables: actions, leaving, pings, health, metrics and
the back office are never shed.

How far behind: a task sleeps :data:`SAMPLE_SECONDS` again and again, and each wake-up's delay
past its due time is a sample. The node's lag is the median of the samples of the last
:data:`WINDOW_SECONDS` (at least :data:`MIN_SAMPLES` of them, and nothing is decided on fewer):
one long pause (a full garbage collection, the process descheduled on a busy machine, a cold
start) is one late sample among timely ones and sheds nothing. Shedding starts when the lag has
stayed over the threshold (``STUD_OVERLOAD_LAG_SECONDS``, 0: never) for :data:`SUSTAIN_SECONDS`
(the loop late at most of its wake-ups for two seconds or so), and stops once the lag is back
under half the threshold, logged once each way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import statistics
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request

from server.edge.refusals import ServerBusy
from server.metrics import Metrics
from server.table import commands as cmd

log = logging.getLogger(__name__)

SAMPLE_SECONDS = 0.05  # the monitor's sleep: a sample of the loop's lag each wake-up
WINDOW_SECONDS = 1.0  # the lag is the median of the samples this recent...
MIN_SAMPLES = 3  # ...and of at least this many, however long ago
SUSTAIN_SECONDS = 1.0  # the lag over the threshold this long before anything is shed

# Websocket commands that start something new at a table: shed while the node is behind.
# Everything else (act, leave, sit_out, sit_in, chat, watch, resync, ping...) goes through.
SHED_COMMANDS = frozenset(c.name for c in (cmd.Sit, cmd.AddChips, cmd.JoinWaitingList))


class LagMonitor:
    """The node's event-loop lag, measured by a task of its own, and the decision to shed."""

    def __init__(self, threshold: float, metrics: Metrics | None = None) -> None:
        self.threshold = threshold  # seconds of lag over which new work is shed; 0: never
        self.metrics = metrics if metrics is not None else Metrics()
        self.lag = 0.0  # the median of the recent samples, seconds
        self.shedding = False
        self.shed_count = 0  # calls shed since shedding last started
        self._samples: deque[tuple[float, float]] = deque()  # (when, lag)
        self._over_since: float | None = None  # when the lag last went over the threshold
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="event-loop lag monitor")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + SAMPLE_SECONDS
            await asyncio.sleep(SAMPLE_SECONDS)
            now = loop.time()
            self.observe(now, now - due)

    def observe(self, now: float, lag: float) -> None:
        """Take one wake-up's delay (seconds past its due time, at ``now``) into the lag."""
        samples = self._samples
        samples.append((now, max(0.0, lag)))
        while len(samples) > MIN_SAMPLES and samples[0][0] < now - WINDOW_SECONDS:
            samples.popleft()
        self.lag = statistics.median(lag for _, lag in samples)
        self.metrics.event_loop_lag.set(self.lag)
        if not self.threshold or len(samples) < MIN_SAMPLES:
            return
        if self.lag <= self.threshold:
            self._over_since = None
        elif self._over_since is None:
            self._over_since = now
        if not self.shedding and self._over_since is not None:
            if now - self._over_since < SUSTAIN_SECONDS:
                return
            self.shedding, self.shed_count = True, 0
            log.warning(
                "overloaded: the event loop is %.0f ms behind (over %.0f ms): new work is "
                "shed with server_busy until it catches up",
                self.lag * 1000,
                self.threshold * 1000,
            )
        elif self.shedding and self.lag < self.threshold / 2:
            self.shedding = False
            log.warning(
                "caught up: the event loop is %.0f ms behind; new work is taken again "
                "(%d calls were shed)",
                self.lag * 1000,
                self.shed_count,
            )

    def check(self, kind: str) -> None:
        """Raise :class:`~server.edge.refusals.ServerBusy` (counted under ``kind``) if new work of
        this kind is shed now; the callers decide what is new work."""
        if self.shedding:
            self.shed_count += 1
            self.metrics.shed(kind)
            raise ServerBusy("the server is busy with the tables in play: try again in a moment")


def shed_when_busy(kind: str) -> Callable[[Request], Awaitable[None]]:
    """A route's dependency: the request is refused ``503 server_busy`` (``Retry-After``)
    while the node sheds new work, before anything else of it is done."""

    async def check(request: Request) -> None:
        monitor: LagMonitor = request.app.state.overload
        monitor.check(kind)

    return check


# The answer a shed route documents (OpenAPI).
SHED_RESPONSE: dict[int | str, dict[str, Any]] = {
    503: {"description": "error code server_busy: try again after Retry-After"}
}
