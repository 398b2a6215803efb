"""Shedding while the node's event loop is behind (server/edge/overload.py), driven as clients meet
it: the loop really blocked (a task sleeping in slices, holding it), then a login, a lobby
listing, a new websocket and a new seat refused ``server_busy`` with a retry hint, while a
seated player's action, a ping, ``/healthz``, ``/metrics`` and the back office go through; once
the loop catches up, the same calls succeed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from live import receive
from server_helpers import PASSWORD, bearer, error_code
from test_protocol import Room, examples_server, hello, request, seated, signed_in
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from server.edge.overload import LagMonitor
from server.metrics import Metrics

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
import load_bots  # noqa: E402 - the load bench's bots, beside the tests

THRESHOLD = 0.08  # seconds: the tests' threshold, under the blocker's slices
SLICE = 0.15  # seconds the blocker holds the loop at a time...
GAP = 0.03  # ...and lets it run between slices: every wake-up of the monitor comes late


@contextlib.asynccontextmanager
async def loop_blocked() -> AsyncIterator[None]:
    """The event loop held :data:`SLICE` at a time, free for :data:`GAP` between slices (a
    sixth of its time): real lag, as a node's loop has when it is behind on its work."""
    stop = False

    async def block() -> None:
        while not stop:
            time.sleep(SLICE)  # noqa: ASYNC251 - the point: the loop stands still
            await asyncio.sleep(GAP)

    task = asyncio.create_task(block())
    try:
        yield
    finally:
        stop = True
        await task


async def until(condition: object, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"not {what} after {timeout} s"
        await asyncio.sleep(0.02)


def shed(room: Room, kind: str) -> float:
    value = room.app.state.metrics.registry.get_sample_value("stud_shed_total", {"kind": kind})
    return float(value or 0.0)


async def login_answer(room: Room, name: str = "ann") -> tuple[int, str | None, str]:
    answer = await room.client.post("/auth/login", json={"username": name, "password": PASSWORD})
    code = error_code(answer) if answer.status_code != 200 else "ok"
    return answer.status_code, answer.headers.get("retry-after"), code


async def test_a_node_behind_sheds_new_work_and_keeps_the_tables_playing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="server.edge.overload")
    async with examples_server(tmp_path, overload_lag_seconds=THRESHOLD) as room:
        monitor: LagMonitor = room.app.state.overload
        ann = await seated(room, "ann", 0)
        bob = await seated(room, "bob", 1)
        cat = await signed_in(room, "cat")  # connected before: a connection open is not shed
        boss = bearer(room.tokens["boss"])
        created = await room.client.post(
            "/admin/tables",
            headers=boss,
            json={"name": "Second", "seats": 2, "min_buy_in": 100, "max_buy_in": 500},
        )
        assert created.status_code == 201, created.text
        sit = {"type": "sit", "id": 2, "table": created.json()["id"], "seat": 0, "buy_in": 200}
        assert not monitor.shedding and monitor.lag < THRESHOLD

        async with loop_blocked():
            await until(lambda: monitor.shedding, "shedding")
            # New work waits: a login, the lobby, a new socket, a new seat.
            assert await login_answer(room) == (503, "1", "server_busy")
            lobby = await room.client.get("/tables")
            assert lobby.status_code == 503 and error_code(lobby) == "server_busy"
            assert lobby.headers["retry-after"] == "1"
            with pytest.raises(InvalidStatus) as refused:  # refused in the handshake
                await connect(f"ws://{room.host}/ws")
            response = refused.value.response
            assert response.status_code == 503 and response.headers["retry-after"] == "1"
            assert json.loads(response.body)["error"]["code"] == "server_busy"
            # The back office is never shed.
            live = await room.client.get("/admin/tables/live", headers=boss)
            assert live.status_code == 200, live.text
            busy = await request(cat, sit)
            assert busy["type"] == "error" and busy["code"] == "server_busy", busy
            assert busy["retry_after"] == 1
            # The hand in play goes on: bob brings in, and his action is applied.
            bring_in = {"type": "act", "id": 3, "table": 1, "action_id": "b", "kind": "bring_in"}
            acted = await request(bob, bring_in)
            assert acted["type"] == "reply" and acted["result"]["accepted"] is True, acted
            await ann.send(json.dumps({"type": "ping", "id": 9}))
            while (frame := await receive(ann))["type"] != "pong":
                assert frame["type"] == "event", frame  # the hand's events come first
            assert (await room.client.get("/healthz")).status_code == 200
            metrics = await room.client.get("/metrics")
            assert metrics.status_code == 200
            assert "stud_event_loop_lag_seconds" in metrics.text
            assert monitor.lag > THRESHOLD
            counts = {kind: shed(room, kind) for kind in ("login", "lobby", "connect", "sit")}
            assert counts == {"login": 1, "lobby": 1, "connect": 1, "sit": 1}, counts
            assert shed(room, "act") == 0

        await until(lambda: not monitor.shedding, "caught up")
        status, _, code = await login_answer(room)
        assert (status, code) == (200, "ok")
        assert (await room.client.get("/tables")).status_code == 200
        sat = await request(cat, {**sit, "id": 3})
        assert sat["type"] == "reply", sat
        late = await hello(room.host)
        for ws in (ann, bob, cat, late):
            await ws.close()
    messages = [r.getMessage() for r in caplog.records if r.name == "server.edge.overload"]
    assert len(messages) == 2, messages  # once when it starts, once when it stops
    assert messages[0].startswith("overloaded") and messages[1].startswith("caught up")
    assert "4 calls were shed" in messages[1]


