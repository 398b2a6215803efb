"""The async engine and session factory, made once per app from its settings."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import orjson
from sqlalchemy import event, exc
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from server.db.data_dir import prepare_sqlite


def make_engine(
    url: str,
    *,
    timeout: float | None = None,
    pool_size: int | None = None,
    pool_overflow: int | None = None,
    **kwargs: Any,
) -> AsyncEngine:
    """An async engine; on SQLite, foreign keys on and a writer-friendly journal.

    ``timeout`` (PostgreSQL): the longest a connect, a statement or a wait for a pooled
    connection may take before it counts as an outage (:func:`is_outage`) instead of
    hanging its caller; connections are checked before use, so those broken by a database
    restart are replaced rather than failing a transaction. ``pool_size`` and
    ``pool_overflow`` (PostgreSQL) bound its connections. A SQLite file that is missing is
    made owner-only first, its directory too (server/db/data_dir.py)."""
    prepare_sqlite(url)
    if url.startswith("postgresql"):
        pool: dict[str, Any] = {"pool_size": pool_size, "max_overflow": pool_overflow}
        kwargs = {k: v for k, v in pool.items() if v is not None} | kwargs
        if timeout is not None:
            connect_args = {"timeout": timeout, "command_timeout": timeout}
            kwargs = {
                "connect_args": connect_args,
                "pool_timeout": timeout,
                "pool_pre_ping": True,
                **kwargs,
            }
    engine = create_async_engine(url, json_serializer=json_text, **kwargs)
    if engine.dialect.name == "sqlite":
        event.listen(engine.sync_engine, "connect", sqlite_pragmas)
    return engine


def json_text(value: Any) -> str:
    """A JSON column's text as orjson writes it: every action written ahead and every hand
    record is JSON, and the standard library's encoder took several times orjson's time on
    that path. What orjson refuses (an integer past 64 bits) is written as the standard
    library writes it; keys that are not strings become strings in both."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value)


def sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # SQLite ignores foreign keys unless asked, per connection.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=5000")
    # Write-ahead log: readers never wait for the writer, and a commit is an append. With
    # synchronous=NORMAL a commit survives the process being killed (what the tables write
    # ahead of play guards against); only a power cut may lose the last few.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    # Objects stay readable after commit: routes build their answers after committing.
    return async_sessionmaker(engine, expire_on_commit=False)


def is_outage(error: BaseException) -> bool:
    """Whether ``error`` says the database could not be reached or did not answer in time
    (worth trying again later), rather than that it refused the statement."""
    if isinstance(error, exc.DBAPIError) and error.connection_invalidated:
        return True
    outages = (*_OUTAGES, *_asyncpg_outages())
    if isinstance(error, outages):
        return True
    # SQLAlchemy wraps what the driver raised.
    cause = error.__cause__ or error.__context__
    return isinstance(error, exc.DBAPIError) and isinstance(cause, outages)


_OUTAGES = (
    exc.OperationalError,
    exc.InterfaceError,
    exc.TimeoutError,
    OSError,
    TimeoutError,
    # The driver's own, as SQLAlchemy would wrap them (the write-ahead's SQLite thread runs
    # its statements on the driver).
    sqlite3.OperationalError,
)


def _asyncpg_outages() -> tuple[type[BaseException], ...]:
    import asyncpg  # type: ignore[import-untyped]  # a dependency of the server

    return (asyncpg.PostgresConnectionError, asyncpg.InterfaceError, asyncpg.CannotConnectNowError)
