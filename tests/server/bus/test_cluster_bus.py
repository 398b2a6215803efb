"""The bus and the leases on a Redis Cluster: what is the cluster's own.

A table's channels and its lease key share one hash slot (so one master), and the tables
spread over the masters; a frame queued behind messages sent to several masters waits for
the marker of every one of them; a command's reply from another node comes after the events
it caused, though the node's messages travel through several masters; a channel whose slot
moves to another master is heard there, and a publish the old master refuses goes to the new.

They run on the run's Redis Cluster of three masters (``redis_cluster``), the resharding on
one of the test's own. ``test_redis_bus`` runs everything else of the bus on it as well.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio
from backends import needs_redis, redis_url, until_subscribers
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot
from redis_cluster import LocalRedisCluster

from server.bus.memory import Subscription, player_channel, table_channel, table_reply_channel
from server.bus.redis_bus import RedisBus
from server.bus.redis_url import split_url
from server.cardroom.cluster import CommandRouter, RedisLeases, command_channel, reply_channel
from server.table import commands as cmd

pytestmark = [needs_redis]
READY = 5.0  # seconds to connect and subscribe
PAUSE_MS = 400  # how long a master is held up (CLIENT PAUSE): far more than a round trip


async def receive(subscription: Subscription, timeout: float = 5.0) -> dict[str, Any] | None:
    return await asyncio.wait_for(subscription.get(), timeout)


@pytest.fixture
async def masters(redis_cluster: LocalRedisCluster) -> AsyncIterator[RedisCluster]:
    """A redis-py client of the run's cluster: which master owns which name."""
    client = RedisCluster.from_url(split_url(redis_cluster.url).url)
    await client.initialize()
    yield client
    await client.aclose()


def owner(client: RedisCluster, name: str) -> str:
    """``host:port`` of the master owning ``name``'s slot."""
    return str(client.get_node_from_key(name).name)


def one_table_a_master(client: RedisCluster, prefix: str) -> dict[str, int]:
    """For each master, the first table whose channels it holds."""
    found: dict[str, int] = {}
    table_id = 0
    while len(found) < len(client.get_primaries()):
        table_id += 1
        found.setdefault(owner(client, prefix + table_channel(table_id)), table_id)
    return found


def pause(cluster: LocalRedisCluster, address: str) -> None:
    """Hold every client of one master up for PAUSE_MS (what it was sent waits unread)."""
    cluster.command(cluster.addresses.index(address), "CLIENT", "PAUSE", PAUSE_MS)


async def test_a_table_s_channels_and_lease_key_share_a_slot_and_tables_spread_over_masters(
    redis_cluster: LocalRedisCluster, masters: RedisCluster
) -> None:
    url = redis_url(redis_cluster.url)
    prefix = split_url(url).prefix
    leases = RedisLeases(url, "a", 5.0)
    bus = RedisBus(url)
    try:
        held_by: dict[int, str] = {}
        for table_id in range(1, 31):
            names = [
                table_channel(table_id),
                player_channel(table_id, "ann"),
                table_reply_channel(table_id, "connection:x"),
                command_channel(table_id),
            ]
            slots = {key_slot((prefix + name).encode()) for name in names}
            slots.add(key_slot(leases.key(table_id).encode()))
            # One slot: that of the hash tag, the table's id in braces.
            assert slots == {key_slot(str(table_id).encode())}, (table_id, names)
            held_by[table_id] = owner(masters, leases.key(table_id))
        assert set(held_by.values()) == set(redis_cluster.addresses), "spread over the masters"

        # The bus listens on every master, each table's channels on the table's own master,
        # where the table's lease is too: asked of that master alone, without redirection
        # (another would answer MOVED).
        tables = list(one_table_a_master(masters, prefix).values())
        bus.subscribe(*(table_channel(t) for t in tables), *(command_channel(t) for t in tables))
        await bus.wait_ready(READY)
        assert bus.servers == sorted(redis_cluster.addresses)
        for table_id in tables:
            assert await leases.acquire(table_id)
            host, port = held_by[table_id].rsplit(":", 1)
            master = redis.asyncio.Redis(host=host, port=int(port))
            try:
                lease = await master.get(leases.key(table_id))
                assert lease is not None and lease.startswith(b"a ")
                counts = await master.pubsub_shardnumsub(
                    prefix + table_channel(table_id), prefix + command_channel(table_id)
                )
                assert [count for _, count in counts] == [1, 1]
            finally:
                await master.aclose()
    finally:
        await bus.close()
        await leases.close()


async def test_a_frame_waits_for_the_marker_of_every_master_its_messages_went_to(
    redis_cluster: LocalRedisCluster, masters: RedisCluster
) -> None:
    """Events of three tables, on three masters, then a reply: the reply comes after all of
    them, though one master is held up (its marker, behind its event, comes back last)."""
    bus = RedisBus(redis_url(redis_cluster.url))
    try:
        tables = one_table_a_master(masters, bus.channel_prefix)
        subscription = bus.subscribe(*(table_channel(t) for t in tables.values()))
        await bus.wait_ready(READY)
        batches = bus.batches
        slow = owner(masters, bus.channel_prefix + table_channel(min(tables.values())))
        pause(redis_cluster, slow)
        for table_id in tables.values():
            bus.publish_now(table_channel(table_id), {"table": table_id})
        subscription.offer({"reply": "after every event"})
        got = [await receive(subscription) for _ in range(4)]
        assert got[-1] == {"reply": "after every event"}, got
        assert sorted(m["table"] for m in got[:-1] if m) == sorted(tables.values())
        assert bus.batches == batches + 1, "one batch: a pipeline to each master, side by side"
    finally:
        await bus.close()


