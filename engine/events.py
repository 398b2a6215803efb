"""What goes in (actions) and what comes out (events) of a hand.

Every event names its audience: ``to is None`` means every seat and every
spectator may see it; ``to == seat`` means only that seat (its own down cards).
Event data is plain JSON-ready values, cards written as text (``"As"``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

ACTION_KINDS = ("fold", "check", "call", "bring_in", "complete", "bet", "raise")


class Event(NamedTuple):
    kind: str
    data: dict[str, Any]
    to: int | None = None

    def visible_to(self, seat: int | None) -> bool:
        return self.to is None or self.to == seat


class Action(NamedTuple):
    """A seat's decision. ``amount`` is the street total *to* for complete/bet/raise."""

    seat: int
    kind: str
    amount: int | None = None


class LegalActions(NamedTuple):
    """Exactly who acts and what they may do, with amounts.

    ``call`` is the chips a call adds; ``bring_in`` the chips a bring-in posts.
    ``wager`` names the aggressive action on offer (bet, raise or complete),
    whose street total may be any of ``to_choices`` in fixed limit, or any
    amount from ``min_to`` to ``max_to`` in pot limit and no limit.
    """

    seat: int | None
    kinds: tuple[str, ...] = ()
    call: int = 0
    bring_in: int = 0
    wager: str | None = None
    min_to: int = 0
    max_to: int = 0
    to_choices: tuple[int, ...] = ()

    def allows(self, kind: str, amount: int | None = None) -> bool:
        if kind not in self.kinds:
            return False
        if kind != self.wager or amount is None:
            return True
        if self.to_choices:
            return amount in self.to_choices
        return self.min_to <= amount <= self.max_to

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"seat": self.seat, "kinds": list(self.kinds)}
        if "call" in self.kinds:
            data["call"] = self.call
        if "bring_in" in self.kinds:
            data["bring_in"] = self.bring_in
        if self.wager is not None:
            data["wager"] = self.wager
            data["min_to"] = self.min_to
            data["max_to"] = self.max_to
            if self.to_choices:
                data["to_choices"] = list(self.to_choices)
        return data


NO_ACTION = LegalActions(None)
