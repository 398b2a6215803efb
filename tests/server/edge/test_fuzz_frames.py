"""Fuzzing, bounded in time: whatever a client sends, the websocket's frame handling
(``server.edge.ws.Connection._receive``) answers with frames that can be written, every refusal
with a stable code, and never a traceback; ``server.table.commands.parse`` builds a record or
refuses with a stable code, nothing else; a chat line never carries a control character."""

from __future__ import annotations

import asyncio
import json
import logging
import unicodedata
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.bus.memory import MemoryBus
from server.edge.rate_limits import Gateway
from server.edge.spectators import Spectators
from server.edge.ws import CONNECTION_MESSAGES, TOURNAMENT_MESSAGES, Connection, dumps
from server.settings import Settings
from server.table import commands as cmd

CODES = {code.value for code in ErrorCode}
TYPES = [*sorted(CONNECTION_MESSAGES | TOURNAMENT_MESSAGES), *cmd.COMMANDS, "act", "chat", "nope"]
FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)
fields = st.fixed_dictionaries(
    {},
    optional={
        "v": st.sampled_from([1, 2, "1", None]),
        "id": json_values,
        "table": st.one_of(st.integers(-3, 3), json_values),
        "token": json_values,
        "buy_in": json_values,
        "amount": json_values,
        "seat": json_values,
        "action_id": json_values,
        "kind": st.sampled_from(["fold", "call", "raise", "x"]) | json_values,
        "text": st.text(max_size=600) | json_values,
        "next_hand": json_values,
        "tournament": st.one_of(st.integers(-3, 3), json_values),
    },
)
messages = st.builds(lambda kind, rest: {"type": kind, **rest}, st.sampled_from(TYPES), fields)


def nested(depth: int) -> str:
    return '{"type": "ping", "id": 1, "x": ' + "[" * depth + "]" * depth + "}"


frames = st.one_of(
    messages.map(lambda m: json.dumps(m)),
    json_values.map(lambda v: json.dumps(v)),
    st.text(max_size=200),
    st.binary(max_size=200).map(lambda b: b.decode("utf-8", "replace")),
    st.integers(1, 5000).map(nested),
)


class FakeSocket:
    """Only what ``_receive`` reaches: nothing (the frames go to the subscription)."""


class FakeTable:
    """A table that refuses every command (as a busy one would), with a stable code."""

    async def submit(self, command: cmd.TableCommand) -> dict[str, Any]:
        raise Refusal("busy", code=ErrorCode.TABLE_BUSY)


class FakeCardroom:
    def __init__(self) -> None:
        self.bus = MemoryBus()

    async def table(self, table_id: int) -> FakeTable | None:
        return FakeTable() if table_id == 1 else None


async def refuse_token(token: str) -> str:
    raise Refusal("no such token", code=ErrorCode.BAD_TOKEN)


def connection() -> Connection:
    cardroom = FakeCardroom()
    unlimited = Settings(ws_other_burst=10**9, ws_actions_burst=10**9, ws_chat_burst=10**9)
    return Connection(
        FakeSocket(),  # type: ignore[arg-type]
        cardroom,
        refuse_token,
        gateway=Gateway(unlimited),
        spectators=Spectators(cardroom.bus),
    )


@FUZZ
@given(frame=frames)
def test_any_frame_is_answered_with_stable_codes_and_no_traceback(
    frame: str, caplog: pytest.LogCaptureFixture
) -> None:
    conn = connection()

    async def run() -> list[dict[str, Any]]:
        await conn._receive(frame)
        await conn.lanes.join()
        out = []
        while not conn.subscription.queue.empty():
            message = conn.subscription.queue.get_nowait()
            assert message is not None
            out.append(message)
        return out

    caplog.clear()
    with caplog.at_level(logging.ERROR):
        answers = asyncio.run(run())
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    for answer in answers:
        orjson.loads(dumps(answer))  # every frame can be written
        if answer["type"] == "error":
            assert answer["code"] in CODES and answer["code"] != "internal_error", answer


@FUZZ
@given(name=st.sampled_from([*cmd.COMMANDS, "nope", ""]), message=fields)
def test_parse_builds_a_record_or_refuses_with_a_stable_code(
    name: str, message: dict[str, Any]
) -> None:
    try:
        command = cmd.parse(name, "ann", message)
    except Refusal as refusal:
        assert refusal.code in CODES
        return
    assert type(command) is cmd.COMMANDS[name]
    assert cmd.decode(cmd.encode(command)) == command  # it travels as it is


@FUZZ
@given(text=st.text(min_size=1, max_size=600))
def test_a_chat_line_carries_no_control_or_format_character(text: str) -> None:
    try:
        chat = cmd.parse("chat", "ann", {"text": text})
    except Refusal as refusal:
        assert refusal.code == ErrorCode.BAD_CHAT
        return
    assert isinstance(chat, cmd.Chat)
    assert chat.text and chat.text == chat.text.strip()
    assert all(unicodedata.category(c) not in ("Cc", "Cf", "Cs") for c in chat.text)
    orjson.dumps(chat.text)
