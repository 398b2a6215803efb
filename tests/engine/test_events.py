"""Event records: one encoding to protocol v1's ``data`` and one decoding from it.

Every record of random hands decodes from its wire data (and from its stored JSON row) to
itself; every event frame of docs/protocol.md's conversations decodes and encodes back to the
same bytes; stored rows of older shapes still decode.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import orjson
import pytest

from engine.events import (
    EVENT_TYPES,
    HAND_EVENTS,
    ActionTaken,
    DownCards,
    Event,
    Turn,
    UnknownEvent,
    decode,
    decode_all,
    from_record,
)
from engine.play import play_random_hand
from engine.table_events import TABLE_EVENT_TYPES, HandCancelled, SatOut, SeatTaken
from engine.variants import VARIANTS, TableConfig, find_variant

PROTOCOL = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
CONFIGS = [TableConfig(variant=v) for v in VARIANTS.values()] + [
    TableConfig(variant=find_variant("razz"), structure="pot_limit"),
    TableConfig(variant=find_variant("seven_card_stud_hi_lo"), structure="no_limit"),
    TableConfig(
        deal_to_unfaced_folds=True, announce_possibles=True, odd_chip_tie="lowest_position"
    ),
]


def wire(event: Event) -> bytes:
    return orjson.dumps({"kind": event.kind, "data": event.data, "to": event.to})


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.variant.name}-{c.structure}")
def test_every_hand_event_decodes_from_its_wire_data_to_itself(config: TableConfig) -> None:
    rng = random.Random(11)
    for _ in range(30):
        players = rng.randint(2, min(7, config.variant.max_players))
        stacks = [rng.choice([6, 40, 500]) for _ in range(players)]
        hand = play_random_hand(config, stacks, rng, timeout_rate=0.1)
        for event in hand.events:
            assert event.kind in HAND_EVENTS
            again = decode(event.kind, event.data, event.to)
            assert again == event and type(again) is type(event)
            assert wire(again) == wire(event)  # the same keys in the same order
        stored = json.loads(json.dumps([e.record() for e in hand.events]))
        assert decode_all(stored) == hand.events


def test_records_are_frozen_and_typed() -> None:
    event = ActionTaken(0, "call", 2, 2, 198)
    with pytest.raises(AttributeError):
        event.seat = 1  # type: ignore[misc]
    assert event.kind == "action" and event.to is None
    assert event.data == {"seat": 0, "action": "call", "amount": 2, "to": 2, "stack": 198}
    assert DownCards(3, "third", ("As", "Kd")).to == 3
    assert DownCards(3, "third", ("As", "Kd")).visible_to(3)
    assert not DownCards(3, "third", ("As", "Kd")).visible_to(None)
    # records of different kinds never compare equal, whatever their fields
    assert SatOut(1, False) != ActionTaken(1, "fold", None, 0, 0)
    assert hash(SeatTaken(0, "ann", 200)) == hash(SeatTaken(0, "ann", 200))


def test_every_kind_has_one_record_type() -> None:
    kinds = [cls.kind for cls in EVENT_TYPES.values()]
    assert len(kinds) == len(set(kinds))
    assert {cls.kind for cls in TABLE_EVENT_TYPES} | HAND_EVENTS == set(EVENT_TYPES)
    assert Turn.kind == "turn"


def _protocol_events() -> list[dict[str, object]]:
    frames = []
    for line in PROTOCOL.read_text().splitlines():
        match = re.match(r"^[a-z]+< (\{.*\})$", line.strip())
        if match:
            frame = json.loads(match[1])
            if frame.get("type") == "event":
                frames.append(frame)
    return frames


def test_the_documented_events_decode_and_encode_back_byte_for_byte() -> None:
    frames = _protocol_events()
    assert {f["kind"] for f in frames} >= {"seat_taken", "sat_out", "waiting_list", "turn"}
    for frame in frames:
        assert isinstance(frame["kind"], str) and isinstance(frame["data"], dict)
        event = decode(frame["kind"], frame["data"])
        assert not isinstance(event, UnknownEvent), frame["kind"]
        assert orjson.dumps(event.data) == orjson.dumps(frame["data"])


def test_stored_rows_of_every_shape_decode() -> None:
    # A cancelled hand's own log row: the reason alone, or with the detail of a failed resume.
    row = {"kind": "hand_cancelled", "data": {"reason": "internal_error"}, "to": None}
    assert from_record(row) == HandCancelled(None, "internal_error")
    assert from_record(row).record() == row
    failed = {"reason": "resume_failed", "detail": "ValueError: no"}
    assert decode("hand_cancelled", failed).data == failed
    published = {"hand": 3, "reason": "internal_error", "stacks": {"0": 200, "1": 150}}
    assert decode("hand_cancelled", published).data == published
    # a kind this code does not know is kept as it came
    odd = from_record({"kind": "fireworks", "data": {"colour": "red"}, "to": 2})
    assert isinstance(odd, UnknownEvent) and odd.to == 2
    assert odd.record() == {"kind": "fireworks", "data": {"colour": "red"}, "to": 2}
