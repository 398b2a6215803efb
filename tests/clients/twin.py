"""An in-memory twin of a table's side of the protocol, for unit tests: an engine hand's
events turned into the frames a seat's connection would get (public events numbered by
``seq``, the seat's own down cards as private events), fed into a ``stud_client.Table``."""

from __future__ import annotations

import random
from typing import Any, cast

from engine.cards import Deck
from engine.events import Event
from engine.hand import Hand
from engine.table_events import HandNumber
from engine.variants import TableConfig
from stud_client import ClientStats, StudClient, Table


class FakeClient:
    """What a Table asks of its client: the player's name, stats, resyncs."""

    def __init__(self, player: str) -> None:
        self.player = player
        self.stats = ClientStats()
        self.resyncs: list[int] = []

    def _resync_soon(self, table_id: int) -> None:
        self.resyncs.append(table_id)


def snapshot(
    config: TableConfig,
    players: list[str],
    stack: int,
    you: int | None,
    seq: int = 0,
    table_id: int = 1,
) -> dict[str, Any]:
    return {
        "type": "snapshot",
        "table": table_id,
        "seq": seq,
        "variant": config.variant.name,
        "stakes": {
            "ante": config.ante,
            "bring_in": config.bring_in,
            "small_bet": config.small_bet,
            "big_bet": config.big_bet,
            "structure": config.structure,
        },
        "buy_in": {"min": 20, "max": 1000},
        "seats": [
            {
                "seat": n,
                "player": p,
                "stack": stack,
                "pending_chips": 0,
                "sitting_out": False,
                "leaving": False,
                "connected": True,
                "time_bank": 0.0,
            }
            for n, p in enumerate(players)
        ],
        "you": you,
        "hand_number": None,
        "hand": None,
        "clock": None,
        "waiting": [],
    }


class Twin:
    """One table as several seats' connections see it."""

    def __init__(
        self, config: TableConfig, seats: int, stack: int = 500, rng: random.Random | None = None
    ) -> None:
        self.config = config
        self.players = [f"p{n}" for n in range(seats)]
        self.stack = stack
        self.rng = rng or random.Random(1)
        self.seq = 0
        self.hand_number = 0
        self.tables = []
        for n, player in enumerate(self.players):
            table = Table(cast(StudClient, FakeClient(player)), 1)
            table._apply_snapshot(snapshot(config, self.players, stack, n))
            self.tables.append(table)
        self.hand: Hand | None = None

    def deal(self) -> Hand | None:
        """The next hand among the seats that can pay for it; None when fewer than two."""
        need = self.config.ante + self.config.bring_in
        stacks = [(n, t.view.seats[n].stack) for n, t in enumerate(self.tables)]
        stacks = [(n, stack) for n, stack in stacks if stack >= need]
        if len(stacks) < 2:
            return None
        self.hand_number += 1
        self.publish([HandNumber(self.hand_number)])
        self.hand = Hand(self.config, stacks, Deck(rng=self.rng))
        self.publish(list(self.hand.events))
        return self.hand

    def publish(self, events: list[Event]) -> None:
        for event in events:
            if event.to is not None:
                frame = {
                    "type": "event",
                    "table": 1,
                    "seq": self.seq + 1,
                    "kind": event.kind,
                    "data": event.data,
                    "private": True,
                }
                self.tables[event.to]._on_event(frame)
                continue
            self.seq += 1
            frame = {
                "type": "event",
                "table": 1,
                "seq": self.seq,
                "kind": event.kind,
                "data": event.data,
            }
            for table in self.tables:
                table._on_event(frame)
