"""The watchdog of a Redis server's subscribed connection: a quiet listener is pinged, and
cut off (to reconnect) only when the PING goes unanswered a whole interval."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from redis.asyncio.connection import AbstractConnection

from server.bus.redis_servers import RedisServer

INTERVAL = 0.01


class Connection:
    """A subscribed connection as the watchdog sees it: PINGs sent, and whether it was cut
    off. ``answer``: the listener reads the PONG before the watchdog wakes from sending."""

    def __init__(self, server: RedisServer, *, answer: bool) -> None:
        self.server = server
        self.answer = answer
        self.pings = 0
        self.cut_off = False

    async def send_command(self, *args: Any, **options: Any) -> None:
        self.pings += 1
        if self.answer:
            self.server.heard = True

    async def disconnect(self, nowait: bool = False) -> None:
        self.cut_off = True


def server_and_connection(*, answer: bool) -> tuple[RedisServer, Connection]:
    server = RedisServer("redis", lambda: cast(AbstractConnection, None))
    return server, Connection(server, answer=answer)


async def test_a_ping_answered_at_once_keeps_the_connection() -> None:
    server, connection = server_and_connection(answer=True)
    watch = asyncio.create_task(server.watch(cast(AbstractConnection, connection), INTERVAL))
    try:
        await asyncio.sleep(INTERVAL * 30)
        assert connection.pings >= 5, "quiet: pinged again and again"
        assert not connection.cut_off and not watch.done()
    finally:
        watch.cancel()


async def test_a_ping_unanswered_a_whole_interval_cuts_the_connection_off() -> None:
    server, connection = server_and_connection(answer=False)
    await asyncio.wait_for(server.watch(cast(AbstractConnection, connection), INTERVAL), 5)
    assert connection.pings == 1 and connection.cut_off


async def test_a_listener_that_hears_messages_is_never_pinged() -> None:
    server, connection = server_and_connection(answer=False)
    watch = asyncio.create_task(server.watch(cast(AbstractConnection, connection), INTERVAL))

    async def messages() -> None:
        while True:
            server.heard = True
            await asyncio.sleep(INTERVAL / 4)

    talking = asyncio.create_task(messages())
    try:
        await asyncio.sleep(INTERVAL * 20)
        assert connection.pings == 0 and not connection.cut_off
    finally:
        watch.cancel()
        talking.cancel()
