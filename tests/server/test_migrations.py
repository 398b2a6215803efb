"""Migrations up and down on SQLite, in sync with the models, and valid for PostgreSQL."""

from __future__ import annotations

import contextlib
import io
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

from server.db import migrate
from server.db.models import Base
from server.db.session import make_engine

ROOT = Path(__file__).resolve().parents[2]
MODEL_TABLES = set(Base.metadata.tables)


@pytest.fixture
async def empty(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(f"sqlite+aiosqlite:///{tmp_path / 'fresh.db'}")
    yield engine
    await engine.dispose()


async def table_names(engine: AsyncEngine) -> set[str]:
    async with engine.connect() as connection:
        return set(await connection.run_sync(lambda sync: inspect(sync).get_table_names()))


async def test_up_down_and_up_again(empty: AsyncEngine) -> None:
    assert await migrate.current_revision(empty) is None
    await migrate.upgrade(empty)
    assert await table_names(empty) == MODEL_TABLES | {"alembic_version"}
    assert await migrate.current_revision(empty) == migrate.head_revision()
    async with empty.connect() as connection:
        house = await connection.scalar(text("SELECT balance FROM wallets WHERE kind = 'house'"))
    assert house == 0

    await migrate.downgrade(empty, "base")
    assert await table_names(empty) == {"alembic_version"}
    assert await migrate.current_revision(empty) is None

    await migrate.upgrade(empty)
    assert await table_names(empty) == MODEL_TABLES | {"alembic_version"}


def _differences(connection: Connection) -> list[object]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, Base.metadata))


# SQLite cannot reflect the lower(username) index, and says so; PostgreSQL can.
@pytest.mark.filterwarnings("ignore:.*expression-based index")
async def test_the_migrations_make_exactly_the_models(empty: AsyncEngine) -> None:
    await migrate.upgrade(empty)
    async with empty.connect() as connection:
        assert await connection.run_sync(_differences) == []


def test_the_migrations_render_for_postgresql() -> None:
    buffer = io.StringIO()
    config = migrate.alembic_config("postgresql+asyncpg://stud@db/stud")
    config.output_buffer = buffer
    command.upgrade(config, "head", sql=True)
    command.downgrade(config, "head:base", sql=True)
    sql = buffer.getvalue()
    assert "CREATE UNIQUE INDEX uq_accounts_username_lower ON accounts (lower(username))" in sql
    assert "JSONB" in sql and "BIGSERIAL" in sql and "TIMESTAMP WITH TIME ZONE" in sql
    assert "CHECK (balance >= 0 OR kind = 'house')" in sql
    assert "DROP TABLE accounts" in sql


def test_alembic_ini_upgrades_and_downgrades_by_hand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``alembic upgrade head`` does from the repository root: URL from the settings."""
    database = tmp_path / "by-hand.db"
    monkeypatch.setenv("STUD_DATABASE_URL", f"sqlite:///{database}")
    monkeypatch.chdir(ROOT)
    config = Config(str(ROOT / "alembic.ini"), attributes={"configure_logger": False})
    command.upgrade(config, "head")
    assert _sqlite_tables(database) == MODEL_TABLES | {"alembic_version"}
    command.downgrade(config, "base")
    assert _sqlite_tables(database) == {"alembic_version"}


def _sqlite_tables(path: Path) -> set[str]:
    with contextlib.closing(sqlite3.connect(path)) as connection:
        rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {name for (name,) in rows}
