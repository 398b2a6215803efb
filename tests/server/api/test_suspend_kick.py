"""Suspending, unsuspending and kicking, over HTTP and real websockets with real tokens, on
SQLite and PostgreSQL: a suspended player's websocket is signed out, their token and login
refused, and they are cashed out after the hand in play with the books balanced; unsuspended,
they log in again. A kick removes a seated player after the hand in play, and the table's
players see an operator did it. Every refusal changes nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from live import receive, serve
from server_helpers import (
    FAST_HASHING,
    PASSWORD,
    bearer,
    error_code,
    login,
    operator_token,
    register,
)
from websockets.asyncio.client import ClientConnection, connect

from server.settings import Settings
from tests.server.edge.test_sessions import signed_out

START = 10_000


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        starting_bankroll=START,
        pause_between_hands_seconds=0,
        action_clock_seconds=1.0,
        time_bank_seconds=0,
        **FAST_HASHING,
    )


class Player:
    """A player's websocket: every frame it was sent, and commands with their answers."""

    def __init__(self, ws: ClientConnection, name: str) -> None:
        self.ws, self.name, self.frames = ws, name, list[dict[str, Any]]()
        self._ids = 0

    async def until(
        self, wanted: Callable[[dict[str, Any]], bool], timeout: float = 10.0
    ) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while True:
                frame = await receive(self.ws, timeout)
                self.frames.append(frame)
                if wanted(frame):
                    return frame

    async def send(self, kind: str, **fields: Any) -> dict[str, Any]:
        self._ids += 1
        await self.ws.send(json.dumps({"type": kind, "id": self._ids, **fields}))
        answer = await self.until(lambda f: f.get("id") == self._ids and f["type"] != "event")
        return answer


def event(kind: str, **data: Any) -> Callable[[dict[str, Any]], bool]:
    def wanted(frame: dict[str, Any]) -> bool:
        if frame["type"] != "event" or frame["kind"] != kind:
            return False
        return all(frame["data"].get(k) == v for k, v in data.items())

    return wanted


@asynccontextmanager
async def player(host: str, name: str, token: str) -> AsyncIterator[Player]:
    async with connect(f"ws://{host}/ws") as ws:
        me = Player(ws, name)
        await me.until(lambda f: f["type"] == "hello")
        assert (await me.send("auth", token=token))["type"] == "reply"
        yield me


async def make_table(client: httpx.AsyncClient, boss: dict[str, str]) -> int:
    made = await client.post(
        "/admin/tables",
        headers=boss,
        json={"name": "Heads-up", "seats": 2, "min_buy_in": 100, "max_buy_in": 500},
    )
    assert made.status_code == 201, made.text
    table_id: int = made.json()["id"]
    return table_id


async def books(client: httpx.AsyncClient, boss: dict[str, str]) -> dict[str, Any]:
    answer = await client.get("/admin/books", headers=boss)
    assert answer.status_code == 200
    body: dict[str, Any] = answer.json()
    return body


async def balance(client: httpx.AsyncClient, boss: dict[str, str], name: str) -> int:
    detail = await client.get(f"/admin/players/{name}", headers=boss)
    value: int = detail.json()["balance"]
    return value


async def play_out(me: Player, seat: int, until: Callable[[dict[str, Any]], bool]) -> None:
    """Fold (or check) at every turn of ``seat`` until a frame ``until`` wants arrives."""
    acted = 0
    while True:
        frame = await me.until(lambda f: until(f) or event("turn", seat=seat)(f))
        if until(frame):
            return
        kinds = frame["data"]["kinds"]
        acted += 1
        kind = "check" if "check" in kinds else "fold" if "fold" in kinds else kinds[0]
        await me.ws.send(
            json.dumps({"type": "act", "table": 1, "action_id": f"a{acted}", "kind": kind})
        )


