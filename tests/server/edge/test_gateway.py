"""The gateway's limits, driven as a client meets them: over HTTP (logins, registrations,
the starting grant, the hashing pool) and over a real websocket (sockets per address and per
account, the message buckets and the close, the Origin check), the security headers, chat
from the seats only and cleaned, and spectators' snapshots that never reach the table."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from live import receive
from play import wait_for
from server_helpers import FAST_HASHING, PASSWORD, bearer, error_code, login, register
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from server.accounts.passwords import HASHING_NICENESS, HashingBusy, Passwords
from server.app import create_app
from server.bus.memory import table_channel
from server.db import migrate
from server.db.session import make_engine
from server.edge.rate_limits import Gateway, TurnBudget
from server.settings import Settings
from tests.server.edge.test_protocol import examples_server, hello, request


@asynccontextmanager
async def http_app(tmp_path: Path, **limits: Any) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'gateway.db'}",
        **{**FAST_HASHING, **limits},
    )
    engine = make_engine(settings.database_url)
    await migrate.upgrade(engine)
    await engine.dispose()
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://stud.test") as client:
            client.app = app  # type: ignore[attr-defined]
            yield client


def login_body(username: str, password: str = PASSWORD) -> dict[str, str]:
    return {"username": username, "password": password}


def assert_limited(response: httpx.Response) -> int:
    assert response.status_code == 429, response.text
    assert error_code(response) == "rate_limited"
    retry_after = int(response.headers["retry-after"])
    assert retry_after >= 1
    return retry_after


# ---------------------------------------------------------------------- HTTP


def with_clock(client: httpx.AsyncClient) -> list[float]:
    """The app's gateway on a clock the test moves (``now[0]``, seconds)."""
    now = [0.0]
    app = client.app  # type: ignore[attr-defined]
    app.state.gateway = Gateway(app.state.settings, clock=lambda: now[0])
    return now


async def test_a_brute_force_on_one_account_holds_up_no_other_account(tmp_path: Path) -> None:
    """One address guesses at ann's password, fifty tries all at once: four are judged (the
    three free failures and the one that makes ann wait), the rest refused unjudged. Bob, at
    the same address (one NAT), logs in at once; ann, once her wait is over, logs in with
    her right password."""
    async with http_app(tmp_path, login_failures_per_address_per_minute=20) as c:
        for name in ("ann", "bob"):
            assert (await register(c, name)).status_code == 201
        now = with_clock(c)
        wrong = login_body("ann", "a wrong guess")
        answers = await asyncio.gather(*(c.post("/auth/login", json=wrong) for _ in range(50)))
        statuses = [a.status_code for a in answers]
        assert statuses.count(401) == 4 and statuses.count(429) == 46, statuses
        assert all(assert_limited(a) == 1 for a in answers if a.status_code == 429)
        bob = await c.post("/auth/login", json=login_body("bob"))
        assert bob.status_code == 200, bob.text
        # Ann waits, under any spelling of her name, even with the right password...
        assert_limited(await c.post("/auth/login", json=login_body("ANN")))
        # ...and her wait over, the right password passes.
        now[0] = 1.0
        ann = await c.post("/auth/login", json=login_body("ann"))
        assert ann.status_code == 200, ann.text


async def test_guessing_across_accounts_spends_the_address_budget_not_its_players_logins(
    tmp_path: Path,
) -> None:
    """Five failures a minute from one address: the sixth guess, at any account, waits. Bob,
    who logged in from that address before, still logs in; cat, who never did, waits with
    the guesser until the budget refills. Right passwords spend none of the budget."""
    async with http_app(tmp_path, login_failures_per_address_per_minute=5) as c:
        for name in ("bob", "cat"):
            assert (await register(c, name)).status_code == 201
        now = with_clock(c)
        for _ in range(10):
            assert (await c.post("/auth/login", json=login_body("bob"))).status_code == 200
        for n in range(5):
            guess = await c.post("/auth/login", json=login_body(f"user{n}", "a guess"))
            assert guess.status_code == 401, guess.text
        assert assert_limited(await c.post("/auth/login", json=login_body("user9", "x"))) == 12
        assert assert_limited(await c.post("/auth/login", json=login_body("cat"))) == 12
        assert (await c.post("/auth/login", json=login_body("bob"))).status_code == 200
        # Bob's own guesses still make bob wait, as anyone's do.
        for _ in range(4):
            wrong = await c.post("/auth/login", json=login_body("bob", "not it"))
            assert wrong.status_code == 401
        assert_limited(await c.post("/auth/login", json=login_body("bob")))
        now[0] = 12.0  # one failure refilled
        assert (await c.post("/auth/login", json=login_body("cat"))).status_code == 200


