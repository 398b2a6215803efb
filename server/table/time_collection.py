"""Time collection: a fee a player pays for each period of play (``time_fee`` chips each
``time_fee_period`` seconds), taken from the stack before a hand whenever the period paid
for is over, or was never paid since the player sat down. The store writes it with the
hand's start, from the seat to the house's revenue (``DatabaseTableStore.start_hand``); a
stack that cannot pay it and still play a hand sits out, busted, until chips are added.

Decisions only (:func:`fees_due`); the actor takes the fees once the hand's start is
written, and sits out the stacks that cannot pay.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from engine.table import Table


@dataclass(frozen=True, slots=True)
class FeesDue:
    """Before a deal: the seats that pay the fee now (seat -> fee), those that cannot and sit
    out, and when the period paid for ends (None: nobody pays)."""

    fees: dict[int, int] = field(default_factory=dict)
    short: tuple[int, ...] = ()
    paid_until: float | None = None


def fees_due(
    table: Table,
    *,
    fee: int,
    period: float,
    now: float,
    paid_until: Callable[[str], float | None],
) -> FeesDue:
    """Who among the seats about to be dealt in owes the fee at wall-clock ``now``
    (``paid_until``: until when a player's time is paid)."""
    if not fee:
        return FeesDue()
    need = table.needed_to_play()
    due: dict[int, int] = {}
    short: list[int] = []
    for n in table.dealt_in():
        seat = table.seats[n]
        assert seat is not None
        paid = paid_until(seat.player)
        if paid is not None and paid > now:
            continue
        if seat.stack < fee + need:
            short.append(n)
            continue
        due[n] = fee
    return FeesDue(due, tuple(short), now + period if due else None)
