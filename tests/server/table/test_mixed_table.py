"""A mixed table (server/table/mixed.py) on the cardroom and its database: the stud mix (stud,
razz, stud hi-lo, 8 hands each) dealt for 48 hands, each hand of the scheduled game, told
(``game``) and recorded with its place in the rotation, its PHH replaying under its variant;
a table whose node goes away mid-rotation dealt on by the next at the same game and count."""

from __future__ import annotations

import contextlib
import random
from typing import Any

import pytest
from play import PASSWORDS, calling, play, submit, wait_for
from server_helpers import FAST_HASHING
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from engine import phh, phh_replay
from engine.events import decode
from engine.rotation import Position, Rotation, positions
from engine.table_view import TablePicture
from engine.variants import VARIANTS
from server.accounts import registry
from server.api.routers.hands import get_hand
from server.bus.memory import MemoryBus, table_channel
from server.cardroom.supervisor import Cardroom
from server.db.models import Account, HandRecord, LiveAction, Role
from server.db.session import make_sessionmaker
from server.settings import Settings
from server.store import tables
from server.store.books import check_books
from server.store.hands import UnknownHand
from server.verify import verify

STUD_MIX: dict[str, Any] = {
    "games": [
        {"variant": "seven_card_stud"},
        {"variant": "razz"},
        {"variant": "seven_card_stud_hi_lo"},
    ],
    "hands": 8,
    "stakes": {"ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
}
PLAYERS = ["ann", "bob", "cat", "dan"]


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        pause_between_hands_seconds=0,
        showdown_pause_seconds=0,
        action_clock_seconds=30,
        **FAST_HASHING,
    )


@pytest.fixture
def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return make_sessionmaker(engine)


async def mixed_table(
    sessionmaker: async_sessionmaker[AsyncSession], rotation: dict[str, Any]
) -> int:
    """Four players with 5,000 chips each, and a mixed table; its id."""
    async with sessionmaker() as session:
        for player in PLAYERS:
            await registry.register(
                session,
                passwords=PASSWORDS,
                username=player,
                password="x" * 8,
                role=Role.PLAYER,
                bankroll=5_000,
            )
        record = await tables.create(session, name="Mix", config={}, rotation=rotation)
        await session.commit()
        return record.id


def cardroom_on(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, bus: MemoryBus
) -> Cardroom:
    return Cardroom(
        bus=bus, sessionmaker=sessionmaker, settings=settings, seal=settings.deck_seal()
    )


async def recorded(
    sessionmaker: async_sessionmaker[AsyncSession], table_id: int
) -> list[HandRecord]:
    async with sessionmaker() as session:
        rows = await session.scalars(
            select(HandRecord).where(HandRecord.table_id == table_id).order_by(HandRecord.number)
        )
        return list(rows.all())


