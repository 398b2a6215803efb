from __future__ import annotations

import random

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from server.accounts import ledger, registry
from server.accounts.ledger import EntryKind
from server.db.models import LedgerEntry, Role, Wallet, WalletKind


async def new_player(session: AsyncSession, name: str, grant: int = 0) -> int:
    account = await registry.create(session, username=name, password_hash="-", role=Role.PLAYER)
    if grant:
        await ledger.grant(session, account_id=account.id, amount=grant)
    return account.id


async def balances(session: AsyncSession) -> dict[str, int]:
    rows = await session.execute(select(Wallet.name, Wallet.balance))
    return {name: balance for name, balance in rows}


async def entry_count(session: AsyncSession) -> int:
    return await session.scalar(select(func.count()).select_from(LedgerEntry)) or 0


async def test_buy_in_and_cash_out_keep_the_books_balanced(session: AsyncSession) -> None:
    alice = await new_player(session, "alice", grant=1_000)
    bob = await new_player(session, "bob", grant=500)
    await ledger.open_wallet(session, name=ledger.table_pool(1), kind=WalletKind.TABLE)
    await ledger.buy_in(session, account_id=alice, table_id=1, amount=300)
    await ledger.buy_in(session, account_id=bob, table_id=1, amount=200)
    # Alice leaves with Bob's chips as well as hers (the table said so).
    await ledger.cash_out(session, account_id=alice, table_id=1, amount=450)
    await session.commit()

    assert await balances(session) == {
        ledger.HOUSE: -1_500,
        ledger.REVENUE: 0,
        "player:1": 1_150,
        "player:2": 300,
        "table:1": 50,
    }
    books = await ledger.verify_books(session)
    assert books.balanced
    assert (books.granted, books.held, books.house, books.mismatched) == (1_500, 1_500, -1_500, ())


async def test_an_overdraft_is_refused_and_changes_nothing(session: AsyncSession) -> None:
    bob = await new_player(session, "bob", grant=500)
    await ledger.open_wallet(session, name=ledger.table_pool(1), kind=WalletKind.TABLE)
    await ledger.buy_in(session, account_id=bob, table_id=1, amount=100)
    await session.commit()
    before, entries = await balances(session), await entry_count(session)

    with pytest.raises(ledger.InsufficientFunds) as refused:
        await ledger.buy_in(session, account_id=bob, table_id=1, amount=401)
    assert refused.value.code == "insufficient_funds"
    with pytest.raises(ledger.InsufficientFunds):
        await ledger.cash_out(session, account_id=bob, table_id=1, amount=101)
    await session.commit()

    assert await balances(session) == before
    assert await entry_count(session) == entries
    assert (await ledger.verify_books(session)).balanced


async def test_one_cause_many_movements_all_or_nothing(session: AsyncSession) -> None:
    alice = await new_player(session, "alice", grant=100)
    bob = await new_player(session, "bob", grant=100)
    await ledger.open_wallet(session, name=ledger.table_pool(1), kind=WalletKind.TABLE)
    await session.commit()
    before = await balances(session)
    with pytest.raises(ledger.InsufficientFunds):
        await ledger.buy_in(session, account_id=alice, table_id=1, amount=100)
        await ledger.buy_in(session, account_id=bob, table_id=1, amount=101)
    await session.rollback()  # the caller's transaction: the first movement goes too
    assert await balances(session) == before


async def test_balances_are_checked_in_sql(session: AsyncSession) -> None:
    await new_player(session, "alice", grant=10)
    await session.commit()
    with pytest.raises(IntegrityError, match="ck_wallets_balance|CHECK"):
        await session.execute(text("UPDATE wallets SET balance = -1 WHERE name = 'player:1'"))
    await session.rollback()
    with pytest.raises(IntegrityError):
        await session.execute(
            text(
                "INSERT INTO ledger_entries (debit_wallet_id, credit_wallet_id, amount, kind, "
                "created_at) VALUES (1, 2, 0, 'grant', '2026-01-01 00:00:00')"
            )
        )
    await session.rollback()
    # Only the house, the issuer, may stand below zero.
    await session.execute(text("UPDATE wallets SET balance = -5 WHERE name = 'house:bankroll'"))
    await session.rollback()


