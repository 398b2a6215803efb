"""Commands as records: parsed once at the edge, each refusal with its code; carried to
another node and built back as they were."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from engine.protocol import ErrorCode
from server.table import commands
from server.table.commands import Act, Chat, Presence, Sit, SitOut, Snapshot
from server.table.ports import CommandRefused


def test_a_message_becomes_its_record_and_other_fields_are_ignored() -> None:
    message = {"v": 1, "type": "act", "id": 4, "table": 1, "action_id": "a1", "kind": "raise"}
    assert commands.parse("act", "ann", message | {"amount": 20}) == Act(
        player="ann", action_id="a1", kind="raise", amount=20
    )
    assert commands.parse("sit", "bob", {"buy_in": 100}) == Sit(player="bob", buy_in=100)
    assert commands.parse("sit_out", "bob", {}) == SitOut(player="bob", next_hand=True)


@pytest.mark.parametrize(
    ("name", "fields", "code"),
    [
        ("dance", {}, ErrorCode.UNKNOWN_COMMAND),
        ("sit", {}, ErrorCode.BAD_AMOUNT),
        ("sit", {"buy_in": "100"}, ErrorCode.BAD_FIELD),
        ("sit", {"buy_in": True}, ErrorCode.BAD_FIELD),
        ("sit", {"buy_in": 100, "seat": 1.5}, ErrorCode.BAD_FIELD),
        ("add_chips", {}, ErrorCode.BAD_AMOUNT),
        ("act", {"kind": "fold"}, ErrorCode.BAD_ACTION_ID),
        ("act", {"action_id": "", "kind": "fold"}, ErrorCode.BAD_ACTION_ID),
        ("act", {"action_id": "x" * 65, "kind": "fold"}, ErrorCode.BAD_ACTION_ID),
        ("act", {"action_id": "a"}, ErrorCode.UNKNOWN_ACTION),
        ("act", {"action_id": "a", "kind": 3}, ErrorCode.BAD_FIELD),
        ("act", {"action_id": "a", "kind": "bet", "amount": "5"}, ErrorCode.BAD_FIELD),
        ("sit_out", {"next_hand": 1}, ErrorCode.BAD_FIELD),
        ("chat", {}, ErrorCode.BAD_CHAT),
        ("chat", {"text": "   "}, ErrorCode.BAD_CHAT),
        ("chat", {"text": "x" * 501}, ErrorCode.BAD_CHAT),
        ("presence", {}, ErrorCode.BAD_FIELD),
    ],
)
def test_each_refusal_has_its_code(name: str, fields: dict[str, Any], code: ErrorCode) -> None:
    with pytest.raises(CommandRefused) as refused:
        commands.parse(name, "ann", fields)
    assert refused.value.code == code


@pytest.mark.parametrize(
    ("name", "fields", "message"),
    [
        ("sit", {"buy_in": "100"}, "buy_in must be an integer"),
        ("act", {"action_id": "a", "kind": 3}, "kind must be a string"),
        ("sit_out", {"next_hand": 1}, "next_hand must be true or false"),
        # 10**30 read from a frame (orjson makes an integer past 64 bits a float).
        (
            "act",
            {"action_id": "a", "kind": "bet", "amount": orjson.loads(str(10**30))},
            "amount must be an integer of at most 9,223,372,036,854,775,807 (64 bits)",
        ),
    ],
)
def test_a_field_of_the_wrong_type_is_named_in_words(
    name: str, fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(CommandRefused) as refused:
        commands.parse(name, "ann", fields)
    assert refused.value.message == message and refused.value.code == ErrorCode.BAD_FIELD


@pytest.mark.parametrize(
    "command",
    [
        Sit(player="ann", buy_in=100, seat=2),
        Act(player="ann", action_id="a1", kind="bet", amount=None),
        Chat(player="bob", text="gl"),
        Snapshot(player="", reply_to="connection:ab", reply_id={"nested": [1]}),
        Presence(player="cat", connected=True, run=3),
    ],
)
def test_a_record_travels_to_another_node_as_it_is(command: commands.TableCommand) -> None:
    assert commands.decode(commands.encode(command)) == command


@pytest.mark.parametrize("bad", [None, "sit", {"name": "dance"}, {"name": "sit", "player": "a"}])
def test_a_malformed_command_from_another_node_is_refused(bad: Any) -> None:
    with pytest.raises(CommandRefused) as refused:
        commands.decode(bad)
    assert refused.value.code == ErrorCode.BAD_COMMAND