async def test_the_stud_mix_deals_48_hands_each_of_its_scheduled_game(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    table_id = await mixed_table(sessionmaker, STUD_MIX)
    bus = MemoryBus()
    told = bus.subscribe(table_channel(table_id), size=200_000)
    cardroom = cardroom_on(sessionmaker, settings, bus)
    await cardroom.start()
    try:
        actor = cardroom.actor(table_id)
        assert actor is not None
        snapshot = actor.snapshot(None)
        for player in PLAYERS:
            await submit(actor, "sit", player, buy_in=1_000)
        await play(actor, lambda: actor.hand_number > 48, rng=random.Random(32))
        last_told = actor.mix.told if actor.mix is not None else None
    finally:
        await cardroom.stop()
    frames = await told.get_ready(limit=200_000)
    # A spectator's fold of the snapshot and the events after it knows the game now.
    picture = TablePicture.of_snapshot(snapshot)
    for frame in frames:
        public = frame.get("type") == "event" and not frame.get("private")
        if public and frame["seq"] > snapshot["seq"]:
            picture.apply(decode(frame["kind"], frame["data"]))
    assert picture.game is not None and picture.game == last_told
    assert picture.rules is not None and picture.rules["variant"] == picture.game["variant"]
    rotation = Rotation.from_dict(STUD_MIX)
    hands = [h for h in await recorded(sessionmaker, table_id) if h.number <= 48]
    assert [h.number for h in hands] == list(range(1, 49))
    scheduled = positions(rotation, [len(h.result["net"]) for h in hands])
    games = {f["data"]["hand"]: f["data"] for f in frames if f.get("kind") == "game"}
    started = [f["data"] for f in frames if f.get("kind") == "hand_started"]
    for hand, position in zip(hands, scheduled, strict=True):
        game = rotation.games[position.game]
        assert position.game == (hand.number - 1) // 8 % 3
        assert hand.rotation == position.to_dict()
        assert hand.config is not None and hand.config["variant"] == game.variant.name
        announced = games[hand.number]
        assert announced["variant"] == game.variant.name
        assert announced["game_hand"] == position.hand and announced["game_hands"] == 8
        assert announced["hands_left"] == 8 - position.hand
        words = f"{game.variant.title}, hand {position.hand} of 8"
        if position.hand == 8:
            following = rotation.games[(position.game + 1) % 3]
            words += f"; next: {following.variant.title}"
            assert announced["next_variant"] == following.variant.name
        assert announced["text"] == words
        assert started[hand.number - 1]["variant"] == game.variant.name
        history = phh.loads(hand.phh)
        assert history.variant == VARIANTS[game.variant.name].phh_code
        stacks = hand.result
        assert stacks["cancelled"] is False
        assert phh_replay.replay(history) == list(history.finishing_stacks or ()), hand.number
    async with sessionmaker() as session:
        assert (await check_books(session)).balanced
        # stud-verify checks each hand under its own game, from the history of it of a
        # player dealt in (a player may have lost their chips and sat out by then).
        accounts = (
            await session.scalars(select(Account).where(Account.username.in_(PLAYERS)))
        ).all()
        for hand in hands:
            histories = []
            for account in accounts:
                with contextlib.suppress(UnknownHand):
                    histories.append(await get_hand(hand.id, account, session))
            assert histories, hand.number
            # The player's hand list and history name the hand's own game.
            assert histories[0].variant == hand.config["variant"], hand.number
            verdict = verify(histories[0].model_dump(mode="json"))
            assert verdict.fair, (verdict.lines, hand.number)


async def test_a_table_taken_over_mid_rotation_deals_the_same_game_and_count(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    table_id = await mixed_table(sessionmaker, STUD_MIX)
    first = cardroom_on(sessionmaker, settings, MemoryBus())
    await first.start()
    actor = first.actor(table_id)
    assert actor is not None
    for player in PLAYERS[:3]:
        await submit(actor, "sit", player, buy_in=1_000)
    await play(actor, lambda: actor.hand_number >= 11)
    await play(actor, lambda: actor.recorded_actions >= 2, choose=calling)
    hand = actor.table.hand
    assert hand is not None and not hand.is_over() and actor.hand_number == 11
    assert hand.config.variant.name == "razz"
    assert actor.mix is not None and actor.mix.told is not None
    assert actor.mix.told["text"] == "Razz, hand 3 of 8"
    await first.stop()  # the node goes away mid-hand, mid-rotation

    second = cardroom_on(sessionmaker, settings, MemoryBus())
    await second.start()
    try:
        again = second.actor(table_id)
        assert again is not None and again.mix is not None
        resumed = again.table.hand
        assert again.hand_number == 11 and resumed is not None
        assert resumed.config.variant.name == "razz"
        assert again.mix.position(11) == {"game": 1, "hand": 3, "of": 8}
        assert again.mix.told is not None and again.mix.told["text"] == "Razz, hand 3 of 8"
        assert again.snapshot(None)["rotation"]["game"]["next_variant"] == "seven_card_stud_hi_lo"
        for player in PLAYERS[:3]:  # nobody is connected after a restart: back in
            await submit(again, "sit_in", player)
        await play(again, lambda: again.hand_number > 17, rng=random.Random(5))
    finally:
        await second.stop()
    hands = {h.number: h for h in await recorded(sessionmaker, table_id)}
    for number in range(1, 18):
        position = Position.from_dict(hands[number].rotation)
        assert position.game == (number - 1) // 8 % 3 and position.hand == (number - 1) % 8 + 1
    assert hands[11].result["cancelled"] is False  # finished on the second node
    assert hands[16].config["variant"] == "razz"
    assert hands[17].config["variant"] == "seven_card_stud_hi_lo"


async def test_a_table_restarted_between_hands_reads_its_count_from_the_journal(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    orbit = {**{k: v for k, v in STUD_MIX.items() if k != "hands"}, "unit": "orbit"}
    table_id = await mixed_table(sessionmaker, orbit)
    first = cardroom_on(sessionmaker, settings, MemoryBus())
    await first.start()
    actor = first.actor(table_id)
    assert actor is not None
    for player in PLAYERS[:3]:
        await submit(actor, "sit", player, buy_in=1_000)
    await play(actor, lambda: actor.hand_number >= 2 and actor.table.hand is not None)
    # Everyone sits out: the hand in play ends, and no other is dealt.
    for player in PLAYERS[:3]:
        await submit(actor, "sit_out", player)
    await play(actor, lambda: actor.table.hand is None or actor.table.hand.is_over())
    await wait_for(lambda: actor.between_hands.is_set())
    dealt = actor.hand_number
    await first.stop()

    second = cardroom_on(sessionmaker, settings, MemoryBus())
    await second.start()
    try:
        again = second.actor(table_id)
        assert again is not None and again.mix is not None
        assert again.mix.last is not None and again.mix.last_number == dealt
        assert again.mix.told is not None and again.mix.told["hand"] == dealt
        for player in PLAYERS[:3]:
            await submit(again, "sit_in", player)
        await play(again, lambda: again.hand_number > 7)
    finally:
        await second.stop()
    hands = [h for h in await recorded(sessionmaker, table_id) if h.number <= 7]
    assert len(hands) == 7
    # Each orbit as long as the players dealt in at its start, across the restart.
    dealt_to = [len(h.result["net"]) for h in hands]
    assert [h.rotation for h in hands] == [
        p.to_dict() for p in positions(Rotation.from_dict(orbit), dealt_to)
    ]
    assert {h.rotation["game"] for h in hands} >= {0, 1}


async def test_a_hand_that_cannot_be_resumed_is_voided_and_keeps_its_place(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    table_id = await mixed_table(sessionmaker, {**STUD_MIX, "hands": 2})
    first = cardroom_on(sessionmaker, settings, MemoryBus())
    await first.start()
    actor = first.actor(table_id)
    assert actor is not None
    for player in PLAYERS[:2]:
        await submit(actor, "sit", player, buy_in=1_000)
    await play(actor, lambda: actor.hand_number >= 3)
    await play(actor, lambda: actor.recorded_actions >= 2, choose=calling)
    number = actor.hand_number
    await first.stop()
    async with sessionmaker() as session, session.begin():
        # What no engine would take: the stored actions no longer replay.
        await session.execute(
            update(LiveAction)
            .where(LiveAction.table_id == table_id, LiveAction.position == 1)
            .values(action={"seat": 0, "kind": "raise", "amount": 10**6})
        )
    second = cardroom_on(sessionmaker, settings, MemoryBus())
    await second.start()
    try:
        again = second.actor(table_id)
        assert again is not None
        await wait_for(lambda: again.hands_cancelled == 1)
        for player in PLAYERS[:2]:
            await submit(again, "sit_in", player)
        await play(again, lambda: again.hand_number > number + 1)
    finally:
        await second.stop()
    hands = {h.number: h for h in await recorded(sessionmaker, table_id)}
    assert hands[number].result["cancelled"] == "resume_failed"
    rotation = Rotation.from_dict({**STUD_MIX, "hands": 2})
    dealt = [hands[n].rotation for n in range(1, number + 2)]
    assert dealt == [p.to_dict() for p in positions(rotation, [2] * (number + 1))]
