"""A node's lease round with many tables, against Redis for real: every lease renewed in one
round trip (on a Redis Cluster, one to each master, side by side), a lease another node holds
drops that table alone, a Redis outage keeps the tables while their leases last and then drops
them, and a node opening many tables at once keeps the first ones' leases while it takes the
last. All but the outage run on one Redis and on a Redis Cluster (``redis_base``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from backends import PostgresServer, RedisServer, needs_postgresql, needs_redis, redis_url
from play import wait_for
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import AbstractConnection
from server_helpers import FAST_HASHING
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.bus.memory import MemoryBus
from server.cardroom import supervisor
from server.cardroom.cluster import RedisLeases
from server.cardroom.supervisor import Cardroom
from server.db.session import make_engine, make_sessionmaker
from server.settings import Settings
from server.store import tables

LEASE = 1.0
ROUND = LEASE / 3
# The outage test's own lease: Redis is stopped and started within it, with room to spare on
# a loaded machine (a redis-server process to start again, and the test to tell in time).
OUTAGE_LEASE = 3.0

pytestmark = [needs_redis, needs_postgresql]


class RoundTrips:
    """Counts the times a Redis client writes to Redis and waits for the answer: one per
    command, one per pipeline, whatever its length (on a cluster, one per master a pipeline
    goes to)."""

    def __init__(self, leases: RedisLeases, monkeypatch: pytest.MonkeyPatch | None = None) -> None:
        self.count = 0
        self.leases = leases
        client = leases.redis
        if isinstance(client, RedisCluster):
            # Its connections to each master are made as they are needed: count them all.
            assert monkeypatch is not None, "a cluster's trips are counted on every connection"
            send = AbstractConnection.send_packed_command

            async def counting(connection: AbstractConnection, *a: Any, **k: Any) -> None:
                if any(connection in node._connections for node in client.get_nodes()):
                    self.count += 1
                await send(connection, *a, **k)

            monkeypatch.setattr(AbstractConnection, "send_packed_command", counting)
            return
        pool = client.connection_pool
        get_connection = pool.get_connection

        async def counted(*args: Any, **kwargs: Any) -> Any:
            connection = await get_connection(*args, **kwargs)
            if not getattr(connection, "counted", False):
                send = connection.send_packed_command

                async def sending(*a: Any, **k: Any) -> None:
                    self.count += 1
                    await send(*a, **k)

                connection.send_packed_command = sending  # type: ignore[method-assign]
                connection.counted = True  # type: ignore[attr-defined]
            return connection

        pool.get_connection = counted  # type: ignore[method-assign]

    def masters(self, table_ids: list[int]) -> int:
        """How many Redis servers hold these tables' leases: what one round trip takes."""
        client = self.leases.redis
        if not isinstance(client, RedisCluster):
            return 1
        return len({client.get_node_from_key(self.leases.key(t)).name for t in table_ids})


@pytest.fixture
async def sessionmaker(
    postgres_server: PostgresServer,
) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    """PostgreSQL, as the nodes of a cardroom on Redis share it."""
    engine = make_engine(postgres_server.fresh())
    yield make_sessionmaker(engine)
    await engine.dispose()


async def open_tables(sessionmaker: async_sessionmaker[AsyncSession], count: int) -> list[int]:
    async with sessionmaker() as session:
        made = [
            await tables.create(session, name=f"T{n}", config={}, min_buy_in=20, max_buy_in=500)
            for n in range(count)
        ]
        await session.commit()
        return [record.id for record in made]


def node(
    sessionmaker: async_sessionmaker[AsyncSession],
    leases: RedisLeases,
    postgres_url: str,
    lease: float = LEASE,
) -> Cardroom:
    settings = Settings(
        database_url=postgres_url,
        node_id=leases.node_id,
        lease_seconds=lease,
        pause_between_hands_seconds=0,
        action_clock_seconds=30,
        **FAST_HASHING,
    )
    return Cardroom(
        bus=MemoryBus(),
        sessionmaker=sessionmaker,
        settings=settings,
        seal=settings.deck_seal(),
        leases=leases,
    )


class Rounds:
    """The node's lease rounds as they happen: the Redis round trips each took."""

    def __init__(self, room: Cardroom, trips: RoundTrips) -> None:
        self.trips: list[int] = []
        self.every = room.settings.lease_seconds / 3
        renew_leases = room.lease_rounds.renew_leases

        async def counted() -> None:
            before = trips.count
            try:
                await renew_leases()
            finally:
                self.trips.append(trips.count - before)

        room.lease_rounds.renew_leases = counted  # type: ignore[method-assign]

    async def next(self, count: int = 1) -> list[int]:
        """The round trips of the next ``count`` rounds."""
        start = len(self.trips)
        await wait_for(lambda: len(self.trips) >= start + count, timeout=count * self.every + 5)
        return self.trips[start : start + count]


def url_of(sessionmaker: async_sessionmaker[AsyncSession]) -> str:
    return str(sessionmaker.kw["bind"].url.render_as_string(hide_password=False))


@pytest.fixture
def dropped(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.WARNING, logger="server.cardroom.supervisor")
    yield caplog


def drops(caplog: pytest.LogCaptureFixture) -> dict[int, str]:
    """Each table the node stopped running, and why."""
    found = {}
    for record in caplog.records:
        if "no longer run by node" in record.getMessage():
            found[record.args[0]] = str(record.args[2])  # type: ignore[index]
    return found


