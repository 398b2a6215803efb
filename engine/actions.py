"""What goes into a hand: a seat's action, and the legal actions it is judged against."""

from __future__ import annotations

from typing import Any, NamedTuple

ACTION_KINDS = ("fold", "check", "call", "bring_in", "complete", "bet", "raise")


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
        return legal_data(self)


def legal_data(legal: tuple[Any, ...]) -> dict[str, Any]:
    """Legal actions (or a ``turn``) as the wire shows them: amounts only for the kinds on
    offer."""
    seat, kinds, call, bring_in, wager, min_to, max_to, to_choices = legal
    data: dict[str, Any]
    if "call" in kinds:
        data = {"seat": seat, "kinds": list(kinds), "call": call}
    elif "bring_in" in kinds:
        data = {"seat": seat, "kinds": list(kinds), "bring_in": bring_in}
    else:
        data = {"seat": seat, "kinds": list(kinds)}
    if wager is not None:
        data["wager"] = wager
        data["min_to"] = min_to
        data["max_to"] = max_to
        if to_choices:
            data["to_choices"] = list(to_choices)
    return data


NO_ACTION = LegalActions(None)