class EventfulTable:
    """A table's actor on node b: each command held up on its master, then an event."""

    def __init__(self, bus: RedisBus, table_id: int, hold_up: Any) -> None:
        self.bus = bus
        self.table_id = table_id
        self.hold_up = hold_up
        self.seq = 0

    async def submit(self, command: cmd.TableCommand) -> dict[str, Any]:
        self.hold_up()
        self.seq += 1
        self.bus.publish_now(table_channel(self.table_id), {"seq": self.seq})
        return {"seq": self.seq}


async def test_a_command_s_reply_from_another_node_comes_after_the_events_it_caused(
    redis_cluster: LocalRedisCluster, masters: RedisCluster
) -> None:
    """Node a sends a command for a table node b runs; b's actor publishes an event and
    answers. The answer reaches a after the event, though the table's master was held up
    while b published both: it comes on a channel in the table's slot, not on a's own reply
    channel (on another master, it would have come first)."""
    url = redis_url(redis_cluster.url)
    prefix = split_url(url).prefix
    on_a, on_b = RedisBus(url), RedisBus(url)
    a = CommandRouter(on_a, "a", timeout=10, retry_after=1)
    b = CommandRouter(on_b, "b", timeout=10, retry_after=1)
    try:
        replies_master = owner(masters, prefix + reply_channel("a"))
        table_id = next(
            t
            for t in one_table_a_master(masters, prefix).values()
            if owner(masters, prefix + table_channel(t)) != replies_master
        )
        table_master = owner(masters, prefix + table_channel(table_id))
        a.start()
        b.serve(EventfulTable(on_b, table_id, lambda: pause(redis_cluster, table_master)))
        watching = on_a.subscribe(table_channel(table_id))
        await on_a.wait_ready(READY)
        await on_b.wait_ready(READY)
        for seq in (1, 2, 3):
            answer = await a.send(table_id, cmd.Chat(player="ann", text=f"hello {seq}"))
            assert answer == {"seq": seq}
            # The event came first: it is queued already.
            assert not watching.queue.empty(), f"the answer to command {seq} came first"
            assert watching.queue.get_nowait() == {"seq": seq}
        assert a.reply_tables == {table_id}
    finally:
        await a.close()
        await b.close()
        await on_a.close()
        await on_b.close()


def move_slot(cluster: LocalRedisCluster, name: str, to: int) -> None:
    """Give the slot of ``name`` (no key in it) to master ``to``, as a resharding does: the
    importing master and the migrating one told first, then every master."""
    slot = int(cluster.command(0, "CLUSTER", "KEYSLOT", name))
    source = cluster.master_of(name)
    ids = [cluster.command(i, "CLUSTER", "MYID").strip() for i in range(len(cluster.ports))]
    cluster.command(to, "CLUSTER", "SETSLOT", slot, "IMPORTING", ids[source])
    cluster.command(source, "CLUSTER", "SETSLOT", slot, "MIGRATING", ids[to])
    for index in [to, source, *(i for i in range(len(ids)) if i not in (to, source))]:
        cluster.command(index, "CLUSTER", "SETSLOT", slot, "NODE", ids[to])


async def test_a_channel_whose_slot_moves_is_heard_on_its_new_master(tmp_path: Path) -> None:
    """A resharding moves table 1's slot (and with it a marker channel: ``{1}``) to another
    master. The old master unsubscribes the bus, which asks the cluster for its slots and
    subscribes there; a bus that still names the old master is refused (MOVED), asks too, and
    sends again. Nothing is lost, the order holds, and no connection was cut for it."""
    cluster = LocalRedisCluster(tmp_path)
    cluster.start()
    url = redis_url(cluster.url)
    listener, publisher = RedisBus(url), RedisBus(url)
    try:
        subscription = listener.subscribe(table_channel(1))
        await listener.wait_ready(READY)
        await publisher.wait_ready(READY)
        publisher.publish_now(table_channel(1), {"n": 1})
        assert await receive(subscription) == {"n": 1}

        name = listener.channel_prefix + table_channel(1)
        before = cluster.master_of(name)
        after = (before + 1) % len(cluster.ports)
        await asyncio.to_thread(move_slot, cluster, name, after)
        assert await asyncio.to_thread(cluster.master_of, name) == after

        # Subscribed on the new master (the old one let go of it when the slot left).
        await until_subscribers(listener.channel_prefix, table_channel(1), 1, url=url)
        for n in range(2, 12):
            publisher.publish_now(table_channel(1), {"n": n})
        assert [await receive(subscription) for _ in range(10)] == [{"n": n} for n in range(2, 12)]
        listener.publish_now(table_channel(1), {"n": 12})
        subscription.offer({"reply": "after 12"})
        assert [await receive(subscription) for _ in range(2)] == [{"n": 12}, {"reply": "after 12"}]
        assert listener.reconnects == publisher.reconnects == 0
        assert publisher.lost == listener.lost == 0
    finally:
        await listener.close()
        await publisher.close()
        await asyncio.to_thread(cluster.stop)
