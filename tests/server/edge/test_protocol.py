"""The websocket protocol v1, through the real app on a real socket.

The example conversations of docs/protocol.md run here exactly as the document writes them
(one fresh server each), so the document cannot drift from the server. The tests below them
cover what a document example cannot show well: huge frames, idle connections, dropping and
reconnecting, a restarted table.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from backends import POSTGRES_URL, needs_postgresql
from fastapi import FastAPI
from live import ANY, Conversation, conversations, receive, run_conversation, serve
from play import crash
from server_helpers import FAST_HASHING, bearer, error_code, operator_token, player_token
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from engine.cards import Deck, parse_cards
from server.app import create_app
from server.cardroom.supervisor import Cardroom
from server.db import migrate
from server.db.session import make_engine, make_sessionmaker
from server.edge import ws
from server.edge.overload import SHED_COMMANDS
from server.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
PROTOCOL = (ROOT / "docs" / "protocol.md").read_text()
EXAMPLES = conversations(PROTOCOL)

# The examples' deck, stacked: heads-up, seat 0 gets As Ks / 7h, seat 1 Qd Qc / 2c (and
# brings in); then 9h 3c, 5d 9c, Jh 4d, Kd 6s on the later streets.
TOP = parse_cards("AsQdKsQc7h2c9h3c5d9cJh4dKd6s")
STACKED = TOP + [card for card in range(52) if card not in TOP]


@dataclass
class Room:
    host: str
    app: FastAPI
    client: httpx.AsyncClient
    tokens: dict[str, str]
    settings: Settings

    @property
    def cardroom(self) -> Cardroom:
        cardroom: Cardroom = self.app.state.cardroom
        return cardroom


@asynccontextmanager
async def examples_server(tmp_path: Path, **overrides: Any) -> AsyncIterator[Room]:
    """The server the examples run on: accounts ann, bob and cat (and the operator boss),
    table 1 "Heads-up" (seven-card stud, 2 seats, buy-in 100 to 500, default rules), the
    stacked deck, no pause between hands."""
    values: dict[str, Any] = {
        "database_url": f"sqlite+aiosqlite:///{tmp_path / 'examples.db'}",
        "pause_between_hands_seconds": 0,
        **FAST_HASHING,
        **overrides,
    }
    settings = Settings(**values)
    engine = make_engine(settings.database_url)
    await migrate.upgrade(engine)
    await engine.dispose()
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        app.state.cardroom.deck_factory = lambda: Deck(order=STACKED)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://stud.test") as client:
            tokens = {name: await player_token(client, name) for name in ("ann", "bob", "cat")}
            boss = await operator_token(client, settings)
            created = await client.post(
                "/admin/tables",
                headers=bearer(boss),
                json={"name": "Heads-up", "seats": 2, "min_buy_in": 100, "max_buy_in": 500},
            )
            assert created.status_code == 201, created.text
            tokens["boss"] = boss
            async with serve(app) as host:
                yield Room(host, app, client, tokens, settings)


def test_the_document_has_its_examples() -> None:
    titles = [c.title for c in EXAMPLES]
    assert len(titles) >= 6 and len(set(titles)) == len(titles), titles


def named(text: str) -> set[str]:
    return set(re.findall(r"`(\w+)`", text))


def test_the_document_lists_every_message_a_client_may_send() -> None:
    """The table of frames names each message type the websocket takes, its own and the
    table commands (``server.table.commands.PLAYER_COMMANDS``), and no other."""
    rows = re.findall(r"^\| client \| (.+?) \|", PROTOCOL, flags=re.MULTILINE)
    assert named(" ".join(rows)) == (
        ws.CONNECTION_MESSAGES | ws.TOURNAMENT_MESSAGES | ws.TABLE_MESSAGES
    )
    assert ws.CONNECTION_MESSAGES.isdisjoint(ws.TABLE_MESSAGES)
    unsigned = re.search(r"command but (.+?) needs a signed-in connection", PROTOCOL, re.DOTALL)
    assert unsigned is not None and named(unsigned[1]) == ws.CONNECTION_MESSAGES
    shed = re.search(r"^\| (`sit`.*?) \| an `error` frame", PROTOCOL, flags=re.MULTILINE)
    assert shed is not None and named(shed[1]) == SHED_COMMANDS


@pytest.mark.parametrize("conversation", EXAMPLES, ids=[c.title for c in EXAMPLES])
async def test_documented_conversation(conversation: Conversation, tmp_path: Path) -> None:
    async with examples_server(tmp_path) as room:
        await run_conversation(room.host, conversation, room.tokens)


# ---------------------------------------------------------------------- beyond the examples


async def hello(host: str) -> ClientConnection:
    ws = await connect(f"ws://{host}/ws")
    assert (await receive(ws))["type"] == "hello"
    return ws


async def request(ws: ClientConnection, frame: dict[str, Any]) -> dict[str, Any]:
    """Send a frame; the answer to it, with the events that came first."""
    await ws.send(json.dumps(frame))
    while True:
        answer = await receive(ws)
        if answer["type"] in ("reply", "error") and answer.get("id") == frame.get("id"):
            return answer


async def signed_in(room: Room, player: str) -> ClientConnection:
    """A new connection of ``player``'s, signed in."""
    ws = await hello(room.host)
    await request(ws, {"type": "auth", "id": 1, "token": room.tokens[player]})
    return ws


