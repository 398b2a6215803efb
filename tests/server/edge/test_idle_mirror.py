"""A node's mirror of a table (server/edge/spectators.py) follows the table only while it
is asked: unasked for ``MIRROR_IDLE_SECONDS`` it lets its subscription go, holding none of
the table's events, and the next question bases it again, its answer the actor's own."""

from __future__ import annotations

import asyncio
import random

import pytest
from play import play, submit
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from test_mixed_spectators import MIX, agree

from server.bus.memory import MemoryBus, table_channel
from server.db.session import make_sessionmaker
from server.edge import spectators as spectators_module
from server.edge.spectators import Spectators
from server.settings import Settings
from server.table.actor import TableActor
from tests.server.table.test_mixed_table import PLAYERS, cardroom_on, mixed_table
from tests.server.table.test_mixed_table import settings as settings  # noqa: F401 - fixture


@pytest.fixture
def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return make_sessionmaker(engine)


async def test_an_unasked_mirror_lets_the_tables_events_go_and_is_based_again(
    sessionmaker: async_sessionmaker[AsyncSession],
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(spectators_module, "MIRROR_IDLE_SECONDS", 0.3)
    table_id = await mixed_table(sessionmaker, MIX)
    bus = MemoryBus()
    cardroom = cardroom_on(sessionmaker, settings, bus)
    await cardroom.start()
    spectators = Spectators(bus)
    channel = table_channel(table_id)

    def mirrors_listening() -> int:
        return sum(1 for s in bus._subscribers.get(channel, ()) if s is mirror.subscription)

    try:
        actor = cardroom.actor(table_id)
        assert isinstance(actor, TableActor)
        mirror = spectators.mirror(table_id)
        await agree(mirror, actor)
        for player in PLAYERS[:3]:
            await submit(actor, "sit", player, buy_in=500)
        await play(actor, lambda: actor.hand_number == 1, rng=random.Random(1))
        await agree(mirror, actor)  # asked within its time: folded from its events
        assert mirror.bases == 1 and mirrors_listening() == 1
        await asyncio.sleep(0.5)  # unasked
        assert mirror.subscription is None and mirror.picture is None
        assert not bus._subscribers.get(channel), "nothing of the node listens for it"
        await play(actor, lambda: actor.hand_number == 2, rng=random.Random(2))
        seen = await agree(mirror, actor)  # asked again: based again, the table as it is now
        assert mirror.bases == 2 and mirrors_listening() == 1
        assert seen["hand"] is not None and seen["seq"] == actor.snapshot(None)["seq"]
    finally:
        spectators.close()
        await cardroom.stop()
