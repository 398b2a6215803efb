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
(the actor's ``_tell_hand`` leaves it out), and its ``action`` says ``absent`` (the
hand's record leaves the turn out too, ``engine.events.announced``). Only a turn already
announced, the player leaving during it, is answered as a plain action. They are written
like any other action, so a resumed hand replays them. A player who sits in
again before their turn plays on. A leaver's seat is freed when the hand ends, their
chips back to their wallet (``Table.finish_hand``'s departures).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.actions import Action, LegalActions
from engine.table import Table
from server.table import turns

if TYPE_CHECKING:
    from server.table.actor import TableActor


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


async def act_for_absent(actor: TableActor) -> None:
    """While the seat to act is absent, act for it (the hand may end on the way)."""
    table = actor.table
    while (hand := table.hand) is not None and not hand.is_over():
        seat = hand.seat_to_act()
        if seat is None:
            return
        reason = reason_absent(table, seat)
        if reason is None:
            return
        occupant = table.seats[seat]
        assert occupant is not None
        state = actor._state(occupant.player)
        check = reason == "sitting_out" and state.check_when_free
        kind = absent_kind(hand.legal_actions(), check_when_free=check)
        # Only a turn already on the clock (the player left during it) was announced, and
        # spent any time; any other is played at once, its turn never told (``absent``).
        on_clock = actor.clocks.deadline is not None
        events = hand.apply(Action(seat, kind, None), absent=not on_clock)
        actor.last_action_at = actor.clock()
        await actor.journal.record(
            actor.hand_number,
            {"seat": seat, "kind": kind, "amount": None, "absent": reason, "at_once": not on_clock},
        )
        actor.metrics.action(kind)
        actor._tell_hand(events, after=turns.turn_over(actor, seat, state) if on_clock else [])
        if hand.is_over():
            await actor._finish_hand()