async def test_a_login_never_judged_counts_for_nothing(tmp_path: Path) -> None:
    """Four tries at once where the hashing pool takes one: the one judged is a failure; the
    three answered ``server_busy`` are none, for the account (three free failures) and for
    the address (a budget of four) alike."""
    slow = {"password_time_cost": 2, "password_memory_kib": 32 * 1024}
    limits = {"login_free_failures": 3, "login_failures_per_address_per_minute": 4}
    async with http_app(tmp_path, password_hash_threads=1, password_hash_queue=0, **slow) as c:
        assert (await register(c, "ann")).status_code == 201
        app = c.app  # type: ignore[attr-defined]
        app.state.gateway = Gateway(app.state.settings.model_copy(update=limits))
        wrong = login_body("ann", "a wrong guess")
        answers = await asyncio.gather(*(c.post("/auth/login", json=wrong) for _ in range(4)))
        assert sorted(a.status_code for a in answers) == [401, 503, 503, 503], answers
        for _ in range(2):  # the second and third failures: still free
            assert (await c.post("/auth/login", json=wrong)).status_code == 401
        assert (await c.post("/auth/login", json=login_body("ann"))).status_code == 200


async def test_failed_logins_make_the_account_wait_longer_each_time(tmp_path: Path) -> None:
    async with http_app(tmp_path, login_free_failures=2, login_failure_delay_seconds=10) as c:
        assert (await register(c, "ann")).status_code == 201
        now = with_clock(c)
        wrong = login_body("ann", "wrong pass")
        for _ in range(3):  # two free failures, then the third sets a delay of 10 s
            assert (await c.post("/auth/login", json=wrong)).status_code == 401
        assert assert_limited(await c.post("/auth/login", json=login_body("ann"))) == 10
        now[0] = 10.5
        assert (await c.post("/auth/login", json=wrong)).status_code == 401  # 20 s now
        now[0] = 25.0
        assert assert_limited(await c.post("/auth/login", json=login_body("ann"))) == 6
        now[0] = 31.0
        assert (await c.post("/auth/login", json=login_body("ann"))).status_code == 200
        # A success forgets the failures.
        assert (await c.post("/auth/login", json=wrong)).status_code == 401
        assert (await c.post("/auth/login", json=login_body("ann"))).status_code == 200


async def test_registrations_and_the_starting_grant_are_limited_per_address(
    tmp_path: Path,
) -> None:
    async with http_app(
        tmp_path, register_per_address_per_minute=4, starting_grants_per_address=2
    ) as c:
        for name in ("ann", "bob", "cat", "dan"):
            assert (await register(c, name)).status_code == 201
        assert_limited(await register(c, "eve"))
        balances = []
        for name in ("ann", "bob", "cat", "dan"):
            wallet = await c.get("/wallet", headers=bearer(await login(c, name)))
            balances.append(wallet.json()["balance"])
        assert balances == [10_000, 10_000, 0, 0]


async def test_hashing_beyond_the_pool_and_its_queue_is_refused_at_once() -> None:
    passwords = Passwords(time_cost=2, memory_kib=32 * 1024, parallelism=1, threads=1, queue=1)
    results = await asyncio.gather(
        *(passwords.hash(f"password {n}") for n in range(4)), return_exceptions=True
    )
    busy = [r for r in results if isinstance(r, HashingBusy)]
    assert len(busy) == 2 and all(isinstance(r, str) for r in results[:2])
    assert passwords.pending == 0
    assert await passwords.verify(str(results[0]), "password 0")


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="no thread priorities here")
async def test_hashing_threads_yield_the_cores_to_the_event_loop() -> None:
    """A burst of logins must not take a core from the tables' turns of the loop."""
    passwords = Passwords(time_cost=1, memory_kib=8 * 1024, parallelism=1, threads=2, queue=1)

    def own_niceness() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    loop_niceness = own_niceness()
    hashing = await asyncio.get_running_loop().run_in_executor(passwords._pool, own_niceness)
    assert hashing == min(19, loop_niceness + HASHING_NICENESS) > loop_niceness
    assert own_niceness() == loop_niceness  # the loop's thread keeps its priority
    assert await passwords.verify(await passwords.hash("a password"), "a password")