async def seated(room: Room, player: str, seat: int) -> ClientConnection:
    """A new connection of ``player``'s, signed in and seated at table 1 with 200 chips."""
    ws = await signed_in(room, player)
    await request(ws, {"type": "sit", "id": 2, "table": 1, "seat": seat, "buy_in": 200})
    return ws


async def test_a_frame_too_large_and_binary_frames_are_refused(tmp_path: Path) -> None:
    """A frame over 16 KiB is refused with the id it carried (a client waiting for that
    answer gets it); one over 64 KiB is not read at all: the socket is closed (1009)."""
    async with examples_server(tmp_path) as room:
        ws = await hello(room.host)
        big = json.dumps({"type": "chat", "id": "big-1", "text": "x" * 20_000})
        await ws.send(big)
        error = await receive(ws)
        assert (error["code"], error["id"]) == ("frame_too_large", "big-1")
        await ws.send('{"type": "chat", "id": 7, "text": "' + "x" * 20_000)  # no JSON
        error = await receive(ws)
        assert (error["code"], error["id"]) == ("frame_too_large", None)
        await ws.send(b"\xff\xfe")
        assert (await receive(ws))["code"] == "bad_json"
        await ws.send(json.dumps({"type": "ping", "id": 2}).encode())
        assert await receive(ws) == {"v": 1, "type": "pong", "id": 2}
        await ws.send(json.dumps({"type": "chat", "id": 3, "text": "x" * 70_000}))
        with pytest.raises(ConnectionClosed) as closed:
            await receive(ws)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