async def test_fifty_tables_leases_are_renewed_in_one_round_trip_a_round(
    sessionmaker: async_sessionmaker[AsyncSession],
    dropped: pytest.LogCaptureFixture,
    redis_base: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table_ids = await open_tables(sessionmaker, 50)
    url = redis_url(redis_base)
    leases, thief = RedisLeases(url, "a", LEASE), RedisLeases(url, "b", LEASE)
    trips = RoundTrips(leases, monkeypatch)
    room = node(sessionmaker, leases, url_of(sessionmaker))
    rounds = Rounds(room, trips)
    try:
        await room.start()
        assert sorted(room.running_tables()) == table_ids
        await rounds.next()  # the connections made (their handshakes are trips of their own)
        started = time.monotonic()
        masters = trips.masters(table_ids)  # 1, or every master of the cluster
        assert masters == (3 if "cluster=yes" in url else 1)
        assert await rounds.next(3) == [masters] * 3, "one pipeline a round, whatever the tables"
        for table_id in table_ids:
            lease = room.running_tables()[table_id].lease
            assert lease.renewed > started and lease.holds()
            assert await leases.holder(table_id) == "a"
        ttl = await leases.redis.pttl(leases.key(table_ids[-1]))
        # Four rounds since it was taken, more than a lease: never renewed, it had lapsed.
        assert ttl > 0, "the last table's lease was renewed too"

        # Another node holds one table's lease now (a lapse and a take it won): that table
        # alone is dropped, and its lease is left to the node holding it.
        stolen = table_ids[17]
        await rounds.next()  # just after a round: none comes between the lapse and the take
        await leases.redis.delete(leases.key(stolen))
        assert await thief.acquire(stolen)
        table = room.running_tables()[stolen]
        await rounds.next()
        await wait_for(lambda: not room.runs(stolen))
        assert table.actor.taken_over and not table.lease.holds()
        assert drops(dropped) == {stolen: "another node holds the lease"}
        assert await thief.holder(stolen) == "b"
        assert await rounds.next(2) == [masters] * 2
        assert sorted(room.running_tables()) == [t for t in table_ids if t != stolen]
        assert all(table.lease.holds() for table in room.running_tables().values())
    finally:
        await room.stop()
        await leases.close()
        await thief.close()


async def test_tables_outlive_a_short_redis_outage_and_are_dropped_after_a_long_one(
    sessionmaker: async_sessionmaker[AsyncSession],
    dropped: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    """Redis away: each table runs on while its lease lasts. Back within the lease (empty:
    restarted, its scripts gone), the next round takes every lease again and nothing was
    dropped. Away past 0.9 of a lease, every table is dropped, naming the error."""
    lease, every = OUTAGE_LEASE, OUTAGE_LEASE / 3
    redis = RedisServer(tmp_path)
    redis.start()
    table_ids = await open_tables(sessionmaker, 20)
    leases = RedisLeases(redis.url, "a", lease)
    room = node(sessionmaker, leases, url_of(sessionmaker), lease)
    rounds = Rounds(room, RoundTrips(leases))
    try:
        await room.start()
        await rounds.next(2)
        redis.stop()  # just after a round: the leases were renewed a moment ago
        down = time.monotonic()
        await asyncio.sleep(0.4 * lease)
        assert sorted(room.running_tables()) == table_ids, "kept while the lease lasts"
        assert all(table.lease.holds() for table in room.running_tables().values())
        redis.start()
        assert time.monotonic() - down < 0.9 * lease, "the machine was too slow to tell"
        back = time.monotonic()
        await rounds.next(2)
        assert sorted(room.running_tables()) == table_ids and not drops(dropped)
        for table_id in table_ids:
            assert room.running_tables()[table_id].lease.renewed > back
            assert await leases.holder(table_id) == "a", "its lease set again"

        redis.stop()
        down = time.monotonic()
        last = max(table.lease.renewed for table in room.running_tables().values())
        await wait_for(lambda: not room.running_tables(), timeout=lease + 2 * every + 2)
        gone = time.monotonic()
        assert gone - last > 0.9 * lease, "dropped before 0.9 of a lease had passed"
        assert gone - down < lease + every + 1.5, "not dropped until well past the lease"
        why = drops(dropped)
        assert sorted(why) == table_ids
        assert all(
            w.startswith("the lease could not be renewed (ConnectionError") for w in why.values()
        ), why
    finally:
        await room.stop()
        await leases.close()
        redis.stop()


async def test_a_node_opening_many_tables_keeps_the_first_ones_leases_meanwhile(
    sessionmaker: async_sessionmaker[AsyncSession],
    dropped: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    redis_base: str,
) -> None:
    """Taking a table waits on the database; a node taking thirty (a restart, a burst of new
    tables) takes longer than a lease. Its rounds renew the tables taken while it takes the
    rest: none of their leases lapses, none is dropped, and all of them run."""
    table_ids = await open_tables(sessionmaker, 30)
    leases = RedisLeases(redis_url(redis_base), "a", LEASE)
    room = node(sessionmaker, leases, url_of(sessionmaker))
    build = supervisor.build_actor

    async def slow_build(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(LEASE / 15)  # a database slow to answer: 2 leases in all
        return await build(*args, **kwargs)

    monkeypatch.setattr(supervisor, "build_actor", slow_build)
    lapsed: set[int] = set()

    async def watch() -> None:
        while True:
            lapsed.update(
                t for t, table in room.running_tables().items() if not table.lease.holds()
            )
            await asyncio.sleep(0.01)

    watching = asyncio.create_task(watch())
    try:
        started = time.monotonic()
        await room.start()
        assert time.monotonic() - started > 1.5 * LEASE
        assert sorted(room.running_tables()) == table_ids
        await asyncio.sleep(ROUND)
        assert not lapsed, f"leases lapsed while the node opened its tables: {sorted(lapsed)}"
        assert not drops(dropped)
        for table_id in table_ids[:3]:
            assert await leases.holder(table_id) == "a"
    finally:
        watching.cancel()
        await room.stop()
        await leases.close()
