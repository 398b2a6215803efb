"""A mixed tournament's table in the database, on SQLite and PostgreSQL: each level told with
its game is written to the table's row and dealt from the next hand (a hand in progress keeps
its game), each hand recorded with its level and its count there; a node that takes the table
over mid-hand resumes the hand in its game and deals on at the level's game and count."""

from __future__ import annotations

from typing import Any

import pytest
from play import calling, play, wait_for
from server_helpers import FAST_HASHING
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from test_tournament_table_store import make_event

from engine.tournament.games import LevelGame
from server.bus.memory import MemoryBus, table_channel
from server.cardroom.supervisor import Cardroom
from server.db.models import HandRecord, TableRecord
from server.db.session import make_sessionmaker
from server.settings import Settings
from server.table import commands as cmd
from server.table.actor import TableActor
from server.table.level_games import LevelGames
from server.table.ports import CommandRefused

STUD, RAZZ, HI_LO = "seven_card_stud", "razz", "seven_card_stud_hi_lo"


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


def level(event: int, number: int, game: str, following: str) -> cmd.SetStakes:
    ante = 2 * number
    return cmd.SetStakes(
        tournament_id=event,
        ante=ante,
        bring_in=2 * ante,
        small_bet=4 * ante,
        big_bet=8 * ante,
        level=LevelGame(number, game, following).to_dict(),
    )


async def deal(actor: TableActor, event: int, number: int) -> None:
    await actor.submit(cmd.DealNext(tournament_id=event, number=number))
    await wait_for(lambda: actor.hand_number == number and actor.table.hand is not None)


def cardroom(sessionmaker: async_sessionmaker[AsyncSession], settings: Settings) -> Cardroom:
    return Cardroom(
        bus=MemoryBus(), sessionmaker=sessionmaker, settings=settings, seal=settings.deck_seal()
    )


async def test_a_mixed_tournament_table_deals_each_levels_game_across_a_takeover(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    event, table_id = await make_event(sessionmaker, ["ann", "bob", "cat"])
    first = cardroom(sessionmaker, settings)
    await first.start()
    actor = first.actor(table_id)
    assert actor is not None
    told = actor.bus.subscribe(table_channel(table_id), size=10_000)
    for n, player in enumerate(("ann", "bob", "cat")):
        await actor.submit(cmd.SeatEntrant(player=player, tournament_id=event, seat=n, stack=500))
    # Level 1 between hands: its game at once; the row keeps its rules and the level.
    assert await actor.submit(level(event, 1, STUD, RAZZ)) == {"after_hand": False}
    assert isinstance(actor.mix, LevelGames) and actor.table.config.variant.name == STUD
    await deal(actor, event, 1)
    await play(actor, lambda: actor.table.hand is None, choose=calling)
    # Level 2 between hands: razz from the next hand.
    await actor.submit(level(event, 2, RAZZ, HI_LO))
    assert actor.table.config.variant.name == RAZZ
    async with sessionmaker() as session:
        row = await session.get(TableRecord, table_id)
        assert row is not None and row.variant == RAZZ and row.config["variant"] == RAZZ
        assert row.rotation == {"rotation": None, "from_hand": 1, "level": {
            "level": 2, "game": RAZZ, "next_game": HI_LO}}  # fmt: skip
    await deal(actor, event, 2)
    await play(actor, lambda: actor.recorded_actions >= 2, choose=calling)
    hand = actor.table.hand
    assert hand is not None and not hand.is_over() and hand.config.variant.name == RAZZ
    snapshot = actor.snapshot(None)
    assert snapshot["rotation"]["level"] == 2 and snapshot["rotation"]["unit"] == "level"
    assert snapshot["rotation"]["game"]["text"] == "Razz, level 2, hand 1"
    await first.stop()  # the process goes away mid-hand

    second = cardroom(sessionmaker, settings)
    await second.start()
    try:
        again = second.actor(table_id)
        assert again is not None and isinstance(again.mix, LevelGames)
        resumed = again.table.hand
        assert resumed is not None and resumed.config.variant.name == RAZZ
        assert again.snapshot(None)["rotation"]["game"]["next_variant"] == HI_LO
        await play(again, lambda: again.table.hand is None, choose=calling)
        await deal(again, event, 3)  # the level's game, counted on
        assert again.table.hand is not None and again.table.hand.config.variant.name == RAZZ
        assert again.mix.position(3) == {"game": 1, "hand": 2, "of": 0, "level": 2}
        # Level 3 told during hand 3: the hand keeps razz, hand 4 is stud hi-lo.
        assert await again.submit(level(event, 3, HI_LO, STUD)) == {"after_hand": True}
        assert again.table.hand.config.variant.name == RAZZ
        await play(again, lambda: again.table.hand is None, choose=calling)
        await deal(again, event, 4)
        assert again.table.hand.config.variant.name == HI_LO
        await play(again, lambda: again.table.hand is None, choose=calling)
    finally:
        await second.stop()
    async with sessionmaker() as session:
        hands = (
            await session.scalars(
                select(HandRecord)
                .where(HandRecord.table_id == table_id)
                .order_by(HandRecord.number)
            )
        ).all()
        played: list[tuple[Any, ...]] = [
            (h.number, h.config["variant"] if h.config else None, h.rotation) for h in hands
        ]
    assert played == [
        (1, STUD, {"game": 0, "hand": 1, "of": 0, "level": 1}),
        (2, RAZZ, {"game": 1, "hand": 1, "of": 0, "level": 2}),
        (3, RAZZ, {"game": 1, "hand": 2, "of": 0, "level": 2}),
        (4, HI_LO, {"game": 2, "hand": 1, "of": 0, "level": 3}),
    ]
    frames = await told.get_ready(limit=10_000)
    games = [f["data"] for f in frames if f.get("kind") == "game"]
    assert [(g["hand"], g["variant"], g["text"]) for g in games] == [
        (1, STUD, "Seven-Card Stud, level 1, hand 1"),
        (2, RAZZ, "Razz, level 2, hand 1"),
    ]  # the first node's; the second's bus is its own


async def test_a_level_whose_game_seats_fewer_than_the_table_is_refused_and_not_written(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    event, table_id = await make_event(sessionmaker, ["ann", "bob"])  # a table of 8 seats
    room = cardroom(sessionmaker, settings)
    await room.start()
    try:
        actor = room.actor(table_id)
        assert actor is not None
        with pytest.raises(CommandRefused) as refusal:
            await actor.submit(level(event, 1, "eight_card_stud", STUD))  # seats at most 7
        assert refusal.value.code == "bad_seat_count"
        assert actor.mix is None and actor.table.config.variant.name == STUD
    finally:
        await room.stop()
    async with sessionmaker() as session:
        row = await session.get(TableRecord, table_id)
        assert row is not None and row.rotation is None and row.config["ante"] == 1
