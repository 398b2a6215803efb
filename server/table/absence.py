"""Players who are gone from their hand: the table acts for them at once, not by the clock.

A player in the hand in play who sits out now (``sit_out`` with ``next_hand`` false) or
leaves (``leave``, or an operator's removal) takes no more decisions in it. The rules
have no folding out of turn (a fold is the seat to act's, ``engine.betting``), so the
table acts for them when their turn comes, and at once when it is their turn already:

- a forced bring-in is posted (while it is due there is no fold: ``engine.betting``);
- a check where one is free, if the player sitting out asked for it (``check_when_free``);
- else a fold.

These are the player's own choice, made earlier (no ``timeout`` on the ``action`` event).
Such a turn is played at once and never announced: no ``turn`` event and no clock for it
(the actor's ``tell_hand`` leaves it out), and its ``action`` says ``absent`` (the
hand's record leaves the turn out too, ``engine.events.announced``). Only a turn already
announced, the player leaving during it, is answered as a plain action. They are written
like any other action, so a resumed hand replays them. A player who sits in
again before their turn plays on. A leaver's seat is freed when the hand ends, their
chips back to their wallet (``Table.finish_hand``'s departures).

This module decides; the actor's commit path (``TableActor.commit``) plays what it decides.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.actions import LegalActions
from engine.table import Table
from server.table.moves import AbsentAction


def reason_absent(table: Table, seat: int) -> str | None:
    """Why the table acts for ``seat`` in its hand (``"leaving"``, ``"sitting_out"``), or
    None when its player plays."""
    occupant = table.seats[seat]
    if occupant is None or not table.in_hand(seat):
        return None
    if occupant.leaving:
        return "leaving"
    if occupant.sitting_out:
        return "sitting_out"
    return None


def absent_kind(legal: LegalActions, *, check_when_free: bool) -> str:
    """The action taken for an absent seat to act."""
    if "bring_in" in legal.kinds:
        return "bring_in"
    if check_when_free and "check" in legal.kinds:
        return "check"
    return "fold"


def absent_move(
    table: Table, *, checks_when_free: Callable[[str], bool], on_clock: bool
) -> AbsentAction | None:
    """The table's move for the seat to act if it is gone from the hand (None: nobody is to
    act, or its player plays). ``on_clock``: its turn was announced and its clock runs (the
    player left during it): played as a plain action, not ``at_once``."""
    hand = table.hand
    if hand is None or hand.is_over():
        return None
    seat = hand.seat_to_act()
    if seat is None:
        return None
    reason = reason_absent(table, seat)
    if reason is None:
        return None
    occupant = table.seats[seat]
    assert occupant is not None
    check = reason == "sitting_out" and checks_when_free(occupant.player)
    kind = absent_kind(hand.legal_actions(), check_when_free=check)
    return AbsentAction(seat, kind, reason, at_once=not on_clock)
