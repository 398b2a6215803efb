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
from sqlalchemy import Connection, func, insert, inspect, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from server.accounts import audit_log, registry, tokens
from server.db import migrate
from server.db.models import Account, AuditEntry, Base, Role, Token, Wallet
from server.db.session import make_engine, make_sessionmaker
from server.db.types import utcnow

ROOT = Path(__file__).resolve().parents[3]
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


async def _refused(engine: AsyncEngine, username: str, role: str) -> bool:
    """Whether the database refuses a new account ``username`` with ``role``."""
    row = {"username": username, "password_hash": "-", "role": role, "created_at": utcnow()}
    try:
        async with engine.begin() as connection:
            await connection.execute(insert(Account).values(row))
    except IntegrityError:
        return True
    return False


async def walk_the_support_role(engine: AsyncEngine) -> None:
    """Revision 0004 admits ``support`` accounts and keeps every account as it was (its
    wallet, its tokens, the unique lower(username) index); down again, support accounts
    are players. Run on SQLite here and on PostgreSQL in test_postgresql."""
    sessions = make_sessionmaker(engine)
    await migrate.upgrade(engine, "0003")
    async with sessions() as session:
        ann = await registry.create(session, username="ann", password_hash="-", role=Role.BOT)
        await tokens.issue(session, account_id=ann.id, ttl_seconds=3600)
        await session.commit()
    assert await _refused(engine, "sue", "support")

    await migrate.upgrade(engine, "0004")
    async with sessions() as session:
        await registry.create(session, username="sue", password_hash="-", role=Role.SUPPORT)
        await session.commit()
        assert await session.scalar(select(Account.role).where(Account.id == ann.id)) == "bot"
        assert await session.scalar(select(func.count()).select_from(Token)) == 1
        assert await session.scalar(select(func.count()).select_from(Wallet)) == 3  # and house
    assert await _refused(engine, "ANN", "player")  # the index on lower(username) is there
    assert await _refused(engine, "max", "superuser")
    for role in Role:
        assert not await _refused(engine, f"new-{role}", role.value)

    await migrate.downgrade(engine, "0003")
    async with sessions() as session:
        rows = await session.execute(select(Account.username, Account.role))
        roles = {username: role for username, role in rows}
    assert roles["sue"] == "player" and roles["ann"] == "bot" and roles["new-support"] == "player"
    assert roles["new-operator"] == "operator"
    assert await _refused(engine, "sam", "support")
    assert await _refused(engine, "ANN", "player")
    await migrate.upgrade(engine)
    assert not await _refused(engine, "sam", "support")


async def test_the_support_role_up_and_down(empty: AsyncEngine) -> None:
    await walk_the_support_role(empty)


async def walk_the_audit_log(engine: AsyncEngine) -> None:
    """Revision 0005 adds the audit log next to everything that was (accounts keep their
    rows); an entry takes JSON values and an aware time, and names a real account; down
    again, the log is gone and the rest stays. Run on SQLite here and on PostgreSQL in
    test_postgresql."""
    sessions = make_sessionmaker(engine)
    await migrate.upgrade(engine, "0004")
    assert "audit_log" not in await table_names(engine)
    async with sessions() as session:
        boss = await registry.create(
            session, username="boss", password_hash="-", role=Role.OPERATOR
        )
        await session.commit()

    await migrate.upgrade(engine, "0005")
    async with sessions() as session:
        actor = await session.get(Account, boss.id)
        assert actor is not None
        entry = await audit_log.record(
            session,
            actor=actor,
            action=audit_log.AuditAction.PLAYER_CREDIT,
            target_kind="player",
            target_id="ann",
            before={"balance": 0},
            after={"balance": 5, "ledger_entry": 1},
            reason="goodwill",
        )
        await session.commit()
    async with sessions() as session:
        stored = await session.get(AuditEntry, entry.id)
        assert stored is not None
        assert (stored.before, stored.after) == ({"balance": 0}, {"balance": 5, "ledger_entry": 1})
        assert stored.created_at.tzinfo is not None
    with pytest.raises(IntegrityError):  # the actor is a real account
        async with engine.begin() as connection:
            await connection.execute(
                insert(AuditEntry).values(
                    actor_id=9999,
                    actor="ghost",
                    action="table.create",
                    target_kind="table",
                    target_id="1",
                    created_at=utcnow(),
                )
            )

    await migrate.downgrade(engine, "0004")
    assert "audit_log" not in await table_names(engine)
    async with sessions() as session:
        assert await session.scalar(select(Account.username).where(Account.id == boss.id)) == "boss"
    await migrate.upgrade(engine)
    assert "audit_log" in await table_names(engine)


async def test_the_audit_log_up_and_down(empty: AsyncEngine) -> None:
    await walk_the_audit_log(empty)
