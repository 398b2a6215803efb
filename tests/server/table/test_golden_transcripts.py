"""Golden transcripts: what a table says and writes, word for word, kept and compared.

Each scene drives one table actor (``tests/server/golden_table.py``) through a part of its
life: every kind of action and refusal, time-outs and time banks, seats gone from their
hand, sitting out and leaving, the waiting list, operators' pauses, voids and kills, a
table taken over with its hand resumed (and one that cannot be), time collection, the
rake, the database away and a hand that blows up. The transcript (the bus's messages with
their sequence numbers, the store's writes, the replies and refusals) must equal the one
kept in ``tests/server/golden/``. They guard refactors of the server: a change of
behaviour shows as a difference here, and is either a bug or a deliberate change, kept by
recording again (then reading the diff of the kept files)::

    STUD_GOLDEN_RECORD=1 python -m pytest tests/server/table/test_golden_transcripts.py
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from golden_table import TABLE, Scene

from engine.table_events import TableResumed
from engine.variants import TableConfig, find_variant
from server.store.table_config import config_to_json
from server.table.ports import TableSettings

KEPT = Path(__file__).parents[1] / "golden"
RECORD = os.environ.get("STUD_GOLDEN_RECORD") == "1"

SETTINGS = TableSettings(
    seat_count=6,
    min_buy_in=20,
    max_buy_in=500,
    action_clock=15.0,
    time_bank=30.0,
    time_bank_refill=2.0,
    pause_between_hands=2.0,
    showdown_pause=5.0,
    waiting_offer=30.0,
    sit_out_limit=600.0,
)
BETWEEN_HANDS = 6.0  # past either pause between hands

ALL_KINDS = {"bring_in", "complete", "bet", "raise", "call", "check", "fold"}


def stud(variant: str = "seven_card_stud", **rules: Any) -> TableConfig:
    return TableConfig(variant=find_variant(variant), **rules)


def settings(**changes: Any) -> TableSettings:
    return dataclasses.replace(SETTINGS, **changes)


async def seat(scene: Scene, *players: str, buy_in: int = 200) -> None:
    for number, player in enumerate(players):
        await scene.do("presence", player, connected=True)
        await scene.do("sit", player, buy_in=buy_in, seat=number)


async def next_hand(scene: Scene) -> None:
    number = scene.actor.hand_number
    await scene.wait(BETWEEN_HANDS)
    assert scene.actor.hand_number == number + 1, "no hand was dealt"


# ---------------------------------------------------------------------- the scenes


async def actions(scene: Scene) -> None:
    """Hands played to the end by every kind of action, and the refusals of bad ones."""
    await seat(scene, "ann", "bob", "cat", "dan")
    await scene.do("sit", "ann", buy_in=100)  # seated already
    await scene.do("sit", "eve", buy_in=5)  # under the minimum
    await scene.do("chat", "ann", text="good luck")
    await scene.do("chat", "zed", text="a spectator may not")
    await scene.do("client_seed", "bob", seed="bobs-seed")
    await next_hand(scene)
    waiting = scene.to_act()
    assert waiting is not None
    idle = next(p for p in ("ann", "bob", "cat", "dan") if p != waiting)
    await scene.do("act", idle, action_id="x1", kind="call")  # not their turn
    await scene.do("act", waiting, action_id="x2", kind="shove")  # no such action
    await scene.do("act", waiting, action_id="x3", kind="complete", amount=7)  # a bad amount
    reply = await scene.act()
    assert reply is not None
    await scene.do("act", waiting, action_id=f"a{scene.actions}", kind="fold")  # a retry
    await scene.do("snapshot", scene.to_act() or "ann")  # a player's own view
    await scene.do("add_chips", "ann", amount=50)  # waits for the hand's end
    await scene.play_hand()
    for _ in range(5):
        await next_hand(scene)
        await scene.play_hand()
    await scene.do("act", "ann", action_id="late", kind="check")  # no hand being played
    assert scene.kinds_played() >= ALL_KINDS, scene.kinds_played()


async def variants(scene: Scene) -> None:
    """A hand of each variant the server deals, to its end."""
    await seat(scene, "ann", "bob", "cat")
    for name in ("razz", "seven_card_stud_hi_lo", "five_card_stud", "six_card_stud"):
        await scene.operator(
            "change_settings",
            operator_id=1,
            settings=values(stud(name)),
        )
        await next_hand(scene)
        await scene.play_hand()
    await scene.operator("change_settings", operator_id=1, settings=values(stud("eight_card_stud")))
    await next_hand(scene)
    await scene.play_hand()


def values(config: TableConfig, **changes: Any) -> dict[str, Any]:
    """Every editable setting, as the back office sends them to a table."""
    return {
        "config": config_to_json(config),
        "seats": SETTINGS.seat_count,
        "min_buy_in": SETTINGS.min_buy_in,
        "max_buy_in": SETTINGS.max_buy_in,
        "action_clock": SETTINGS.action_clock,
        "time_bank": SETTINGS.time_bank,
        "showdown_pause": SETTINGS.showdown_pause,
        "spectator_chat": False,
        "time_fee": 0,
        "time_fee_period": 1800.0,
        **changes,
    }


async def clocks(scene: Scene) -> None:
    """Turns out of time: the time bank spent, then the turn timed out; banks refilled."""
    await seat(scene, "ann", "bob", "cat")
    await next_hand(scene)
    await scene.wait(10.0)  # within the action clock
    await scene.act()
    await scene.wait(20.0)  # into the time bank
    await scene.act()
    await scene.wait(50.0)  # past the clock and the bank: timed out
    await scene.wait(16.0)  # the next one too, with no bank left
    await scene.play_hand()
    await next_hand(scene)
    await scene.play_hand()


async def absent_seats(scene: Scene) -> None:
    """Seats gone from their hand: played at once, bring-in posted, a check where asked."""
    await seat(scene, "ann", "bob", "cat", "dan")
    await next_hand(scene)
    first = scene.to_act()
    assert first is not None
    await scene.do("sit_out", first, next_hand=False)  # their bring-in is posted at once
    others = [p for p in ("ann", "bob", "cat", "dan") if p != first]
    await scene.do("sit_out", others[0], next_hand=False, check_when_free=True)
    await scene.do("leave", others[1])  # folded when their turn comes, cashed out at the end
    await scene.play_hand()
    await scene.do("sit_in", first)
    await scene.do("sit_in", others[0])
    await next_hand(scene)
    await scene.play_hand()


async def sitting_out_and_leaving(scene: Scene) -> None:
    """Sit out and in between hands, leave, the waiting list and its offer, the sit-out
    limit, and a player who sat out until the table removed them."""
    await seat(scene, "ann", "bob", "cat")
    await scene.do("join_waiting_list", "dan")
    await scene.do("join_waiting_list", "eve")
    await scene.do("sit", "dan", buy_in=100)  # the table is full
    await scene.do("sit_out", "cat")  # after the hand: no hand yet, so now
    await next_hand(scene)
    await scene.do("sit_out", "ann")  # next hand
    await scene.play_hand()
    await scene.do("leave", "bob")  # between hands: cashed out now, the seat offered to dan
    await scene.wait(40.0)  # dan never takes it: offered to eve
    await scene.do("sit", "eve", buy_in=150)
    await scene.do("leave", "dan")  # off the waiting list
    await scene.wait(700.0)  # ann and cat sat out past the limit: removed
    await scene.do("presence", "ann", connected=False)
    await scene.do("leave", "ann")  # gone already


async def operators(scene: Scene) -> None:
    """An operator pauses (after the hand), resumes, voids a hand, changes the settings
    mid-hand, and closes the table voiding the hand in play (the kill)."""
    await seat(scene, "ann", "bob", "cat")
    await next_hand(scene)
    await scene.act()
    await scene.operator("pause_table", operator_id=1, reason="a break")
    await scene.operator("pause_table", operator_id=1, reason="again")  # paused already
    await scene.play_hand()
    await scene.wait(BETWEEN_HANDS)  # paused: no hand
    await scene.operator("resume_table", operator_id=1, reason="back")
    await scene.operator("resume_table", operator_id=2)  # not paused
    await next_hand(scene)
    await scene.act()
    await scene.act()
    await scene.operator("void_hand", operator_id=1, reason="a misdeal")
    await scene.operator("void_hand", operator_id=1, reason="none left")  # no hand
    await next_hand(scene)
    await scene.operator(
        "change_settings", operator_id=1, settings=values(stud(ante=2), action_clock=20.0)
    )
    await scene.play_hand()
    await next_hand(scene)
    await scene.act()
    await scene.operator("close_table", operator_id=1, reason="closing time", void=True)
    await scene.do("sit", "dan", buy_in=100)  # the table is shut


async def close_after_hand(scene: Scene) -> None:
    """An operator closes the table in a hand: it closes when the hand ends."""
    await seat(scene, "ann", "bob")
    await next_hand(scene)
    await scene.operator("close_table", operator_id=1, reason="last hand")
    await scene.play_hand()
    await scene.settle()


async def takeover(scene: Scene) -> None:
    """A node dies in a hand; another deals it again from its record and plays it on."""
    await seat(scene, "ann", "bob", "cat")
    await next_hand(scene)
    await scene.play_hand()
    await next_hand(scene)
    for _ in range(4):
        await scene.act()
    await scene.stop()
    after = await taken_over(scene)
    await after.act()
    await after.do("leave", after.to_act() or "ann")  # their turn: folded at once
    await after.play_hand()
    await next_hand(after)
    await after.play_hand()


async def taken_over(before: Scene, *, spoil: bool = False) -> Scene:
    """The table as the next node builds it from the store: seats, hand numbers, the hand
    in progress replayed (``spoil``: its record was damaged, so it cannot be)."""
    store = before.store
    live = store.live[TABLE]
    if spoil:
        live = dataclasses.replace(live, actions=[*live.actions, {"seat": 0, "kind": "fly"}])
    seats = [
        (number, occupant.player, store.at_table[TABLE, occupant.player])
        for number, occupant in enumerate(before.actor.table.seats)
        if occupant is not None
    ]
    after = Scene(
        before.actor.table.config,
        before.actor.settings,
        seed=2,
        transcript=before.transcript,
        store=store,
        clock=before.clock,
        wall=before.wall,
        run=2,
    )
    after.actions = before.actions
    after.actor.restore(seats, hand_number=live.number - 1, sitting_out=set())
    resumed = after.actor.resume(live)
    after.actor.announce(TableResumed(hand=live.number, node="second", resumed=resumed))
    await after.start()
    return after


async def unresumable(scene: Scene) -> None:
    """The hand in progress cannot be dealt again: voided, every chip back, play goes on."""
    await seat(scene, "ann", "bob", "cat")
    await next_hand(scene)
    await scene.act()
    await scene.act()
    await scene.stop()
    after = await taken_over(scene, spoil=True)
    await next_hand(after)
    await after.play_hand()


async def time_collection(scene: Scene) -> None:
    """Time fees before hands, once a period; a stack that cannot pay sits out."""
    await seat(scene, "ann", "bob")
    await scene.do("sit", "cat", buy_in=20, seat=2)
    for _ in range(3):
        await next_hand(scene)
        await scene.play_hand()
    number = scene.actor.hand_number
    await scene.wait(120.0)  # past the period paid for: the fees again, with the next hand
    assert scene.actor.hand_number == number + 1
    await scene.play_hand()


async def rake(scene: Scene) -> None:
    """Raked pots: hands to showdown and one won on the first street (no drop)."""
    await seat(scene, "ann", "bob", "cat")
    for _ in range(3):
        await next_hand(scene)
        await scene.play_hand(lambda: "call" if "call" in legal(scene) else None)
    await next_hand(scene)
    await scene.play_hand(lambda: "fold" if "fold" in legal(scene) else None)


def legal(scene: Scene) -> tuple[str, ...]:
    hand = scene.actor.table.hand
    return tuple(hand.legal_actions().kinds) if hand is not None else ()


async def database_away(scene: Scene) -> None:
    """The database stops answering mid-hand: the table pauses, the clock with it."""
    await seat(scene, "ann", "bob", "cat")
    await next_hand(scene)
    store = scene.store
    store.down = True
    player = scene.to_act()
    assert player is not None
    acting = asyncio.create_task(scene.act())
    for _ in range(10_000):
        await asyncio.sleep(0)
        if scene.actor.paused:
            break
    assert scene.actor.paused
    scene.clock.now += 5.0
    scene.wall.now += 5.0
    store.down = False
    await acting
    await scene.play_hand()


async def hand_blows_up(scene: Scene) -> None:
    """The hand's record cannot be written: the hand is cancelled, every chip back."""
    await seat(scene, "ann", "bob")
    await next_hand(scene)
    scene.store.fail_next_save = True
    await scene.play_hand()
    await next_hand(scene)
    await scene.play_hand()


