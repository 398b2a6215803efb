"""PostgreSQL itself: every migration up and down, the models as migrated, and the ledger
under concurrent transfers (row locks keep every balance whole and the books balanced).

The rest of the server suite runs on PostgreSQL too, through the ``database_url`` fixture.
"""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import AsyncIterator, Iterator

import pytest
from alembic.script import ScriptDirectory
from backends import PostgresServer, needs_postgresql
from sqlalchemy import func, inspect, select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from test_migrations import (
    MODEL_TABLES,
    _differences,
    table_names,
    walk_the_audit_log,
    walk_the_support_role,
)

from server.accounts import ledger, registry
from server.accounts.ledger import EntryKind
from server.db import migrate
from server.db.models import LedgerEntry, Role, Wallet, WalletKind
from server.db.session import make_engine, make_sessionmaker

pytestmark = needs_postgresql


@pytest.fixture
def empty_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A database of the test's own, with nothing in it."""
    name = postgres_server.create()
    try:
        yield postgres_server.url_of(name)
    finally:
        postgres_server.drop(name)


@pytest.fixture
async def empty(empty_url: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(empty_url)
    yield engine
    await engine.dispose()


async def test_every_migration_up_and_down(empty: AsyncEngine) -> None:
    """One revision at a time to head and back to base: each step down undoes its step up."""
    script = ScriptDirectory.from_config(migrate.alembic_config())
    revisions = [r.revision for r in reversed(list(script.walk_revisions()))]
    assert len(revisions) >= 2
    seen = [await table_names(empty)]
    for revision in revisions:
        await migrate.upgrade(empty, revision)
        assert await migrate.current_revision(empty) == revision
        seen.append(await table_names(empty))
    assert seen[-1] == MODEL_TABLES | {"alembic_version"}
    async with empty.connect() as connection:
        house = await connection.scalar(text("SELECT balance FROM wallets WHERE kind = 'house'"))
    assert house == 0
    for revision, tables in zip(reversed(revisions), reversed(seen[:-1]), strict=True):
        await migrate.downgrade(empty, "-1")
        assert await table_names(empty) == tables | {"alembic_version"}, revision
    assert await migrate.current_revision(empty) is None
    await migrate.upgrade(empty)
    assert await table_names(empty) == MODEL_TABLES | {"alembic_version"}


async def test_the_migrations_make_exactly_the_models(empty: AsyncEngine) -> None:
    """PostgreSQL reflects what SQLite cannot (the lower(username) index): nothing differs."""
    await migrate.upgrade(empty)
    async with empty.connect() as connection:
        assert await connection.run_sync(_differences) == []
        indexes = await connection.run_sync(lambda sync: inspect(sync).get_indexes("accounts"))
    assert {"uq_accounts_username_lower"} <= {index["name"] for index in indexes}


async def test_the_support_role_up_and_down(empty: AsyncEngine) -> None:
    """Revision 0004 alters the role CHECK in place, keeping every account and its rows."""
    await walk_the_support_role(empty)


async def test_the_audit_log_up_and_down(empty: AsyncEngine) -> None:
    """Revision 0005 adds the audit log (JSONB values, a foreign key to the actor) and
    drops it again, keeping every account."""
    await walk_the_audit_log(empty)


# ---------------------------------------------------------------------- the ledger, concurrently


@pytest.fixture
async def pooled(empty_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    """A migrated database behind a pool wide enough for every concurrent transaction."""
    engine = make_engine(empty_url, pool_size=25, max_overflow=0)
    await migrate.upgrade(engine)
    yield make_sessionmaker(engine)
    await engine.dispose()


async def player(sessions: async_sessionmaker[AsyncSession], name: str, chips: int) -> int:
    async with sessions() as session:
        account = await registry.create(session, username=name, password_hash="-", role=Role.PLAYER)
        if chips:
            await ledger.grant(session, account_id=account.id, amount=chips)
        await session.commit()
        return account.id


async def tables(sessions: async_sessionmaker[AsyncSession], *ids: int) -> None:
    async with sessions() as session:
        for table_id in ids:
            await ledger.open_wallet(
                session, name=ledger.table_pool(table_id), kind=WalletKind.TABLE
            )
        await session.commit()


async def balances(sessions: async_sessionmaker[AsyncSession]) -> dict[str, int]:
    async with sessions() as session:
        rows = await session.execute(select(Wallet.name, Wallet.balance))
        return {name: balance for name, balance in rows}


async def books_balance(sessions: async_sessionmaker[AsyncSession]) -> None:
    async with sessions() as session:
        books = await ledger.verify_books(session)
    assert books.balanced, books


async def test_concurrent_buy_ins_never_overdraw_a_wallet(
    pooled: async_sessionmaker[AsyncSession],
) -> None:
    """Fifty transactions at once, thirty chips each, out of a wallet of a thousand: exactly
    thirty-three go through, the rest are refused, and not a chip is lost or made."""
    ann = await player(pooled, "ann", 1_000)
    await tables(pooled, 1)
    start = asyncio.Barrier(50)

    async def buy_in() -> bool:
        async with pooled() as session:
            await start.wait()  # every transaction begins together
            try:
                await ledger.buy_in(session, account_id=ann, table_id=1, amount=30)
            except ledger.InsufficientFunds:
                await session.rollback()
                return False
            await asyncio.sleep(0.005)  # hold the row lock while the others queue on it
            await session.commit()
            return True

    results = await asyncio.gather(*(buy_in() for _ in range(50)))
    assert results.count(True) == 33
    assert await balances(pooled) == {
        ledger.HOUSE: -1_000,
        ledger.REVENUE: 0,
        "player:1": 10,
        "table:1": 990,
    }
    async with pooled() as session:
        entries = await session.scalar(select(func.count()).select_from(LedgerEntry))
    assert entries == 1 + 33
    await books_balance(pooled)


async def test_opposite_transfers_at_once_do_not_deadlock(
    pooled: async_sessionmaker[AsyncSession],
) -> None:
    """Movements both ways between two wallets at once: rows locked in id order, so none
    waits on another forever; every movement lands and the sum stays."""
    ann, bob = await player(pooled, "ann", 500), await player(pooled, "bob", 500)
    start = asyncio.Barrier(40)

    async def move(n: int) -> None:
        debit, credit = (ann, bob) if n % 2 else (bob, ann)
        async with pooled() as session:
            await start.wait()
            await ledger.transfer(
                session,
                debit=ledger.player_wallet(debit),
                credit=ledger.player_wallet(credit),
                amount=1 + n % 5,
                kind=EntryKind.ADJUSTMENT,
                reference=str(n),
            )
            await asyncio.sleep(0.002)
            await session.commit()

    await asyncio.wait_for(asyncio.gather(*(move(n) for n in range(40))), 60)
    after = await balances(pooled)
    assert after["player:1"] + after["player:2"] == 1_000
    await books_balance(pooled)


async def test_random_concurrent_movements_keep_the_books(
    pooled: async_sessionmaker[AsyncSession],
) -> None:
    """Twenty workers, three hundred seeded random movements among six wallets, overdrafts
    among them: no balance below zero, every balance its movements' sum, chips conserved."""
    rng = random.Random(20261206)
    ids = [await player(pooled, f"p{i}", 300) for i in range(4)]
    await tables(pooled, 1, 2)
    names = [ledger.player_wallet(i) for i in ids] + [ledger.table_pool(1), ledger.table_pool(2)]
    plan = [(*rng.sample(names, 2), rng.randint(1, 200)) for _ in range(300)]
    work: asyncio.Queue[tuple[str, str, int]] = asyncio.Queue()
    for step in plan:
        work.put_nowait(step)
    refused = 0

    async def worker() -> None:
        nonlocal refused
        while not work.empty():
            debit, credit, amount = work.get_nowait()
            async with pooled() as session:
                try:
                    await ledger.transfer(
                        session,
                        debit=debit,
                        credit=credit,
                        amount=amount,
                        kind=EntryKind.ADJUSTMENT,
                    )
                    await session.commit()
                except ledger.InsufficientFunds:
                    refused += 1
                    await session.rollback()

    await asyncio.wait_for(asyncio.gather(*(worker() for _ in range(20))), 120)
    after = await balances(pooled)
    assert all(balance >= 0 for name, balance in after.items() if name != ledger.HOUSE)
    assert sum(b for name, b in after.items() if name != ledger.HOUSE) == 4 * 300
    assert 0 < refused < len(plan)
    await books_balance(pooled)


_MIGRATE_ON_GO = """
import asyncio, sys
from server.db import migrate
from server.db.session import make_engine

async def main():
    engine = make_engine(sys.argv[1])
    print("ready", flush=True)
    sys.stdin.readline()  # every node starts at once
    try:
        await migrate.upgrade(engine)
    finally:
        await engine.dispose()

asyncio.run(main())
"""


async def test_nodes_starting_together_migrate_one_after_the_other(empty_url: str) -> None:
    """Each node migrates on start: on one fresh database, at the same moment, all succeed."""
    nodes = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _MIGRATE_ON_GO,
            empty_url,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(3)
    ]
    for node in nodes:
        assert node.stdout is not None
        assert await node.stdout.readline() == b"ready\n"
    for node in nodes:
        assert node.stdin is not None
        node.stdin.write(b"go\n")
    for node in nodes:
        _, err = await node.communicate()
        assert node.returncode == 0, err.decode()[-2000:]
    engine = make_engine(empty_url)
    try:
        assert await migrate.current_revision(engine) == migrate.head_revision()
    finally:
        await engine.dispose()
