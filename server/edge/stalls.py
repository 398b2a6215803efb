"""Where the event loop was while it stalled: what holds every table of a node up at once.

A node's tail latency is made of pauses, not of work: a callback that runs for tens of
milliseconds, a burst of timers, a pass of the garbage collector. A CPU profile spreads them
over everything else the node does; this watch looks only at them. The loop marks a tick
every few milliseconds; a thread of its own looks as often, and while the loop is behind by
more than the threshold it takes the loop thread's stack (where the loop is stuck), and the
collector's passes in that time. When the loop catches up, the stall is logged (at
``WARNING``, ``server.edge.stalls``) with how long it lasted, how much of that the loop's
thread was on a CPU (the rest: the machine ran something else, or another thread held the
interpreter), the collector's share and the frames seen most. Off unless ``stall_watch_ms``
is set: the thread costs a little CPU.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

log = logging.getLogger(__name__)

TICK_SECONDS = 0.005  # how often the loop marks that it runs, and the thread looks
FRAMES = 6  # innermost frames of the project's own code kept of a stack
OWN_CODE = ("/server/", "/engine/")  # whose frames say where a stall is


@dataclass(slots=True)
class Stall:
    """One stall as the thread saw it."""

    began: float  # perf_counter of the last tick before it
    began_cpu: float  # the loop thread's CPU time then
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # the loop thread's CPU time in it: less is the machine's doing
    collector_seconds: float = 0.0
    passes: Counter[int] = field(default_factory=Counter)  # the collector's, by generation
    stacks: Counter[str] = field(default_factory=Counter)  # stack -> times seen


class StallWatch:
    """Logs every stall of the event loop longer than ``threshold`` seconds, with where it
    was; ``stalls`` keeps the last ones for whoever asks (tests, a profile)."""

    def __init__(self, threshold: float, *, keep: int = 1000) -> None:
        self.threshold = threshold
        self.keep = keep
        self.stalls: list[Stall] = []
        self._ticked = time.perf_counter()
        self._ticked_cpu = time.thread_time()
        self._loop_thread = 0
        self._handle: asyncio.TimerHandle | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._collecting_since: float | None = None
        self._collector_seconds = 0.0  # the collector's time in the stall being watched
        self._passes: Counter[int] = Counter()  # and its passes, by generation
        self._freed = 0  # and the objects they found unreachable

    def start(self) -> None:
        """Start watching the running loop (called on it)."""
        if self._thread is not None:
            return
        self._loop_thread = threading.get_ident()
        self._tick()
        gc.callbacks.append(self._on_collection)
        self._thread = threading.Thread(target=self._watch, name="stall-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._handle is not None:
            self._handle.cancel()
        if self._on_collection in gc.callbacks:
            gc.callbacks.remove(self._on_collection)
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None

    def _tick(self) -> None:
        self._ticked_cpu = time.thread_time()
        self._ticked = time.perf_counter()
        self._handle = asyncio.get_running_loop().call_later(TICK_SECONDS, self._tick)

    def _on_collection(self, phase: str, info: dict[str, Any]) -> None:
        if threading.get_ident() != self._loop_thread:
            return
        now = time.perf_counter()
        if phase == "start":
            self._collecting_since = now
        elif self._collecting_since is not None:
            self._collector_seconds += now - self._collecting_since
            self._passes[int(info.get("generation", -1))] += 1
            self._freed += int(info.get("collected", 0))
            self._collecting_since = None

    def _watch(self) -> None:
        stall: Stall | None = None
        while not self._stop.wait(TICK_SECONDS):
            ticked = self._ticked
            behind = time.perf_counter() - ticked
            if behind > self.threshold + TICK_SECONDS:
                if stall is None or stall.began != ticked:
                    if stall is not None:
                        self._ended(stall, ticked)
                    stall = Stall(ticked, self._ticked_cpu)
                    self._collector_seconds = 0.0
                    self._passes = Counter()
                    self._freed = 0
                frame = sys._current_frames().get(self._loop_thread)
                if frame is not None:
                    stall.stacks[where(frame)] += 1
            elif stall is not None:
                self._ended(stall, ticked)
                stall = None

    def _ended(self, stall: Stall, ticked: float) -> None:
        stall.seconds = ticked - stall.began - TICK_SECONDS
        stall.cpu_seconds = max(0.0, self._ticked_cpu - stall.began_cpu)
        stall.collector_seconds = self._collector_seconds
        stall.passes = self._passes
        self.stalls.append(stall)
        del self.stalls[: -self.keep]
        seen = "; ".join(f"{stack} (x{n})" for stack, n in stall.stacks.most_common(2))
        passes = ", ".join(f"generation {g} x{n}" for g, n in sorted(stall.passes.items()))
        if passes:
            passes += f", {self._freed} objects freed"
        log.warning(
            "event loop stalled %.0f ms (on CPU %.0f ms; collector %.0f ms%s) at: %s",
            stall.seconds * 1000,
            stall.cpu_seconds * 1000,
            stall.collector_seconds * 1000,
            f": {passes}" if passes else "",
            seen or "nothing seen",
            extra={"stall_ms": round(stall.seconds * 1000, 1)},
        )


def where(frame: FrameType) -> str:
    """The innermost frames of the project's own code (the innermost one of any code first,
    when it is a library's): ``module:function:line < caller...``."""
    parts: list[str] = []
    innermost = True
    current: FrameType | None = frame
    while current is not None and len(parts) < FRAMES:
        code = current.f_code
        path = code.co_filename
        if innermost or any(part in path for part in OWN_CODE):
            name = path.rsplit("/", 2)[-2:]
            parts.append(f"{'/'.join(name)}:{code.co_name}:{current.f_lineno}")
        innermost = False
        current = current.f_back
    return " < ".join(parts)