Play = Callable[[Scene], Awaitable[None]]
SCENES: dict[str, tuple[Play, TableConfig, TableSettings]] = {
    "actions": (actions, stud(), SETTINGS),
    "variants": (variants, stud(), SETTINGS),
    "clocks": (clocks, stud(), SETTINGS),
    "absent_seats": (absent_seats, stud(), SETTINGS),
    "sitting_out_and_leaving": (sitting_out_and_leaving, stud(), settings(seat_count=3)),
    "operators": (operators, stud(), SETTINGS),
    "close_after_hand": (close_after_hand, stud(), SETTINGS),
    "takeover": (takeover, stud(), SETTINGS),
    "unresumable": (unresumable, stud(), SETTINGS),
    "time_collection": (
        time_collection,
        stud(),
        settings(time_fee=2, time_fee_period=100.0),
    ),
    "rake": (rake, stud(rake_percent=5, rake_cap=3), SETTINGS),
    "database_away": (database_away, stud(), SETTINGS),
    "hand_blows_up": (hand_blows_up, stud(), SETTINGS),
}


@pytest.mark.parametrize("name", sorted(SCENES))
async def test_the_table_says_and_writes_what_it_kept(name: str) -> None:
    play, config, table_settings = SCENES[name]
    scene = Scene(config, dataclasses.replace(table_settings))
    await scene.start()
    try:
        await play(scene)
    finally:
        await scene.actor.stop()
    kept = KEPT / f"{name}.json"
    if RECORD:
        KEPT.mkdir(exist_ok=True)
        kept.write_text(
            "[\n" + ",\n".join(json.dumps(entry) for entry in scene.transcript) + "\n]\n"
        )
    expected = json.loads(kept.read_text())
    for number, (got, want) in enumerate(zip(scene.transcript, expected, strict=False)):
        assert got == want, f"{name}: entry {number} differs"
    assert len(scene.transcript) == len(expected), f"{name}: a transcript of another length"


def test_each_kept_transcript_has_its_scene() -> None:
    assert sorted(p.stem for p in KEPT.glob("*.json")) == sorted(SCENES)


def test_the_store_writes_are_in_the_transcripts() -> None:
    """The kept transcripts hold every kind of write, so a write moved or lost shows."""
    kinds = set()
    for path in KEPT.glob("*.json"):
        kinds |= {entry[1] for entry in json.loads(path.read_text()) if entry[0] == "store"}
    assert kinds == {
        "start_hand",
        "record_action",
        "buy_in",
        "cash_out",
        "save_hand",
        "save_table",
    }
