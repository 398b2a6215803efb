"""Fixtures of the abuse tests: a live server with the gateway's default limits, and a
table where two seated players play (tests/abuse/abuse_room.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from abuse_room import (
    DEFAULT_LIMITS,
    PASSWORD,
    LiveServer,
    Room,
    Seated,
    new_account,
)
from live_server import OPERATOR

# Tables of two seated players (the same two at each), all measured: some 40 actions a
# second in all, so that a p99 over a few seconds is not simply the one slowest action.
TABLES = 4


@pytest.fixture
def live(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    extra = getattr(request, "param", {})
    server = LiveServer(tmp_path, **{**DEFAULT_LIMITS, **extra})
    server.create_operator()
    server.start()
    try:
        yield server
    finally:
        server.stop()
        assert not server.errors(), server.log()[-5000:]


@pytest.fixture
async def room(live: LiveServer) -> AsyncIterator[Room]:
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as client:
        login = await client.post("/auth/login", json={"username": OPERATOR, "password": PASSWORD})
        operator = str(login.json()["access_token"])
        # Two accounts (the registrations an address may make are counted by the tests),
        # each seated at every table.
        accounts = [await new_account(client, "seated") for _ in range(2)]
        players = []
        tables = []
        for number in range(TABLES):
            made = await client.post(
                "/admin/tables",
                headers={"Authorization": f"Bearer {operator}"},
                json={"name": f"Abused {number + 1}", "seats": 2},
            )
            assert made.status_code == 201, made.text
            table = made.json()
            tables.append(table["id"])
            for name, token in accounts:
                players.append(Seated(live.url, token, name, table["id"], table["max_buy_in"]))
    tasks = [asyncio.create_task(p.play()) for p in players]
    room = Room(live, tables[0], players, tasks, operator)
    deadline = time.monotonic() + 10
    while len(room.latencies(0, float("inf"))) < 20 * TABLES:  # play is under way
        assert time.monotonic() < deadline, [p.errors for p in players]
        await asyncio.sleep(0.05)
    try:
        yield room
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
