"""A connection's messages for tables, each table in a lane of its own.

A websocket may play and watch several tables; a table that is slow to answer, or changing
hands between nodes, must hold back only its own messages, never the connection's others.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class TableLanes:
    """A connection's messages for tables, one lane per table: in the order they came
    within a table, side by side across tables, so a table that is slow to answer (or
    changing hands) holds only its own. At most ``limit`` are taken and not yet done: past
    that the connection is not read until one is."""

    def __init__(self, limit: int) -> None:
        self._slots = asyncio.Semaphore(limit)
        self._last: dict[int, asyncio.Task[None]] = {}  # each table's latest message
        self._running: set[asyncio.Task[None]] = set()

    async def enter(self, table_id: int, work: Coroutine[Any, Any, None]) -> None:
        """Queue ``work`` behind the table's earlier messages; return once it has started
        (or is queued behind them)."""
        try:
            await self._slots.acquire()
        except BaseException:
            work.close()
            raise
        task = asyncio.create_task(self._run(table_id, self._last.get(table_id), work))
        self._last[table_id] = task
        self._running.add(task)
        # Let it start: what it settles without waiting (a refusal for rate, which pauses
        # the connection) is settled before the next frame is read, as if handled inline.
        await asyncio.sleep(0)

    async def _run(
        self, table_id: int, before: asyncio.Task[None] | None, work: Coroutine[Any, Any, None]
    ) -> None:
        this = asyncio.current_task()
        try:
            if before is not None:
                await asyncio.wait({before})  # its outcome is its own
            await work
        finally:
            work.close()  # never started, if cancelled while it waited its turn
            self._slots.release()
            self._running.discard(this)
            if self._last.get(table_id) is this:
                del self._last[table_id]

    async def join(self) -> None:
        """Until every message taken so far is done."""
        while self._running:
            await asyncio.wait(set(self._running))

    async def close(self, grace: float = 0.0) -> None:
        """The connection has ended: let what is in hand finish for ``grace`` seconds (what
        the tables were told stays in step with what this connection knows), then drop it."""
        if grace > 0 and self._running:
            await asyncio.wait(set(self._running), timeout=grace)
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
