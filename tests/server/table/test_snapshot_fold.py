"""The one fold: a table's events, folded by ``engine.table_view.TablePicture`` as the Python
client folds them, give the very table the actor's snapshots show, for every player and a
spectator, through seating, chips added during a hand, sitting out, leaving, the waiting
list and its offers, and hands played to their end."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from engine.events import decode
from engine.table_view import TablePicture
from engine.variants import TableConfig, find_variant
from server.bus.memory import MemoryBus, Subscription, player_channel, table_channel
from server.table.actor import TableActor
from tests.server.fakes import MemoryTableStore
from tests.server.play import play, submit, wait_for
from tests.server.table.test_actor import FAST, drain

PLAYERS = ("ann", "bob", "cat", "dan")
VIEWERS = (*PLAYERS, None)


class Watcher:
    """One connection's frames (the table's, and the player's own), folded on demand."""

    def __init__(self, actor: TableActor, player: str | None) -> None:
        self.player = player
        self.public = actor.bus.subscribe(table_channel(actor.table_id))
        self.own: Subscription | None = None
        if player is not None:
            self.own = actor.bus.subscribe(player_channel(actor.table_id, player))
        self.frames: list[dict[str, Any]] = []

    def fold(self, seats: int, upto: int) -> TablePicture:
        self.frames += drain(self.public) + (drain(self.own) if self.own else [])
        # a private event rides with the seq of the public event it comes just before
        frames = sorted(self.frames, key=lambda f: (f["seq"], not f.get("private")))
        picture = TablePicture(seats, self.player)
        for frame in frames:
            if frame["seq"] <= upto:
                to = frame["data"].get("seat") if frame.get("private") else None
                picture.apply(decode(frame["kind"], frame["data"], to))
        return picture


def comparable(snapshot: dict[str, Any]) -> dict[str, Any]:
    """What events tell: not presence nor time banks, and no hand once it is over (the
    table settles it; a client keeps showing it until the next one)."""
    seats = [
        {k: v for k, v in s.items() if k not in ("connected", "time_bank")}
        for s in snapshot["seats"]
    ]
    hand = snapshot["hand"]
    live = hand is not None and not hand["over"]
    return {
        "seats": seats,
        "you": snapshot["you"],
        "hand_number": snapshot["hand_number"] if live else None,
        "hand": hand if live else None,
        "waiting": snapshot["waiting"],
    }


async def agree(actor: TableActor, watchers: list[Watcher]) -> None:
    for watcher in watchers:
        snapshot = await submit(actor, "snapshot", watcher.player or "")
        folded = watcher.fold(len(snapshot["seats"]), snapshot["seq"]).snapshot()
        assert comparable(folded) == comparable(snapshot), watcher.player


async def test_the_folded_events_are_the_snapshot() -> None:
    rng = random.Random(3)
    actor = TableActor(
        7,
        TableConfig(variant=find_variant("razz")),
        bus=MemoryBus(),
        store=MemoryTableStore(),
        settings=dataclasses.replace(
            FAST,
            seat_count=3,
            action_clock=30.0,
            time_bank=0.0,
            sit_out_limit=60.0,
            waiting_offer=1.0,  # seen while it stands, however loaded the machine
        ),
        rng_factory=lambda: random.Random(rng.random()),
    )
    watchers = [Watcher(actor, player) for player in VIEWERS]
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100, seat=0)
        await submit(actor, "sit_out", "ann", next_hand=False)
        await agree(actor, watchers)
        await submit(actor, "sit_in", "ann")
        await submit(actor, "sit", "bob", buy_in=60, seat=1)
        await wait_for(lambda: actor.table.hand is not None)
        await agree(actor, watchers)
        # during the hand: chips wait, a sit-out and a departure wait for its end
        await submit(actor, "add_chips", "bob", amount=40)
        await submit(actor, "add_chips", "ann", amount=30)
        await submit(actor, "sit_out", "ann")
        await submit(actor, "sit", "cat", buy_in=50, seat=2)
        await submit(actor, "join_waiting_list", "dan")
        await submit(actor, "leave", "bob")
        await agree(actor, watchers)
        hands = actor.hand_number
        await play(actor, lambda: actor.hand_number > hands or actor.table.hand is None)
        await wait_for(lambda: actor.offer is not None and actor.offer[0] == "dan")
        await agree(actor, watchers)  # bob left: his seat offered to dan
        await wait_for(lambda: actor.offer is None)  # dan lets the offer expire
        await agree(actor, watchers)
        await submit(actor, "sit_in", "ann")
        await submit(actor, "join_waiting_list", "bob")
        await submit(actor, "sit", "bob", buy_in=80)
        for hands in range(actor.hand_number, actor.hand_number + 4):
            await wait_for(lambda: actor.table.hand is not None)
            await agree(actor, watchers)
            await play(actor, lambda h=hands: actor.hand_number > h + 1 or actor.table.hand is None)
            await agree(actor, watchers)
    finally:
        await actor.stop()