async def test_a_suspended_player_is_signed_out_refused_and_cashed_out_after_the_hand(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    boss = bearer(await operator_token(client, settings))
    for name in ("ann", "bob"):
        assert (await register(client, name)).status_code == 201
    ann_token = await login(client, "ann")
    await login(client, "ann")  # a second session of hers, revoked too
    bob_token = await login(client, "bob")
    table_id = await make_table(client, boss)
    async with (
        serve(app) as host,
        player(host, "ann", ann_token) as ann,
        player(host, "bob", bob_token) as bob,
    ):
        ann_seat = (await ann.send("sit", table=table_id, buy_in=200))["result"]["seat"]
        bob_seat = (await bob.send("sit", table=table_id, buy_in=300))["result"]["seat"]
        await bob.until(event("hand_started"))

        suspended = await client.post(
            "/admin/players/ANN/suspend", headers=boss, json={"reason": "  collusion  "}
        )
        assert suspended.status_code == 200, suspended.text
        body = suspended.json()
        assert body["player"] == "ann" and body["tokens_revoked"] == 2
        assert body["suspension"]["suspended_by"] == "boss"
        assert body["suspension"]["reason"] == "collusion"
        assert body["tables"] == [
            {
                "table_id": table_id,
                "seat": ann_seat,
                "after_hand": True,
                "cashed_out": None,
                "error": None,
            }
        ]
        assert (await signed_out(ann.ws))["code"] == "account_suspended"
        await bob.until(event("leaving", seat=ann_seat, removed="suspended"))
        # The hand plays on (the clock acts for ann), then she leaves with her chips.
        await play_out(bob, bob_seat, event("seat_left", seat=ann_seat, removed="suspended"))
        left = bob.frames[-1]["data"]
        assert left["player"] == "ann" and left["cashed_out"] >= 0

    assert await balance(client, boss, "ann") == START - 200 + left["cashed_out"]
    state = await books(client, boss)
    assert state["balanced"] is True, state
    assert state["tables"][str(table_id)]["seats"] == 300 + 200 - left["cashed_out"]
    refused = await client.get("/me", headers=bearer(ann_token))
    assert refused.status_code == 401 and error_code(refused) == "account_suspended"
    again = await client.post("/auth/login", json={"username": "ann", "password": "x" * 8})
    assert again.status_code == 401 and error_code(again) == "bad_credentials"
    refused_login = await client.post("/auth/login", json={"username": "ann", "password": PASSWORD})
    assert refused_login.status_code == 401 and error_code(refused_login) == "account_suspended"
    detail = (await client.get("/admin/players/ann", headers=boss)).json()
    assert detail["suspension"]["suspended_by"] == "boss" and detail["seats"] == []
    twice = await client.post("/admin/players/ann/suspend", headers=boss, json={"reason": "x"})
    assert twice.status_code == 409 and error_code(twice) == "already_suspended"

    audit = (await client.get("/admin/audit?target_id=ann", headers=boss)).json()["entries"]
    assert [e["action"] for e in audit] == ["player.suspend"]
    assert audit[0]["before"] == {"suspended": None}
    assert audit[0]["after"]["tokens_revoked"] == 2 and audit[0]["reason"] == "collusion"

    lifted = await client.post(
        "/admin/players/ann/unsuspend", headers=boss, json={"reason": "cleared"}
    )
    assert lifted.status_code == 200 and lifted.json()["player"] == "ann"
    fresh = await login(client, "ann")
    assert (await client.get("/me", headers=bearer(fresh))).status_code == 200
    old = await client.get("/me", headers=bearer(ann_token))
    assert old.status_code == 401 and error_code(old) == "token_revoked"
    assert (await client.get("/admin/players/ann", headers=boss)).json()["suspension"] is None
    lifted_twice = await client.post(
        "/admin/players/ann/unsuspend", headers=boss, json={"reason": "again"}
    )
    assert lifted_twice.status_code == 409 and error_code(lifted_twice) == "not_suspended"
    audit = (await client.get("/admin/audit?target_id=ann", headers=boss)).json()["entries"]
    assert [e["action"] for e in audit] == ["player.unsuspend", "player.suspend"]
    assert audit[0]["after"] == {"suspended": None}
    assert audit[0]["before"]["suspended"]["reason"] == "collusion"


async def test_suspending_a_player_at_no_table_and_the_refusals(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    boss = bearer(await operator_token(client, settings))
    assert (await register(client, "ann")).status_code == 201
    token = await login(client, "ann")
    for body in ({}, {"reason": "   "}, {"reason": "x", "extra": 1}):
        bad = await client.post("/admin/players/ann/suspend", headers=boss, json=body)
        assert bad.status_code == 400 and error_code(bad) == "bad_request", body
    unknown = await client.post("/admin/players/nobody/suspend", headers=boss, json={"reason": "x"})
    assert unknown.status_code == 404 and error_code(unknown) == "unknown_player"
    player_itself = await client.post(
        "/admin/players/ann/suspend", headers=bearer(token), json={"reason": "x"}
    )
    assert player_itself.status_code == 403 and error_code(player_itself) == "not_operator"
    assert (await client.get("/me", headers=bearer(token))).status_code == 200  # unchanged
    done = await client.post("/admin/players/ann/suspend", headers=boss, json={"reason": "spam"})
    assert done.status_code == 200 and done.json()["tables"] == []
    refused = await client.get("/wallet", headers=bearer(token))
    assert refused.status_code == 401 and error_code(refused) == "account_suspended"
    assert refused.headers["www-authenticate"] == "Bearer"


async def test_a_kick_removes_a_seated_player_after_the_hand_and_the_table_sees_it(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    boss = bearer(await operator_token(client, settings))
    tokens = {}
    for name in ("ann", "bob", "cat"):
        assert (await register(client, name)).status_code == 201
        tokens[name] = await login(client, name)
    table_id = await make_table(client, boss)
    kick = f"/admin/tables/{table_id}/kick"
    async with (
        serve(app) as host,
        player(host, "ann", tokens["ann"]) as ann,
        player(host, "bob", tokens["bob"]) as bob,
        player(host, "cat", tokens["cat"]) as cat,
    ):
        await cat.send("watch", table=table_id)
        ann_seat = (await ann.send("sit", table=table_id, buy_in=200))["result"]["seat"]
        # Alone at the table, not in a hand: out at once.
        alone = await client.post(kick, headers=boss, json={"player": "Ann", "reason": "abuse"})
        assert alone.status_code == 200, alone.text
        assert alone.json()["removal"] == {
            "table_id": table_id,
            "seat": ann_seat,
            "after_hand": False,
            "cashed_out": 200,
            "error": None,
        }
        seen = await cat.until(event("seat_left", seat=ann_seat))
        assert seen["data"] == {
            "seat": ann_seat,
            "player": "ann",
            "cashed_out": 200,
            "removed": "kicked",
        }
        assert await balance(client, boss, "ann") == START
        await ann.ws.send('{"type": "ping", "id": "p"}')  # kicked, not signed out
        await ann.until(lambda f: f["type"] == "pong")

        # Refusals, each changing nothing.
        not_seated = await client.post(kick, headers=boss, json={"player": "ann", "reason": "x"})
        assert not_seated.status_code == 409 and error_code(not_seated) == "not_seated"
        unknown = await client.post(kick, headers=boss, json={"player": "nobody", "reason": "x"})
        assert unknown.status_code == 404 and error_code(unknown) == "unknown_player"
        no_table = await client.post(
            "/admin/tables/99/kick", headers=boss, json={"player": "ann", "reason": "x"}
        )
        assert no_table.status_code == 404 and error_code(no_table) == "unknown_table"
        for body in ({"player": "ann"}, {"player": "ann", "reason": ""}, {"reason": "x"}):
            bad = await client.post(kick, headers=boss, json=body)
            assert bad.status_code == 400 and error_code(bad) == "bad_request", body

        # In a hand: out when it ends, cashed out to the wallet.
        ann_seat = (await ann.send("sit", table=table_id, buy_in=150))["result"]["seat"]
        bob_seat = (await bob.send("sit", table=table_id, buy_in=300))["result"]["seat"]
        await cat.until(event("hand_started"))
        during = await client.post(kick, headers=boss, json={"player": "bob", "reason": "bot"})
        assert during.status_code == 200, during.text
        assert during.json()["removal"]["after_hand"] is True
        assert during.json()["removal"]["cashed_out"] is None
        await cat.until(event("leaving", seat=bob_seat, removed="kicked"))
        snapshot = await cat.send("resync", table=table_id)
        seat = next(s for s in snapshot["result"]["seats"] if s["seat"] == bob_seat)
        assert (seat["leaving"], seat["removed"]) == (True, "kicked")
        await asyncio.gather(
            play_out(ann, ann_seat, event("seat_left", seat=bob_seat)),
            play_out(bob, bob_seat, event("seat_left", seat=bob_seat)),
        )
        left = bob.frames[-1]["data"]
        assert left["removed"] == "kicked" and left["player"] == "bob"
    assert await balance(client, boss, "bob") == START - 300 + left["cashed_out"]
    assert (await books(client, boss))["balanced"] is True
    audit = (await client.get("/admin/audit?action=player.kick", headers=boss)).json()["entries"]
    assert [(e["target_id"], e["reason"]) for e in audit] == [("bob", "bot"), ("ann", "abuse")]
    assert audit[1]["before"] == {"table": table_id, "seat": ann_seat}
    assert audit[1]["after"] == {"after_hand": False, "cashed_out": 200}
    assert audit[0]["after"] == {"after_hand": True, "cashed_out": None}


async def test_a_player_cannot_send_the_operator_s_command(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    boss = bearer(await operator_token(client, settings))
    for name in ("ann", "bob"):
        assert (await register(client, name)).status_code == 201
    table_id = await make_table(client, boss)
    async with serve(app) as host, player(host, "ann", await login(client, "ann")) as ann:
        await ann.send("sit", table=table_id, buy_in=200)
        forged = await ann.send("remove", table=table_id, player="ann", cause="kicked")
        assert forged["type"] == "error" and forged["code"] == "unknown_type"
    detail = (await client.get("/admin/players/ann", headers=boss)).json()
    assert [s["table_id"] for s in detail["seats"]] == [table_id]
