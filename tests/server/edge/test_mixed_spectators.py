"""A mixed table watched: the spectators' snapshot, folded by the node's mirror of the table
from its events (server/edge/spectators.py), is the actor's own spectator snapshot, its
``rotation`` too (the games in turn, the game now), through the switches and an operator's
new rotation."""

from __future__ import annotations

import random
from typing import Any

import pytest
from play import play, submit
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from server.bus.memory import MemoryBus
from server.db.models import Account
from server.db.session import make_sessionmaker
from server.edge.spectators import Spectators, TableMirror
from server.settings import Settings
from server.table import commands as cmd
from server.table.actor import TableActor
from tests.server.table.test_mixed_table import PLAYERS, cardroom_on, mixed_table
from tests.server.table.test_mixed_table import settings as settings  # noqa: F401 - fixture

MIX: dict[str, Any] = {
    "games": [{"variant": "seven_card_stud"}, {"variant": "razz"}],
    "hands": 2,
}


@pytest.fixture
def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return make_sessionmaker(engine)


def as_seen(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A snapshot but its clock (the mirror counts the time left its own way) and who is
    connected (no socket here: the events say a seat taken is)."""
    seats = [
        {k: v for k, v in seat.items() if k not in ("connected", "time_bank")}
        for seat in snapshot["seats"]
    ]
    return {**snapshot, "clock": None, "seats": seats}


async def agree(mirror: TableMirror, actor: TableActor) -> dict[str, Any]:
    """The mirror's snapshot, asked now, checked against the actor's own."""
    await mirror.current(actor)
    seen = mirror.snapshot()
    assert as_seen(seen) == as_seen(actor.snapshot(None))
    return seen


async def test_the_mirror_shows_a_mixed_tables_rotation_as_its_actor_does(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    table_id = await mixed_table(sessionmaker, MIX)
    bus = MemoryBus()
    cardroom = cardroom_on(sessionmaker, settings, bus)
    await cardroom.start()
    spectators = Spectators(bus)
    try:
        actor = cardroom.actor(table_id)
        assert isinstance(actor, TableActor)
        mirror = spectators.mirror(table_id)
        first = await agree(mirror, actor)
        assert [g["variant"] for g in first["rotation"]["games"]] == ["seven_card_stud", "razz"]
        assert first["rotation"]["game"] is None
        for player in PLAYERS[:3]:
            await submit(actor, "sit", player, buy_in=500)
        variants = set()
        for hand in range(1, 6):  # each hand left at its first turn, the mirror asked then
            await play(actor, lambda h=hand: actor.hand_number == h, rng=random.Random(hand))
            seen = await agree(mirror, actor)
            assert seen["rotation"]["game"]["hand"] == hand
            assert seen["variant"] == seen["rotation"]["game"]["variant"]
            variants.add(seen["variant"])
        assert variants == {"seven_card_stud", "razz"}
        async with sessionmaker() as session:
            ann = await session.scalar(select(Account.id).where(Account.username == "ann"))
        assert ann is not None
        await actor.submit(
            cmd.SetRotation(
                player="ann", operator_id=ann, rotation={"games": [{"variant": "razz"}]}
            )
        )
        changed = await agree(mirror, actor)
        assert changed["rotation"]["games"] == [{"variant": "razz", "title": "Razz"}]
        assert changed["rotation"]["from_hand"] == 7  # the turn of hand 5 ends with hand 6
        assert mirror.bases == 1  # every answer folded from the events, not asked of the table
    finally:
        spectators.close()
        await cardroom.stop()