@pytest.mark.parametrize("amount", [0, -5, True, 1.5, "10"])
async def test_amounts_are_positive_whole_chips(session: AsyncSession, amount: object) -> None:
    alice = await new_player(session, "alice", grant=100)
    with pytest.raises(ledger.BadAmount):
        await ledger.grant(session, account_id=alice, amount=amount)  # type: ignore[arg-type]


async def test_unknown_and_identical_wallets(session: AsyncSession) -> None:
    alice = await new_player(session, "alice", grant=100)
    with pytest.raises(ledger.UnknownWallet):
        await ledger.buy_in(session, account_id=alice, table_id=99, amount=1)
    with pytest.raises(ledger.BadAmount):
        await ledger.transfer(
            session, debit="player:1", credit="player:1", amount=1, kind=EntryKind.ADJUSTMENT
        )


async def test_verify_books_finds_a_balance_changed_behind_the_ledger(
    session: AsyncSession,
) -> None:
    await new_player(session, "alice", grant=100)
    await session.commit()
    assert (await ledger.verify_books(session)).balanced
    await session.execute(text("UPDATE wallets SET balance = balance + 5 WHERE name = 'player:1'"))
    books = await ledger.verify_books(session)
    assert not books.balanced and books.mismatched == ("player:1",)
    assert books.differences() == [
        "wallet player:1 holds 105 chips, but its ledger movements add up to 100 (5 chips more)",
        "the player wallets, table pools and house revenue hold 105 chips, but the house "
        "issued 100 (100 given out, 0 taken back): 5 chips too many",
        "the house bankroll stands at -100, but the chips out of it are 105 "
        "(it should stand at -105)",
    ]


async def test_random_movements_match_a_model_of_the_books(session: AsyncSession) -> None:
    """200 seeded movements, some overdrafts: the database agrees with plain arithmetic."""
    rng = random.Random(20261129)
    players = [await new_player(session, f"p{i}") for i in range(4)]
    for table in (1, 2):
        await ledger.open_wallet(session, name=ledger.table_pool(table), kind=WalletKind.TABLE)
    model = {name: 0 for name in await balances(session)}
    names = sorted(name for name in model if name != ledger.HOUSE)
    refused = 0
    for step in range(200):
        if rng.random() < 0.2:
            debit, credit = ledger.HOUSE, ledger.player_wallet(rng.choice(players))
            kind = EntryKind.GRANT
        else:
            debit, credit = rng.sample(names, 2)
            kind = EntryKind.ADJUSTMENT
        amount = rng.randint(1, 400)
        try:
            await ledger.transfer(
                session, debit=debit, credit=credit, amount=amount, kind=kind, reference=str(step)
            )
        except ledger.InsufficientFunds:
            assert model[debit] < amount
            refused += 1
            continue
        model[debit] -= amount
        model[credit] += amount
    await session.commit()
    assert refused > 10
    assert await balances(session) == model
    assert all(balance >= 0 for name, balance in model.items() if name != ledger.HOUSE)
    assert (await ledger.verify_books(session)).balanced


async def test_statement_reads_from_the_wallet_side(session: AsyncSession) -> None:
    alice = await new_player(session, "alice", grant=100)
    await ledger.open_wallet(session, name=ledger.table_pool(3), kind=WalletKind.TABLE)
    await ledger.buy_in(session, account_id=alice, table_id=3, amount=40)
    lines = await ledger.statement(session, wallet=ledger.player_wallet(alice))
    assert [(line.kind, line.amount, line.counterparty) for line in lines] == [
        ("buy_in", -40, "table:3"),
        ("grant", 100, ledger.HOUSE),
    ]
    pool = await ledger.statement(session, wallet="table:3")
    assert [(line.amount, line.counterparty) for line in pool] == [(40, "player:1")]
