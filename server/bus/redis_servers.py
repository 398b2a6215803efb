"""The Redis servers under the bus (:mod:`server.bus.redis_bus`): which one carries which
channel, the connections to each and the commands they carry; when and what to send is the bus's.

Names on a Redis Cluster: a channel's slot is that of its hash tag, the part in braces. Every
name of one table holds ``table:{<id>}`` (:func:`~server.bus.memory.table_tag`): its event
channels (``table:{7}``, ``table:{7}:player:ann``), its command channel and its lease key
(``server.cardroom.cluster``) share a slot, so one master carries all of a table's traffic
and the tables spread over the masters. Other channels (a node's replies and orders, the
lobby, a connection's own) are hashed whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from typing import Any

from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import AbstractConnection, ConnectionPool
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot
from redis.exceptions import AskError, ClusterDownError, RedisError, ResponseError, TryAgainError

from server.bus.redis_url import RedisTarget

log = logging.getLogger(__name__)

BROKEN = (RedisError, OSError)
# A master's answers to a sharded command while the cluster's slots move (MOVED is an
# AskError): ask the cluster for its slots again, then send again.
_MOVING = (AskError, TryAgainError, ClusterDownError)

# What waits to be published: the channel (None: this node's marker, the payload its mark),
# the message, and the future told how many nodes heard it (if anybody asked).
Entry = tuple[bytes | None, bytes, asyncio.Future[int] | None]


class RedisServer:
    """One Redis server of the bus (the Redis, or one master of a Redis Cluster): the
    connection subscribed to the channels that live there, the one publishing to them, and
    this node's marker channel there."""

    def __init__(self, name: str, connect: Callable[[], AbstractConnection]) -> None:
        self.name = name
        self.connect = connect  # a new connection of its own (see RedisServers)
        self.marker = b""
        self.listener: AbstractConnection | None = None
        self.publisher: AbstractConnection | None = None
        self.requested: set[bytes] = set()  # subscribed on the current listener
        self.awaiting = 0  # subscribe confirmations still to come
        self.marks: deque[int] = deque()  # the marks of the markers sent here, not back yet
        self.unmarked = False  # something was sent here since the last marker
        self.heard = False  # the listener read something since the watchdog last looked
        self.task: asyncio.Task[None] | None = None  # its listener's

    async def watch(self, connection: AbstractConnection, interval: float) -> None:
        """PING a quiet listener; one that stays quiet a whole interval after is cut off,
        which ends its read and has the listener reconnect. What the listener heard is
        forgotten only once seen here: a PONG read before this task wakes from sending the
        PING still counts (forgetting it after the send cut off busy nodes whose Redis
        answered at once)."""
        pinged = False
        self.heard = False
        while True:
            await asyncio.sleep(interval)
            if self.heard:
                self.heard = pinged = False
            elif not pinged:
                pinged = True
                with contextlib.suppress(*BROKEN):
                    await connection.send_command("PING", check_health=False)
            else:
                log.warning("redis bus: no answer to PING from %s; reconnecting", self.name)
                await connection.disconnect(nowait=True)
                return


