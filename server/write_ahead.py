"""The actions of a node's hands in progress, written ahead in groups (group commit).

Every action is in the database before its events go out (:mod:`server.journal`), so this
write is on the path of every action of every table. A node writes the actions that are
waiting, from all its tables, in one transaction: one statement checks every table's fence
(and, on PostgreSQL, locks the rows), one inserts every action; nothing waits for a timer,
so a quiet node writes each action at once and a busy one writes more of them a
transaction. The statements are SQLAlchemy Core, built once.

SQLite has one writer at a time. The node's writes of table state (this one and the
store's, :class:`~server.table_store.DatabaseTableStore`) take :attr:`WriteAhead.gate` in
turn rather than meeting in SQLite's busy handler, which sleeps in steps up to 100 ms; and
a group is written by one thread of its own on a connection of its own, all its statements
in one hop, so the write lock is held for the database's work alone, never across turns of
the event loop; there the statements go to the driver as they were compiled once
(:mod:`server.db.driver`), without SQLAlchemy's work for each. On PostgreSQL the gate is
open (rows are locked per table) and the group goes through the async engine, without
waiting for the disk (``synchronous_commit`` off: the row outlives the node at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, text
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine

from server.db.driver import DriverStatement
from server.db.models import LiveAction
from server.db.session import is_outage, sqlite_pragmas
from server.db.types import utcnow
from server.fencing import FENCE_HELD, fence_check, refused_on_cursor, taken_over
from server.fencing import refused as fencing_refused
from server.table_types import StoreUnavailable

_ACTIONS = cast(Table, LiveAction.__table__)


@dataclass(slots=True)
class _Pending:
    table_id: int
    fence: int | None  # None: written without a check (tools that own the database)
    number: int
    position: int
    action: dict[str, Any]
    done: asyncio.Future[None] = field(repr=False)


class WriteAhead:
    """One node's write-ahead of actions, grouped; and its gate for SQLite's one writer."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.sqlite = engine.dialect.name == "sqlite"
        # A database in memory is one connection's own: it is written through the engine.
        self._own_thread = self.sqlite and engine.url.database not in (None, "", ":memory:")
        self._pending: list[_Pending] = []
        self._writing: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock() if self.sqlite else None
        self._thread: ThreadPoolExecutor | None = None
        self._sync_writer: _SqliteWriter | None = None
        self.groups = 0  # transactions written
        self.written = 0  # actions written
        insert = sqlite_insert if self.sqlite else postgresql_insert
        self._insert = insert(_ACTIONS).on_conflict_do_nothing()

    @contextlib.asynccontextmanager
    async def gate(self) -> AsyncIterator[None]:
        """Held around a write of table state: on SQLite, one such writer at a time."""
        if self._lock is None:
            yield
            return
        async with self._lock:
            yield

    async def record(
        self, table_id: int, fence: int | None, number: int, position: int, action: dict[str, Any]
    ) -> None:
        """Write one action (with the next group); raises :class:`TableTakenOver` if
        ``fence`` is no longer the table's, :class:`StoreUnavailable` if the database did
        not answer (the action may be written again: a retry writes it once)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._pending.append(_Pending(table_id, fence, number, position, action, done))
        if self._writing is None:
            self._writing = loop.create_task(self._write_all())
        await done

    async def close(self) -> None:
        """Write what is waiting, then let the thread and its connection go."""
        if self._writing is not None:
            await asyncio.gather(self._writing, return_exceptions=True)
        if self._thread is not None:
            self._thread.shutdown(wait=True)
            self._thread = None
        if self._sync_writer is not None:
            self._sync_writer.connection.close()
            self._sync_writer = None

    async def _write_all(self) -> None:
        try:
            while self._pending:
                group, self._pending = self._pending, []
                await self._write_group(group)
        finally:
            self._writing = None

    async def _write_group(self, group: list[_Pending]) -> None:
        try:
            async with self.gate():
                refused = await self._commit(group)
        except Exception as error:
            if is_outage(error):
                why = str(error) or type(error).__name__
                for pending in group:
                    _settle(pending, StoreUnavailable(why))
            elif len(group) > 1:
                # One table's write refused (not an outage): the others are not held by it.
                for pending in group:
                    await self._write_group([pending])
            else:
                _settle(group[0], error)
            return
        self.groups += 1
        for pending in group:
            if pending.table_id in refused:
                _settle(pending, taken_over(pending.table_id, pending.fence))
            else:
                self.written += 1
                _settle(pending, None)

    async def _commit(self, group: Sequence[_Pending]) -> set[int]:
        """Write the group in one transaction; the tables whose fence is not theirs any
        more (their actions are not written)."""
        fenced = {p.table_id: p.fence for p in group if p.fence is not None}
        now = utcnow()
        if self._own_thread:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(
                self._executor(), self._commit_sync, group, fenced, now
            )
        async with self.engine.begin() as connection:
            if not self.sqlite:
                await connection.execute(text("SET LOCAL synchronous_commit TO OFF"))
            refused: set[int] = set()
            if fenced:
                result = await connection.execute(*fence_check(fenced))
                refused = fencing_refused(result, fenced)
            rows = _rows(group, refused, now)
            if rows:
                await connection.execute(self._insert, rows)
        return refused

    def _commit_sync(
        self, group: Sequence[_Pending], fenced: dict[int, int], now: datetime
    ) -> set[int]:
        """SQLite's group, in the writer's thread, on the driver's own connection: every
        statement in one go, each compiled once (:class:`~server.db.driver.DriverStatement`)."""
        writer = self._writer()
        cursor = writer.connection.cursor()
        try:
            # The write lock from the start, so no statement of the group finds another
            # writer's commit in its way.
            cursor.execute("BEGIN IMMEDIATE")
            refused = refused_on_cursor(cursor, writer.fence_held, fenced) if fenced else set()
            rows = _rows(group, refused, now)
            if rows:
                cursor.executemany(writer.insert.sql, writer.insert.many(rows))
            cursor.execute("COMMIT")
        except Exception:
            # A fresh connection for the next group: nothing of this one is left open on it
            # (a statement left unfinished would hold the write lock past the close).
            self._sync_writer = None
            with contextlib.suppress(sqlite3.Error):
                cursor.close()
                writer.connection.rollback()
            writer.connection.close()
            raise
        cursor.close()
        return refused

    def _executor(self) -> ThreadPoolExecutor:
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="write-ahead")
        return self._thread

    def _writer(self) -> _SqliteWriter:
        if self._sync_writer is None:
            database = self.engine.url.database
            assert database is not None  # a file: see _own_thread
            # Autocommit at the driver: BEGIN and COMMIT are the group's own.
            connection = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
            sqlite_pragmas(connection, None)
            dialect = self.engine.dialect
            self._sync_writer = _SqliteWriter(
                connection,
                DriverStatement.compile(FENCE_HELD, dialect),
                DriverStatement.compile(self._insert, dialect),
            )
        return self._sync_writer


@dataclass(frozen=True, slots=True)
class _SqliteWriter:
    """The writer thread's connection and its statements."""

    connection: sqlite3.Connection
    fence_held: DriverStatement
    insert: DriverStatement


def _settle(pending: _Pending, outcome: BaseException | None) -> None:
    if pending.done.done():
        return
    if outcome is None:
        pending.done.set_result(None)
    else:
        pending.done.set_exception(outcome)


def _rows(group: Sequence[_Pending], refused: set[int], now: datetime) -> list[dict[str, Any]]:
    return [
        {
            "table_id": p.table_id,
            "number": p.number,
            "position": p.position,
            "action": p.action,
            "created_at": now,
        }
        for p in group
        if p.table_id not in refused
    ]
