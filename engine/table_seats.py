"""The records of a table's seats (:class:`engine.table.Table` keeps them): a seat and its
player, the seating rules, a seat offered to the waiting list's first player, and the players
a table lets go: those who left with their chips, those a tournament's director took to
another table, those a hand left without chips.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

# The removal (``Seat.removed``) of a player disqualified from a tournament.
DISQUALIFIED = "disqualified"


@dataclass(slots=True)
class Seat:
    player: str
    stack: int
    sitting_out: bool = False
    sit_out_next_hand: bool = False
    leaving: bool = False
    pending_chips: int = 0
    removed: str | None = None  # an operator's removal: why ("kicked", "suspended")


@dataclass(frozen=True, slots=True)
class SeatingRules:
    """The table's buy-in range, and how long a freed seat is held for the first player
    waiting (the server's clock counts it; here it is what the offer says)."""

    min_buy_in: int = 20
    max_buy_in: int = 1000
    offer_seconds: float = 30.0


class SeatOffer(NamedTuple):
    """A freed seat held for the first player on the waiting list."""

    player: str
    seat: int


class Departure(NamedTuple):
    """A player who left the table, with the chips they took away."""

    seat: int
    player: str
    chips: int


class Transfer(NamedTuple):
    """A tournament player the director took away from a table, to seat elsewhere."""

    player: str
    chips: int
    sitting_out: bool  # still away: blinded off at their new table too


class Bust(NamedTuple):
    """A player a hand left without chips, with the chips they began it with: players out
    in the same hand finish by them (a tournament director's places)."""

    seat: int
    player: str
    starting_chips: int


__all__ = ["DISQUALIFIED", "Bust", "Departure", "Seat", "SeatOffer", "SeatingRules", "Transfer"]
