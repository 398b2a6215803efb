"""The typed picture of a table that a caller (or a bot) reads, and the actions it sends.

The picture is folded by the engine (``engine.table_view.TablePicture``, whose hand part is
``engine.views.view``), the same fold the server's snapshots come from: the client never
re-implements the rules of what a seat may see, nor what the table does between hands. A
snapshot taken in the middle of a hand carries the server's fold, not the events;
:func:`picture_events` (from the engine) turns that picture back into a short list of events
that the fold maps to the very same picture, so the events that follow fold on top of it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.actions import ACTION_KINDS, LegalActions
from engine.table_view import picture_events

__all__ = [
    "Action",
    "Clock",
    "LegalActions",
    "SeatView",
    "Stakes",
    "TableInfo",
    "TableView",
    "picture_events",
]


@dataclass(frozen=True, slots=True)
class Action:
    """A decision: ``kind`` is one of the turn's ``kinds``; ``amount`` is the street total
    to bet *to*, for ``complete``, ``bet`` and ``raise`` only.

    >>> Action("raise", 20)
    Action(kind='raise', amount=20)
    """

    kind: str
    amount: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ACTION_KINDS:
            raise ValueError(f"no action {self.kind!r}; one of {', '.join(ACTION_KINDS)}")


@dataclass(frozen=True, slots=True)
class Stakes:
    ante: int
    bring_in: int
    small_bet: int
    big_bet: int
    structure: str = "fixed_limit"

    @property
    def needed_to_play(self) -> int:
        """Chips a seat needs to be dealt in (ante and bring-in: the default rule)."""
        return max(self.ante + self.bring_in, 1)


@dataclass(frozen=True, slots=True)
class TableInfo:
    """A table as the lobby (``GET /tables``) lists it."""

    id: int
    name: str
    variant: str
    stakes: Stakes
    seats: int
    seats_taken: int
    waiting: int
    min_buy_in: int
    max_buy_in: int
    average_pot: int
    hands_per_hour: int

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TableInfo:
        stakes = data["stakes"]
        return cls(
            id=data["id"],
            name=data["name"],
            variant=data["variant"],
            stakes=Stakes(
                stakes["ante"],
                stakes["bring_in"],
                stakes["small_bet"],
                stakes["big_bet"],
                data.get("structure", "fixed_limit"),
            ),
            seats=data["seats"],
            seats_taken=data["seats_taken"],
            waiting=data["waiting"],
            min_buy_in=data["min_buy_in"],
            max_buy_in=data["max_buy_in"],
            average_pot=data["average_pot"],
            hands_per_hour=data["hands_per_hour"],
        )


@dataclass(frozen=True, slots=True)
class Clock:
    """Who is on the clock and when it runs out (``time.monotonic`` seconds)."""

    seat: int
    deadline: float

    def remaining(self, now: float | None = None) -> float:
        return max(0.0, self.deadline - (time.monotonic() if now is None else now))


@dataclass(frozen=True, slots=True)
class SeatView:
    """One seat: who sits there, and what this viewer may know of its hand.

    ``down`` holds the viewer's own down cards, or another seat's once a showdown showed
    them; ``down_count`` says how many down cards the seat holds either way.
    """

    seat: int
    player: str | None
    stack: int
    pending_chips: int = 0
    sitting_out: bool = False
    leaving: bool = False
    connected: bool = False
    in_hand: bool = False
    bet: int = 0
    in_pot: int = 0
    up: tuple[str, ...] = ()
    down: tuple[str, ...] = ()
    down_count: int = 0
    folded: bool = False
    all_in: bool = False
    shown: bool = False
    sit_out_next_hand: bool = False  # asked to sit out once the hand in progress ends

    @property
    def live(self) -> bool:
        """Dealt in this hand and not folded."""
        return self.in_hand and not self.folded


@dataclass(frozen=True, slots=True)
class TableView:
    """Everything one connection knows of a table at one ``seq``."""

    table: int
    seq: int
    variant: str
    stakes: Stakes
    min_buy_in: int
    max_buy_in: int
    seats: tuple[SeatView, ...]
    you: int | None
    hand_number: int | None = None
    street: str | None = None
    pot: int = 0
    common: tuple[str, ...] = ()
    to_act: int | None = None
    legal: LegalActions | None = None
    # The seq the turn was told at: tells one turn from the next, and a snapshot of the
    # same turn (a resync) keeps it.
    turn_seq: int | None = None
    clock: Clock | None = None
    announcements: tuple[Mapping[str, Any], ...] = ()
    awards: tuple[Mapping[str, Any], ...] = ()
    hand_over: bool = False
    waiting: tuple[str, ...] = ()

    @property
    def me(self) -> SeatView | None:
        return self.seats[self.you] if self.you is not None else None

    @property
    def my_turn(self) -> bool:
        return self.you is not None and self.legal is not None and self.legal.seat == self.you

    @property
    def my_cards(self) -> tuple[str, ...]:
        """My down cards, then my upcards, in dealt order within each."""
        me = self.me
        return () if me is None else me.down + me.up

    @property
    def opponents(self) -> tuple[SeatView, ...]:
        """The other seats still live in the hand."""
        return tuple(s for s in self.seats if s.live and s.seat != self.you)

    @property
    def upcards(self) -> tuple[str, ...]:
        """Every card face up on the table, folded hands' too (they are dead cards)."""
        return tuple(c for s in self.seats for c in s.up) + self.common


def legal_from(data: Mapping[str, Any]) -> LegalActions:
    """The engine's ``LegalActions`` from a ``turn`` event's data (or a snapshot's legal)."""
    return LegalActions(
        seat=data["seat"],
        kinds=tuple(data.get("kinds", ())),
        call=data.get("call", 0),
        bring_in=data.get("bring_in", 0),
        wager=data.get("wager"),
        min_to=data.get("min_to", 0),
        max_to=data.get("max_to", 0),
        to_choices=tuple(data.get("to_choices", ())),
    )
