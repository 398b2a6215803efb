"""A hand's changes as the table commits them: what the journal writes ahead, the replay
of a stored hand reads back, and the actor's one commit path applies.

A move is a player's action (:class:`PlayerAction`), one the table took for a seat gone
from the hand (:class:`AbsentAction`, ``server.table.absence``) or a turn out of time
(:class:`Timeout`); each applies itself to the engine's hand and has its stored row, the
JSON of one action of a ``live_hands`` row. The rows are a persisted format, read by a node
that resumes a hand: :func:`move_from_row` reads every row the server has written, those of
older versions too (an absent seat's action without ``at_once``, a player's without
``action_id``), and a move's row is the one written since those versions. A :class:`Void`
is the other change to a hand: voided, every chip back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.actions import Action
from engine.events import Event
from engine.hand import Hand
from server.store.records import LiveHandState

__all__ = ["AbsentAction", "Change", "Move", "PlayerAction", "Timeout", "Void", "move_from_row"]


@dataclass(frozen=True, slots=True)
class PlayerAction:
    """A seated player's action, with the id that makes its retries harmless."""

    seat: int
    kind: str
    amount: int | None = None
    action_id: str | None = None

    @property
    def counted(self) -> str:
        """Its name among the actions counted (``stud_actions_total``)."""
        return self.kind

    def apply(self, hand: Hand) -> list[Event]:
        return hand.apply(Action(self.seat, self.kind, self.amount))

    def row(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "kind": self.kind,
            "amount": self.amount,
            "action_id": self.action_id,
        }


@dataclass(frozen=True, slots=True)
class AbsentAction:
    """The table's action for a seat gone from the hand (``absent``: ``"leaving"`` or
    ``"sitting_out"``). ``at_once``: its turn was never announced (no clock ran for it)."""

    seat: int
    kind: str
    absent: str
    at_once: bool

    @property
    def counted(self) -> str:
        return self.kind

    def apply(self, hand: Hand) -> list[Event]:
        return hand.apply(Action(self.seat, self.kind, None), absent=self.at_once)

    def row(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "kind": self.kind,
            "amount": None,
            "absent": self.absent,
            "at_once": self.at_once,
        }


@dataclass(frozen=True, slots=True)
class Timeout:
    """The seat to act ran out of time: it checks where it may, else folds (or posts its
    forced bring-in), by the hand's rules."""

    seat: int

    @property
    def counted(self) -> str:
        return "timeout"

    def apply(self, hand: Hand) -> list[Event]:
        return hand.timeout(self.seat)

    def row(self) -> dict[str, Any]:
        return {"seat": self.seat, "timeout": True}


Move = PlayerAction | AbsentAction | Timeout


@dataclass(frozen=True, slots=True)
class Void:
    """The hand in progress voided, every chip back to where it was: by an operator
    (``operator_void``), by the table after a bug (``internal_error``), or, ``unresumable``,
    a stored hand that could not be dealt again (``resume_failed``)."""

    reason: str
    detail: str | None = None
    unresumable: LiveHandState | None = None


Change = Move | Void


def move_from_row(row: Mapping[str, Any]) -> Move:
    """The move a stored row of a hand in progress records."""
    seat = int(row["seat"])
    if row.get("timeout"):
        return Timeout(seat)
    if "absent" in row:
        return AbsentAction(seat, str(row["kind"]), str(row["absent"]), bool(row.get("at_once")))
    action_id = row.get("action_id")
    return PlayerAction(
        seat,
        str(row["kind"]),
        row.get("amount"),
        str(action_id) if action_id is not None else None,
    )
