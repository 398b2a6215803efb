"""Apply Alembic migrations from code: the server's only way of making its tables.

The scripts live in ``migrations/`` at the repository root; ``alembic.ini`` there runs the
same scripts by hand (``alembic upgrade head``).
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"


def alembic_config(url: str | None = None) -> Config:
    """An Alembic config without an ini file; ``url`` overrides the settings' URL."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Migrate the engine's database up to ``revision`` (run inside a running event loop;
    nodes starting together on PostgreSQL take turns: see migrations/env.py)."""
    async with engine.begin() as connection:
        await connection.run_sync(_run, "upgrade", revision)


async def downgrade(engine: AsyncEngine, revision: str) -> None:
    async with engine.begin() as connection:
        await connection.run_sync(_run, "downgrade", revision)


async def current_revision(engine: AsyncEngine) -> str | None:
    """The database's revision (None: never migrated); quiet, for readiness probes."""
    async with engine.connect() as connection:
        return await connection.run_sync(_current)


def _current(connection: Connection) -> str | None:
    if not inspect(connection).has_table("alembic_version"):
        return None
    return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()


def _run(connection: Connection, action: str, revision: str) -> None:
    config = alembic_config()
    # env.py runs on this connection instead of opening its own engine.
    config.attributes["connection"] = connection
    getattr(command, action)(config, revision)
