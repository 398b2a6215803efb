"""The database store of the table actors: every chip accounted for after every hand."""

from __future__ import annotations

import random

import pytest
from play import play, seed, submit, wait_for
from server_helpers import FAST_HASHING
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from server.accounts import ledger
from server.bus.memory import MemoryBus
from server.db.models import HandPlayer, HandRecord, SeatRecord
from server.db.session import make_sessionmaker
from server.settings import Settings
from server.store import tables
from server.store.books import check_books
from server.store.deck_seal import DeckSeal
from server.store.records import FinishedHand
from server.store.table_store import BooksError, DatabaseTableStore, table_chips
from server.table.actor import TableActor
from server.table.ports import CommandRefused, TableSettings


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(database_url=database_url, **FAST_HASHING)


@pytest.fixture
def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return make_sessionmaker(engine)


SEAL = DeckSeal.generate()


class CheckedStore(DatabaseTableStore):
    """The real store, checking the books after every hand it saves."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        super().__init__(sessionmaker, seal=SEAL)
        self.checks: list[bool] = []
        self.saved: list[FinishedHand] = []

    async def save_hand(self, hand: FinishedHand) -> None:
        await super().save_hand(hand)
        self.saved.append(hand)
        async with self._sessionmaker() as session:
            self.checks.append((await check_books(session)).balanced)


def make_actor(table_id: int, store: DatabaseTableStore, seed_: int = 6) -> TableActor:
    rng = random.Random(seed_)
    return TableActor(
        table_id,
        tables.config_from_json({}),
        bus=MemoryBus(),
        store=store,
        settings=TableSettings(
            min_buy_in=20, max_buy_in=500, action_clock=5.0, pause_between_hands=0.0
        ),
        rng_factory=lambda: random.Random(rng.random()),
    )


async def test_every_hand_keeps_the_books(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    players = ["ann", "bob", "cat", "dan"]
    table_id = await seed(sessionmaker, players)
    store = CheckedStore(sessionmaker)
    actor = make_actor(table_id, store)
    actor.start()
    try:
        for n, player in enumerate(players):
            await submit(actor, "sit", player, buy_in=100 + 10 * n)
        await play(actor, lambda: len(store.saved) >= 4)
        # Chips added and a departure during a hand take effect when it ends.
        await wait_for(lambda: actor.table.hand is not None)
        await submit(actor, "add_chips", "ann", amount=50)
        await submit(actor, "leave", "dan")
        await play(actor, lambda: len(store.saved) >= 12)
        for player in players:
            if actor.table.seat_of(player) is not None:
                await submit(actor, "sit_out", player, next_hand=True)
        await play(actor, lambda: actor.table.hand is None)
        for player in players:
            if actor.table.seat_of(player) is not None:
                await submit(actor, "leave", player)
    finally:
        await actor.stop()
    assert store.checks and all(store.checks)
    async with sessionmaker() as session:
        check = await check_books(session)
        assert check.balanced and check.tables[table_id] == (0, 0)
        wallets = [await ledger.balance(session, wallet=f"player:{i}") for i in range(1, 5)]
        assert sum(wallets) == 4 * 1_000
        hands = await session.scalar(select(func.count()).select_from(HandRecord))
        parts = (await session.execute(select(HandPlayer))).scalars().all()
        assert hands == len(store.saved)
        by_hand: dict[int, int] = {}
        for part in parts:
            by_hand[part.hand_id] = by_hand.get(part.hand_id, 0) + part.ending - part.starting
        assert set(by_hand.values()) == {0}, "every hand nets to zero"
        assert await session.scalar(select(func.count()).select_from(SeatRecord)) == 0


async def test_a_buy_in_beyond_the_wallet_is_refused_and_changes_nothing(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    table_id = await seed(sessionmaker, ["ann"], bankroll=150)
    actor = make_actor(table_id, DatabaseTableStore(sessionmaker, seal=SEAL))
    actor.start()
    try:
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "sit", "ann", buy_in=200)
        assert refused.value.code == "insufficient_funds"
        assert actor.table.seat_of("ann") is None
        await submit(actor, "sit", "ann", buy_in=100)
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "add_chips", "ann", amount=60)
        assert refused.value.code == "insufficient_funds"
        assert actor.table.seats[0] is not None and actor.table.seats[0].stack == 100
    finally:
        await actor.stop()
    async with sessionmaker() as session:
        assert await table_chips(session, table_id=table_id) == (100, 100)
        assert await ledger.balance(session, wallet="player:1") == 50
        assert (await check_books(session)).balanced


async def test_a_hand_that_would_make_chips_is_not_saved(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    table_id = await seed(sessionmaker, ["ann", "bob"])
    store = DatabaseTableStore(sessionmaker, seal=SEAL)
    await store.buy_in(table_id, "ann", 100, seat=0)
    await store.buy_in(table_id, "bob", 100, seat=1)
    bad = FinishedHand(
        table_id=table_id,
        number=1,
        events=[],
        result={},
        players={0: "ann", 1: "bob"},
        starting={"ann": 100, "bob": 100},
        stacks={"ann": 150, "bob": 60},
    )
    with pytest.raises(BooksError):
        await store.save_hand(bad)
    # A seat that is not there cannot win chips either: the transaction rolls back whole.
    ghost = FinishedHand(
        table_id=table_id,
        number=1,
        events=[],
        result={},
        players={0: "ann", 1: "bob"},
        starting={"ann": 100, "bob": 100},
        stacks={"ann": 150, "bob": 50},
    )
    await store.cash_out(table_id, "bob", 100)
    with pytest.raises(BooksError):
        await store.save_hand(ghost)
    async with sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(HandRecord)) == 0
        assert await table_chips(session, table_id=table_id) == (100, 100)
        assert (await check_books(session)).balanced
    with pytest.raises(BooksError):
        await store.cash_out(table_id, "ann", 99)  # ann holds 100