class RedisServers:
    """The servers of one bus by name, and each channel's: on one Redis the one server, on a
    Redis Cluster each master as the cluster last told (:meth:`apply_slots`)."""

    def __init__(
        self, target: RedisTarget, prefix: bytes, token: str, socket_timeout: float
    ) -> None:
        self.prefix = prefix
        self.token = token
        self.by_name: dict[str, RedisServer] = {}
        self.pool: ConnectionPool | None = None
        self.cluster: RedisCluster | None = None
        # On a cluster, each hash slot's master (empty until the cluster has told); None on
        # one Redis, where every channel lives on the one server.
        self.slots: list[RedisServer] | None = None
        self.owners: list[str] = []  # on a cluster, each hash slot's master's name
        if target.cluster:
            self.cluster = RedisCluster.from_url(
                target.url, socket_timeout=socket_timeout, socket_connect_timeout=socket_timeout
            )
            self.slots = []
            self.verbs = (b"SSUBSCRIBE", b"SUNSUBSCRIBE", b"smessage", b"ssubscribe")
            self.publish_head = b"*3\r\n$8\r\nSPUBLISH\r\n"
        else:
            self.pool = ConnectionPool.from_url(
                target.url,
                retry=Retry(NoBackoff(), 0),  # the bus retries on its own terms
                socket_timeout=socket_timeout,
                socket_connect_timeout=socket_timeout,
            )
            # RESP2: pub/sub messages are plain replies (RESP3 would route them to push handlers).
            self.pool.connection_kwargs["protocol"] = 2
            only = RedisServer("redis", self._pool_connection)
            only.marker = prefix + f"_bus:{token}:marker".encode()
            self.by_name[only.name] = only
            self.verbs = (b"SUBSCRIBE", b"UNSUBSCRIBE", b"message", b"subscribe")
            self.publish_head = b"*3\r\n$7\r\nPUBLISH\r\n"

    def _pool_connection(self) -> AbstractConnection:
        """A connection of its own, outside the pool: each has one job and one task."""
        assert self.pool is not None
        return self.pool.connection_class(**self.pool.connection_kwargs)

    def server_of(self, channel: bytes) -> RedisServer:
        """The server a channel lives on (on a cluster, its slot's master)."""
        slots = self.slots
        if slots is None:
            return next(iter(self.by_name.values()))
        return slots[key_slot(channel)]

    def shares(self, wanted: set[bytes]) -> dict[RedisServer, set[bytes]]:
        """The channels ``wanted``, by the server each lives on, with its marker."""
        if self.slots is None:
            (only,) = self.by_name.values()
            return {only: wanted | {only.marker}}
        shares: dict[RedisServer, set[bytes]] = {s: {s.marker} for s in self.by_name.values()}
        slots = self.slots
        for channel in wanted:
            shares[slots[key_slot(channel)]].add(channel)
        return shares

    def update(self, server: RedisServer, share: set[bytes]) -> tuple[set[bytes], set[bytes]]:
        """What ``server``'s listener is to subscribe to now, and to unsubscribe from; its
        state is brought up to date at once (the sends come after: see ``RedisBus._sync``)."""
        new, gone = share - server.requested, server.requested - share
        if self.slots is not None:
            # A channel whose slot went to another master: that one unsubscribed it already.
            gone = {channel for channel in gone if self.server_of(channel) is server}
        server.requested = share
        server.awaiting += len(new)
        return new, gone

    async def send_subscriptions(
        self, connection: AbstractConnection, new: set[bytes], gone: set[bytes]
    ) -> None:
        """Subscribe a listener to ``new`` and unsubscribe it from ``gone``."""
        subscribe, unsubscribe = self.verbs[:2]
        if self.slots is None:
            commands = [(subscribe, *new)] if new else []
            commands += [(unsubscribe, *gone)] if gone else []
        else:
            # One slot a command (more would be refused: CROSSSLOT).
            commands = [(subscribe, *group) for group in _by_slot(new)]
            commands += [(unsubscribe, *group) for group in _by_slot(gone)]
        if commands:
            await connection.send_packed_command(
                connection.pack_commands(commands), check_health=False
            )

    async def pipeline(
        self, server: RedisServer, batch: list[Entry], indices: list[int], timeout: float
    ) -> list[int]:
        """Every publish of ``indices`` written at once, then every answer read (one timeout
        for them all: a timer per answer cost more than the rest of the read). Those a master
        refused as no longer its own (MOVED), to send again."""
        connection = server.publisher
        if connection is None:
            connection = server.publisher = server.connect()
        head, marker = self.publish_head, server.marker
        moved = []
        try:
            await connection.send_packed_command(
                b"".join(
                    [_publish_command(head, batch[i][0] or marker, batch[i][1]) for i in indices]
                ),
                check_health=False,
            )
            async with asyncio.timeout(timeout):
                for index in indices:
                    try:
                        listeners = await connection.read_response(timeout=math.inf)
                    except _MOVING:
                        moved.append(index)
                        continue
                    except ResponseError as error:
                        log.warning("redis bus: %s refused a publish (%s)", server.name, error)
                        listeners = 0
                    tell(batch[index][2], listeners)
        except BaseException:
            # Answers may still be on their way: a connection read from the middle lies.
            await hang_up(connection)
            raise
        return moved

    async def ask_cluster(self) -> dict[int, list[ClusterNode]]:
        """The cluster's slots as it tells them now: each slot's nodes, its master first."""
        assert self.cluster is not None
        await self.cluster.nodes_manager.initialize()
        return self.cluster.nodes_manager.slots_cache

    def apply_slots(self, slots_cache: dict[int, list[ClusterNode]]) -> list[RedisServer] | None:
        """Each slot's master as the cluster tells it: a server for each new master, with this
        node's marker channel on each; None if no slot changed master, else the servers gone."""
        masters = [slots_cache[slot][0] for slot in range(REDIS_CLUSTER_HASH_SLOTS)]
        owners = [master.name for master in masters]
        if owners == self.owners:
            return None
        self.owners = owners
        nodes = {master.name: master for master in masters}
        gone = [server for name, server in self.by_name.items() if name not in nodes]
        servers = {
            name: self.by_name.get(name) or RedisServer(name, _node_connection(node))
            for name, node in nodes.items()
        }
        self.by_name = servers
        self.slots = [servers[name] for name in owners]
        for server in servers.values():
            if not server.marker or self.server_of(server.marker) is not server:
                server.marker = self._marker_on(server)
        return gone

    def _marker_on(self, server: RedisServer) -> bytes:
        """This node's marker channel on ``server``: hash-tagged into one of its slots."""
        for number in itertools.count():
            tag = str(number).encode()
            if self.server_of(tag) is server:
                return self.prefix + b"_bus:%b:marker:{%b}" % (self.token.encode(), tag)
        raise AssertionError("unreachable")

    async def close(self) -> None:
        """Let go of the pool (one Redis) or of the cluster's client."""
        if self.pool is not None:
            await self.pool.disconnect()
        if self.cluster is not None:
            await self.cluster.aclose()