async def test_a_login_burst_over_the_hashing_pool_gets_503_server_busy(tmp_path: Path) -> None:
    slow = {"password_time_cost": 2, "password_memory_kib": 32 * 1024}
    async with http_app(tmp_path, password_hash_threads=1, password_hash_queue=2, **slow) as c:
        assert (await register(c, "ann")).status_code == 201
        # Twelve accounts at once (one account's failures would make it wait first).
        answers = await asyncio.gather(
            *(c.post("/auth/login", json=login_body(f"ann{n}", "wrong")) for n in range(12))
        )
        statuses = sorted(a.status_code for a in answers)
        assert statuses.count(401) >= 3 and statuses.count(503) >= 1, statuses
        busy = next(a for a in answers if a.status_code == 503)
        assert error_code(busy) == "server_busy" and busy.headers["retry-after"] == "1"


async def test_headers_on_the_page_the_api_and_the_docs(tmp_path: Path) -> None:
    async with http_app(tmp_path) as c:
        for path in ("/", "/web/app.js", "/healthz", "/tables", "/no/such/route"):
            response = await c.get(path)
            csp = response.headers["content-security-policy"]
            assert "frame-ancestors 'none'" in csp and "script-src 'self';" in csp, path
            assert "unsafe-inline" not in csp.split("style-src")[0]
            assert response.headers["x-content-type-options"] == "nosniff"
            assert response.headers["referrer-policy"] == "no-referrer"
            policy = response.headers["permissions-policy"]
            assert "camera=()" in policy and "microphone=()" in policy and "usb=()" in policy
        page = (await c.get("/")).text
        assert "<script>" not in page and "<script " in page  # only scripts from files
        for path in ("/docs", "/redoc"):  # the viewers' files are this server's: no CDN
            docs = await c.get(path)
            csp = docs.headers["content-security-policy"]
            assert "frame-ancestors 'none'" in csp and "script-src 'self';" in csp, path
            assert "http" not in csp, path


# ---------------------------------------------------------------------- the websocket


async def test_sockets_per_address_are_capped(tmp_path: Path) -> None:
    async with examples_server(tmp_path, ws_sockets_per_address=3) as room:
        open_ = [await hello(room.host) for _ in range(3)]
        with pytest.raises(InvalidStatus) as refused:  # in the handshake: no socket at all
            await connect(f"ws://{room.host}/ws")
        assert refused.value.response.status_code == 403
        assert refusals(room, "too_many_connections") == 1.0
        await open_[0].close()
        gateway = room.app.state.gateway
        await wait_for(lambda: sum(gateway._sockets_by_address.values()) == 2)  # the server saw
        again = await hello(room.host)  # a socket closed frees its place
        await again.send(json.dumps({"type": "ping", "id": 1}))
        assert await receive(again) == {"v": 1, "type": "pong", "id": 1}
        for ws in (*open_[1:], again):
            await ws.close()


async def test_sockets_per_account_are_capped(tmp_path: Path) -> None:
    async with examples_server(tmp_path, ws_sockets_per_account=2) as room:
        sockets = []
        for _ in range(2):
            ws = await hello(room.host)
            answer = await request(ws, {"type": "auth", "id": 1, "token": room.tokens["ann"]})
            assert answer["type"] == "reply"
            sockets.append(ws)
        third = await hello(room.host)
        answer = await request(third, {"type": "auth", "id": 1, "token": room.tokens["ann"]})
        assert answer["code"] == "too_many_connections"
        with pytest.raises(ConnectionClosed) as closed:
            await receive(third)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4029
        # Another account is not held up.
        bob = await hello(room.host)
        answer = await request(bob, {"type": "auth", "id": 1, "token": room.tokens["bob"]})
        assert answer["type"] == "reply"
        for ws in (*sockets, bob):
            await ws.close()


