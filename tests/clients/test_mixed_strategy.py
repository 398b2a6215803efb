"""stud-bots at a mixed table: the client's view takes each hand's game from the hand
(``hand_started``), so the rules bot plays each hand by its own game's book. The same cards
dealt in a stud hand and then, after the switch, in a razz hand: kings are completed in stud
and thrown away in razz."""

from __future__ import annotations

import random
from typing import Any, cast

from twin import FakeClient, snapshot

from engine.events import Event
from engine.rotation import Position, Rotation, schedule
from engine.table_events import HandNumber
from engine.variants import TableConfig
from server.table.mixed import announced_game
from stud_bots.strategies import RuleBot
from stud_client import StudClient, Table
from tests.engine.decks import new_hand, play

MIX = Rotation.from_dict(
    {"games": [{"variant": "seven_card_stud"}, {"variant": "razz"}], "hands": 1}
)
# Seat 0 (the bot): kings under a six. Seat 1 shows an eight, seat 2 a deuce: in stud the
# deuce brings it in, in razz the eight; either way seat 0 acts after seat 2.
CARDS = ["Kc Kd 6h", "9c Tc 8s", "3d 4d 2s"]
OPENING = {"seven_card_stud": ["2 bring_in"], "razz": ["1 bring_in", "2 complete 5"]}


class Frames:
    """Feeds a table's public events, and seat 0's own, to the bot's client table."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.seq = 0

    def send(self, events: list[Event]) -> None:
        for event in events:
            if event.to is not None and event.to != 0:
                continue
            private = event.to is not None
            if not private:
                self.seq += 1
            frame: dict[str, Any] = {
                "type": "event",
                "table": 1,
                "seq": self.seq + private,
                "kind": event.kind,
                "data": event.data,
            }
            if private:
                frame["private"] = True
            self.table._on_event(frame)


def test_the_rules_bot_plays_each_hand_of_a_mixed_table_by_its_own_game() -> None:
    players = ["bot", "p1", "p2"]
    table = Table(cast(StudClient, FakeClient("bot")), 1)
    first: TableConfig = MIX.games[0]
    start = snapshot(first, players, 500, 0)
    start["rotation"] = {
        "games": [{"variant": g.variant.name, "title": g.variant.title} for g in MIX.games],
        "unit": "hands",
        "hands": 1,
        "from_hand": 1,
        "game": None,
    }
    table._apply_snapshot(start)
    frames = Frames(table)
    bot = RuleBot(random.Random(1), samples=50)
    decided: dict[str, str] = {}
    position: Position | None = None
    for number in (1, 2):
        scheduled = schedule(MIX, position, players=3)
        position, config = scheduled.position, scheduled.config
        frames.send([HandNumber(number), announced_game(number, scheduled)])
        hand = new_hand(CARDS, config, 500)
        frames.send(list(hand.events))
        frames.send(play(hand, *OPENING[config.variant.name]))
        view = table.view
        assert view.variant == config.variant.name and view.my_turn
        assert view.seats[0].down == ("Kc", "Kd") and view.seats[0].up == ("6h",)
        assert view.legal is not None
        decided[view.variant] = bot.decide(view, view.legal).kind
    assert decided == {"seven_card_stud": "complete", "razz": "fold"}
