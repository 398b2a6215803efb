"""The lobby's hands per hour and average pot after a node takes a table (a restart, a
takeover): counted over the table's last hour, from when the table was made, never from
when this node took it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from play import play, seed, submit
from server_helpers import FAST_HASHING
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from server.bus.memory import MemoryBus
from server.cardroom.supervisor import Cardroom
from server.cardroom.table_stats import TableStats, seed_stats
from server.db.models import HandRecord, TableRecord
from server.db.session import make_sessionmaker
from server.db.types import utcnow
from server.settings import Settings


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        pause_between_hands_seconds=0,
        action_clock_seconds=30,
        **FAST_HASHING,
    )


@pytest.fixture
def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return make_sessionmaker(engine)


def cardroom_on(sessionmaker: async_sessionmaker[AsyncSession], settings: Settings) -> Cardroom:
    return Cardroom(
        bus=MemoryBus(), sessionmaker=sessionmaker, settings=settings, seal=settings.deck_seal()
    )


async def age(
    sessionmaker: async_sessionmaker[AsyncSession],
    table_id: int,
    *,
    made: timedelta,
    apart: timedelta,
) -> int:
    """The table made ``made`` ago, its hands dealt ``apart`` from each other up to now;
    how many were played out (not voided)."""
    now = utcnow()
    async with sessionmaker() as session:
        await session.execute(
            update(TableRecord).where(TableRecord.id == table_id).values(created_at=now - made)
        )
        hands = (
            await session.scalars(
                select(HandRecord)
                .where(HandRecord.table_id == table_id)
                .order_by(HandRecord.id.desc())
            )
        ).all()
        for back, hand in enumerate(hands, start=1):
            hand.created_at = now - back * apart
        await session.commit()
        return sum(1 for hand in hands if not hand.result.get("cancelled"))


async def test_a_restarted_table_s_rate_is_its_hour_s_not_the_node_s_minute(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    table_id = await seed(sessionmaker, ["ann", "bob"])
    first = cardroom_on(sessionmaker, settings)
    await first.start()
    actor = first.actor(table_id)
    assert actor is not None
    for player in ("ann", "bob"):
        await submit(actor, "sit", player, buy_in=100)
    await play(actor, lambda: actor.hand_number >= 7)
    [before] = first.lobby()
    await first.stop()  # the hand in progress is voided: not counted
    # As the table had it: made two hours ago, its hands 24 s apart (150 an hour).
    played = await age(sessionmaker, table_id, made=timedelta(hours=2), apart=timedelta(seconds=24))
    assert played >= 6
    second = cardroom_on(sessionmaker, settings)
    await second.start()
    try:
        [after] = second.lobby()
        assert after["id"] == table_id
        # The last hour's hands, over the hour (they were all in it).
        assert after["hands_per_hour"] == played, (before, after)
        assert after["average_pot"] == before["average_pot"] > 0
    finally:
        await second.stop()


async def test_a_busy_hour_counts_every_hand_and_a_young_table_its_own_age(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    busy = await seed(sessionmaker, [], name="busy")
    young = await seed(sessionmaker, [], name="young")
    async with sessionmaker() as session:
        for table_id, count, pot in ((busy, 130, 40), (young, 20, 10)):
            for number in range(1, count + 1):
                result = {"pots": [{"amount": pot + number % 2}], "net": {}}
                session.add(
                    HandRecord(table_id=table_id, number=number, phh="", events=[], result=result)
                )
        await session.commit()
    # The busy table: 130 hands 25 s apart in its last hour, made a day ago; the young one
    # made ten minutes ago, with 20 hands since (120 an hour at that pace).
    await age(sessionmaker, busy, made=timedelta(days=1), apart=timedelta(seconds=25))
    await age(sessionmaker, young, made=timedelta(minutes=10), apart=timedelta(seconds=25))
    stats = {table_id: TableStats() for table_id in (busy, young)}
    for table_id, table_stats in stats.items():
        await seed_stats(sessionmaker, table_id, table_stats)
    assert stats[busy].hands_per_hour() == 130  # more than the 50 the average pot is of
    assert stats[busy].average_pot() == 40  # 25 pots of 40 and 25 of 41, rounded to even
    assert stats[young].hands_per_hour() == 120
