"""The garbage collector of a node's process, kept from stopping every table at once.

CPython starts a young pass when the container objects made exceed those freed by some
threshold. A node frees old objects (the last hand's) about as fast as it makes new ones,
so that count hardly moves: a young pass came a few times a minute and found every object
made since the last one still alive, hundreds of thousands, 100-300 ms of the event loop at
450 tables of eight; the middle generation's passes as long. Those pauses were the tail
latency of every table in play (``bench/load.py --stalls``).

So the node runs the passes on a clock of its own (:class:`Collector`): every tenth of a
second a young pass (the objects made since that are still alive: a few milliseconds), then
what survived it is frozen (``gc.freeze``), out of every later pass's sight. A cycle that
becomes garbage that young (a caught exception and its frames, a finished task) is freed at
once; objects freed by their count are freed as ever, frozen or not. Only a cycle among
older objects waits for a full pass over everything, thawed: over a node's whole heap (a
million objects at 450 tables) that takes most of a second, so it comes by CPython's own
rule for its full passes: once the heap has grown by a quarter since the last one (the
blocks Python's allocator holds, :data:`THAW_GROWTH`: counting the frozen objects themselves
walks them all, 100 ms and more at a million), and at most every ``collector_thaw_seconds``.
A node playing on at a steady count of tables holds a steady heap and never stops for one;
memory that grows, be it new tables or garbage waiting among the frozen, brings the pass, its
cost spread over that growth. CPython's own thresholds stay, high, for a burst of objects
between two ticks.

A growth the node makes on purpose, all at once, has a moment of its own for that pass: a
tournament's start opens its tables and seats its field together (125 tables and 1,000
players at once), and the full pass its growth calls for would otherwise come in the first
minutes of play, when every one of those tables deals at once and waits it out together.
:func:`settle_now` takes it at once, before the tables may deal; the heap it leaves is the
mark the next pass's growth is counted from.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import time

YOUNG_EVERY_SECONDS = 0.1  # 0.5 s: six times the pause, and more of the CPU in all
# CPython's own triggers, for what a tick would come too late for: a young pass once 20,000
# more objects were made than freed since the last pass, and so on up.
THRESHOLDS = (20_000, 20, 50)
# A full pass once the heap has grown by this share since the last one (CPython's rule for
# its oldest generation: its long-lived objects grown by a quarter).
THAW_GROWTH = 0.25

log = logging.getLogger(__name__)

_running: Collector | None = None  # this process's clock, while it runs


def settle_now() -> None:
    """The full pass due to a burst of lasting objects just made, taken now, at a moment
    the caller knows no table is playing (see the module); nothing without a running clock
    (a process with CPython's passes alone)."""
    if _running is not None:
        _running.settle()


class Collector:
    """The node's collection passes on the event loop's clock (see the module)."""

    def __init__(self, thaw_seconds: float) -> None:
        # The least time between two full passes; 0: nothing frozen, CPython's passes alone.
        self.thaw_seconds = thaw_seconds
        self.passes = [0, 0, 0]  # run by this clock, by generation
        self._thawed_at = time.monotonic()
        self._heap_after_full_pass = 0  # the allocator's blocks in use just after it
        self._handle: asyncio.TimerHandle | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        global _running
        gc.set_threshold(*THRESHOLDS)
        if self.thaw_seconds:
            self._thawed_at = time.monotonic()
            self._handle = loop.call_later(YOUNG_EVERY_SECONDS, self._tick, loop)
            _running = self

    def stop(self) -> None:
        global _running
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if _running is self:
            _running = None

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        self.collect()
        self._handle = loop.call_later(YOUNG_EVERY_SECONDS, self._tick, loop)

    def collect(self) -> None:
        """A young pass, or a full one over everything once its time has come (see the
        module); then what survived it frozen."""
        now = time.monotonic()
        if (
            now - self._thawed_at >= self.thaw_seconds
            and sys.getallocatedblocks() > self._heap_after_full_pass * (1 + THAW_GROWTH)
        ):
            self._thawed_at = now
            self._full_pass()
            return
        gc.collect(0)
        self.passes[0] += 1
        gc.freeze()

    def settle(self) -> None:
        """A full pass now, whatever the time since the last (see :func:`settle_now`)."""
        self._thawed_at = time.monotonic()
        self._full_pass()

    def _full_pass(self) -> None:
        heap, before = sys.getallocatedblocks(), self._heap_after_full_pass
        gc.unfreeze()
        started = time.perf_counter()
        found = gc.collect(2)
        took = time.perf_counter() - started
        self.passes[2] += 1
        gc.freeze()
        self._heap_after_full_pass = sys.getallocatedblocks()
        log.info(
            "collector: a full pass over a heap of %d blocks (%d after the last one) found %d "
            "objects unreachable in %.0f ms", heap, before, found, took * 1000,
        )  # fmt: skip
