"""A signed-in connection's presence at the tables it watches, told to each table's run.

A table counts a player's connections to know who is away (``server.table.absence``). A
connection tells each table it watches once that it came and once that it went. A going
is told only to the run of the table that counted the coming, by name: a run that never
counted this connection (the table had no node when it came) must not count a going, or
the player's other connection would look gone. When a message comes from a run of the
table that has not counted the connection (another node took the table over), that run
is told, and told again until it takes it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Protocol

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.cardroom.cluster import TableHandle
from server.table import commands as cmd


class _Tables(Protocol):
    async def table(self, table_id: int) -> TableHandle | None: ...


class TablePresence:
    """Which tables have been told this connection is here, and by which of their runs."""

    def __init__(self, tables: _Tables) -> None:
        self._tables = tables
        self.player: str | None = None  # set once the connection signs in
        self.present: set[int] = set()  # tables told that this player's connection is here
        # The run of each table (its envelopes' ``run``) that counted this connection (None:
        # not known), and the run being told now.
        self._told: dict[int, int | None] = {}
        self._telling_run: dict[int, int] = {}
        self._telling: set[asyncio.Task[None]] = set()

    async def tell(self, *, connected: bool, tables: set[int]) -> None:
        """Tell tables this player's connection came or went (once each way per table)."""
        if self.player is None:
            return
        for table_id in tables:
            if connected == (table_id in self.present):
                continue
            run: int | None = None
            if connected:
                self.present.add(table_id)
            else:
                self.present.discard(table_id)
                run = self._told.pop(table_id, None)
                self._telling_run.pop(table_id, None)
                if run is None:
                    continue
            actor = await self._tables.table(table_id)
            if actor is None:
                continue
            with contextlib.suppress(Refusal):  # a table going away: its next run is told anew
                reply = await actor.submit(
                    cmd.Presence(player=self.player, connected=connected, run=run)
                )
                if connected and table_id in self.present:
                    self._told[table_id] = reply.get("run")

    def note_run(self, message: dict[str, Any]) -> None:
        """A message from a run of the table that has not counted this connection (another
        node took the table over, or the table was changing hands when the connection came)
        means that run knows nothing of it yet: tell it. Any message of the run will do, so
        one lost while the bus was away costs nothing."""
        table_id, run = message.get("table"), message.get("run")
        if type(table_id) is not int or type(run) is not int or table_id not in self.present:
            return
        if self._told.get(table_id) != run and self._telling_run.get(table_id) != run:
            self._tell_again(table_id, run)

    async def end(self) -> None:
        """The connection is gone: stop telling, and tell every table it went."""
        for task in list(self._telling):
            task.cancel()
        await asyncio.gather(*self._telling, return_exceptions=True)
        await self.tell(connected=False, tables=set(self.present))

    def _tell_again(self, table_id: int, run: int) -> None:
        """Tell the table's run ``run`` this connection is here. Until an old node learns the
        table moved, it may still answer for it: the tell names the run, only that run takes
        it, and it is tried again until it does (or a newer run, or the connection's end,
        makes it moot)."""
        if self.player is None:
            return
        player = self.player
        self._telling_run[table_id] = run

        async def tell() -> None:
            delay = 0.05
            while self._telling_run.get(table_id) == run and table_id in self.present:
                actor = await self._tables.table(table_id)
                if actor is None:
                    return
                try:
                    await actor.submit(cmd.Presence(player=player, connected=True, run=run))
                except Refusal as refusal:
                    if refusal.code not in (ErrorCode.TABLE_MOVED, ErrorCode.TABLE_UNAVAILABLE):
                        return
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 1.0)
                    continue
                if table_id not in self.present:  # the connection ended meanwhile
                    with contextlib.suppress(Refusal):
                        await actor.submit(cmd.Presence(player=player, connected=False))
                    return
                self._told[table_id] = run
                if self._telling_run.get(table_id) == run:
                    del self._telling_run[table_id]
                return

        task = asyncio.create_task(tell())
        self._telling.add(task)
        task.add_done_callback(self._telling.discard)
