"""``stud-server audit``, run as an operator runs it, on books made by a table that played:
balanced books pass, and each kind of tampering is found and said in words."""

from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import run_async
from play import calling, play, seed, submit
from sqlalchemy import func, select, text

from server import cli
from server.bus.memory import MemoryBus
from server.db import migrate
from server.db.models import HandRecord, LiveHand
from server.db.session import make_engine, make_sessionmaker
from server.store import tables
from server.store.deck_seal import DeckSeal
from server.store.table_store import DatabaseTableStore
from server.table.actor import TableActor
from server.table.ports import TableSettings


async def _play_at_a_table(database_url: str) -> int:
    """Three players buy in (100, 150, 200), play hands, bob leaves (cashed out), and a hand
    is left in progress mid-street (its players' chips still in their seats); the table id."""
    engine = make_engine(database_url)
    try:
        await migrate.upgrade(engine)
        sessionmaker = make_sessionmaker(engine)
        table_id = await seed(sessionmaker, ["ann", "bob", "cat"])
        rng = random.Random(5)
        actor = TableActor(
            table_id,
            tables.config_from_json({}),
            bus=MemoryBus(),
            store=DatabaseTableStore(sessionmaker, seal=DeckSeal.generate()),
            settings=TableSettings(
                min_buy_in=20, max_buy_in=500, action_clock=5.0, pause_between_hands=0.0
            ),
            rng_factory=lambda: random.Random(rng.random()),
        )
        actor.start()
        try:
            for player, buy_in in (("ann", 100), ("bob", 150), ("cat", 200)):
                await submit(actor, "sit", player, buy_in=buy_in)
            await play(actor, lambda: actor.hand_number >= 4, choose=calling)
            await submit(actor, "leave", "bob")  # cashed out when the hand ends
            await play(actor, lambda: actor.hand_number >= 6, choose=calling)
            await play(actor, lambda: actor.recorded_actions >= 2, choose=calling)
        finally:
            await actor.stop()  # the hand in progress stays written ahead, unfinished
        async with sessionmaker() as session:
            assert await session.scalar(select(func.count()).select_from(LiveHand)) == 1
            assert (await session.scalar(select(func.count()).select_from(HandRecord)) or 0) >= 5
        return table_id
    finally:
        await engine.dispose()


async def _execute(database_url: str, statement: str, **values: object) -> None:
    engine = make_engine(database_url)
    try:
        async with engine.begin() as connection:
            changed = await connection.execute(text(statement), values)
            assert changed.rowcount == 1, statement
    finally:
        await engine.dispose()


@pytest.fixture
def table_id(database_url: str) -> Iterator[int]:
    yield run_async(lambda: _play_at_a_table(database_url))


def audit(database_url: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    status = cli.main(["--database-url", database_url, "audit"])
    return status, capsys.readouterr().out.splitlines()


def test_balanced_books_pass(
    database_url: str, table_id: int, capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines = audit(database_url, capsys)
    assert status == 0, lines
    assert len(lines) == 1
    assert re.fullmatch(
        r"the books balance: 3000 chips issued by the house: \d+ in player wallets, "
        r"\d+ in table pools, 0 in house revenue; every wallet matches its ledger movements, "
        r"every table's pool its seats \(1 table\), every recorded hand nets to zero after its "
        r"rake \(\d+ hands, 0 chips raked\)",
        lines[0],
    ), lines


def test_a_wallet_balance_changed_behind_the_ledger(
    database_url: str, table_id: int, capsys: pytest.CaptureFixture[str]
) -> None:
    run_async(
        lambda: _execute(
            database_url, "UPDATE wallets SET balance = balance + 7 WHERE name = 'player:3'"
        )
    )
    status, lines = audit(database_url, capsys)
    assert status == 1
    assert re.fullmatch(
        r"wallet player:3 holds (\d+) chips, but its ledger movements add up to \d+ "
        r"\(7 chips more\)",
        lines[0],
    ), lines
    assert re.fullmatch(
        r"the player wallets, table pools and house revenue hold 3007 chips, but the house "
        r"issued 3000 \(3000 given out, 0 taken back\): 7 chips too many",
        lines[1],
    ), lines
    assert lines[2:] == [
        "the house bankroll stands at -3000, but the chips out of it are 3007 "
        "(it should stand at -3007)",
        "the books do not balance: 3 differences",
    ]


def test_a_seat_with_chips_its_pool_does_not_hold(
    database_url: str, table_id: int, capsys: pytest.CaptureFixture[str]
) -> None:
    run_async(
        lambda: _execute(
            database_url,
            "UPDATE seats SET chips = chips + 3 WHERE table_id = :table AND seat = 0",
            table=table_id,
        )
    )
    status, lines = audit(database_url, capsys)
    assert status == 1
    found = re.fullmatch(
        rf"table {table_id}: its pool table:{table_id} holds (\d+) chips, but its seats "
        r"hold (\d+)",
        lines[0],
    )
    assert found and int(found[2]) == int(found[1]) + 3, lines
    assert lines[1:] == ["the books do not balance: 1 difference"]


def test_a_hand_that_no_longer_nets_to_zero(
    database_url: str, table_id: int, capsys: pytest.CaptureFixture[str]
) -> None:
    run_async(
        lambda: _execute(
            database_url,
            "UPDATE hand_players SET ending = ending + 2 WHERE account_id = 1 AND hand_id = "
            "(SELECT id FROM hands WHERE table_id = :table AND number = 2)",
            table=table_id,
        )
    )
    status, lines = audit(database_url, capsys)
    assert status == 1
    assert re.fullmatch(
        rf"hand 2 of table {table_id} \(hand id \d+\): its players end with 2 chips more "
        r"than they started with",
        lines[0],
    ), lines
    assert lines[1:] == ["the books do not balance: 1 difference"]


def test_a_ledger_row_deleted(
    database_url: str, table_id: int, capsys: pytest.CaptureFixture[str]
) -> None:
    # Bob's buy-in of 150: his wallet and the table's pool no longer match their movements.
    run_async(
        lambda: _execute(
            database_url, "DELETE FROM ledger_entries WHERE kind = 'buy_in' AND amount = 150"
        )
    )
    status, lines = audit(database_url, capsys)
    assert status == 1
    assert re.fullmatch(
        r"wallet player:2 holds \d+ chips, but its ledger movements add up to \d+ "
        r"\(150 chips fewer\)",
        lines[0],
    ), lines
    assert re.fullmatch(
        rf"wallet table:{table_id} holds \d+ chips, but its ledger movements add up to "
        r"-?\d+ \(150 chips more\)",
        lines[1],
    ), lines
    assert lines[2:] == ["the books do not balance: 2 differences"]


def test_a_database_not_migrated_is_not_audited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sqlite3.connect(tmp_path / "new.db").close()  # there, and empty (one not there: test_cli_tools)
    assert cli.main(["--database-url", f"sqlite:///{tmp_path / 'new.db'}", "audit"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "cannot audit: the database is at revision none" in captured.err
