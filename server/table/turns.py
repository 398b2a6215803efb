"""The action clock and the time banks, as a table runs them: whose clock starts (none for a
seat the table plays for, :mod:`server.table.absence`), a turn's bank spent when it ends, a
turn out of time, and the banks refilled after each hand.

Each function is given what it needs and says what happens, with the events that tell it
(:func:`settle_clock` also ends the turn on the table's clocks and sets the bank it spent); the
actor (``TableActor``) keeps the banks and runs the clocks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from engine.events import Event
from engine.table import Table
from engine.table_events import TimeBank
from server.table.absence import reason_absent
from server.table.clocks import TableClocks
from server.table.moves import AbsentAction, Move, Timeout


def bank_changed(seat: int, before: float, after: float) -> list[Event]:
    """The event saying a seat's time bank changed, when it did (to a tenth)."""
    if round(before, 1) == round(after, 1):
        return []
    return [TimeBank(seat=seat, time_bank=round(after, 1))]


class Banked(Protocol):
    """A player's time bank (``PlayerState``)."""

    time_bank: float


def settle_clock(clocks: TableClocks, move: Move, state: Banked | None) -> list[Event]:
    """The turn's clock after ``move``: the time bank it spent (all of it, timed out;
    none, a turn played at once), and the event saying so."""
    if isinstance(move, AbsentAction) and move.at_once:
        return []
    if state is None:
        clocks.stop_turn()
        return []
    before = state.time_bank
    if isinstance(move, Timeout):
        clocks.stop_turn()
        state.time_bank = 0.0
    else:
        state.time_bank = clocks.end_turn(before)
    return bank_changed(move.seat, before, state.time_bank)


def clocked_seat(table: Table) -> int | None:
    """The seat whose clock starts now: the seat to act, unless the table plays its turn at
    once (gone from the hand) or nobody is to act."""
    hand = table.hand
    if hand is None or hand.is_over():
        return None
    seat = hand.seat_to_act()
    if seat is None or reason_absent(table, seat) is not None:
        return None
    return seat


def refilled_banks(
    dealt: Mapping[int, str],
    banks: Mapping[str, float],
    player_at: Callable[[int], str | None],
    *,
    full: float,
    refill: float,
) -> tuple[dict[str, float], list[Event]]:
    """After a hand, each player dealt in (``dealt``: seat -> player) gets ``refill`` seconds
    of their bank back, up to ``full``: the new banks, and the events of the seats still held
    by the same player (``player_at``: who sits in a seat now)."""
    new: dict[str, float] = {}
    told: list[Event] = []
    for seat, player in dealt.items():
        before = banks.get(player)
        if before is None:
            continue
        after = new[player] = min(full, before + refill)
        if player_at(seat) == player:
            told += bank_changed(seat, before, after)
    return new, told
