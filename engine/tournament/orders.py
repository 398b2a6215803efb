"""The orders a tournament's director gives (``engine.tournament.run`` decides them from
the facts; ``server.tournaments.director`` carries them out, in the order given): to its
tables (seat, take away, stakes, permits, chips added, open, close) and about its entries
(out, placed, the prizes fixed, the winner; moved, disqualified)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.tournament.offers import DealMade, DealOffered, DealWithdrawn
from engine.tournament.payouts import Finish
from engine.tournament.structure import Level


@dataclass(frozen=True, slots=True)
class SeatPlayer:
    """Seat ``player`` at ``table`` with ``stack`` tournament chips."""

    table: int
    seat: int
    player: str
    stack: int


@dataclass(frozen=True, slots=True)
class RemovePlayer:
    """Take ``player`` from ``table`` between their hands (out, or moving on)."""

    table: int
    player: str


@dataclass(frozen=True, slots=True)
class Stakes:
    """The stakes of ``table``'s next hand."""

    table: int
    level: Level


@dataclass(frozen=True, slots=True)
class Deal:
    """``table`` may deal its hand ``number``."""

    table: int
    number: int


@dataclass(frozen=True, slots=True)
class CloseTable:
    """``table`` has no player left: it closes."""

    table: int


@dataclass(frozen=True, slots=True)
class Placed:
    """A player's finish: out (or the winner), their place and prize; ``entry`` counts the
    player's entries in play (1: the first, 2: a re-entry...)."""

    finish: Finish
    entry: int = 1


@dataclass(frozen=True, slots=True)
class Finished:
    """The tournament is over: ``winner`` holds every chip."""

    winner: str


@dataclass(frozen=True, slots=True)
class AddChips:
    """Add ``chips`` (a rebuy, an add-on) to ``player``'s stack at ``table``, between their
    hands: ``stack`` is the stack it makes."""

    table: int
    player: str
    chips: int
    stack: int


@dataclass(frozen=True, slots=True)
class OpenTable:
    """A new table ``table`` opens (a late entrant found every table full); its players
    are seated by the orders that follow."""

    table: int


@dataclass(frozen=True, slots=True)
class Busted:
    """``player``'s entry ``entry`` is out, to be placed when the prizes are fixed."""

    player: str
    entry: int


@dataclass(frozen=True, slots=True)
class PrizesFixed:
    """Nothing more can be bought: the prizes by place, from ``entrants`` entries."""

    prizes: tuple[int, ...]
    entrants: int


@dataclass(frozen=True, slots=True)
class Moved:
    """A player moved between tables: ``reason`` is ``balance``, ``break``, ``final_table``
    or ``operator``; ``waited`` the seconds the table the player left was waited for, a
    hand in play holding it up, or held for the final table's draw (0: it gave at once; an
    operator's move: since it was asked)."""

    player: str
    from_table: int
    to_table: int
    reason: str
    waited: float


@dataclass(frozen=True, slots=True)
class KillHand:
    """``player``, disqualified during their hand at ``table``: the table plays it for them
    (a forced bring-in, else a fold at their turn) and they may not sit in again; the
    director takes them away when it ends."""

    table: int
    player: str


@dataclass(frozen=True, slots=True)
class Disqualified:
    """``player`` is out of the tournament with no place and no prize; ``chips`` left play."""

    player: str
    chips: int


Order = (
    SeatPlayer
    | RemovePlayer
    | Stakes
    | Deal
    | CloseTable
    | Placed
    | Finished
    | AddChips
    | OpenTable
    | Busted
    | PrizesFixed
    | DealOffered
    | DealMade
    | DealWithdrawn
    | Moved
    | KillHand
    | Disqualified
)
