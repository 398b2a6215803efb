"""A table whose hands keep hitting an error pauses itself, as an operator's pause does."""

from __future__ import annotations

from typing import Any

import pytest
from play import submit
from test_actor import drain, make_actor, wait_for

from server.bus.memory import table_channel
from server.table import commands as cmd
from server.table import mixed, operators
from tests.server.fakes import MemoryTableStore


class Fault:
    """What breaks every hand until it is fixed: counts the tries it broke."""

    def __init__(self) -> None:
        self.on = True
        self.tries = 0


async def test_a_table_failing_every_deal_pauses_after_three_voided_hands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    actor = make_actor(action_clock=5.0)
    store = actor.store
    assert isinstance(store, MemoryTableStore)
    fault = Fault()
    tell_hand = actor.tell_hand

    def breaks_once_dealt(events: list[Any], after: list[Any] | None = None) -> None:
        if fault.on and actor.table.hand is not None and list(actor.table.hand.events) == events:
            fault.tries += 1  # the deal's own events: the hand is dealt, then this fails
            raise RuntimeError("broken deal")
        tell_hand(events, after)

    monkeypatch.setattr(actor, "tell_hand", breaks_once_dealt)
    watched = actor.bus.subscribe(table_channel(7))
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100, seat=0)
        await submit(actor, "sit", "bob", buy_in=100, seat=1)
        await wait_for(lambda: actor.ops.paused is not None)
        assert actor.ops.paused == "errors"
        assert fault.tries == operators.ERRORS_TO_PAUSE
        assert actor.errors_in_a_row == 0  # resumed, it has as many tries again
        assert actor.hands_cancelled == operators.ERRORS_TO_PAUSE
        assert actor.metrics.table_errors._value.get() == operators.ERRORS_TO_PAUSE
        events = drain(watched)
        cancelled = [e["data"] for e in events if e["kind"] == "hand_cancelled"]
        assert [e["reason"] for e in cancelled] == ["internal_error"] * 3
        paused = [e["data"] for e in events if e["kind"] == "operator_paused"]
        assert [(e["reason"], e["after_hand"]) for e in paused] == [("errors", False)]
        assert store.tables[7]["paused_reason"] == "errors"
        # Paused: no chip moved, and no new hand is tried.
        assert [s.stack for s in actor.table.seats if s is not None] == [100, 100]
        assert store.total() == 20_000
        assert actor.table.hand is None and actor.clocks.next_hand_at is None
        assert actor.snapshot(None)["operator_pause"] == "errors"
        # Fixed, resumed by an operator: the table deals again, and plays on.
        fault.on = False
        await actor.submit(cmd.ResumeTable(player="op", operator_id=1, reason="fixed"))
        assert actor.ops.paused is None
        await wait_for(lambda: actor.table.hand is not None)
        assert fault.tries == operators.ERRORS_TO_PAUSE
        assert store.total() == 20_000
    finally:
        await actor.stop()


async def test_a_hand_finishing_resets_the_count_of_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    actor = make_actor(action_clock=0.01, time_bank=0.0)
    fault = Fault()
    switch_game = mixed.switch_game

    def breaks_every_other(*args: Any) -> None:
        fault.tries += 1
        if fault.on and fault.tries % 2:  # before the deal: no hand to void
            raise RuntimeError("broken switch")
        switch_game(*args)

    monkeypatch.setattr(mixed, "switch_game", breaks_every_other)
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100, seat=0)
        await submit(actor, "sit", "bob", buy_in=100, seat=1)
        await wait_for(lambda: fault.tries >= 8, timeout=10.0)
        assert actor.ops.paused is None  # an error, a hand, an error...: never three in a row
        assert actor.errors_in_a_row <= 1
    finally:
        await actor.stop()


async def test_a_deal_the_engine_refuses_pauses_the_table_with_no_chip_moved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    actor = make_actor(action_clock=5.0)
    store = actor.store
    assert isinstance(store, MemoryTableStore)
    fault = Fault()
    start_hand = actor.table.start_hand

    def refuses(deck: Any) -> Any:
        if fault.on:
            fault.tries += 1  # written ahead, then refused by the engine: no hand dealt
            raise ValueError("a rule the engine refuses at the deal")
        return start_hand(deck)

    monkeypatch.setattr(actor.table, "start_hand", refuses)
    watched = actor.bus.subscribe(table_channel(7))
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100, seat=0)
        await submit(actor, "sit", "bob", buy_in=100, seat=1)
        await wait_for(lambda: actor.ops.paused is not None)
        assert (actor.ops.paused, fault.tries) == ("errors", operators.ERRORS_TO_PAUSE)
        events = drain(watched)
        assert [e["data"]["reason"] for e in events if e["kind"] == "operator_paused"] == ["errors"]
        assert [s.stack for s in actor.table.seats if s is not None] == [100, 100]
        assert store.total() == 20_000
        fault.on = False
        await actor.submit(cmd.ResumeTable(player="op", operator_id=1, reason="fixed"))
        await wait_for(lambda: actor.table.hand is not None)
        assert store.total() == 20_000
    finally:
        await actor.stop()
