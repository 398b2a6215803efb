"""Sitting out and leaving during a hand: the table acts for the player at once at their
turns (server.table.absence), never by the clock; and the time bank's events.

The clocks here are long (30 s to act, 30 s of bank): an action that waited for them
would fail the tests' few-second waits. The deck is stacked: seat 0 shows 7h, seat 1 2c
(and brings in), seat 2 9s; the three-seat deals go seat 0, 1, 2, card by card.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

import pytest
from play import submit

from engine.cards import Deck, parse_cards
from engine.events import Turn, announced
from engine.protocol import ErrorCode
from engine.variants import TableConfig, find_variant
from server.bus.memory import MemoryBus, Subscription, table_channel
from server.table import commands, dealing
from server.table.actor import TableActor
from server.table.ports import CommandRefused, TableSettings
from tests.server.fakes import MemoryTableStore

SLOW = TableSettings(
    min_buy_in=20,
    max_buy_in=500,
    action_clock=30.0,
    time_bank=30.0,
    pause_between_hands=0.0,
)
# "At once, not by the clock": a fold the clock made would wait the whole of it (the
# outcomes, no timeout flag and no clock for the seat, tell the rest).
AT_ONCE = SLOW.action_clock / 10
# Three seats: As Ks / 7h, Qd Qc / 2c, Jd Jc / 9s; then 4th street 9h 3c 8d...
TOP3 = parse_cards("AsQdJdKsQcJc7h2c9s9h3c8d")
# Two seats, as docs/protocol.md's examples: As Ks / 7h and Qd Qc / 2c; then (after a burn
# card each street) 3c and 5d, Jh and 4d: seat 0 acts first on fourth and fifth street.
TOP2 = parse_cards("AsQdKsQc7h2c9h3c5d9cJh4dKd6s")


def stacked(top: list[int]) -> list[int]:
    return top + [card for card in range(52) if card not in top]


def make_actor(
    top: list[int], clock: Any = time.monotonic, **settings: Any
) -> tuple[TableActor, Subscription]:
    actor = TableActor(
        7,
        TableConfig(variant=find_variant("seven_card_stud")),
        bus=MemoryBus(),
        store=MemoryTableStore(),
        settings=dataclasses.replace(SLOW, **settings),
        deck_factory=lambda: Deck(order=stacked(top)),
        clock=clock,
    )
    return actor, actor.bus.subscribe(table_channel(7))


def drain(subscription: Subscription) -> list[tuple[str, dict[str, Any]]]:
    """The public events so far: (kind, data)."""
    out = []
    while not subscription.queue.empty():
        message = subscription.queue.get_nowait()
        if message is not None:
            out.append((message["kind"], message["data"]))
    return out


def actions(events: list[tuple[str, dict[str, Any]]]) -> list[tuple[int, str]]:
    return [(data["seat"], data["action"]) for kind, data in events if kind == "action"]


def clocks(events: list[tuple[str, dict[str, Any]]]) -> list[int]:
    return [data["seat"] for kind, data in events if kind == "clock"]


async def seat_three(actor: TableActor) -> None:
    """Three players sit in the pause before the first hand (``make_actor(..., pause)``)."""
    for seat, player in enumerate(("ann", "bob", "cat")):
        await submit(actor, "sit", player, buy_in=100, seat=seat)
    await wait_until(lambda: actor.table.hand is not None)
    hand = actor.table.hand
    assert hand is not None and len(hand.seats) == 3


async def wait_until(condition: Any, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition never held"
        await asyncio.sleep(0.005)


async def test_sitting_out_on_one_s_turn_folds_at_once() -> None:
    actor, public = make_actor(TOP3, pause_between_hands=0.3)
    actor.start()
    try:
        await seat_three(actor)
        await submit(actor, "act", "bob", action_id="b1", kind="bring_in")
        hand = actor.table.hand
        assert hand is not None and hand.seat_to_act() == 2
        drain(public)
        started = time.monotonic()
        reply = await submit(actor, "sit_out", "cat", next_hand=False)
        took = time.monotonic() - started
        assert reply == {"seat": 2, "sitting_out": True, "after_hand": False}
        events = drain(public)
        assert events[0] == ("sat_out", {"seat": 2, "after_hand": False})
        folds = [data for kind, data in events if kind == "action"]
        assert folds == [{"seat": 2, "action": "fold", "to": 0, "stack": 99}]  # no "timeout"
        assert clocks(events) == [0], "the clock goes on to ann, never to cat again"
        assert took < AT_ONCE, f"the fold waited {took:.2f}s"
        assert hand.seat_to_act() == 0 and not hand.is_over()
    finally:
        await actor.stop()


async def test_sitting_out_on_the_bring_in_posts_it_then_folds_at_once() -> None:
    """No fold while the bring-in is due: it is posted for the player, not by the clock."""
    actor, public = make_actor(TOP2)
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100, seat=0)
        await submit(actor, "sit", "bob", buy_in=100, seat=1)
        await wait_until(lambda: actor.table.hand is not None)
        drain(public)
        await submit(actor, "sit_out", "bob", next_hand=False)
        events = drain(public)
        assert actions(events) == [(1, "bring_in")]
        assert not any(data.get("timeout") for kind, data in events if kind == "action")
        await submit(actor, "act", "ann", action_id="a1", kind="complete")
        events = drain(public)
        assert actions(events) == [(0, "complete"), (1, "fold")]
        assert clocks(events) == [] and ("hand_ended" in [kind for kind, _ in events])
        assert actor.table.hand is None or actor.table.hand.is_over()
        bob = actor.table.seats[1]
        assert bob is not None and bob.sitting_out and bob.stack == 100 - 1 - 2
    finally:
        await actor.stop()


async def test_sitting_out_before_one_s_turn_folds_when_it_comes() -> None:
    actor, public = make_actor(TOP3, pause_between_hands=0.3)
    actor.start()
    try:
        await seat_three(actor)
        await submit(actor, "sit_out", "ann", next_hand=False)  # seat 0 acts third
        await submit(actor, "act", "bob", action_id="b1", kind="bring_in")
        drain(public)
        started = time.monotonic()
        await submit(actor, "act", "cat", action_id="c1", kind="call")
        assert time.monotonic() - started < AT_ONCE
        events = drain(public)
        assert actions(events) == [(2, "call"), (0, "fold")]
        assert 0 not in clocks(events)
        assert not any(data.get("timeout") for kind, data in events if kind == "action")
    finally:
        await actor.stop()


async def test_sitting_in_again_before_one_s_turn_plays_on() -> None:
    actor, public = make_actor(TOP3, pause_between_hands=0.3)
    actor.start()
    try:
        await seat_three(actor)
        await submit(actor, "sit_out", "ann", next_hand=False)
        await submit(actor, "sit_in", "ann")
        await submit(actor, "act", "bob", action_id="b1", kind="bring_in")
        drain(public)
        await submit(actor, "act", "cat", action_id="c1", kind="call")
        events = drain(public)
        assert actions(events) == [(2, "call")] and clocks(events) == [0]
    finally:
        await actor.stop()


async def test_sitting_out_with_free_checks_checks_then_folds_to_a_bet() -> None:
    actor, public = make_actor(TOP2)
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100, seat=0)
        await submit(actor, "sit", "bob", buy_in=100, seat=1)
        await wait_until(lambda: actor.table.hand is not None)
        await submit(actor, "sit_out", "ann", next_hand=False, check_when_free=True)
        await submit(actor, "act", "bob", action_id="b1", kind="bring_in")
        events = drain(public)
        # Facing the bring-in nothing is free: ann's hand is folded.
        assert actions(events)[-1] == (0, "fold")
    finally:
        await actor.stop()
    actor, public = make_actor(TOP2)
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100, seat=0)
        await submit(actor, "sit", "bob", buy_in=100, seat=1)
        await wait_until(lambda: actor.table.hand is not None)
        await submit(actor, "act", "bob", action_id="b1", kind="bring_in")
        await submit(actor, "sit_out", "bob", next_hand=False, check_when_free=True)
        await submit(actor, "act", "ann", action_id="a1", kind="call")  # bob's bring-in stands
        drain(public)
        # Fourth street: ann (7h 3c) acts first; she checks, bob checks for free at once.
        await submit(actor, "act", "ann", action_id="a2", kind="check")
        events = drain(public)
        assert actions(events) == [(0, "check"), (1, "check")]
        await submit(actor, "act", "ann", action_id="a3", kind="bet")
        events = drain(public)
        assert actions(events) == [(0, "bet"), (1, "fold")]
        assert 1 not in clocks(events)
    finally:
        await actor.stop()


async def test_leaving_during_a_hand_folds_and_frees_the_seat_after_it() -> None:
    actor, public = make_actor(TOP3, pause_between_hands=0.3)
    store = actor.store
    assert isinstance(store, MemoryTableStore)
    actor.start()
    try:
        await seat_three(actor)
        assert await submit(actor, "leave", "cat") == {"seat": 2, "after_hand": True}
        started = time.monotonic()
        await submit(actor, "act", "bob", action_id="b1", kind="bring_in")
        assert time.monotonic() - started < AT_ONCE
        events = drain(public)
        assert ("leaving", {"seat": 2}) in events
        assert actions(events) == [(1, "bring_in"), (2, "fold")]
        assert 2 not in clocks(events)
        # The hand goes on without her; her seat is hers until it ends.
        cat = actor.table.seats[2]
        assert cat is not None and cat.leaving and store.wallet("cat") == 10_000 - 100
        await submit(actor, "act", "ann", action_id="a1", kind="fold")
        events = drain(public)
        kinds = [kind for kind, _ in events]
        assert kinds.index("seat_left") == kinds.index("hand_ended") + 1
        assert ("seat_left", {"seat": 2, "player": "cat", "cashed_out": 99}) in events
        assert actor.table.seats[2] is None
        assert store.wallet("cat") == 10_000 - 1  # only her ante is gone
        assert store.total() == 3 * 10_000
    finally:
        await actor.stop()


async def test_leaving_on_one_s_turn_folds_at_once() -> None:
    actor, public = make_actor(TOP3, pause_between_hands=0.3)
    actor.start()
    try:
        await seat_three(actor)
        await submit(actor, "act", "bob", action_id="b1", kind="bring_in")
        drain(public)
        started = time.monotonic()
        await submit(actor, "leave", "cat")
        assert time.monotonic() - started < AT_ONCE
        events = drain(public)
        assert actions(events) == [(2, "fold")] and clocks(events) == [0]
    finally:
        await actor.stop()


async def test_bad_input_is_refused_and_changes_nothing() -> None:
    actor, public = make_actor(TOP3, pause_between_hands=0.3)
    actor.start()
    try:
        await seat_three(actor)
        drain(public)
        seq = actor.seq
        for name, fields in (("leave", {}), ("sit_out", {"next_hand": False})):
            with pytest.raises(CommandRefused) as refused:
                await submit(actor, name, "dan", **fields)
            assert refused.value.code == ErrorCode.NOT_SEATED
        assert actor.seq == seq and drain(public) == []
        assert [s.player for s in actor.table.seats if s is not None] == ["ann", "bob", "cat"]
    finally:
        await actor.stop()
    with pytest.raises(CommandRefused) as refused:
        commands.parse("sit_out", "ann", {"next_hand": False, "check_when_free": "yes"})
    assert refused.value.code == ErrorCode.BAD_FIELD


async def test_the_time_bank_spent_is_told_and_shown() -> None:
    """A turn past the action clock spends the bank: a ``time_bank`` event says what is
    left, and the snapshot shows it; a time-out leaves 0; a hand gives some back."""
    now = [1000.0]
    actor, public = make_actor(
        TOP2, clock=lambda: now[0], action_clock=10.0, time_bank=30.0, time_bank_refill=5.0
    )
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100, seat=0)
        await submit(actor, "sit", "bob", buy_in=100, seat=1)
        await wait_until(lambda: actor.table.hand is not None)
        drain(public)
        now[0] += 22.0  # 10 s of action clock, then 12 s of bank
        await submit(actor, "act", "bob", action_id="b1", kind="bring_in")
        events = drain(public)
        assert ("time_bank", {"seat": 1, "time_bank": 18.0}) in events
        assert actor.snapshot(None)["seats"][1]["time_bank"] == 18.0
        now[0] += 41.0  # ann's whole clock and bank: the table folds for her
        await submit(actor, "snapshot", "ann")  # any command: the loop looks at its clocks
        events = drain(public)
        timed_out = [data for kind, data in events if kind == "action" and data.get("timeout")]
        assert [(data["seat"], data["action"]) for data in timed_out] == [(0, "fold")]
        banks = [data for kind, data in events if kind == "time_bank"]
        # Spent to 0 by the time-out; then the hand over, each gets 5 s back.
        assert banks == [
            {"seat": 0, "time_bank": 0.0},
            {"seat": 0, "time_bank": 5.0},
            {"seat": 1, "time_bank": 23.0},
        ]
        seats = actor.snapshot(None)["seats"]
        assert (seats[0]["time_bank"], seats[1]["time_bank"]) == (5.0, 23.0)
    finally:
        await actor.stop()


def turn_for_each_action(events: list[tuple[str, dict[str, Any]]]) -> list[tuple[int, bool]]:
    """Each action's seat, and whether a ``turn`` for that seat was told before it (since
    the action before)."""
    told: int | None = None
    out = []
    for kind, data in events:
        if kind == "turn":
            told = data["seat"]
        elif kind == "action":
            out.append((data["seat"], told == data["seat"]))
            told = None
    return out


async def test_a_turn_the_table_plays_at_once_is_never_announced() -> None:
    """ann sits out before her turn: no ``turn`` for her, her fold ``absent``; bob and cat,
    who play, are told each of their turns; the hand's record tells it the same way."""
    actor, public = make_actor(TOP3, pause_between_hands=0.3)
    actor.start()
    try:
        await seat_three(actor)
        await submit(actor, "sit_out", "ann", next_hand=False)
        hand = actor.table.hand
        assert hand is not None
        moves = 0
        while not hand.is_over():
            if moves == 3:  # ann's fold is written: a resumed hand replays it untold too
                live = actor.store.live[7]
                assert live.actions[2] == {
                    "seat": 0,
                    "kind": "fold",
                    "amount": None,
                    "absent": "sitting_out",
                    "at_once": True,
                }
                again = dealing.replay(actor.table.config, actor.table.seats, live)
                assert again.events == hand.events
                assert announced(again.events) == [
                    e for e in hand.events if not (type(e) is Turn and e.seat == 0)
                ]
            seat = hand.seat_to_act()
            assert seat is not None and seat != 0
            legal = hand.legal_actions()
            kind = next(k for k in ("bring_in", "check", "call") if k in legal.kinds)
            player = ("ann", "bob", "cat")[seat]
            moves += 1
            await submit(actor, "act", player, action_id=f"m{moves}", kind=kind)
        events = drain(public)
        played = turn_for_each_action(events)
        assert (0, False) in played, "ann's fold came, with no turn before it"
        assert [told for seat, told in played if seat != 0] == [True] * (len(played) - 1)
        assert len(played) >= 5, "bob and cat played every street"
        assert 0 not in [data["seat"] for kind, data in events if kind == "turn"]
        fold = next(data for kind, data in events if kind == "action" and data["seat"] == 0)
        assert fold == {"seat": 0, "action": "fold", "absent": True, "to": 0, "stack": 99}
        await wait_until(lambda: len(actor.store.hands) == 1)
        record = [(e["kind"], e["data"]) for e in actor.store.hands[0].events if e["to"] is None]
        assert turn_for_each_action(record) == played
    finally:
        await actor.stop()


async def test_a_turn_announced_before_its_player_left_is_answered_plainly() -> None:
    """cat's turn was told while she was there: sitting out during it, her fold follows the
    turn, not ``absent`` (the record keeps the turn too)."""
    actor, public = make_actor(TOP3, pause_between_hands=0.3)
    actor.start()
    try:
        await seat_three(actor)
        await submit(actor, "act", "bob", action_id="b1", kind="bring_in")
        await submit(actor, "sit_out", "cat", next_hand=False)
        events = drain(public)
        assert turn_for_each_action(events) == [(1, True), (2, True)]
        assert not any(data.get("absent") for kind, data in events if kind == "action")
    finally:
        await actor.stop()
