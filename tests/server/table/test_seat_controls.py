"""A seated player's controls at the table actor: "sit out" keeps the hand in progress unless
asked to fold it, a sit-in that reaches the table before the deal is dealt in, chips added
within the buy-in range only, and the longer pause after a showdown (a table setting).

The table's clock is a hand-moved one where timing matters: the deal falls due when the
test moves it, never by a race with the machine's load.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from play import calling, play, submit
from test_sit_out_leave import SLOW, TOP3, actions, drain, make_actor, wait_until

from engine.protocol import ErrorCode
from engine.table import SeatingRules, Table
from engine.variants import TableConfig, find_variant
from server.bus.memory import table_channel
from server.cardroom.takeover import table_settings
from server.db.models import TableRecord
from server.settings import Settings
from server.store.table_config import config_to_json
from server.table import commands, edit
from server.table.actor import TableActor
from server.table.clocks import TableClocks
from server.table.ports import CommandRefused, TableSettings


class HandClock:
    """A clock the test moves (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def deal(actor: TableActor, clock: HandClock, number: int) -> None:
    """Move the clock to the next deal and let the table see it (any command wakes it)."""
    due = actor.clocks.next_hand_at
    assert due is not None, "no deal is due"
    clock.now = due
    await actor.submit(commands.Snapshot(player=""))
    await wait_until(lambda: actor.hand_number == number)


async def three_seated(clock: HandClock, **settings: Any) -> TableActor:
    actor, _ = make_actor(TOP3, clock=clock, pause_between_hands=2.0, **settings)
    actor.start()
    for seat, player in enumerate(("ann", "bob", "cat")):
        await submit(actor, "sit", player, buy_in=100, seat=seat)
    await deal(actor, clock, 1)
    return actor


async def test_sit_out_by_default_keeps_the_hand_in_progress() -> None:
    """``sit_out`` without ``next_hand`` (the page's "Sit out next hand"): ann is still dealt
    her turns in this hand and plays them; she sits out when it ends, and the next hand is
    dealt without her."""
    clock = HandClock()
    actor = await three_seated(clock)
    try:
        reply = await submit(actor, "sit_out", "ann")
        assert reply == {"seat": 0, "sitting_out": False, "after_hand": True}
        ann = actor.table.seats[0]
        assert ann is not None and not ann.sitting_out and ann.sit_out_next_hand
        await submit(actor, "act", "bob", action_id="b1", kind="bring_in")
        await submit(actor, "act", "cat", action_id="c1", kind="call")
        hand = actor.table.hand
        assert hand is not None and hand.seat_to_act() == 0  # her turn: not played for her
        assert actor.clocks.deadline is not None
        await submit(actor, "act", "ann", action_id="a1", kind="call")
        assert 0 in hand.index_of and not hand.is_over()
        await play(actor, lambda: actor.table.hand is None, choose=calling)
        assert ann.sitting_out and not ann.sit_out_next_hand
        await deal(actor, clock, 2)
        dealt = actor.table.hand
        assert dealt is not None and dealt.seats == [1, 2]
    finally:
        await actor.stop()


async def test_sitting_in_up_to_the_deal_counts_for_that_deal() -> None:
    clock = HandClock()
    actor = await three_seated(clock)
    try:
        await submit(actor, "sit_out", "ann", next_hand=False)  # folded at her turn
        await play(actor, lambda: actor.table.hand is None, choose=calling)
        due = actor.clocks.next_hand_at
        assert due is not None
        clock.now = due - 0.01  # the last moment before the deal
        await actor.submit(commands.Snapshot(player=""))
        assert actor.hand_number == 1
        assert await submit(actor, "sit_in", "ann") == {"seat": 0}
        assert actor.clocks.next_hand_at == due  # the deal is not put off
        await deal(actor, clock, 2)
        hand = actor.table.hand
        assert hand is not None and hand.seats == [0, 1, 2]
    finally:
        await actor.stop()


async def test_sitting_in_when_the_table_waits_for_players_deals_after_the_pause() -> None:
    """Two players, one sat out: no deal is due; her sit-in schedules it, with her in it."""
    clock = HandClock()
    actor, _ = make_actor(TOP3, clock=clock, pause_between_hands=2.0)
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100, seat=0)
        await submit(actor, "sit_out", "ann")
        await submit(actor, "sit", "bob", buy_in=100, seat=1)
        assert actor.clocks.next_hand_at is None
        await submit(actor, "sit_in", "ann")
        await deal(actor, clock, 1)
        hand = actor.table.hand
        assert hand is not None and hand.seats == [0, 1]
    finally:
        await actor.stop()


