"""The client's heartbeat judges a server by its answers: a server that answers every ping
within a heartbeat, however late in it, is never taken for silent; one that stops answering
is left after about two heartbeats."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import AsyncIterator, Iterable

import pytest
from hypothesis import given
from hypothesis import strategies as st
from live_server import LiveServer, OpenTable
from websockets.asyncio.server import ServerConnection, serve

from stud_client import StudClient
from stud_client.client import PROTOCOL_VERSION
from stud_client.heartbeat import Beat, Heartbeat

HEARTBEAT = 0.5


def run(beat: Heartbeat, wakeups: list[float], latencies: list[float] | None) -> list[Beat]:
    """The decisions at ``wakeups`` (each this long after the last look: a tick and the
    loop's lateness), each ping answered after the next of ``latencies`` (None: never)."""
    answers = iter(latencies or ())
    pongs: list[float] = []
    decisions = []
    now = 0.0
    beat.connected(now)
    for late in wakeups:
        now += beat.tick + late
        for pong in sorted(pongs):
            if pong <= now:
                beat.heard(pong)
                pongs.remove(pong)
        decided = beat.decide(now)
        decisions.append(decided)
        if decided is Beat.PING and latencies is not None:
            pongs.append(now + next(answers))
    return decisions


@given(
    every=st.floats(0.05, 30.0),
    lateness=st.lists(st.floats(0.0, 0.5), min_size=200, max_size=200),
    shares=st.lists(st.floats(0.0, 0.99), min_size=200, max_size=200),
)
def test_pings_answered_within_a_heartbeat_never_make_a_server_silent(
    every: float, lateness: list[float], shares: list[float]
) -> None:
    """Whatever the pongs' latency under a heartbeat, and however late the loop wakes (up to
    half a tick), a server that answers is never left; and a quiet one is pinged."""
    beat = Heartbeat(every, 2 * every)
    decisions = run(beat, [late * beat.tick for late in lateness], [s * every for s in shares])
    assert Beat.LEAVE not in decisions
    assert decisions.count(Beat.PING) >= 200 // 8


def test_the_pattern_that_left_a_healthy_server() -> None:
    """Pongs within a millisecond, and wake-ups a little later than that each: the heartbeat
    that pinged only after a whole heartbeat of silence, looking once a heartbeat, skipped
    its ping by a hair and took the server for silent two heartbeats after its last pong."""
    beat = Heartbeat(5.0, 10.0)
    decisions = run(beat, [0.0008] * 400, [0.001] * 400)
    assert Beat.LEAVE not in decisions and Beat.PING in decisions


@given(every=st.floats(0.05, 30.0), lateness=st.lists(st.floats(0.0, 0.5), min_size=40))
def test_a_server_that_never_answers_is_left_after_two_heartbeats(
    every: float, lateness: list[float]
) -> None:
    beat = Heartbeat(every, 2 * every)
    now = 0.0
    beat.connected(now)
    for late in lateness:
        now += beat.tick * (1 + late)
        if beat.decide(now) is Beat.LEAVE:
            break
    else:
        pytest.fail("never left")
    # Silent past two heartbeats; left within two late looks of it.
    assert 2 * every < now <= 2 * every + 3 * beat.tick


class AnsweringServer:
    """A websocket that says hello, then nothing but a ``pong`` to each ``ping``, each after
    the next of ``latencies`` (None: never)."""

    def __init__(self, latencies: Iterable[float | None]) -> None:
        self.latencies = iter(latencies)
        self.pings = 0
        self.url = ""

    async def handle(self, ws: ServerConnection) -> None:
        await ws.send(
            json.dumps({"type": "hello", "protocol": PROTOCOL_VERSION, "idle_seconds": 60})
        )
        async for text in ws:
            if json.loads(text).get("type") == "ping":
                self.pings += 1
                latency = next(self.latencies)
                if latency is not None:
                    asyncio.get_running_loop().call_later(
                        latency, lambda: asyncio.ensure_future(ws.send('{"type":"pong"}'))
                    )


@contextlib.asynccontextmanager
async def serving(server: AnsweringServer) -> AsyncIterator[None]:
    async with serve(server.handle, "127.0.0.1", 0) as running:
        port = next(iter(running.sockets)).getsockname()[1]
        server.url = f"http://127.0.0.1:{port}"
        yield


@pytest.mark.parametrize("share", [0.0, 0.5])
async def test_a_server_answering_within_a_heartbeat_is_never_left(share: float) -> None:
    """Pongs at once and half a heartbeat late, over twenty heartbeats: no silence. (Every
    latency under a heartbeat, against every pattern of late wake-ups, is the property test
    above; a live one this close to the heartbeat would time the machine, not the client.)"""
    server = AnsweringServer(itertools.repeat(share * HEARTBEAT))
    async with serving(server):
        client = StudClient(server.url, heartbeat=HEARTBEAT, backoff=(0.05, 0.5))
        await client.connect()
        try:
            await asyncio.sleep(20 * HEARTBEAT)
        finally:
            await client.close()
    assert client.stats.silences == 0 and client.stats.reconnects == 0, client.stats
    assert client.stats.pings >= 5, client.stats  # it did ping: the server was quiet


async def test_a_server_that_stops_answering_is_left_after_two_heartbeats() -> None:
    server = AnsweringServer(itertools.chain([0.0] * 5, itertools.repeat(None)))
    async with serving(server):
        client = StudClient(server.url, heartbeat=HEARTBEAT, backoff=(0.05, 0.5))
        await client.connect()
        try:
            started = time.monotonic()
            while client.stats.silences == 0:
                assert time.monotonic() - started < 30 * HEARTBEAT + 5, client.stats
                await asyncio.sleep(0.01)
        finally:
            await client.close()
    # Five answered pings (a heartbeat of silence each), then the one left unanswered.
    assert server.pings >= 6 and client.stats.silences >= 1, client.stats


async def test_a_watched_quiet_table_keeps_its_connection_for_a_minute(
    live: LiveServer, open_table: OpenTable
) -> None:
    """As a user meets it: the client's defaults, a real node, a table nobody plays at."""
    table_id = await open_table()
    async with StudClient(live.url) as watcher:
        await watcher.connect()
        await watcher.watch(table_id)
        await asyncio.sleep(60)
        assert watcher.stats.silences == 0 and watcher.stats.reconnects == 0, watcher.stats
        assert watcher.stats.pings >= 60 / 5 / 2, watcher.stats