async def test_a_message_flood_is_refused_then_closed(tmp_path: Path) -> None:
    limits = {"ws_other_burst": 5, "ws_other_per_second": 1, "ws_rate_strikes": 3}
    async with examples_server(tmp_path, **limits) as room:
        ws = await hello(room.host)
        for n in range(20):
            await ws.send(json.dumps({"type": "ping", "id": n}))
        frames = []
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                frames.append(await receive(ws))
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4029
        # The burst, a refusal; after each refusal the connection waits unread for its
        # bucket (a second here), so a pong may pass between refusals; the third closes.
        kinds = [f["type"] for f in frames]
        assert kinds[:6] == ["pong"] * 5 + ["error"] and kinds.count("error") == 3, kinds
        assert kinds[-1] == "error" and len(frames) < 20
        errors = [f for f in frames if f["type"] == "error"]
        assert {f["code"] for f in errors} == {"rate_limited"}
        # Each refusal answers the ping it refuses: its id, as every answer does.
        assert all(isinstance(f["id"], int) and f["retry_after"] > 0 for f in errors), errors
        assert sorted(f["id"] for f in frames) == [f["id"] for f in frames], frames
        # The chat bucket is apart from the rest: pings spent do not stop chat.
        ws = await hello(room.host)
        await request(ws, {"type": "auth", "id": 1, "token": room.tokens["ann"]})
        for n in range(4):
            await ws.send(json.dumps({"type": "ping", "id": n}))
            assert (await receive(ws))["type"] == "pong"
        chat = await request(ws, {"type": "chat", "id": 9, "table": 1, "text": "hi"})
        assert chat["code"] == "chat_not_allowed"  # refused by the table, not by the rate
        await ws.close()


async def test_a_request_refused_for_its_rate_is_answered_with_its_id(tmp_path: Path) -> None:
    """A client that waits for the answer to its request gets it, refusal or not: a watch
    over the bucket is refused ``rate_limited`` with the watch's id, and the same request
    asked again after ``retry_after`` is answered."""
    limits = {"ws_other_burst": 1, "ws_other_per_second": 2, "ws_rate_strikes": 5}
    async with examples_server(tmp_path, **limits) as room:
        ws = await hello(room.host)
        await ws.send(json.dumps({"type": "ping", "id": "p-1"}))
        assert (await receive(ws))["type"] == "pong"  # the bucket's one token
        refused = await request(ws, {"type": "watch", "id": "w-1", "table": 1})
        assert refused["type"] == "error" and refused["code"] == "rate_limited", refused
        assert refused["id"] == "w-1" and refused["retry_after"] > 0
        await asyncio.sleep(refused["retry_after"])
        again = await request(ws, {"type": "unwatch", "id": "u-1", "table": 1})
        assert again == {"v": 1, "type": "reply", "id": "u-1", "result": {"table": 1}}
        await ws.close()


async def test_an_action_flood_is_paced_not_refused(tmp_path: Path) -> None:
    """Actions over their bucket wait their turn: each is answered by the table (never
    ``rate_limited``), the connection stays open, and the flood takes as long as the rate
    says it must."""
    limits = {"ws_actions_burst": 5, "ws_actions_per_second": 20, "ws_rate_strikes": 2}
    async with examples_server(tmp_path, **limits) as room:
        ws = await hello(room.host)
        await request(ws, {"type": "auth", "id": 0, "token": room.tokens["ann"]})
        started = asyncio.get_running_loop().time()
        for n in range(1, 26):
            act = {"type": "act", "id": n, "table": 1, "action_id": f"a{n}", "kind": "fold"}
            await ws.send(json.dumps(act))
        answers = [await receive(ws) for _ in range(25)]
        took = asyncio.get_running_loop().time() - started
        assert [a["id"] for a in answers] == list(range(1, 26))
        codes = {a.get("code") for a in answers}
        assert "rate_limited" not in codes and codes <= {"not_seated", "no_hand"}, answers
        assert took >= (25 - 5) / 20 * 0.9, took  # twenty over the burst, at twenty a second
        await ws.send(json.dumps({"type": "ping", "id": 99}))
        assert (await receive(ws))["type"] == "pong"  # still open: pacing is no strike
        await ws.close()


