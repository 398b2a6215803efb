"""The garbage collector of a node's process, kept from stopping every table at once.

A full pass of CPython's collector looks at every container object the process holds and
stops the event loop meanwhile: at 450 tables of eight, some 130 ms, three times a minute,
the tail latency of every table in play (``bench/load.py --stalls``). Almost all of those
objects live as long as the node: connections, tables, players. So after each full pass, what
survived it is frozen (``gc.freeze``): the next passes look only at what became long-lived
since. Frozen objects are still freed when nothing refers to them; only a cycle among them
that became garbage waits, so every ``collector_thaw_seconds`` everything is thawed once and
the next full pass looks at it all (one long pause in that time, not three a minute).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from typing import Any

log = logging.getLogger(__name__)

OLDEST = 2  # the generation of a full pass


class FreezeAfterFullPasses:
    """Freezes what survives each full pass, thawing it every ``thaw_seconds``."""

    def __init__(self, thaw_seconds: float) -> None:
        self.thaw_seconds = thaw_seconds
        self.freezes = 0
        self.thaws = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thawed_at = time.monotonic()

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        """From now on, on ``loop`` (the node's): its callbacks do the freezing."""
        self._loop = loop
        if self._on_collection not in gc.callbacks:
            gc.callbacks.append(self._on_collection)

    def uninstall(self) -> None:
        if self._on_collection in gc.callbacks:
            gc.callbacks.remove(self._on_collection)
        self._loop = None

    def _on_collection(self, phase: str, info: dict[str, Any]) -> None:
        loop = self._loop
        if phase != "stop" or info.get("generation") != OLDEST or loop is None:
            return
        # Not inside the collection (it may run on any thread): on the loop, next.
        try:
            loop.call_soon_threadsafe(self.after_full_pass)
        except RuntimeError:  # the loop is closed: the node is stopping
            return

    def after_full_pass(self) -> None:
        """Freeze what the pass left, or thaw everything once the time has come."""
        now = time.monotonic()
        if now - self._thawed_at >= self.thaw_seconds:
            gc.unfreeze()  # the next full pass looks at everything, cycles frozen included
            self._thawed_at = now
            self.thaws += 1
            log.debug("collector: thawed; the next full pass looks at everything")
            return
        gc.freeze()
        self.freezes += 1
