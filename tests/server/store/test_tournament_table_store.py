"""A tournament's table in the database, on SQLite and PostgreSQL: made with no chip pool and a
tournament's rules, its players' chips in their seat rows and never in the ledger, the books
check leaving it out, and a hand with a player away resumed after a restart exactly as it was,
the director's permit kept."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from play import PASSWORDS, calling, play, submit, wait_for
from server_helpers import FAST_HASHING
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from engine.protocol import ErrorCode
from engine.variants import TableConfig
from engine.views import view
from server.accounts import ledger, registry
from server.bus.memory import MemoryBus
from server.cardroom.supervisor import Cardroom
from server.db.models import LedgerEntry, LiveHand, Role, TableRecord, Wallet
from server.db.session import make_sessionmaker
from server.settings import Settings
from server.store import tables
from server.store.books import check_books
from server.store.deck_seal import DeckSeal
from server.store.table_store import DatabaseTableStore, seated_players
from server.table import commands as cmd
from server.table.actor import TableActor
from server.table.ports import CommandRefused, TableSettings
from server.tournaments import registry as tournaments

TOURNEY = TableConfig(absent_hands="killed_after_starting_hands")
SEAL = DeckSeal.generate()


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        pause_between_hands_seconds=0,
        action_clock_seconds=5,
        **FAST_HASHING,
    )


@pytest.fixture
def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return make_sessionmaker(engine)


async def make_event(
    sessionmaker: async_sessionmaker[AsyncSession], players: list[str]
) -> tuple[int, int]:
    """Players, a sit-and-go and its table 1; (the tournament's id, the table's)."""
    async with sessionmaker() as session:
        for player in players:
            await registry.register(
                session,
                passwords=PASSWORDS,
                username=player,
                password="x" * 8,
                role=Role.PLAYER,
                bankroll=1_000,
            )
        event = await tournaments.create(
            session,
            name="Sunday SNG",
            template="stud-sng-9",
            spec=None,
            starts_at=None,
            created_by="boss",
            seal=SEAL,
        )
        table = await tables.create_tournament_table(
            session, tournament_id=event.id, number=1, config=TOURNEY, seats=8
        )
        await session.commit()
        return event.id, table.id


async def ledger_rows(sessionmaker: async_sessionmaker[AsyncSession]) -> int:
    async with sessionmaker() as session:
        return int(await session.scalar(select(func.count()).select_from(LedgerEntry)) or 0)


async def test_a_tournament_table_has_no_pool_and_a_tournament_s_rules(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    event, table_id = await make_event(sessionmaker, [])
    async with sessionmaker() as session:
        record = await session.get(TableRecord, table_id)
        assert record is not None
        assert (record.name, record.tournament_id, record.tournament_table) == (
            "Sunday SNG #1",
            event,
            1,
        )
        assert tables.table_config(record) == TOURNEY and record.seats == 8
        pool = await session.scalar(
            select(Wallet).where(Wallet.name == ledger.table_pool(table_id))
        )
        assert pool is None, "tournament chips are not money: no chip pool"
        made = {"tournament_id": event, "config": TOURNEY, "seats": 8}
        refusals: list[tuple[dict[str, Any], type[Exception], ErrorCode | None]] = [
            (
                {**made, "number": 2, "config": TableConfig()},
                tables.BadConfig,
                ErrorCode.BAD_CONFIG,
            ),
            (
                {
                    **made,
                    "number": 2,
                    "config": TableConfig(absent_hands=TOURNEY.absent_hands, rake_percent=5),
                },
                tables.BadConfig,
                ErrorCode.BAD_CONFIG,
            ),
            ({**made, "number": 2, "seats": 9}, tables.BadConfig, ErrorCode.BAD_CONFIG),
            ({**made, "number": 0}, tables.BadConfig, ErrorCode.BAD_CONFIG),
            ({**made, "number": 1}, tables.TableNameTaken, ErrorCode.TABLE_NAME_TAKEN),
            ({**made, "number": 2, "tournament_id": event + 1}, LookupError, None),
        ]
        for values, error, code in refusals:
            with pytest.raises(error) as refused:
                await tables.create_tournament_table(session, **values)
            if code is not None:
                assert getattr(refused.value, "code", None) == code
        await session.rollback()
        assert await session.scalar(select(func.count()).select_from(TableRecord)) == 1


async def test_tournament_chips_stay_in_the_seats_and_never_touch_the_ledger(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    players = ["ann", "bob", "cat", "dan"]
    event, table_id = await make_event(sessionmaker, players)
    rng = random.Random(4)
    actor = TableActor(
        table_id,
        TOURNEY,
        bus=MemoryBus(),
        store=DatabaseTableStore(sessionmaker, seal=SEAL),
        settings=TableSettings(min_buy_in=1, max_buy_in=1, action_clock=5.0, pause_between_hands=0),
        rng_factory=lambda: random.Random(rng.random()),
        tournament_id=event,
    )
    before = await ledger_rows(sessionmaker)
    actor.start()
    try:
        with pytest.raises(CommandRefused) as unknown:  # no account: the seat stays free
            await actor.submit(cmd.SeatEntrant(player="eve", tournament_id=event, seat=0, stack=9))
        assert unknown.value.code == ErrorCode.UNKNOWN_PLAYER and actor.table.seats[0] is None
        for n, player in enumerate(players):
            command = cmd.SeatEntrant(player=player, tournament_id=event, seat=n, stack=300)
            await actor.submit(command)
        await submit(actor, "leave", "dan")  # sits out: blinded off
        for number in range(1, 5):
            if number == 3:
                level = {"ante": 2, "bring_in": 3, "small_bet": 6, "big_bet": 12}
                await actor.submit(cmd.SetStakes(tournament_id=event, **level))
            await actor.submit(cmd.DealNext(tournament_id=event, number=number))
            await play(actor, lambda n=number: actor.hand_number == n and actor.table.hand is None)
        ann = actor.table.seats[0]
        assert ann is not None
        moved = await actor.submit(cmd.GiveUpPlayer(player="ann", tournament_id=event))
        assert moved["chips"] == ann.stack
        with pytest.raises(CommandRefused) as refused:  # a seat row is never written twice
            await actor.submit(cmd.SeatEntrant(player="bob", tournament_id=event, seat=6, stack=9))
        assert refused.value.code == ErrorCode.ALREADY_SEATED
        bob = actor.table.seats[1]
        assert bob is not None
        rebuy = cmd.AddEntrantChips(
            player="bob", tournament_id=event, chips=300, stack=bob.stack + 300
        )
        assert (await actor.submit(rebuy))["added"], "a rebuy's chips, written to the seat"
        assert not (await actor.submit(rebuy))["added"], "resent: added once"
        stacks = {s.player: s.stack for s in actor.table.seats if s is not None}
    finally:
        await actor.stop()
    assert await ledger_rows(sessionmaker) == before, "no ledger row at a tournament table"
    async with sessionmaker() as session:
        rows = await seated_players(session, table_id=table_id)
        assert {player: chips for _, player, chips in rows} == stacks
        assert sum(stacks.values()) + moved["chips"] == 5 * 300, "every chip issued is held"
        record = await session.get(TableRecord, table_id)
        assert record is not None and record.permitted_hand == 4
        assert (record.config["ante"], record.config["bring_in"]) == (2, 3)
        check = await check_books(session)
        assert check.balanced, check.differences()
        assert table_id not in check.tables and check.hands == 4 and not check.uneven_hands


async def test_a_hand_with_a_player_away_resumes_after_a_restart_as_it_was(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    event, table_id = await make_event(sessionmaker, ["ann", "bob", "cat"])
    first = Cardroom(
        bus=MemoryBus(), sessionmaker=sessionmaker, settings=settings, seal=settings.deck_seal()
    )
    await first.start()
    actor = first.actor(table_id)
    assert actor is not None and actor.tournament_id == event
    for n, player in enumerate(("ann", "bob", "cat")):
        await actor.submit(
            cmd.SeatEntrant(
                player=player, tournament_id=event, seat=n, stack=200, sitting_out=n == 2
            )
        )
    before = await ledger_rows(sessionmaker)
    await actor.submit(cmd.DealNext(tournament_id=event, number=1))
    await wait_for(lambda: actor.table.hand is not None)
    await play(actor, lambda: actor.recorded_actions >= 2, choose=calling)
    hand = actor.table.hand
    assert hand is not None and not hand.is_over() and hand.absent == (2,)
    seen = {seat: view(hand.events, seat) for seat in hand.seats}
    legal = hand.legal_actions()
    await first.stop()  # the process goes away mid-hand

    second = Cardroom(
        bus=MemoryBus(), sessionmaker=sessionmaker, settings=settings, seal=settings.deck_seal()
    )
    await second.start()
    try:
        again = second.actor(table_id)
        assert again is not None and again.tournament_id == event
        resumed = again.table.hand
        assert resumed is not None and again.hand_number == 1
        assert resumed.absent == (2,)
        assert {seat: view(resumed.events, seat) for seat in resumed.seats} == seen
        assert resumed.legal_actions() == legal
        away = {s.player: s.sitting_out for s in again.table.seats if s is not None}
        assert away == {"ann": False, "bob": False, "cat": True}, "the player away stays away"
        assert again.permitted_hand == 1
        await play(again, lambda: again.table.hand is None)
        await asyncio.sleep(0.05)
        assert again.hand_number == 1, "no hand without the director's permit"
        assert await again.submit(cmd.DealNext(tournament_id=event, number=1)) == {
            "hand": 1,
            "dealt": True,
        }
        await again.submit(cmd.DealNext(tournament_id=event, number=2))
        await wait_for(lambda: again.hand_number == 2)
        second_hand = again.table.hand
        assert second_hand is not None and second_hand.absent == (2,)
        await play(again, lambda: again.table.hand is None)
        stacks = {s.player: s.stack for s in again.table.seats if s is not None}
    finally:
        await second.stop()
    assert await ledger_rows(sessionmaker) == before
    async with sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(LiveHand)) == 0
        rows = await seated_players(session, table_id=table_id)
        assert {player: chips for _, player, chips in rows} == stacks
        assert sum(stacks.values()) == 600
        assert (await check_books(session)).balanced
