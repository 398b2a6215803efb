"""Sessions bound to tokens, over HTTP and real websockets with real tokens, on SQLite and
PostgreSQL: a logout signs out the websocket of that token and no other, a logout
everywhere every websocket of the account, an expired token's websocket is signed out when
it expires, and a revocation the bus never carried is caught by the sweep."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI
from live import receive, serve
from server_helpers import bearer, error_code, login, register
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from server.accounts import tokens
from server.app import create_app
from server.db.models import Token
from server.edge.sessions import SessionRegistry
from server.settings import Settings


@asynccontextmanager
async def signed_in(host: str, token: str) -> AsyncIterator[ClientConnection]:
    """A websocket signed in with ``token``."""
    async with connect(f"ws://{host}/ws") as ws:
        assert (await receive(ws))["type"] == "hello"
        await ws.send(json.dumps({"type": "auth", "id": 1, "token": token}))
        reply = await receive(ws)
        assert reply["type"] == "reply", reply
        yield ws


async def signed_out(ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    """The ``signed_out`` frame (frames before it skipped), then the close with 4401."""
    while True:
        frame = await receive(ws, timeout)
        if frame["type"] == "signed_out":
            break
    try:
        await asyncio.wait_for(ws.recv(), timeout)
        raise AssertionError("the socket stayed open after signed_out")
    except ConnectionClosed as closed:
        assert closed.rcvd is not None and closed.rcvd.code == 4401, closed
        assert closed.rcvd.reason == frame["code"]
    return frame


async def still_open(ws: ClientConnection) -> None:
    await ws.send('{"type": "ping", "id": "p"}')
    assert await receive(ws) == {"v": 1, "type": "pong", "id": "p"}


async def test_logout_signs_out_that_token_s_websocket_only(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    assert (await register(client, "ann")).status_code == 201
    first, second = await login(client, "ann"), await login(client, "ann")
    async with (
        serve(app) as host,
        signed_in(host, first) as one,
        signed_in(host, second) as two,
    ):
        assert len(app.state.sessions) == 2
        out = await client.post("/auth/logout", headers=bearer(first))
        assert out.status_code == 204
        frame = await signed_out(one)
        assert frame == {
            "v": 1,
            "type": "signed_out",
            "code": "token_revoked",
            "message": "this token was logged out",
        }
        await still_open(two)
        assert len(app.state.sessions) == 1
    refused = await client.get("/me", headers=bearer(first))
    assert refused.status_code == 401 and error_code(refused) == "token_revoked"
    assert (await client.get("/me", headers=bearer(second))).status_code == 200


async def test_logout_everywhere_signs_out_every_websocket_of_the_account(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    for name in ("ann", "bob"):
        assert (await register(client, name)).status_code == 201
    first, second, bob = (
        await login(client, "ann"),
        await login(client, "ann"),
        await login(client, "bob"),
    )
    async with (
        serve(app) as host,
        signed_in(host, first) as one,
        signed_in(host, second) as two,
        signed_in(host, bob) as other,
    ):
        out = await client.post("/auth/logout-everywhere", headers=bearer(second))
        assert out.status_code == 200 and out.json() == {"revoked": 2}
        for ws in (one, two):
            assert (await signed_out(ws))["code"] == "token_revoked"
        await still_open(other)
    for token in (first, second):
        refused = await client.get("/me", headers=bearer(token))
        assert refused.status_code == 401 and error_code(refused) == "token_revoked"
    again = await client.post("/auth/logout-everywhere", headers=bearer(first))
    assert again.status_code == 401 and error_code(again) == "token_revoked"
    assert (await client.get("/me", headers=bearer(await login(client, "ann")))).status_code == 200
    assert (await client.get("/me", headers=bearer(bob))).status_code == 200


async def test_an_expired_token_s_websocket_is_signed_out_when_it_expires(
    settings: Settings, engine: Any
) -> None:
    # Long enough for the sign-in to come before it on a busy machine; the sign-out is
    # waited for well past it.
    short = create_app(settings.model_copy(update={"token_ttl_seconds": 3}))
    async with short.router.lifespan_context(short):
        transport = httpx.ASGITransport(app=short)
        async with httpx.AsyncClient(transport=transport, base_url="http://stud.test") as client:
            assert (await register(client, "ann")).status_code == 201
            token = await login(client, "ann")
            async with serve(short) as host, signed_in(host, token) as ws:
                await still_open(ws)
                frame = await signed_out(ws, timeout=15.0)
                assert frame["code"] == "token_expired"
            refused = await client.get("/me", headers=bearer(token))
            assert refused.status_code == 401 and error_code(refused) == "token_expired"


async def test_the_sweep_signs_out_what_the_bus_never_said(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    """A token revoked with no message on the bus (one lost while Redis was away): the
    node's check against the database signs its websocket out."""
    assert (await register(client, "ann")).status_code == 201
    token, other = await login(client, "ann"), await login(client, "ann")
    registry: SessionRegistry = app.state.sessions
    async with serve(app) as host, signed_in(host, token) as ws, signed_in(host, other) as kept:
        async with app.state.sessionmaker() as session:
            row = await session.get(Token, (await tokens.resolve(session, token=token))[0].id)
            assert row is not None
            await tokens.revoke(session, token=row)
            await session.commit()
        await still_open(ws)  # nobody told the websocket
        assert await registry.sweep() == 1
        assert (await signed_out(ws))["code"] == "token_revoked"
        await still_open(kept)
        assert await registry.sweep() == 0


async def test_a_websocket_refuses_a_logged_out_token(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    assert (await register(client, "ann")).status_code == 201
    token = await login(client, "ann")
    assert (await client.post("/auth/logout", headers=bearer(token))).status_code == 204
    async with serve(app) as host, connect(f"ws://{host}/ws") as ws:
        assert (await receive(ws))["type"] == "hello"
        await ws.send(json.dumps({"type": "auth", "id": 1, "token": token}))
        error = await receive(ws)
        assert (error["type"], error["code"]) == ("error", "token_revoked")
        await ws.send('{"type": "sit", "id": 2, "table": 1, "buy_in": 100}')
        assert (await receive(ws))["code"] == "not_authenticated"