async def test_an_id_nested_deep_is_refused_and_the_connection_stays(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An id is echoed back: one nested 300 deep (more than can be written back) is refused
    with bad_json and a null id, nothing is logged as an error, and the socket stays open."""
    nested: dict[str, object] = {}
    inner = nested
    for _ in range(300):
        inner["a"] = {}
        inner = inner["a"]  # type: ignore[assignment]
    async with examples_server(tmp_path) as room:
        ws = await hello(room.host)
        await ws.send(json.dumps({"type": "ping", "id": nested}))
        error = await receive(ws)
        assert error["type"] == "error" and error["code"] == "bad_json" and error["id"] is None
        await ws.send(json.dumps({"type": "ping", "id": [1, 2]}))
        assert (await receive(ws))["code"] == "bad_json"
        await ws.send(json.dumps({"type": "ping", "id": "p-3"}))
        assert await receive(ws) == {"v": 1, "type": "pong", "id": "p-3"}
        await ws.close()
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


async def test_a_silent_connection_is_closed(tmp_path: Path) -> None:
    idle = 1.5
    async with examples_server(tmp_path, ws_idle_seconds=idle) as room:
        ws = await hello(room.host)
        for n in range(3):  # heartbeats keep it open longer than it may stay silent
            await asyncio.sleep(idle / 2.5)
            await ws.send(json.dumps({"type": "ping", "id": n}))
            assert (await receive(ws))["type"] == "pong"
        with pytest.raises(ConnectionClosed) as closed:
            await receive(ws, timeout=idle + 3)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001


async def test_a_dropped_player_reconnects_resyncs_and_plays_on(tmp_path: Path) -> None:
    async with examples_server(tmp_path) as room:
        ann = await seated(room, "ann", 0)
        bob = await seated(room, "bob", 1)
        actor = room.cardroom.actor(1)
        assert actor is not None and actor.players["bob"].connections == 1
        await bob.close()  # bob's connection drops while he is to act (bring-in)
        for _ in range(100):
            if actor.players["bob"].connections == 0:
                break
            await asyncio.sleep(0.01)
        assert actor.players["bob"].connections == 0
        bob = await signed_in(room, "bob")
        snapshot = (await request(bob, {"type": "resync", "id": 2, "table": 1}))["result"]
        assert snapshot["you"] == 1 and snapshot["hand"]["seats"]["1"]["down"] == ["Qd", "Qc"]
        assert snapshot["hand"]["seats"]["0"]["down"] == []
        assert snapshot["seats"][1]["connected"] is True
        await bob.send(
            json.dumps({"type": "act", "id": 3, "table": 1, "action_id": "b", "kind": "bring_in"})
        )
        # The frames after the snapshot: its events, with no gap, then the reply.
        frames = [await receive(bob)]
        while frames[-1]["type"] != "reply":
            frames.append(await receive(bob))
        seqs = [f["seq"] for f in frames[:-1]]
        assert seqs == list(range(snapshot["seq"] + 1, snapshot["seq"] + 1 + len(seqs)))
        assert frames[0]["data"]["action"] == "bring_in"
        assert frames[-1]["result"]["accepted"] is True
        await ann.close()
        await bob.close()


async def test_a_restarted_table_tells_its_watchers(tmp_path: Path) -> None:
    async with examples_server(tmp_path) as room:
        ann = await seated(room, "ann", 0)
        bob = await seated(room, "bob", 1)
        actor = room.cardroom.actor(1)
        assert actor is not None and actor.task is not None
        await crash(actor)
        while True:
            event = await receive(ann)
            if event.get("kind") == "table_restarted":
                break
        assert event["data"] == {"cancelled_hand": 1, "stacks": {"0": 200, "1": 200}}
        snapshot = (await request(ann, {"type": "resync", "id": 3, "table": 1}))["result"]
        assert snapshot["seq"] >= event["seq"]
        assert [s["stack"] for s in snapshot["seats"]] == [200, 200]
        await ann.close()
        await bob.close()


def test_wildcards_match_any_value() -> None:
    from live import matches

    assert matches({"a": ANY, "b": [1, ANY]}, {"a": {"x": 1}, "b": [1, "z"]})
    assert not matches({"a": 1}, {"a": 1, "b": 2})
    assert not matches({"a": 1}, {"a": True})


async def test_a_database_that_does_not_answer_is_a_stable_refusal_not_a_bug(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Signing in over the websocket or calling a route while the database cannot be reached:
    ``database_unavailable`` (503 over HTTP), no traceback, and the connection stays."""
    async with examples_server(tmp_path) as room:
        working = room.app.state.sessionmaker
        unreachable = make_engine(f"sqlite+aiosqlite:///{tmp_path / 'no-such-dir' / 'gone.db'}")
        room.app.state.sessionmaker = make_sessionmaker(unreachable)
        try:
            ws = await hello(room.host)
            answer = await request(ws, {"type": "auth", "id": 1, "token": room.tokens["ann"]})
            assert answer["type"] == "error" and answer["code"] == "database_unavailable"
            wallet = await room.client.get("/wallet", headers=bearer(room.tokens["ann"]))
            assert wallet.status_code == 503, wallet.text
            assert error_code(wallet) == "database_unavailable"
            room.app.state.sessionmaker = working
            answer = await request(ws, {"type": "auth", "id": 2, "token": room.tokens["ann"]})
            assert answer["type"] == "reply", answer
            await ws.close()
        finally:
            room.app.state.sessionmaker = working
            await unreachable.dispose()
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


@needs_postgresql
async def test_no_database_connection_free_is_server_busy_with_a_retry_hint(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The node's pool bounded (one PostgreSQL connection, none more) and that one held: a
    call is shed at once as ``server_busy`` with when to try again (``Retry-After`` over HTTP,
    ``retry_after`` over the websocket), never an internal error or a dropped connection; once
    the connection is free the same calls succeed."""
    async with examples_server(tmp_path) as room:
        working = room.app.state.sessionmaker
        bounded = make_engine(POSTGRES_URL, timeout=1.0, pool_size=1, pool_overflow=0)
        held = await bounded.connect()
        room.app.state.sessionmaker = make_sessionmaker(bounded)
        try:
            ws = await hello(room.host)
            answer = await request(ws, {"type": "auth", "id": 1, "token": room.tokens["ann"]})
            assert answer["type"] == "error" and answer["code"] == "server_busy", answer
            assert answer["retry_after"] == 1
            wallet = await room.client.get("/wallet", headers=bearer(room.tokens["ann"]))
            assert wallet.status_code == 503, wallet.text
            assert error_code(wallet) == "server_busy"
            assert wallet.headers["retry-after"] == "1"
            await held.close()  # free again: the pool's one connection answers
            room.app.state.sessionmaker = working
            answer = await request(ws, {"type": "auth", "id": 2, "token": room.tokens["ann"]})
            assert answer["type"] == "reply", answer
            await ws.close()
        finally:
            room.app.state.sessionmaker = working
            await held.close()
            await bounded.dispose()
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
