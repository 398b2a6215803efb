"""Fixtures of the client tests: one real server for the module's tests (each test opens
its own tables and accounts), and players made through the client library itself."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_server import OPERATOR, PASSWORD, LiveServer, MakePlayer, OpenTable

from stud_client import StudClient

_names = itertools.count(1)
_tables = itertools.count(1)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = LiveServer(Path(tmp_path_factory.mktemp("live")))
    server.create_operator()
    with server.running():
        yield server


@pytest.fixture(scope="module")
def operator_token(live: LiveServer) -> str:
    response = httpx.post(
        f"{live.url}/auth/login", json={"username": OPERATOR, "password": PASSWORD}
    )
    response.raise_for_status()
    token: str = response.json()["access_token"]
    return token


@pytest.fixture
async def make_player(live: LiveServer) -> AsyncIterator[MakePlayer]:
    """``await make_player(**client_options)``: a new account, logged in and connected."""
    made: list[StudClient] = []

    async def make(**options: Any) -> StudClient:
        client = StudClient(live.url, **options)
        made.append(client)
        name = f"player{next(_names)}"
        await client.register(name, PASSWORD)
        await client.login(name, PASSWORD)
        await client.connect()
        return client

    yield make
    for client in made:
        await client.close()


@pytest.fixture
async def open_table(live: LiveServer, operator_token: str) -> AsyncIterator[OpenTable]:
    """``await open_table(variant=..., seats=2)``: a new table's id."""
    admin = StudClient(live.url, token=operator_token)

    async def make(variant: str = "seven_card_stud", seats: int = 2, **config: Any) -> int:
        # Unique on the module's server: an object's id may come back in a later test.
        return await admin.create_table(
            f"t{next(_tables)}", {"variant": variant, **config}, seats=seats
        )

    yield make
    await admin.close()