async def test_a_seed_for_every_hand_is_paced_with_the_actions_not_refused(
    tmp_path: Path,
) -> None:
    """A quick table deals hands faster than the other frames' rate, and a seat gives a seed
    for each: seeds draw on the actions' bucket, so none is refused for its rate and the
    connection is never closed for them."""
    limits = {"ws_other_burst": 2, "ws_other_per_second": 1, "ws_rate_strikes": 2}
    async with examples_server(tmp_path, **limits) as room:
        ws = await hello(room.host)
        await request(ws, {"type": "auth", "id": 0, "token": room.tokens["ann"]})
        for n in range(1, 11):
            seed = {"type": "client_seed", "id": n, "table": 1, "hand": n, "seed": f"{n:032x}"}
            await ws.send(json.dumps(seed))
        answers = [await receive(ws) for _ in range(10)]
        assert [a["id"] for a in answers] == list(range(1, 11))
        assert "rate_limited" not in {a.get("code") for a in answers}, answers
        await ws.send(json.dumps({"type": "ping", "id": 99}))
        assert (await receive(ws))["type"] == "pong"  # still open
        await ws.close()


async def test_a_type_that_is_no_string_is_refused_as_an_unknown_type(tmp_path: Path) -> None:
    """The bucket of a message is chosen by its type before the type is checked: a type
    that cannot be looked up (a list, an object) is an unknown type, not a server error."""
    async with examples_server(tmp_path) as room:
        ws = await hello(room.host)
        for n, kind in enumerate([["act"], {"act": 1}]):
            await ws.send(json.dumps({"type": kind, "id": n}))
            answer = await receive(ws)
            assert (answer["id"], answer["code"]) == (n, "unknown_type"), answer
        await ws.close()


async def test_a_turn_budget_spreads_a_storm_over_turns_of_the_loop() -> None:
    """Two pieces of work a turn: five tasks arriving together go two, two, then one, in
    the order they came; one cancelled while it waits takes nothing from the others."""
    budget = TurnBudget(2)
    done: list[int] = []

    async def one(n: int) -> None:
        await budget.turn()
        done.append(n)

    tasks = [asyncio.create_task(one(n)) for n in range(6)]
    await asyncio.sleep(0)  # every task's first step: two pass, four wait
    assert done == [0, 1] and budget.waiting == 4
    tasks[3].cancel()
    turns = [list(done)]
    while len(done) < 5:
        await asyncio.sleep(0)
        if done != turns[-1]:
            turns.append(list(done))
    assert done == [0, 1, 2, 4, 5]
    assert all(len(b) - len(a) <= 2 for a, b in zip(turns, turns[1:], strict=False))
    assert len(turns) >= 3  # not all in one turn
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_chat_is_for_seated_players_and_arrives_cleaned(tmp_path: Path) -> None:
    async with examples_server(tmp_path) as room:
        ann = await hello(room.host)
        await request(ann, {"type": "auth", "id": 1, "token": room.tokens["ann"]})
        assert (await request(ann, {"type": "sit", "id": 2, "table": 1, "buy_in": 200}))[
            "type"
        ] == "reply"
        cat = await hello(room.host)
        await request(cat, {"type": "auth", "id": 1, "token": room.tokens["cat"]})
        await request(cat, {"type": "watch", "id": 2, "table": 1})
        refused = await request(cat, {"type": "chat", "id": 3, "table": 1, "text": "hello"})
        assert refused["code"] == "chat_not_allowed"
        text = "gg\u202e\u0000 wp\u2066\u200b\n\nall"
        assert (await request(ann, {"type": "chat", "id": 3, "table": 1, "text": text}))[
            "type"
        ] == "reply"
        while (frame := await receive(cat))["type"] != "event" or frame["kind"] != "chat":
            pass
        assert frame["data"] == {"player": "ann", "text": "gg wp all"}
        only_controls = {"type": "chat", "id": 4, "table": 1, "text": "\u202e\u0000\u200b"}
        assert (await request(ann, only_controls))["code"] == "bad_chat"
        for ws in (ann, cat):
            await ws.close()


async def test_spectator_chat_when_the_table_allows_it(tmp_path: Path) -> None:
    async with examples_server(tmp_path) as room:
        made = await room.client.post(
            "/admin/tables",
            headers=bearer(room.tokens["boss"]),
            json={"name": "Chatty", "seats": 2, "spectator_chat": True},
        )
        assert made.status_code == 201 and made.json()["spectator_chat"] is True
        table = made.json()["id"]
        cat = await hello(room.host)
        await request(cat, {"type": "auth", "id": 1, "token": room.tokens["cat"]})
        answer = await request(cat, {"type": "chat", "id": 2, "table": table, "text": "hi all"})
        assert answer["type"] == "reply"
        await cat.close()


