"""The Redis bus: the memory bus's interface and guarantees, across nodes and Redis restarts.

Each test runs twice (``redis_base``): on the machine's Redis (``STUD_TEST_REDIS_URL``) and on
the run's Redis Cluster of three masters, each test on a channel prefix of its own; the restart
tests start a Redis of their own (a redis-server, or a cluster of three) on free ports.
(``test_cluster_bus`` holds what is the cluster's own: slots, masters, markers on each.)
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from backends import (
    REDIS_BACKENDS,
    RedisServer,
    needs_redis,
    redis_subscribers,
    redis_url,
    until_subscribers,
)
from live import Conversation, run_conversation
from play import wait_for
from redis_cluster import LocalRedisCluster

from server.bus.backends import bus_from_url
from server.bus.memory import MemoryBus, Subscription, player_channel, table_channel
from server.bus.redis_bus import RedisBus
from server.bus.redis_url import split_url
from tests.server.edge.test_protocol import EXAMPLES, examples_server

pytestmark = [needs_redis]
READY = 5.0  # seconds to connect and subscribe


async def receive(subscription: Subscription, timeout: float = 2.0) -> dict[str, Any] | None:
    return await asyncio.wait_for(subscription.get(), timeout)


async def drain(subscription: Subscription, count: int) -> list[dict[str, Any] | None]:
    return [await receive(subscription) for _ in range(count)]


async def nothing_more(subscription: Subscription) -> None:
    await asyncio.sleep(0.05)
    assert subscription.queue.empty(), subscription.queue.get_nowait()


@pytest.fixture
async def bus(redis_base: str) -> AsyncIterator[RedisBus]:
    bus = RedisBus(redis_url(redis_base))
    yield bus
    await bus.close()


async def test_a_redis_url_picks_the_redis_bus() -> None:
    assert isinstance(bus_from_url("redis://127.0.0.1:6379/0"), RedisBus)
    on_cluster = bus_from_url("redis://127.0.0.1:7000/0?cluster=yes")
    assert isinstance(on_cluster, RedisBus) and on_cluster.cluster
    await on_cluster.close()
    assert type(bus_from_url(None)) is type(bus_from_url("memory://")) is MemoryBus
    with pytest.raises(ValueError, match="no bus backend"):
        bus_from_url("kafka://k")


def test_the_channel_prefix_and_cluster_are_ours_and_the_rest_of_the_url_is_redis_py_s() -> None:
    assert split_url("redis://h:6379/2?channel_prefix=prod:&socket_keepalive=true") == (
        "redis://h:6379/2?socket_keepalive=true",
        "prod:",
        False,
    )
    assert split_url("rediss://u:p@h/0") == ("rediss://u:p@h/0", "", False)
    assert split_url("rediss://h:7000/0?cluster=yes&channel_prefix=a:") == (
        "rediss://h:7000/0",
        "a:",
        True,
    )
    assert not split_url("redis://h/0?cluster=no").cluster
    with pytest.raises(ValueError, match="yes or no"):
        split_url("redis://h/0?cluster=maybe")
    with pytest.raises(ValueError, match="no braces"):
        split_url("redis://h/0?cluster=yes&channel_prefix={prod}:")
    with pytest.raises(ValueError, match="over redis:// or rediss://"):
        split_url("unix:///run/redis.sock?cluster=yes")


async def test_messages_arrive_in_order_as_json(bus: RedisBus) -> None:
    subscription = bus.subscribe(table_channel(1))
    await bus.wait_ready(READY)
    for seq in range(1, 101):
        bus.publish_now(table_channel(1), {"seq": seq, "seats": {0: "ann"}})
    got = await drain(subscription, 100)
    assert [m and m["seq"] for m in got] == list(range(1, 101))
    # What a websocket client would read: keys of JSON objects are strings.
    assert got[0] == {"seq": 1, "seats": {"0": "ann"}}
    await bus.publish(table_channel(1), {"seq": 101})
    assert await receive(subscription) == {"seq": 101}


async def test_one_tick_of_publishes_is_one_pipeline(bus: RedisBus) -> None:
    subscription = bus.subscribe(table_channel(1))
    await bus.wait_ready(READY)
    batches = bus.batches
    for seq in range(500):
        bus.publish_now(table_channel(1), {"seq": seq})
    await drain(subscription, 500)
    assert bus.batches == batches + 1


async def test_private_channels_stay_private(redis_base: str) -> None:
    """Two nodes: each subscription gets its own channels and nothing else, whichever node
    published and whatever other channels its node holds."""
    url = redis_url(redis_base)
    one, two = RedisBus(url), RedisBus(url)
    try:
        public = one.subscribe(table_channel(1))
        ann = one.subscribe(table_channel(1), player_channel(1, "ann"))
        bob = two.subscribe(table_channel(1), player_channel(1, "bob"))
        other_table = two.subscribe(table_channel(2))
        await one.wait_ready(READY)
        await two.wait_ready(READY)
        two.publish_now(player_channel(1, "ann"), {"to": "ann"})
        one.publish_now(player_channel(1, "bob"), {"to": "bob"})
        one.publish_now(table_channel(1), {"to": "all"})
        one.publish_now(player_channel(1, "cat"), {"to": "cat"})  # nobody here is cat
        # Two publishers: no order between their messages, only between each one's own.
        assert sorted(str(m) for m in await drain(ann, 2)) == ["{'to': 'all'}", "{'to': 'ann'}"]
        assert await drain(bob, 2) == [{"to": "bob"}, {"to": "all"}]
        assert await receive(public) == {"to": "all"}
        for subscription in (public, ann, bob, other_table):
            await nothing_more(subscription)
    finally:
        await one.close()
        await two.close()


async def test_another_prefix_is_another_bus(redis_base: str) -> None:
    one, two = RedisBus(redis_url(redis_base)), RedisBus(redis_url(redis_base))
    try:
        heard = two.subscribe(table_channel(1))
        await two.wait_ready(READY)
        await one.wait_ready(READY)
        one.publish_now(table_channel(1), {"seq": 1})
        await asyncio.sleep(0.1)
        await nothing_more(heard)
    finally:
        await one.close()
        await two.close()


async def test_a_subscription_added_just_before_a_publish_gets_it(bus: RedisBus) -> None:
    """The websocket's watch-then-snapshot: the SUBSCRIBE is confirmed before the publish
    that follows it leaves."""
    early = bus.subscribe("connection:x")
    await bus.wait_ready(READY)
    for table in range(1, 21):
        early.add(table_channel(table))
        bus.publish_now(table_channel(table), {"table": table})
    # Every one heard. (In the order published on one Redis; on a cluster the tables' masters
    # deliver side by side: order holds per channel.)
    assert sorted(m and m["table"] for m in await drain(early, 20)) == list(range(1, 21))


async def test_a_local_frame_follows_what_was_published_before_it(bus: RedisBus) -> None:
    """A command's reply (queued straight into the subscription) comes after the events the
    command caused, and before the events published after it."""
    subscription = bus.subscribe(table_channel(1))
    await bus.wait_ready(READY)
    subscription.offer({"reply": 0})  # nothing in flight: at once
    assert subscription.queue.get_nowait() == {"reply": 0}
    bus.publish_now(table_channel(1), {"seq": 1})
    bus.publish_now(table_channel(1), {"seq": 2})
    subscription.offer({"reply": 1})
    subscription.offer({"reply": 2})
    bus.publish_now(table_channel(1), {"seq": 3})
    subscription.offer({"reply": 3})
    assert await drain(subscription, 6) == [
        {"seq": 1},
        {"seq": 2},
        {"reply": 1},
        {"reply": 2},
        {"seq": 3},
        {"reply": 3},
    ]


async def test_a_slow_subscriber_is_dropped_and_the_others_go_on(bus: RedisBus) -> None:
    slow = bus.subscribe(table_channel(1), size=10)
    fast = bus.subscribe(table_channel(1))
    await bus.wait_ready(READY)
    for seq in range(50):
        bus.publish_now(table_channel(1), {"seq": seq})
    assert [m and m["seq"] for m in await drain(fast, 50)] == list(range(50))
    assert slow.dropped and slow.closed
    # Its first message made room for the end marker; the iterator ends there.
    assert [m async for m in slow] == [{"seq": n} for n in range(1, 10)]
    assert table_channel(1) not in slow.channels


async def test_unsubscribing_stops_the_messages_and_the_redis_subscription(
    bus: RedisBus, redis_base: str
) -> None:
    stays = bus.subscribe(table_channel(1))
    goes = bus.subscribe(table_channel(1), table_channel(2))
    await bus.wait_ready(READY)
    assert await subscribers(bus, redis_base, table_channel(1), table_channel(2)) == [1, 1]
    goes.remove(table_channel(2))
    goes.close()
    # The UNSUBSCRIBE has reached Redis.
    await until_subscribers(bus.channel_prefix, table_channel(2), 0, url=redis_base)
    bus.publish_now(table_channel(1), {"seq": 1})
    bus.publish_now(table_channel(2), {"seq": 1})
    assert await receive(stays) == {"seq": 1}
    assert await receive(goes) is None  # closed: its end marker, nothing else
    # One Redis subscription per channel a node wants, however many local subscribers.
    assert await subscribers(bus, redis_base, table_channel(1), table_channel(2)) == [1, 0]


async def subscribers(bus: RedisBus, url: str, *channels: str) -> list[int]:
    """How many Redis connections listen to each channel (PUBSUB NUMSUB, or SHARDNUMSUB)."""
    return await redis_subscribers(bus.channel_prefix, *channels, url=url)


async def test_close_sends_what_is_pending(redis_base: str) -> None:
    url = redis_url(redis_base)
    bus, listener = RedisBus(url), RedisBus(url)
    try:
        heard = listener.subscribe(table_channel(1))
        await listener.wait_ready(READY)
        await bus.wait_ready(READY)
        for seq in range(10):
            bus.publish_now(table_channel(1), {"seq": seq})
        await bus.close()
        assert [m and m["seq"] for m in await drain(heard, 10)] == list(range(10))
        bus.publish_now(table_channel(1), {"seq": 99})  # closed: ignored
    finally:
        await bus.close()
        await listener.close()


# ---------------------------------------------------------------------- Redis going away

OwnRedis = RedisServer | LocalRedisCluster


@pytest.fixture(params=REDIS_BACKENDS)
def own_redis(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OwnRedis]:
    """A Redis of the test's own, to cut off and restart: a redis-server, or a Redis Cluster
    of three masters (stopped and started whole: every master at once)."""
    server: OwnRedis = (
        RedisServer(tmp_path) if request.param == "redis" else LocalRedisCluster(tmp_path)
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


def command_where(server: OwnRedis, channel: str, *args: str) -> str:
    """A command to the Redis server ``channel`` lives on (on a cluster, its slot's master)."""
    if isinstance(server, LocalRedisCluster):
        return server.command(server.master_of(channel), *args)
    return server.command(*args)


def client_ids(server: OwnRedis, channel: str, kind: str) -> list[str]:
    """Ids of the bus's connections to the server ``channel`` lives on: its subscribed one
    (``pubsub``), or the one that publishes there (``publisher``)."""
    found = []
    asked = "pubsub" if kind == "pubsub" else "normal"
    for line in command_where(server, channel, "CLIENT", "LIST", "TYPE", asked).splitlines():
        fields = dict(re.findall(r"(\w+)=(\S*)", line))
        if kind == "pubsub" or fields.get("cmd") in ("publish", "spublish"):
            found.append(fields["id"])
    return found


async def restart_bus(url: str) -> tuple[RedisBus, Subscription]:
    bus = RedisBus(url, retry_max=0.2)
    subscription = bus.subscribe(table_channel(1), player_channel(1, "ann"))
    await bus.wait_ready(READY)
    bus.publish_now(table_channel(1), {"seq": 1})
    assert await receive(subscription) == {"seq": 1}
    return bus, subscription


async def test_killed_connections_reconnect_and_resubscribe(own_redis: OwnRedis) -> None:
    bus, subscription = await restart_bus(own_redis.url)
    channel = table_channel(1)  # (where the table's channels live: one master of a cluster)
    try:
        for kind in ("pubsub", "publisher"):
            (victim,) = client_ids(own_redis, channel, kind)
            command_where(own_redis, channel, "CLIENT", "KILL", "ID", victim)
            if kind == "pubsub":  # the bus has seen it go, and is back before the publish
                await wait_for(lambda: bus.reconnects == 1, timeout=READY)
            await bus.wait_ready(READY)
            bus.publish_now(player_channel(1, "ann"), {"after": kind})
            assert await receive(subscription, 5) == {"after": kind}
        assert bus.reconnects == 1  # the subscriber's; the publisher reconnects as it sends
        assert len(client_ids(own_redis, channel, "pubsub")) == 1
    finally:
        await bus.close()


async def test_a_redis_restart_loses_nothing_published_meanwhile(own_redis: OwnRedis) -> None:
    """Redis stops; the table goes on publishing; Redis comes back: the bus reconnects,
    subscribes again, then sends what waited, in order, and what follows."""
    bus, subscription = await restart_bus(own_redis.url)
    try:
        own_redis.stop()
        await wait_for(lambda: not bus.connected, timeout=READY)
        for seq in range(2, 12):
            bus.publish_now(table_channel(1), {"seq": seq})
        subscription.offer({"reply": "after seq 11"})
        await asyncio.sleep(0.3)
        own_redis.start()
        await bus.wait_ready(READY)
        bus.publish_now(table_channel(1), {"seq": 12})
        got = await drain(subscription, 12)
        assert got == [{"seq": n} for n in range(2, 12)] + [{"reply": "after seq 11"}, {"seq": 12}]
        assert bus.reconnects >= 1 and bus.lost == 0
    finally:
        await bus.close()


async def test_while_redis_is_away_the_pending_messages_are_bounded(own_redis: OwnRedis) -> None:
    bus = RedisBus(own_redis.url, max_pending=5, retry_max=0.2)
    try:
        subscription = bus.subscribe(table_channel(1))
        await bus.wait_ready(READY)
        own_redis.stop()
        await wait_for(lambda: not bus.connected, timeout=READY)
        for seq in range(8):
            bus.publish_now(table_channel(1), {"seq": seq})
        assert bus.lost == 3
        own_redis.start()
        await bus.wait_ready(READY)
        assert [m and m["seq"] for m in await drain(subscription, 5)] == [3, 4, 5, 6, 7]
    finally:
        await bus.close()


# ---------------------------------------------------------------------- the server on Redis


@pytest.mark.parametrize("conversation", EXAMPLES, ids=[c.title for c in EXAMPLES])
async def test_documented_conversation_over_redis(
    conversation: Conversation, tmp_path: Path, redis_base: str
) -> None:
    """docs/protocol.md's conversations, frame for frame, with the bus on Redis."""
    async with examples_server(tmp_path, redis_url=redis_url(redis_base)) as room:
        assert isinstance(room.cardroom.bus, RedisBus)
        await run_conversation(room.host, conversation, room.tokens)


async def test_a_publish_says_how_many_nodes_heard_it(bus: RedisBus, redis_base: str) -> None:
    """A command nobody listens for is known lost at once (``server.cardroom.cluster``)."""
    other = RedisBus(redis_url(redis_base, prefix=bus.channel_prefix))
    try:
        listening = other.subscribe("heard")
        await other.wait_ready(5)
        assert await bus.publish_heard("nobody", {"n": 1}) == 0
        assert await bus.publish_heard("heard", {"n": 2}) == 1
        assert await asyncio.wait_for(listening.get(), 5) == {"n": 2}
        listening.close()
        await until_subscribers(bus.channel_prefix, "heard", 0, url=redis_base)  # UNSUBSCRIBE
        assert await bus.publish_heard("heard", {"n": 3}) == 0
    finally:
        await other.close()


async def test_a_memory_publish_says_whether_anybody_heard_it() -> None:
    bus = MemoryBus()
    assert await bus.publish_heard("nobody", {"n": 1}) == 0
    listening = bus.subscribe("heard")
    assert await bus.publish_heard("heard", {"n": 2}) == 1
    assert listening.queue.get_nowait() == {"n": 2}