def _node_connection(node: ClusterNode) -> Callable[[], AbstractConnection]:
    """A maker of connections of the bus's own to ``node`` (its TLS, password and timeouts
    as the URL says), RESP2, never retried by redis-py."""
    kwargs = {**node.connection_kwargs, "protocol": 2, "retry": Retry(NoBackoff(), 0)}
    return lambda: node.connection_class(**kwargs)


def _by_slot(channels: Iterable[bytes]) -> list[list[bytes]]:
    groups: dict[int, list[bytes]] = defaultdict(list)
    for channel in channels:
        groups[key_slot(channel)].append(channel)
    return list(groups.values())


async def hang_up(connection: AbstractConnection | None) -> None:
    """Close ``connection`` (if any) at once, whatever state it is in."""
    if connection is not None:
        with contextlib.suppress(*BROKEN):
            await connection.disconnect(nowait=True)


def tell(heard: asyncio.Future[int] | None, listeners: Any) -> None:
    """Tell whoever awaits a publish how many nodes it reached."""
    if heard is not None and not heard.done():
        heard.set_result(listeners if isinstance(listeners, int) else 0)


def _publish_command(head: bytes, channel: bytes, payload: bytes) -> bytes:
    """``PUBLISH channel payload`` (``head`` holds the verb) in the Redis protocol (RESP),
    without redis-py's packer."""
    return b"%b$%d\r\n%b\r\n$%d\r\n%b\r\n" % (head, len(channel), channel, len(payload), payload)