async def test_the_origin_of_a_browser_page_is_checked(tmp_path: Path) -> None:
    async with examples_server(tmp_path) as room:
        with pytest.raises(InvalidStatus) as refused:
            await connect(f"ws://{room.host}/ws", origin="http://evil.example")
        assert refused.value.response.status_code == 403
        same = await connect(f"ws://{room.host}/ws", origin=f"http://{room.host}")
        assert (await receive(same))["type"] == "hello"
        await same.close()
        bare = await hello(room.host)  # no Origin: not a browser
        await bare.close()
    allowed = ["https://play.example"]
    async with examples_server(
        tmp_path,
        ws_allowed_origins=allowed,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'two.db'}",
    ) as room:
        listed = await connect(f"ws://{room.host}/ws", origin="https://play.example")
        assert (await receive(listed))["type"] == "hello"
        await listed.close()
        with pytest.raises(InvalidStatus):
            await connect(f"ws://{room.host}/ws", origin=f"http://{room.host}")


def refusals(room: Any, code: str) -> float:
    value = room.app.state.metrics.registry.get_sample_value(
        "stud_refusals_total", {"code": code, "source": "websocket"}
    )
    return float(value or 0.0)


def snapshots_asked(room: Any) -> float:
    value = room.app.state.metrics.registry.get_sample_value(
        "stud_command_seconds_count", {"command": "snapshot"}
    )
    return float(value or 0.0)


async def act_once(actor: Any, players: dict[str, Any]) -> None:
    """The seat to act takes its first legal action (a bring-in, a call, a check)."""
    hand = actor.table.hand
    assert hand is not None and not hand.is_over()
    legal = hand.legal_actions()
    kind = next(k for k in ("bring_in", "check", "call") if k in legal.kinds)
    name = actor.table.seats[legal.seat].player
    frame = {"type": "act", "id": 5, "table": 1, "action_id": f"a{actor.seq}", "kind": kind}
    heard = actor.publisher.bus.subscribe(table_channel(1))
    try:
        assert (await request(players[name], frame))["type"] == "reply"
        # The events reach the mirror's node (this one): the last of them, heard here, is in
        # the mirror's queue too (a node's bus hands each message to all its subscriptions).
        while True:
            message = await asyncio.wait_for(heard.get(), 5)
            assert message is not None
            if message.get("type") == "event" and message["seq"] >= actor.seq:
                break
    finally:
        heard.close()


async def test_spectators_snapshots_never_reach_the_table(tmp_path: Path) -> None:
    """Anonymous sockets watching and resyncing in a loop are answered from the node's
    mirror of the table: the actor is asked once (the mirror's base), and every answer is
    the actor's own spectator snapshot."""
    async with examples_server(tmp_path) as room:
        players = {}
        for name in ("ann", "bob"):
            ws = players[name] = await hello(room.host)
            await request(ws, {"type": "auth", "id": 1, "token": room.tokens[name]})
            assert (await request(ws, {"type": "sit", "id": 2, "table": 1, "buy_in": 200}))[
                "type"
            ] == "reply"
        watchers = [await hello(room.host) for _ in range(20)]
        actor = room.cardroom.actor(1)
        assert actor is not None
        for round_ in range(6):
            if round_:  # the hand moves on between rounds: the mirror folds its events
                await act_once(actor, players)
            answers = await asyncio.gather(
                *(
                    request(ws, {"type": "resync" if round_ else "watch", "id": 7, "table": 1})
                    for ws in watchers
                )
            )
            mine = json.loads(json.dumps(actor.snapshot(None)))  # as it travels
            for answer in answers:
                got = answer["result"]
                assert got["seq"] == mine["seq"]
                assert {**got, "clock": None} == {**mine, "clock": None}
        assert snapshots_asked(room) == 1.0
        # A seated player's own snapshot (their down cards) still comes from the actor.
        own = await request(players["ann"], {"type": "resync", "id": 8, "table": 1})
        assert own["result"]["you"] == 0 and snapshots_asked(room) == 2.0
        for ws in (*watchers, *players.values()):
            await ws.close()
