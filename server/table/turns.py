"""The action clock and the time banks, as the table actor runs them: a turn's clock started
(none for a seat the table plays for, :mod:`server.table.absence`), its bank spent when the turn
ends, a turn out of time timed out, the banks refilled after each hand, and whatever else
the table's clocks (:class:`~server.table.clocks.TableClocks`) say is due."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.events import Event
from engine.hand import Hand
from engine.table import Departure
from engine.table_events import Clock, TimeBank
from server.table import absence

if TYPE_CHECKING:
    from server.table.actor import PlayerState, TableActor


def turn_over(actor: TableActor, seat: int, state: PlayerState) -> list[Event]:
    """The turn on the clock is over: its time bank spent, and the event saying so when
    some was."""
    before = state.time_bank
    state.time_bank = actor.clocks.end_turn(before)
    return bank_changed(seat, before, state.time_bank)


def bank_changed(seat: int, before: float, after: float) -> list[Event]:
    if round(before, 1) == round(after, 1):
        return []
    return [TimeBank(seat=seat, time_bank=round(after, 1))]


def start_clock(actor: TableActor, hand: Hand) -> None:
    seat = hand.seat_to_act()
    if seat is None or absence.reason_absent(actor.table, seat) is not None:
        # An absent seat's turn is played at once (server.table.absence): no clock.
        actor.clocks.deadline = None
        return
    player = actor._player_at(seat)
    bank = actor._state(player).time_bank if player is not None else 0.0
    actor.clocks.start_turn(bank)
    actor.publisher.publish(
        Clock(seat=seat, action_clock=actor.settings.action_clock, time_bank=round(bank, 2))
    )


async def on_clock(actor: TableActor) -> None:
    """Whatever the table's clocks say is due: first a seat to act whose player sat out
    or left (played at once), then a turn out of time, the offered seat, the sit-out
    limit, the next hand."""
    await absence.act_for_absent(actor)
    hand = actor.table.hand
    if actor.clocks.turn_over_due() and hand is not None and not hand.is_over():
        seat = hand.seat_to_act()
        assert seat is not None
        player = actor._player_at(seat)
        spent: list[Event] = []
        if player is not None:
            state = actor._state(player)
            spent = bank_changed(seat, state.time_bank, 0.0)
            state.time_bank = 0.0
        actor.clocks.deadline = None
        events = hand.timeout(seat)
        actor.last_action_at = actor.clock()
        await actor.journal.record(actor.hand_number, {"seat": seat, "timeout": True})
        actor.metrics.action("timeout")
        actor._tell_hand(events, after=spent)
        if hand.is_over():
            await actor._finish_hand()
        await absence.act_for_absent(actor)
    if actor.clocks.offer_due():
        actor.clocks.offer_until = None
        actor._tell(actor.table.expire_offer())
    for name, state in list(actor.players.items()):
        if state.sat_out_at is not None and actor.clocks.sit_out_over(state.sat_out_at):
            seat = actor.table.seat_of(name)
            state.sat_out_at = None
            if seat is not None and not actor.table.in_hand(seat):
                chips = actor.table.leave(seat)
                if chips is not None:
                    await actor._settle_departure(Departure(seat, name, chips))
    if actor.clocks.next_hand_due():
        await actor._start_hand()


def refill_banks(actor: TableActor) -> list[Event]:
    """After a hand: each player dealt in gets some of their time bank back."""
    refilled: list[Event] = []
    for seat, player in actor._players_in_hand.items():
        state = actor.players.get(player)
        if state is not None:
            before = state.time_bank
            state.time_bank = min(
                actor.settings.time_bank, state.time_bank + actor.settings.time_bank_refill
            )
            if actor._player_at(seat) == player:
                refilled += bank_changed(seat, before, state.time_bank)
    return refilled
