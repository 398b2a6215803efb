"""The cardroom: actors built from the database, supervised, restarted; the lobby list."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from fastapi import FastAPI
from play import calling, crash, play, seed, submit, wait_for
from server_helpers import FAST_HASHING, bearer, error_code, operator_token
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from engine.views import view
from server.bus.memory import MemoryBus
from server.cardroom.supervisor import Cardroom
from server.cardroom.table_stats import STATS_WINDOW, TableStats
from server.db.models import HandRecord, LiveAction, LiveHand, TableRecord
from server.db.session import make_sessionmaker
from server.settings import Settings
from server.store.books import check_books
from server.store.table_store import seated_players


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


def cardroom_on(sessionmaker: async_sessionmaker[AsyncSession], settings: Settings) -> Cardroom:
    return Cardroom(
        bus=MemoryBus(), sessionmaker=sessionmaker, settings=settings, seal=settings.deck_seal()
    )


async def test_a_restart_resumes_the_hand_in_progress_where_it_was(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    table_id = await seed(sessionmaker, ["ann", "bob", "cat"])
    first = cardroom_on(sessionmaker, settings)
    await first.start()
    actor = first.actor(table_id)
    assert actor is not None
    for player in ("ann", "bob", "cat"):
        await submit(actor, "sit", player, buy_in=100)
    hands = actor.hand_number
    await play(actor, lambda: actor.hand_number >= hands + 3)  # 2 saved, 1 in progress
    await play(actor, lambda: actor.recorded_actions >= 3, choose=calling)
    hand = actor.table.hand
    assert hand is not None and not hand.is_over()
    number, seq = actor.hand_number, actor.seq
    seen = {seat: view(hand.events, seat) for seat in hand.seats}
    legal = hand.legal_actions()
    await first.stop()  # the process goes away mid-hand

    second = cardroom_on(sessionmaker, settings)
    await second.start()
    try:
        again = second.actor(table_id)
        assert again is not None
        resumed = again.table.hand
        assert again.hand_number == number and resumed is not None
        assert {seat: view(resumed.events, seat) for seat in resumed.seats} == seen
        assert resumed.legal_actions() == legal
        assert again.seq > seq, "the sequence jumps: clients resync"
        players = {s.player: s for s in again.table.seats if s is not None}
        assert not any(s.sitting_out for s in players.values()), "the hand's players play on"
        await play(again, lambda: again.hand_number >= number + 1)
    finally:
        await second.stop()
    async with sessionmaker() as session:
        assert (await check_books(session)).balanced
        finished = await session.scalar(
            select(HandRecord).where(HandRecord.table_id == table_id, HandRecord.number == number)
        )
        assert finished is not None and finished.result["cancelled"] is False
        # The record holds the whole hand, dealt on one node and finished on the other.
        assert finished.events[: len(hand.events)] == [
            {"kind": e.kind, "data": e.data, "to": e.to} for e in hand.events
        ]
        assert await session.scalar(select(func.count()).select_from(LiveHand)) in (0, 1)


async def test_a_hand_that_cannot_be_resumed_is_voided_with_every_chip_back(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    table_id = await seed(sessionmaker, ["ann", "bob"])
    first = cardroom_on(sessionmaker, settings)
    await first.start()
    actor = first.actor(table_id)
    assert actor is not None
    for player in ("ann", "bob"):
        await submit(actor, "sit", player, buy_in=100)
    await play(actor, lambda: actor.hand_number >= 2)
    await play(actor, lambda: actor.recorded_actions >= 2, choose=calling)
    hand = actor.table.hand
    assert hand is not None and not hand.is_over()
    number = actor.hand_number
    starting = {
        actor.table.seats[s].player: hand.starting[i]  # type: ignore[union-attr]
        for i, s in enumerate(hand.seats)
    }
    await first.stop()
    async with sessionmaker() as session, session.begin():
        # What no engine would take: the stored actions no longer replay.
        await session.execute(
            update(LiveAction)
            .where(LiveAction.table_id == table_id, LiveAction.position == 1)
            .values(action={"seat": 0, "kind": "raise", "amount": 10**6})
        )

    second = cardroom_on(sessionmaker, settings)
    await second.start()
    try:
        again = second.actor(table_id)
        assert again is not None
        await wait_for(lambda: again.hands_cancelled == 1)
        assert {s.player: s.stack for s in again.table.seats if s is not None} == starting
    finally:
        await second.stop()
    async with sessionmaker() as session:
        voided = await session.scalar(
            select(HandRecord).where(HandRecord.table_id == table_id, HandRecord.number == number)
        )
        assert voided is not None and voided.result["cancelled"] == "resume_failed"
        assert voided.events[-1]["kind"] == "hand_cancelled"
        assert voided.events[-1]["data"]["reason"] == "resume_failed"
        assert await session.scalar(select(func.count()).select_from(LiveHand)) == 0
        rows = await seated_players(session, table_id=table_id)
        assert {p: c for _, p, c in rows} == starting
        assert (await check_books(session)).balanced


async def test_a_crashed_actor_restarts_and_the_other_tables_play_on(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    one = await seed(sessionmaker, ["ann", "bob"], name="one")
    two = await seed(sessionmaker, ["cat", "dan"], name="two")
    cardroom = cardroom_on(sessionmaker, settings)
    await cardroom.start()
    try:
        a, b = cardroom.actor(one), cardroom.actor(two)
        assert a is not None and b is not None
        for actor, players in ((a, ("ann", "bob")), (b, ("cat", "dan"))):
            for player in players:
                await submit(actor, "sit", player, buy_in=100)
        await play(a, lambda: a.hand_number >= 2)
        hand = a.table.hand
        assert hand is not None and not hand.is_over()
        starting = sorted(hand.starting)
        number = a.hand_number
        b_hands = b.hand_number
        await crash(a)
        await wait_for(lambda: cardroom.actor(one) is not a)
        restarted = cardroom.actor(one)
        assert restarted is not None and restarted.task is not None
        assert not restarted.task.done()
        assert restarted.seq > a.seq, "the sequence goes on"
        assert sorted(s.stack for s in restarted.table.seats if s is not None) == starting
        assert cardroom.summary(one)["restarts"] == 1
        # The other table never stopped; the restarted one deals again.
        assert cardroom.actor(two) is b and not b.stopped.is_set()
        await play(b, lambda: b.hand_number >= b_hands + 2)
        await play(restarted, lambda: restarted.hand_number >= number + 2)
    finally:
        await cardroom.stop()
    async with sessionmaker() as session:
        voided = await session.scalar(
            select(HandRecord).where(HandRecord.table_id == one, HandRecord.number == number)
        )
        assert voided is not None and voided.result["cancelled"] == "table_restarted"
        assert voided.events[-1]["kind"] == "hand_cancelled"
        assert (await check_books(session)).balanced


def test_stats_count_the_last_hour_and_average_the_pots() -> None:
    now = [10_000.0]
    stats = TableStats(clock=lambda: now[0])
    assert stats.average_pot() == 0 and stats.hands_per_hour() == 0
    for pot in (10, 20, 30):
        stats.record(pot)
    now[0] += 600  # three hands in a table's first ten minutes: 18 an hour
    assert stats.average_pot() == 20 and stats.hands_per_hour() == 18
    now[0] += STATS_WINDOW  # an hour on, nothing recent
    assert stats.hands_per_hour() == 0 and stats.average_pot() == 20


async def test_the_lobby_lists_tables_as_they_play(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    assert (await client.get("/tables")).json() == []
    boss = await operator_token(client, settings)
    for name in ("ann", "bob", "cat"):
        await client.post("/auth/register", json={"username": name, "password": "p" * 10})
    created = await client.post(
        "/admin/tables",
        headers=bearer(boss),
        json={"name": "Razz", "seats": 2, "config": {"variant": "razz"}},
    )
    assert created.status_code == 201, created.text
    table_id = created.json()["id"]
    cardroom: Cardroom = app.state.cardroom
    actor = cardroom.actor(table_id)
    assert actor is not None, "the new table's actor runs at once"
    await submit(actor, "sit", "ann", buy_in=200)
    await submit(actor, "sit", "bob", buy_in=200)
    await submit(actor, "join_waiting_list", "cat")
    await play(actor, lambda: actor.hand_number >= 4)
    [listed] = (await client.get("/tables")).json()
    assert listed["id"] == table_id and listed["name"] == "Razz" and listed["variant"] == "razz"
    assert listed["variant_title"] == "Razz"
    assert listed["stakes"] == {"ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10}
    assert listed["structure"] == "fixed_limit"
    assert (listed["seats"], listed["seats_taken"], listed["waiting"]) == (2, 2, 1)
    assert listed["min_buy_in"] == 200 and listed["max_buy_in"] == 1000
    assert listed["average_pot"] > 0 and listed["hands_per_hour"] >= 3
    assert listed["restarts"] == 0
    refused = await client.post(
        "/admin/tables", headers=bearer(boss), json={"name": "Bad", "config": {"ante": -1}}
    )
    assert refused.status_code == 400 and error_code(refused) == "bad_config"
    assert len((await client.get("/tables")).json()) == 1


async def test_the_books_endpoint_is_for_operators(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    await client.post("/auth/register", json={"username": "ann", "password": "p" * 10})
    login = await client.post("/auth/login", json={"username": "ann", "password": "p" * 10})
    ann = login.json()["access_token"]
    assert error_code(await client.get("/admin/books", headers=bearer(ann))) == "not_operator"
    boss = await operator_token(client, settings)
    books = (await client.get("/admin/books", headers=bearer(boss))).json()
    assert books["balanced"] is True and books["granted"] == books["held"] == 10_000


async def test_a_table_taken_twice_at_once_is_claimed_once(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    """An operator's new table and a lease round reach for it at the same moment: one claim
    (the fencing token stays 1), one actor, and it runs."""
    cardroom = cardroom_on(sessionmaker, settings)
    await cardroom.start()
    try:
        table_ids = [await seed(sessionmaker, [], name=f"T{n}") for n in range(5)]
        async with sessionmaker() as session:
            records = [await session.get(TableRecord, table_id) for table_id in table_ids]
        await asyncio.gather(
            *(cardroom.open_table(record) for record in records if record is not None),
            cardroom.take_tables(),
            *(cardroom.open_table(record) for record in records if record is not None),
        )
        async with sessionmaker() as session:
            fences = (
                await session.scalars(
                    select(TableRecord.fence).where(TableRecord.id.in_(table_ids))
                )
            ).all()
        assert list(fences) == [1] * len(table_ids)
        for table_id in table_ids:
            actor = cardroom.actor(table_id)
            assert actor is not None and actor.task is not None and not actor.task.done()
    finally:
        await cardroom.stop()


async def test_a_node_alone_gossips_to_nobody(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    """Without other nodes (leases that never lapse) the lease rounds tell no lobby: the
    tables' lines and live states are not made each round for nobody to hear."""
    table_id = await seed(sessionmaker, ["ann", "bob", "cat"])
    room = cardroom_on(sessionmaker, settings.model_copy(update={"lease_seconds": 0.6}))
    heard = room.bus.subscribe("cardroom:lobby", size=100)
    rounds = 0
    renew_leases = room.lease_rounds.renew_leases

    async def counted() -> None:  # a round: its renewal, then what it tells (synchronously)
        nonlocal rounds
        try:
            await renew_leases()
        finally:
            rounds += 1

    room.lease_rounds.renew_leases = counted  # type: ignore[method-assign]
    await room.start()
    try:
        actor = room.actor(table_id)
        assert actor is not None
        for player in ("ann", "bob", "cat"):
            await submit(actor, "sit", player, buy_in=100)
        seated = rounds
        await wait_for(lambda: rounds >= seated + 3, timeout=3 * 0.6 + 5)  # several rounds
        told = []
        while not heard.queue.empty():
            message = heard.queue.get_nowait()
            if message is not None:
                told.append(message["type"])
        assert "lobby" not in told, told
        assert room.actor(table_id) is actor  # the rounds went on: the table runs
    finally:
        await room.stop()
