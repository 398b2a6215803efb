"""Fixtures of the abuse tests: a live server with the gateway's default limits, and tables
where two seated players play (tests/abuse/abuse_room.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from abuse_room import DEFAULT_LIMITS, LiveServer, Room, open_room


@pytest.fixture
def live(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    extra = getattr(request, "param", {})
    server = LiveServer(tmp_path, **{**DEFAULT_LIMITS, **extra})
    server.create_operator()
    with server.running():
        yield server


@pytest.fixture
async def room(live: LiveServer) -> AsyncIterator[Room]:
    async with open_room(live) as room:
        room.abusers_nice = 0  # counted, not measured: they must get to send (abusers.py)
        yield room
