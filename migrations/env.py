"""Alembic environment: the URL comes from the server's settings, the engine is async.

Run by hand through ``alembic.ini``, or from ``server.db.migrate`` on a connection the
server already holds (``config.attributes["connection"]``).
"""

from __future__ import annotations

import asyncio
from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection, pool, text

from server.db.models import Base
from server.db.session import make_engine
from server.settings import Settings

config = context.config
# Logging from alembic.ini by hand; a caller that has its own logging says configure_logger=False.
if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata
MIGRATION_LOCK = 0x5754_0D00  # the advisory lock key of migrations (a constant of this server's)


def _url() -> str:
    return config.get_main_option("sqlalchemy.url") or Settings().database_url


def _configure(**kwargs: object) -> None:
    context.configure(
        target_metadata=target_metadata,
        # SQLite alters tables by copying them; batch mode does that for later migrations.
        render_as_batch=True,
        compare_type=True,
        **kwargs,  # type: ignore[arg-type]
    )


def run_offline() -> None:
    _configure(url=_url(), literal_binds=True, dialect_opts={"paramstyle": "named"})
    with context.begin_transaction():
        context.run_migrations()


def _run_on(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        # Nodes starting together migrate one after the other, the later ones finding the
        # work done; the lock holds until the migration's transaction ends.
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
    _configure(connection=connection)
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    engine = make_engine(_url(), poolclass=pool.NullPool)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(_run_on)
    finally:
        await engine.dispose()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run_on(connection)
    else:
        asyncio.run(_run_async())


if context.is_offline_mode():
    run_offline()
else:
    run_online()
