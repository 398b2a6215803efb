"""Time collection, as the table actor runs it: a fee a player pays for each period of play
(``time_fee`` chips each ``time_fee_period`` seconds), taken from the stack before a hand
whenever the period paid for is over, or was never paid since the player sat down. The
store writes it with the hand's start, from the seat to the house's revenue
(``DatabaseTableStore.start_hand``); a stack that cannot pay it and still play a hand sits
out, busted, until chips are added."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.table.actor import TableActor


def fees_due(actor: TableActor) -> dict[int, int]:
    """The seats about to be dealt in that owe the fee (seat -> fee); a seat that cannot
    pay it is sat out here."""
    fee = actor.settings.time_fee
    if not fee:
        return {}
    now = actor.wall_clock()
    need = actor.table.needed_to_play()
    due: dict[int, int] = {}
    for n in actor.table.dealt_in():
        seat = actor.table.seats[n]
        assert seat is not None
        paid = actor._state(seat.player).time_paid_until
        if paid is not None and paid > now:
            continue
        if seat.stack < fee + need:
            actor._tell(actor.table.sit_out(n, busted=True))
            actor._state(seat.player).sat_out_at = actor.clock()
            continue
        due[n] = fee
    return due


def paid_until(actor: TableActor, fees: dict[int, int]) -> float | None:
    """When the period paid for by the fees taken now ends (None: nobody paid)."""
    return actor.wall_clock() + actor.settings.time_fee_period if fees else None


def collect(actor: TableActor, fees: dict[int, int], until: float | None) -> None:
    """Once the hand's start is written: the fees out of the stacks, and each payer's period."""
    for n, fee in fees.items():
        seat = actor.table.seats[n]
        assert seat is not None
        actor._tell(actor.table.collect_time(n, fee))
        actor._state(seat.player).time_paid_until = until
