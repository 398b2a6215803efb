"""Sessions, suspensions and kicks across nodes: two apps in one process sharing PostgreSQL
and a Redis bus, each with its own websockets. A player connected to node B is suspended
through node A: their websocket on B is signed out at once, and the table B runs removes them
after the hand; a kick through A of a player at a table B runs goes to B; a logout on A signs
out a websocket on B."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass

import httpx
import pytest
from backends import PostgresServer, needs_postgresql, needs_redis, redis_prefix, redis_url
from fastapi import FastAPI
from live import serve
from server_helpers import FAST_HASHING, bearer, login, operator_token, register
from test_sessions import signed_in, signed_out, still_open

from server.app import create_app
from server.settings import Settings
from tests.server.api.test_suspend_kick import START, event, make_table, player


@dataclass
class Node:
    app: FastAPI
    client: httpx.AsyncClient
    host: str
    settings: Settings


@pytest.fixture
async def nodes(postgres_server: PostgresServer) -> AsyncIterator[dict[str, Node]]:
    database_url = postgres_server.fresh()
    bus = redis_url(prefix=redis_prefix())
    made: dict[str, Node] = {}
    async with AsyncExitStack() as stack:
        for name in ("b", "a"):  # b first: the tables opened before a starts are b's
            settings = Settings(
                database_url=database_url,
                redis_url=bus,
                node_id=name,
                lease_seconds=1.0,
                pause_between_hands_seconds=0,
                action_clock_seconds=1.0,
                time_bank_seconds=0,
                starting_bankroll=START,
                **FAST_HASHING,
            )
            app = create_app(settings)
            await stack.enter_async_context(app.router.lifespan_context(app))
            client = await stack.enter_async_context(
                httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://n")
            )
            host = await stack.enter_async_context(serve(app))
            made[name] = Node(app, client, host, settings)
        yield made


@needs_redis
@needs_postgresql
@pytest.mark.usefixtures("redis_available")
async def test_suspend_and_kick_through_a_reach_the_websockets_and_table_of_b(
    nodes: dict[str, Node],
) -> None:
    a, b = nodes["a"], nodes["b"]
    boss = bearer(await operator_token(a.client, a.settings))
    table_id = await make_table(b.client, boss)  # b runs it
    assert b.app.state.cardroom.actor(table_id) is not None
    for name in ("ann", "bob"):
        assert (await register(a.client, name)).status_code == 201
    async with (
        player(b.host, "ann", await login(a.client, "ann")) as ann,  # on b
        player(a.host, "bob", await login(a.client, "bob")) as bob,  # on a
    ):
        assert a.app.state.cardroom.actor(table_id) is None
        ann_seat = (await ann.send("sit", table=table_id, buy_in=200))["result"]["seat"]
        bob_seat = (await bob.send("sit", table=table_id, buy_in=300))["result"]["seat"]
        await bob.until(event("hand_started"))

        kicked = await a.client.post(
            f"/admin/tables/{table_id}/kick", headers=boss, json={"player": "bob", "reason": "x"}
        )
        assert kicked.status_code == 200, kicked.text
        assert kicked.json()["removal"]["after_hand"] is True
        await bob.until(event("leaving", seat=bob_seat, removed="kicked"))

        suspended = await a.client.post(
            "/admin/players/ann/suspend", headers=boss, json={"reason": "collusion"}
        )
        assert suspended.status_code == 200, suspended.text
        assert suspended.json()["tables"][0]["after_hand"] is True
        assert (await signed_out(ann.ws))["code"] == "account_suspended"
        await bob.until(event("leaving", seat=ann_seat, removed="suspended"))
        # The clock ends the hand; both leave, cashed out.
        lefts = {}
        while len(lefts) < 2:
            frame = await bob.until(event("seat_left"), timeout=20)
            lefts[frame["data"]["player"]] = frame["data"]
        assert lefts["ann"]["removed"] == "suspended" and lefts["bob"]["removed"] == "kicked"
    books = (await a.client.get("/admin/books", headers=boss)).json()
    assert books["balanced"] is True and books["tables"][str(table_id)]["seats"] == 0
    for name, buy_in in (("ann", 200), ("bob", 300)):
        detail = (await b.client.get(f"/admin/players/{name}", headers=boss)).json()
        assert detail["balance"] == START - buy_in + lefts[name]["cashed_out"]
        assert detail["seats"] == []


@needs_redis
@needs_postgresql
@pytest.mark.usefixtures("redis_available")
async def test_a_logout_on_a_signs_out_the_websocket_on_b(nodes: dict[str, Node]) -> None:
    a, b = nodes["a"], nodes["b"]
    assert (await register(a.client, "ann")).status_code == 201
    token, other = await login(a.client, "ann"), await login(b.client, "ann")
    async with signed_in(b.host, token) as on_b, signed_in(a.host, other) as on_a:
        assert (await a.client.post("/auth/logout", headers=bearer(token))).status_code == 204
        assert (await signed_out(on_b))["code"] == "token_revoked"
        await still_open(on_a)
        everywhere = await b.client.post("/auth/logout-everywhere", headers=bearer(other))
        assert everywhere.json() == {"revoked": 1}
        assert (await signed_out(on_a))["code"] == "token_revoked"
