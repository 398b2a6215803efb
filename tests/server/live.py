"""A real server in the test's event loop (uvicorn on a free port) and scripted websocket
conversations: the ones docs/protocol.md shows, run as they are written there.

A conversation is a fenced block of lines::

    ann< {"v": 1, "type": "hello", "protocol": 1}      the server sends ann this frame
    ann> {"type": "auth", "id": 1, "token": "$ann"}    ann sends this ($ann: ann's token)
    ann< …                                             frames left out, up to the next
    ann: close                                         ann's socket drops

Each name is one websocket, opened the first time it appears. Expected frames must match
exactly, in order per connection, except that the string "…" matches any value.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn
from fastapi import FastAPI
from websockets.asyncio.client import ClientConnection, connect

from server.edge.transport import websocket_options

ANY = "…"
RECEIVE_TIMEOUT = 5.0


@asynccontextmanager
async def serve(app: FastAPI) -> AsyncIterator[str]:
    """Serve an app whose lifespan already runs; yields ``host:port``."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        lifespan="off",
        log_level="warning",
        **websocket_options(app.state.settings),  # as the server runs (server.cli)
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        assert not task.done(), "the server did not start"
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


async def receive(ws: ClientConnection, timeout: float = RECEIVE_TIMEOUT) -> dict[str, Any]:
    frame: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    return frame


def matches(expected: Any, actual: Any) -> bool:
    if expected == ANY:
        return True
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and expected.keys() == actual.keys()
            and all(matches(v, actual[k]) for k, v in expected.items())
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(matches(e, a) for e, a in zip(expected, actual, strict=True))
        )
    return bool(expected == actual and type(expected) is type(actual))


@dataclass(frozen=True, slots=True)
class Line:
    who: str
    kind: str  # "<" the server sends, ">" the client sends, ":" a directive
    text: str
    number: int


@dataclass(frozen=True, slots=True)
class Conversation:
    title: str
    lines: tuple[Line, ...]


_LINE = re.compile(r"^(?P<who>[a-z][a-z0-9_]*)(?P<kind>[<>:]) ?(?P<text>.*)$")


def conversations(markdown: str) -> list[Conversation]:
    """Every ```conversation block, titled by the heading above it."""
    found: list[Conversation] = []
    title = ""
    block: list[Line] | None = None
    for number, raw in enumerate(markdown.splitlines(), 1):
        line = raw.rstrip()
        if block is None:
            if line.startswith("#"):
                title = line.lstrip("#").strip()
            elif line.strip() == "```conversation":
                block = []
            continue
        if line.strip() == "```":
            found.append(Conversation(title, tuple(block)))
            block = None
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LINE.match(line.strip())
        assert match is not None, f"line {number}: not a conversation line: {line!r}"
        block.append(Line(match["who"], match["kind"], match["text"], number))
    return found


async def run_conversation(host: str, conversation: Conversation, tokens: dict[str, str]) -> None:
    """Play the client's part; check the server's, frame by frame."""
    sockets: dict[str, ClientConnection] = {}
    skipping: set[str] = set()  # after "name< …": frames up to the next expected one
    try:
        for line in conversation.lines:
            ws = sockets.get(line.who)
            if ws is None:
                ws = sockets[line.who] = await connect(f"ws://{host}/ws")
            where = f"{conversation.title!r}, line {line.number}"
            if line.kind == ">":
                text = line.text
                for name, token in tokens.items():
                    text = text.replace(f'"${name}"', json.dumps(token))
                await ws.send(text)
            elif line.kind == "<" and line.text == ANY:
                skipping.add(line.who)
            elif line.kind == "<":
                expected = json.loads(line.text)
                while True:
                    try:
                        actual = await receive(ws)
                    except TimeoutError:
                        raise AssertionError(
                            f"{where}: no frame came; expected {line.text}"
                        ) from None
                    if line.who not in skipping or matches(expected, actual):
                        break
                skipping.discard(line.who)
                assert matches(expected, actual), (
                    f"{where}:\n expected {line.text}\n got      {json.dumps(actual)}"
                )
            elif line.text == "close":
                await ws.close()
            else:
                raise AssertionError(f"{where}: unknown directive {line.text!r}")
    finally:
        for ws in sockets.values():
            await ws.close()