async def test_chips_are_added_within_the_buy_in_range_only() -> None:
    """Between hands, at once; refused past the maximum buy-in on the table (or not a
    positive whole number) with a stable code, nothing paid, nothing told."""
    actor, public = make_actor(TOP3)  # buy-in 20 to 500
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100, seat=0)
        store = actor.store
        wallet = store.wallet("ann")  # type: ignore[attr-defined]
        drain(public)
        refusals = [
            ({"amount": 401}, ErrorCode.BAD_BUY_IN),
            ({"amount": 0}, ErrorCode.BAD_AMOUNT),
            ({"amount": -5}, ErrorCode.BAD_AMOUNT),
        ]
        for fields, code in refusals:
            with pytest.raises(CommandRefused) as refused:
                await submit(actor, "add_chips", "ann", **fields)
            assert refused.value.code == code
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "add_chips", "ann", amount=401)
        assert "1 to 400" in refused.value.message, refused.value.message
        for fields in ({"amount": "50"}, {"amount": 2.5}, {}):
            with pytest.raises(CommandRefused) as refused:
                commands.parse("add_chips", "ann", fields)
            assert refused.value.code in (ErrorCode.BAD_FIELD, ErrorCode.BAD_AMOUNT)
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "add_chips", "bob", amount=50)  # no seat here
        assert refused.value.code == ErrorCode.NOT_SEATED
        ann = actor.table.seats[0]
        assert ann is not None and ann.stack == 100 and ann.pending_chips == 0
        assert store.wallet("ann") == wallet  # type: ignore[attr-defined]
        assert drain(public) == []

        reply = await submit(actor, "add_chips", "ann", amount=400)
        assert reply == {"seat": 0, "stack": 500, "pending": 0}
        assert store.wallet("ann") == wallet - 400  # type: ignore[attr-defined]
        assert drain(public) == [("chips_added", {"seat": 0, "amount": 400, "after_hand": False})]
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "add_chips", "ann", amount=1)
        assert refused.value.code == ErrorCode.BAD_BUY_IN
        assert "no chips" in refused.value.message
        assert ann.stack == 500
    finally:
        await actor.stop()


async def test_chips_added_during_one_s_hand_join_the_stack_when_it_ends() -> None:
    clock = HandClock()
    actor = await three_seated(clock)
    try:
        reply = await submit(actor, "add_chips", "ann", amount=300)
        assert reply["pending"] == 300
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "add_chips", "ann", amount=101)  # 100 + 300 + 101 > 500
        assert refused.value.code == ErrorCode.BAD_BUY_IN
        ann = actor.table.seats[0]
        assert ann is not None and ann.stack == 100 and ann.pending_chips == 300  # as dealt
        await play(actor, lambda: actor.table.hand is None, choose=calling)
        ended = actor.store.hands[-1].stacks["ann"]  # type: ignore[attr-defined]
        assert ann.pending_chips == 0 and ann.stack == ended + 300
    finally:
        await actor.stop()


async def test_the_pause_after_a_showdown_is_the_table_s_showdown_pause() -> None:
    """A showdown: the next deal comes ``showdown_pause`` after it; a hand won by a fold:
    after the pause between hands."""
    clock = HandClock()
    actor = await three_seated(clock, showdown_pause=5.0)
    try:
        await play(actor, lambda: actor.table.hand is None, choose=calling)
        assert actor.store.hands[-1].result["showdown"] is True  # type: ignore[attr-defined]
        due = actor.clocks.next_hand_at
        assert due is not None and due - clock.now == pytest.approx(5.0)
        clock.now = due - 0.5
        await actor.submit(commands.Snapshot(player=""))
        assert actor.hand_number == 1  # not yet: the showdown is still being read
        await deal(actor, clock, 2)

        public = actor.bus.subscribe(table_channel(actor.table_id))
        hand = actor.table.hand
        assert hand is not None
        for player in ("bob", "cat", "ann"):  # the bring-in (bob), then two folds
            seat = hand.seat_to_act()
            if seat is None or hand.is_over():
                break
            occupant = actor.table.seats[seat]
            assert occupant is not None
            kind = "bring_in" if "bring_in" in hand.legal_actions().kinds else "fold"
            await submit(actor, "act", occupant.player, action_id=f"{player}2", kind=kind)
        assert actor.table.hand is None
        assert actor.store.hands[-1].result["showdown"] is False  # type: ignore[attr-defined]
        assert len(actions(drain(public))) == 3
        due = actor.clocks.next_hand_at
        assert due is not None and due - clock.now == pytest.approx(2.0)
    finally:
        await actor.stop()


def test_a_showdown_pause_is_never_shorter_than_the_pause_between_hands() -> None:
    settings = TableSettings(pause_between_hands=3.0, showdown_pause=1.0)
    clocks = TableClocks(settings, lambda: 0.0)
    assert clocks.pause(after_showdown=True) == 3.0
    assert clocks.pause(after_showdown=False) == 3.0
    settings.showdown_pause = 6.0
    assert clocks.pause(after_showdown=True) == 6.0


def test_the_showdown_pause_is_a_table_setting_with_the_node_s_default() -> None:
    config = TableConfig(variant=find_variant("seven_card_stud"))
    record = TableRecord(
        name="t", variant="seven_card_stud", config=config_to_json(config), seats=8,
        min_buy_in=20, max_buy_in=500, spectator_chat=False, time_fee=0, time_fee_period=1800.0,
        action_clock=None, time_bank=None, showdown_pause=None,
    )  # fmt: skip
    node = Settings(database_url="sqlite+aiosqlite://", showdown_pause_seconds=5)
    assert table_settings(node, record).showdown_pause == 5.0
    assert Settings.model_fields["showdown_pause_seconds"].default == 5
    record.showdown_pause = 8.0
    assert table_settings(node, record).showdown_pause == 8.0
    # An operator's change (PATCH /admin/tables/{id}) is played from the next hand on.
    assert "showdown_pause" in edit.NAMES
    values = edit.values_of(record)
    values["showdown_pause"] = 3.5
    played = dataclasses.replace(SLOW)
    edit.apply(values, Table(config, 8, SeatingRules(20, 500, 30.0)), played)
    assert played.showdown_pause == 3.5
