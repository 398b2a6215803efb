"""The actions of a node's hands in progress, written ahead in groups (group commit).

Every action is in the database before its events go out (:mod:`server.table.journal`), so this
write is on the path of every action of every table. A node writes the actions that are
waiting, from all its tables, in one transaction: one statement checks every table's fence
(and, on PostgreSQL, locks the rows), one inserts every action; nothing waits for a timer,
so a quiet node writes each action at once and a busy one writes more of them a
transaction. The statements are SQLAlchemy Core, built once.

SQLite has one writer at a time. The node's writes of table state (this one and the
store's, :class:`~server.store.table_store.DatabaseTableStore`) take :attr:`WriteAhead.gate` in
turn rather than meeting in SQLite's busy handler, which sleeps in steps up to 100 ms. A
group goes to the driver as its statements were compiled once (:mod:`server.db.driver`),
without SQLAlchemy's work for each, on a connection of the write-ahead's own, written on
the event loop at once: with the log ahead (WAL) and ``synchronous=NORMAL`` a commit is an
append to the log, tens of microseconds, less than handing it to a thread and back. What
could make it wait is kept off the loop: that connection never waits for the lock (should
another writer hold it, a request's transaction or a tool, the group is written by the
write-ahead's thread, which waits), and never checkpoints (the thread copies the log into
the database every :data:`CHECKPOINT_EVERY` groups). On PostgreSQL the gate is open (rows
are locked per table) and the group goes through asyncpg on a connection the write-ahead
keeps, in four round trips whatever its size (begin, every fence in one statement, the
rows, commit), without waiting for the disk (``synchronous_commit`` off: the row outlives
the node at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.db.driver import DriverStatement
from server.db.models import LiveAction
from server.db.session import is_outage, sqlite_pragmas
from server.db.types import utcnow
from server.store.fencing import (
    FENCE_HELD,
    FENCES_HELD_ARRAY,
    fence_check,
    refused_on_asyncpg,
    refused_on_cursor,
    taken_over,
)
from server.store.fencing import refused as fencing_refused
from server.store.records import StoreUnavailable

_ACTIONS = cast(Table, LiveAction.__table__)
CHECKPOINT_EVERY = 200  # groups written on the event loop between checkpoints (SQLite)
log = logging.getLogger(__name__)


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
        self._writers: dict[bool, _SqliteWriter] = {}  # on the loop (True), in the thread
        self._since_checkpoint = 0
        self._asyncpg: tuple[DriverStatement, DriverStatement] | None = None
        self._held: AsyncConnection | None = None  # PostgreSQL: the write-ahead's connection
        self._checkpointing: asyncio.Future[None] | None = None
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
        if self._held is not None:
            held, self._held = self._held, None
            with contextlib.suppress(Exception):
                await held.invalidate()  # its sessions' settings are the write-ahead's own
            await held.close()
        for writer in self._writers.values():
            writer.connection.close()
        self._writers.clear()

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
            return await self._commit_sqlite(group, fenced, now)
        if not self.sqlite:
            return await self._commit_postgresql(group, fenced, now)
        async with self.engine.begin() as connection:
            refused: set[int] = set()
            if fenced:
                result = await connection.execute(*fence_check(fenced))
                refused = fencing_refused(result, fenced)
            rows = _rows(group, refused, now)
            if rows:
                await connection.execute(self._insert, rows)
        return refused

    async def _commit_postgresql(
        self, group: Sequence[_Pending], fenced: dict[int, int], now: datetime
    ) -> set[int]:
        """Through asyncpg itself, on a connection of the engine's pool that the write-ahead
        keeps (it writes one group at a time); one found broken is let go and the group
        written once more on a fresh one (an action is written once however often it is
        tried)."""
        held = self._held
        try:
            return await self._commit_asyncpg(group, fenced, now)
        except Exception:
            if held is None or self._held is held:  # not a kept connection found broken
                raise
            return await self._commit_asyncpg(group, fenced, now)

    async def _commit_asyncpg(
        self, group: Sequence[_Pending], fenced: dict[int, int], now: datetime
    ) -> set[int]:
        if self._asyncpg is None:
            dialect = self.engine.dialect
            self._asyncpg = (
                DriverStatement.compile(FENCES_HELD_ARRAY, dialect),
                DriverStatement.compile(self._insert, dialect),
            )
        check, insert = self._asyncpg
        fresh = self._held is None
        if self._held is None:
            self._held = await self.engine.connect()
        connection = self._held
        driver = None
        try:
            driver = (await connection.get_raw_connection()).driver_connection
            assert driver is not None
            if fresh:
                # For every group on this connection, set once: a round trip less a group.
                # The connection never goes back to the pool with it (see close).
                await driver.execute("SET synchronous_commit TO OFF")
            async with driver.transaction():
                refused = await refused_on_asyncpg(driver, check, fenced) if fenced else set()
                rows = _rows(group, refused, now)
                if rows:
                    await driver.executemany(insert.sql, insert.many(rows))
        except Exception as error:
            # Never back to the pool as if it were sound (a connection the server dropped
            # may also be found mid-protocol: asyncpg's InternalClientError).
            lost = type(error).__name__ == "InternalClientError"
            if lost or is_outage(error) or driver is None or driver.is_closed():
                self._held = None
                with contextlib.suppress(Exception):
                    await connection.invalidate()
                    await connection.close()
            raise
        return refused

    async def _commit_sqlite(
        self, group: Sequence[_Pending], fenced: dict[int, int], now: datetime
    ) -> set[int]:
        """On the event loop at once (a commit is an append to the log: no wait on the
        disk), unless another writer holds the database."""
        try:
            refused = self._commit_sync(self._writer(here=True), group, fenced, now)
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY:  # any kind of busy
                raise
            # Another writer holds the database (a request's transaction, a tool): wait
            # for it in the thread, never on the event loop.
            loop = asyncio.get_running_loop()
            there = self._writer(here=False)
            return await loop.run_in_executor(
                self._executor(), self._commit_sync, there, group, fenced, now
            )
        self._checkpoint_now_and_then()
        return refused

    def _commit_sync(
        self,
        writer: _SqliteWriter,
        group: Sequence[_Pending],
        fenced: dict[int, int],
        now: datetime,
    ) -> set[int]:
        """SQLite's group on a connection of the driver's own: every statement in one go,
        each compiled once (:class:`~server.db.driver.DriverStatement`)."""
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
            self._writers = {k: w for k, w in self._writers.items() if w is not writer}
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

    def _writer(self, *, here: bool) -> _SqliteWriter:
        """The connection written on the event loop (``here``: it never waits for the
        database's lock, nor checkpoints), or the one in the writer thread."""
        writer = self._writers.get(here)
        if writer is None:
            database = self.engine.url.database
            assert database is not None  # a file: see _own_thread
            # Autocommit at the driver: BEGIN and COMMIT are the group's own.
            connection = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
            sqlite_pragmas(connection, None)
            if here:
                connection.execute("PRAGMA busy_timeout=0")
                connection.execute("PRAGMA wal_autocheckpoint=0")
            dialect = self.engine.dialect
            writer = self._writers[here] = _SqliteWriter(
                connection,
                DriverStatement.compile(FENCE_HELD, dialect),
                DriverStatement.compile(self._insert, dialect),
            )
        return writer

    def _checkpoint_now_and_then(self) -> None:
        """Every so many groups written on the loop, their log copied into the database
        (a passive checkpoint: it waits for nobody) in the writer thread, which waits on
        the disk there."""
        self._since_checkpoint += 1
        if self._since_checkpoint < CHECKPOINT_EVERY or self._checkpointing is not None:
            return
        self._since_checkpoint = 0
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._executor(), self._checkpoint)
        self._checkpointing = future
        future.add_done_callback(self._checkpointed)

    def _checkpoint(self) -> None:
        writer = self._writer(here=False)
        writer.connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def _checkpointed(self, future: asyncio.Future[None]) -> None:
        self._checkpointing = None
        if not future.cancelled() and future.exception() is not None:
            log.warning("write-ahead: a checkpoint failed: %r", future.exception())


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