async def test_one_long_pause_sheds_nothing(caplog: pytest.LogCaptureFixture) -> None:
    """A full garbage collection, or the process descheduled on a busy machine: one late
    wake-up among timely ones, never a reason to refuse players."""
    caplog.set_level(logging.WARNING, logger="server.edge.overload")
    monitor = LagMonitor(0.25, Metrics())
    monitor.start()
    try:
        await asyncio.sleep(0.3)
        time.sleep(0.8)  # noqa: ASYNC251 - the loop stands still once, for 0.8 s
        seen: list[bool] = []
        for _ in range(40):
            seen.append(monitor.shedding)
            await asyncio.sleep(0.025)
        assert not any(seen) and monitor.lag < 0.25
    finally:
        await monitor.stop()
    assert not caplog.records


async def test_the_load_bench_bot_tries_a_shed_handshake_again(tmp_path: Path) -> None:
    """bench/load.py seats its bots on a node that may be behind: a bot refused in the
    handshake (503 ``server_busy``) waits the hint and connects and sits once it may."""
    async with examples_server(tmp_path, overload_lag_seconds=THRESHOLD) as room:
        monitor: LagMonitor = room.app.state.overload
        spec = load_bots.BotSpec(
            "ann", room.tokens["ann"], f"ws://{room.host}/ws", 1, 200, 1, reports_table=False
        )
        bot = load_bots.Bot(spec, (0.05, 0.1), load_bots.Stats())
        async with loop_blocked():
            await until(lambda: monitor.shedding, "shedding")
            seating = asyncio.create_task(bot.start())
            await until(lambda: shed(room, "connect") >= 1, "a handshake shed")
        await asyncio.wait_for(seating, 30)
        assert bot.seat == 0
        await bot.close()


def test_the_lag_is_the_median_of_the_last_second_and_shedding_needs_it_sustained() -> None:
    monitor = LagMonitor(0.25, Metrics())
    now = 0.0

    def wake(lag: float) -> None:
        nonlocal now
        now += 0.05 + lag
        monitor.observe(now, lag)

    wake(0.9)  # a cold start's first wake-up: nothing is decided on one sample
    wake(0.5)
    assert monitor.lag > 0.25 and not monitor.shedding
    for _ in range(20):
        wake(0.002)
    wake(2.0)  # one long stall: the samples of the last second are still mostly timely
    assert not monitor.shedding and monitor.lag < 0.01
    late_since = None
    while not monitor.shedding:  # late at most wake-ups: behind, once it lasts
        wake(0.3)
        if monitor.lag > 0.25 and late_since is None:
            late_since = now
        assert now < 10, "never shed"
    assert late_since is not None and now - late_since >= 1.0
    lag = monitor.metrics.registry.get_sample_value("stud_event_loop_lag_seconds")
    assert lag == monitor.lag >= 0.3
    for _ in range(3):  # still over half the threshold: shedding goes on
        wake(0.2)
    assert monitor.shedding
    for _ in range(12):
        wake(0.001)
    assert not monitor.shedding and monitor.lag < 0.125


def test_a_threshold_of_zero_never_sheds() -> None:
    monitor = LagMonitor(0.0, Metrics())
    for n in range(1, 30):
        monitor.observe(n * 1.0, 1.0)
    assert monitor.lag == 1.0 and not monitor.shedding
    monitor.check("login")  # does not raise
