"""The table actor: scripted commands in, events out on the bus."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from typing import Any

import pytest
from play import calling, submit

from engine.variants import TableConfig, find_variant
from server.bus.memory import MemoryBus, Subscription, player_channel, table_channel
from server.table.actor import TableActor
from server.table.loop import Lifecycle
from server.table.player_commands import REMEMBERED_ACTION_IDS as REMEMBERED
from server.table.ports import CommandRefused, TableSettings
from tests.server.fakes import MemoryTableStore

FAST = TableSettings(
    min_buy_in=20,
    max_buy_in=500,
    action_clock=0.05,
    time_bank=0.05,
    pause_between_hands=0.0,
    waiting_offer=0.2,
    sit_out_limit=0.3,
)


def make_actor(
    seed: int = 1, variant: str = "seven_card_stud", run: int = 1, **settings: Any
) -> TableActor:
    rng = random.Random(seed)
    return TableActor(
        7,
        TableConfig(variant=find_variant(variant)),
        bus=MemoryBus(),
        store=MemoryTableStore(),
        settings=dataclasses.replace(FAST, **settings),
        rng_factory=lambda: random.Random(rng.random()),
        run=run,
    )


def drain(subscription: Subscription) -> list[dict[str, Any]]:
    out = []
    while not subscription.queue.empty():
        message = subscription.queue.get_nowait()
        if message is not None:
            out.append(message)
    return out


async def wait_for(condition: Any, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition never held"
        await asyncio.sleep(0.005)


async def test_two_players_sit_and_the_clock_plays_their_hands() -> None:
    """Absent players: the bring-in is posted for them, then they check or fold (SCS 10)."""
    actor = make_actor(action_clock=0.01, time_bank=0.0)
    public = actor.bus.subscribe(table_channel(7))
    actor.start()
    try:
        assert await submit(actor, "sit", "ann", buy_in=100, seat=0) == {"seat": 0, "stack": 100}
        await submit(actor, "sit", "bob", buy_in=100)
        store = actor.store
        assert isinstance(store, MemoryTableStore)
        await wait_for(lambda: len(store.hands) >= 3)
        events = drain(public)
        seqs = [m["seq"] for m in events]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "public seq has no gaps"
        actions = [m["data"] for m in events if m["kind"] == "action"]
        assert actions[0]["action"] == "bring_in" and actions[0]["timeout"] is True
        assert all(a.get("timeout") for a in actions)
        assert store.total() == 2 * 10_000
    finally:
        await actor.stop()


async def test_down_cards_reach_only_their_owner() -> None:
    actor = make_actor(action_clock=5.0)
    public = actor.bus.subscribe(table_channel(7))
    ann = actor.bus.subscribe(player_channel(7, "ann"))
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100, seat=0)
        await submit(actor, "sit", "bob", buy_in=100, seat=1)
        await wait_for(lambda: actor.table.hand is not None)
        await wait_for(lambda: not ann.queue.empty())  # the deal's events are out
        hand = actor.table.hand
        assert hand is not None
        bob_down = {c for c in view_down(hand, 1)}
        public_text = repr(drain(public))
        assert all(f"'{c}'" not in public_text for c in bob_down)
        private = drain(ann)
        assert private and all(m["private"] for m in private)
        assert all(m["data"]["seat"] == 0 for m in private)
        snap = await submit(actor, "snapshot", "ann")
        assert snap["you"] == 0
        assert snap["hand"]["seats"][0]["down"] and snap["hand"]["seats"][1]["down"] == []
        spectator = await submit(actor, "snapshot", "")
        assert spectator["hand"]["seats"][0]["down"] == []
    finally:
        await actor.stop()


def view_down(hand: Any, seat: int) -> list[str]:
    from engine.cards import format_card

    i = hand.index_of[seat]
    return [format_card(c) for c in hand.cards[i][:2]]


async def test_actions_with_the_same_action_id_happen_once() -> None:
    actor = make_actor(action_clock=5.0)
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100, seat=0)
        await submit(actor, "sit", "bob", buy_in=100, seat=1)
        await wait_for(lambda: actor.table.hand is not None)
        hand = actor.table.hand
        assert hand is not None
        seat = hand.seat_to_act()
        player = "ann" if seat == 0 else "bob"
        first = await submit(actor, "act", player, action_id="a1", kind="bring_in")
        actions = len(hand.actions)
        again = await submit(actor, "act", player, action_id="a1", kind="bring_in")
        assert again == first and len(hand.actions) == actions
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "act", player, action_id="a2", kind="bring_in")
        assert refused.value.code == "not_your_turn"
        assert len(hand.actions) == actions
    finally:
        await actor.stop()


async def test_a_player_s_latest_actions_are_remembered_for_their_retries_and_no_more() -> None:
    actor = make_actor(action_clock=5.0)
    actor.start()
    answers: dict[str, dict[str, Any]] = {}
    try:
        await submit(actor, "sit", "ann", buy_in=500, seat=0)
        await submit(actor, "sit", "bob", buy_in=500, seat=1)
        rng = random.Random(3)
        while True:
            hand = actor.table.hand
            legal = hand.legal_actions() if hand is not None and not hand.is_over() else None
            acted = sum(1 for action_id in answers if action_id.startswith("ann"))
            if acted >= 3 * REMEMBERED and legal is not None and legal.seat is not None:
                break
            if legal is None or legal.seat is None:
                await asyncio.sleep(0.002)
                continue
            player = "ann" if legal.seat == 0 else "bob"
            kind, amount = calling(legal, rng)
            action_id = f"{player}-{len(answers)}"  # ann's first ones long forgotten at the end
            fields = {"amount": amount} if amount is not None else {}
            answers[action_id] = await submit(
                actor, "act", player, action_id=action_id, kind=kind, **fields
            )
        hand = actor.table.hand  # mid-hand: the loop stopped with a player to act
        assert hand is not None
        actions = len(hand.actions)
        remembered = actor.player_state("ann").action_ids
        latest = [action_id for action_id in answers if action_id.startswith("ann")][-REMEMBERED:]
        assert list(remembered) == latest
        for action_id in latest:  # each retried: its first answer, nothing acted again
            again = await submit(actor, "act", "ann", action_id=action_id, kind="fold")
            assert again == answers[action_id]
        assert actor.table.hand is hand and len(hand.actions) == actions
    finally:
        await actor.stop()


async def test_refusals_have_stable_codes_and_change_nothing() -> None:
    actor = make_actor(action_clock=5.0)
    actor.start()
    try:
        for data, code in [
            ({"buy_in": 5}, "bad_buy_in"),
            ({"buy_in": "100"}, "bad_amount"),
            ({"buy_in": 100, "seat": 99}, "bad_seat"),
        ]:
            with pytest.raises(CommandRefused) as refused:
                await submit(actor, "sit", "ann", **data)
            assert refused.value.code == code
        await submit(actor, "sit", "ann", buy_in=100, seat=3)
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "sit", "bob", buy_in=100, seat=3)
        assert refused.value.code == "seat_taken"
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "act", "ann", action_id="x", kind="fold")
        assert refused.value.code == "no_hand"
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "dance", "ann")
        assert refused.value.code == "unknown_command"
        assert actor.store.wallet("bob") == 10_000  # type: ignore[attr-defined]
    finally:
        await actor.stop()


async def test_a_failing_hand_is_cancelled_with_every_chip_returned() -> None:
    actor = make_actor(action_clock=5.0)
    store = actor.store
    assert isinstance(store, MemoryTableStore)
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100, seat=0)
        await submit(actor, "sit", "bob", buy_in=100, seat=1)
        await wait_for(lambda: actor.table.hand is not None)
        hand = actor.table.hand
        assert hand is not None
        seat = hand.seat_to_act()
        player = "ann" if seat == 0 else "bob"
        await submit(actor, "act", player, action_id="b", kind="bring_in")
        store.fail_next_save = True
        # Fold the other player: the hand ends, saving it fails, the hand is cancelled.
        other = "bob" if player == "ann" else "ann"
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "act", other, action_id="f", kind="fold")
        assert refused.value.code == "internal_error"
        assert actor.hands_cancelled == 1
        stacks = [s.stack for s in actor.table.seats if s is not None]
        assert stacks == [100, 100]
        await wait_for(lambda: actor.table.hand is not None)  # the table plays on
        assert store.total() == 20_000
    finally:
        await actor.stop()


async def test_waiting_list_offers_a_freed_seat_for_a_limited_time() -> None:
    actor = make_actor(action_clock=5.0, seat_count=2)
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100)
        await submit(actor, "sit_out", "ann", next_hand=False)
        await submit(actor, "sit", "bob", buy_in=100)
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "sit", "cat", buy_in=100)
        assert refused.value.code == "table_full"
        assert await submit(actor, "join_waiting_list", "cat") == {"position": 1}
        await submit(actor, "join_waiting_list", "dan")
        await submit(actor, "leave", "ann")
        assert actor.offer is not None and actor.offer[0] == "cat"
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "sit", "dan", buy_in=100)
        assert refused.value.code == "table_full"
        await wait_for(lambda: actor.offer is not None and actor.offer[0] == "dan")
        await submit(actor, "sit", "dan", buy_in=100)
        assert actor.table.seat_of("dan") is not None
        assert actor.store.wallet("ann") == 10_000  # type: ignore[attr-defined]
    finally:
        await actor.stop()


async def test_a_player_sat_out_too_long_is_removed() -> None:
    actor = make_actor(action_clock=5.0)
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100)
        await submit(actor, "sit_out", "ann")
        await wait_for(lambda: actor.table.seat_of("ann") is None, timeout=2.0)
        assert actor.store.wallet("ann") == 10_000  # type: ignore[attr-defined]
    finally:
        await actor.stop()


async def test_a_stopped_table_refuses_commands_at_once() -> None:
    actor = make_actor(action_clock=5.0)
    actor.start()
    await submit(actor, "sit", "ann", buy_in=100)
    await actor.stop()
    with pytest.raises(CommandRefused) as refused:
        await asyncio.wait_for(submit(actor, "sit_in", "ann"), 1.0)
    assert refused.value.code == "table_closed"


async def test_a_connection_told_to_another_run_of_the_table_is_refused() -> None:
    """A gateway tells the run of the table it heard from; an actor of an older run (a node
    that has not yet learnt the table moved) counts nothing, the actor of that run does."""
    old = make_actor(action_clock=5.0)
    new = make_actor(action_clock=5.0, run=2)
    new.restore([(0, "ann", 100)], sitting_out=set())
    old.start()
    new.start()
    try:
        with pytest.raises(CommandRefused) as refused:
            await submit(old, "presence", "ann", connected=True, run=2)
        assert refused.value.code == "table_moved" and "ann" not in old.players
        await submit(new, "presence", "ann", connected=True, run=2)
        assert new.snapshot("ann")["seats"][0]["connected"]
    finally:
        await old.stop()
        await new.stop()


async def test_a_player_who_left_mid_hand_after_a_cancelled_hand_is_cashed_out() -> None:
    """A cancelled hand settles like a finished one: leavers leave with their chips."""
    actor = make_actor(action_clock=5.0)
    store = actor.store
    assert isinstance(store, MemoryTableStore)
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100, seat=0)
        await submit(actor, "sit", "bob", buy_in=100, seat=1)
        await wait_for(lambda: actor.table.hand is not None)
        await submit(actor, "add_chips", "ann", amount=50)
        hand = actor.table.hand
        assert hand is not None
        ann_brings_in = hand.seat_to_act() == 0
        if not ann_brings_in:
            await submit(actor, "act", "bob", action_id="b", kind="bring_in")
        assert await submit(actor, "leave", "bob") == {"seat": 1, "after_hand": True}
        # ann's action passes the turn to bob, who left: his hand is folded at once, which
        # ends the hand; saving it fails, so it is cancelled.
        store.fail_next_save = True
        with pytest.raises(CommandRefused) as refused:
            kind = "bring_in" if ann_brings_in else "complete"
            await submit(actor, "act", "ann", action_id="a", kind=kind)
        assert refused.value.code == "internal_error" and actor.hands_cancelled == 1
        assert actor.table.seat_of("bob") is None
        assert store.wallet("bob") == 10_000
        ann = actor.table.seats[0]
        assert ann is not None and ann.stack == 150 and ann.pending_chips == 0
        assert store.total() == 20_000
    finally:
        await actor.stop()


async def test_a_snapshot_says_who_sits_out_once_the_hand_ends() -> None:
    actor = make_actor(action_clock=30.0)
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100)
        await submit(actor, "sit", "bob", buy_in=100)
        await wait_for(lambda: actor.table.hand is not None, timeout=2.0)
        await submit(actor, "sit_out", "ann", next_hand=True)
        seat = actor.snapshot(None)["seats"][0]
        assert seat["player"] == "ann"
        assert seat["sit_out_next_hand"] is True and seat["sitting_out"] is False
    finally:
        await actor.stop()


async def test_the_actor_s_life_moves_only_as_its_states_allow() -> None:
    """New, then busy and idle in turn while it serves, then stopped; a move the lifecycle
    does not list is a bug and raises."""
    actor = make_actor(action_clock=5.0)
    assert actor.state is Lifecycle.NEW
    actor.start()
    await submit(actor, "sit", "ann", buy_in=100)
    await wait_for(lambda: actor.state is Lifecycle.IDLE)
    with pytest.raises(RuntimeError):
        actor._move(Lifecycle.NEW)
    await actor.stop()
    assert actor.state is Lifecycle.STOPPED and actor.stopped.is_set()
    with pytest.raises(RuntimeError):
        actor._move(Lifecycle.BUSY)
    taken = make_actor(action_clock=5.0)
    taken.start()
    await submit(taken, "sit", "ann", buy_in=100)
    await taken.stop(taken_over=True)
    assert taken.state is Lifecycle.TAKEN_OVER and taken.taken_over
    never = make_actor()
    await never.stop()
    assert never.state is Lifecycle.STOPPED
