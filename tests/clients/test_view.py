"""The client's table view: the snapshot-to-events bridge folds back to the same picture,
and a Table fed a seat's frames agrees with the engine at every turn."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twin import FakeClient, Twin, snapshot

from engine.events import Event
from engine.play import play_random_hand, random_action
from engine.variants import VARIANTS, TableConfig, find_variant
from engine.views import view
from stud_client import Action, Table
from stud_client.view import legal_from, picture_events


def as_json(value: Any) -> Any:
    """As it travels: seat numbers as strings, tuples as lists."""
    return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))


CONFIGS = [TableConfig(variant=v) for v in VARIANTS.values()] + [
    TableConfig(variant=find_variant("razz"), structure="pot_limit"),
    TableConfig(variant=find_variant("seven_card_stud_hi_lo"), structure="no_limit"),
]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    config=st.sampled_from(CONFIGS),
    players=st.integers(2, 7),
    timeouts=st.sampled_from([0.0, 0.2]),
)
def test_a_snapshot_picture_folds_back_to_itself(
    seed: int, config: TableConfig, players: int, timeouts: float
) -> None:
    """For every prefix of a random hand and every viewer: events made from the picture,
    then the rest of the hand, fold to the picture of the whole hand."""
    rng = random.Random(seed)
    players = min(players, config.variant.max_players)
    stacks = [rng.choice([6, 40, 500]) for _ in range(players)]
    hand = play_random_hand(config, stacks, rng, timeout_rate=timeouts)
    events: list[Event] = list(hand.events)
    for viewer in [None, *range(players)]:
        whole = as_json(view(events, viewer))
        for cut in range(1, len(events) + 1):
            picture = as_json(view(events[:cut], viewer))
            rebuilt = picture_events(picture) + events[cut:]
            assert as_json(view(rebuilt, viewer)) == whole, (viewer, cut, events[cut - 1])
            assert as_json(view(picture_events(picture), viewer)) == picture


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.variant.name}-{c.structure}")
def test_every_seat_sees_what_the_engine_says(config: TableConfig) -> None:
    rng = random.Random(7)
    players = min(4, config.variant.max_players)
    twin = Twin(config, players, rng=rng)
    for _ in range(5):
        hand = twin.deal()
        if hand is None:
            break
        while not hand.is_over():
            legal = hand.legal_actions()
            for n, table in enumerate(twin.tables):
                seen = table.view
                assert seen.legal == legal and seen.my_turn == (n == legal.seat)
                assert seen.pot == sum(s.in_pot for s in seen.seats)
                mine = seen.seats[n]
                if mine.in_hand:
                    index = hand.index_of[n]
                    assert len(mine.down) == mine.down_count
                    assert sorted(mine.down + mine.up) == sorted(Table_cards(hand, index))
                for other in seen.seats:
                    if other.seat != n and not other.shown:
                        assert other.down == ()
            twin.publish(hand.apply(random_action(hand, rng)))
        result = hand.result()
        for table in twin.tables:
            seen = table.view
            assert seen.hand_over and seen.legal is None
            assert {s.seat: s.stack for s in seen.seats if s.in_hand} == result.stacks


def Table_cards(hand: Any, index: int) -> list[str]:  # noqa: N802 - reads as a phrase
    from engine.cards import format_card

    return [format_card(c) for c in hand.cards[index]]


def test_a_gap_asks_for_a_resync_and_holds_events_until_the_snapshot() -> None:
    config = TableConfig()
    client = FakeClient("p0")
    table = Table(client, 1)  # type: ignore[arg-type]
    table._apply_snapshot(snapshot(config, ["p0", "p1"], 100, 0, seq=5))
    event = {"type": "event", "table": 1, "kind": "chat", "data": {"player": "p1", "text": "x"}}
    table._on_event({**event, "seq": 5})  # old: dropped
    table._on_event({**event, "seq": 6})
    assert table.seq == 6 and client.resyncs == []
    table._on_event({**event, "seq": 8})  # 7 was lost
    assert client.resyncs == [1] and client.stats.gaps == 1 and table.seq == 6
    table._on_event({**event, "seq": 9})  # held: the snapshot will cover it
    assert table.seq == 6 and client.resyncs == [1]
    table._apply_snapshot(snapshot(config, ["p0", "p1"], 100, 0, seq=9))
    table._on_event({**event, "seq": 10})
    assert table.seq == 10


def test_seating_events_keep_the_seats() -> None:
    config = TableConfig()
    client = FakeClient("p1")
    table = Table(client, 1)  # type: ignore[arg-type]
    snap = snapshot(config, ["p0", "p1"], 100, 1)
    snap["seats"].append({"seat": 2, "player": None})
    table._apply_snapshot(snap)
    frames = [
        ("seat_taken", {"seat": 2, "player": "p2", "stack": 300}),
        ("chips_added", {"seat": 0, "amount": 50, "after_hand": False}),
        ("sat_out", {"seat": 0, "after_hand": False}),
        ("leaving", {"seat": 2}),
        ("seat_left", {"seat": 1, "player": "p1", "cashed_out": 100}),
    ]
    for seq, (kind, data) in enumerate(frames, 1):
        table._on_event({"type": "event", "table": 1, "seq": seq, "kind": kind, "data": data})
    seen = table.view
    assert [s.player for s in seen.seats] == ["p0", None, "p2"]
    assert seen.seats[0].stack == 150 and seen.seats[0].sitting_out
    assert seen.seats[2].leaving and seen.you is None and seen.me is None


def test_a_snapshot_carries_who_sits_out_once_the_hand_ends() -> None:
    """A client resynced mid-hand still knows who asked to sit out after it."""
    table = Table(FakeClient("p0"), 1)  # type: ignore[arg-type]
    snap = snapshot(TableConfig(), ["p0", "p1"], 100, 0, seq=4)
    snap["seats"][1]["sit_out_next_hand"] = True
    table._apply_snapshot(snap)
    assert not table.view.seats[1].sitting_out and table.view.seats[1].sit_out_next_hand
    table._on_event(
        {
            "type": "event",
            "table": 1,
            "seq": 5,
            "kind": "hand_cancelled",
            "data": {"hand": 1, "reason": "x", "stacks": {"0": 100, "1": 100}},
        }
    )
    assert table.view.seats[1].sitting_out and not table.view.seats[0].sitting_out
    assert not table.view.seats[1].sit_out_next_hand


def test_actions_are_checked_and_legal_actions_read() -> None:
    with pytest.raises(ValueError):
        Action("shove")
    legal = legal_from(
        {
            "seat": 1,
            "kinds": ["fold", "call", "raise"],
            "call": 3,
            "wager": "raise",
            "min_to": 10,
            "max_to": 10,
            "to_choices": [10],
        }
    )
    assert legal.allows("raise", 10) and not legal.allows("raise", 11)
    assert not legal.allows("check")
