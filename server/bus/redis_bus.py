"""The Redis bus: the events of every table reach every node, each node fans them out locally.

A node keeps two connections to each Redis server it uses: one publishes, one is subscribed to
each channel some local subscription wants that lives there (``SUBSCRIBE`` on the first,
``UNSUBSCRIBE`` after the last). On one Redis that is one server. On a Redis Cluster
(``?cluster=yes`` in the URL) it is every master, and the bus uses sharded pub/sub: a channel
lives on the master owning its hash slot, which alone hears its ``SSUBSCRIBE`` and its
``SPUBLISH`` (a message never crosses the cluster bus, so the masters share the load). A
message from Redis is decoded once (orjson) and offered to the bounded queue of every local
subscription of its channel, exactly as :class:`~server.bus.memory.MemoryBus` does: a subscriber
that falls behind is dropped, and a subscription only ever sees the channels it asked for.

Ordering, as on the memory bus:

- Publishes made during one event-loop tick leave together, in one pipeline to each server
  they go to; while the pipelines are on the wire the next batch gathers, so batches grow
  with the load. A channel's messages keep their order (one server, one connection).
- A batch leaves only once Redis has confirmed every ``SUBSCRIBE`` asked for before it, on
  every server, so a websocket that watches a table and then asks its actor for a snapshot
  (whichever master the request goes through) sees every event after the snapshot.
- A frame a node queues straight into a subscription (:meth:`Subscription.offer
  <server.bus.memory.Subscription.offer>`: a command's reply) waits until the messages this node
  published before it have come back from Redis: a marker published behind them does the
  telling, one on each server they went to. A server hands what one connection published to
  it to a subscriber in order, whatever the channels, so each node has a marker channel on
  every server (on a cluster, one in a slot of that master) and the frame goes once every
  marker behind it is back. A reply still follows the events its command caused.

Names on a Redis Cluster (which master carries which channel): :mod:`server.bus.redis_servers`.

Redis pub/sub delivers at most once. After a Redis restart or a killed connection the bus
reconnects (backing off up to ``retry_max`` seconds) and subscribes again; on a cluster, when a
master answers ``MOVED`` (a resharding), unsubscribes channels whose slot left it, or is gone
(a failover), the bus asks the cluster for its slots again and subscribes each channel on its
master now. Publishes made meanwhile wait (at most ``max_pending``, the oldest dropped and
counted in ``lost``) and leave once every subscription is back; one a master refused as no
longer its own goes to the new owner. Messages on the wire when a connection broke are lost,
or sent twice if the publishing connection broke mid-batch: clients see the gap (or the
repeat) in the table's ``seq`` and resync.

The URL (:mod:`server.bus.redis_url`) may carry ``channel_prefix``, which keeps deployments on
one Redis apart, and ``cluster=yes``. Which server carries which channel, and the connections
to each, with the commands they carry: :mod:`server.bus.redis_servers`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
import time
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

import orjson
from redis.asyncio.cluster import ClusterNode
from redis.asyncio.connection import AbstractConnection
from redis.crc import key_slot

from server.bus.memory import DEFAULT_QUEUE_SIZE, Delivered, MemoryBus, Subscription
from server.bus.redis_servers import BROKEN, Entry, RedisServer, RedisServers, hang_up, tell
from server.bus.redis_url import split_url
from server.logs import named

log = logging.getLogger(__name__)

_SERIALISE = orjson.OPT_NON_STR_KEYS  # seat numbers key some maps; JSON writes them as strings


class RedisBus(MemoryBus):
    """A :class:`MemoryBus` whose messages travel through Redis: one per node, same interface.

    Make it inside the running event loop; it connects on first use and keeps reconnecting
    until :meth:`close`.
    """

    def __init__(
        self,
        url: str,
        *,
        max_pending: int = 100_000,
        ping_interval: float = 5.0,
        retry_max: float = 2.0,
        socket_timeout: float = 10.0,
    ) -> None:
        super().__init__()
        target = split_url(url)
        self._prefix = target.prefix.encode()
        self._redis = RedisServers(
            target, self._prefix, secrets.token_hex(8), socket_timeout=socket_timeout
        )
        self.max_pending = max_pending
        self.ping_interval = ping_interval
        self.retry_max = retry_max
        self._pending: deque[Entry] = deque()
        self._wake = asyncio.Event()  # something is pending
        self._ready = asyncio.Event()  # subscribed to every channel wanted, confirmed
        self._dirty = asyncio.Event()  # the set of wanted channels changed
        self._refresh = asyncio.Event()  # the cluster's slots are to be asked for again
        self._stale = target.cluster  # the slots known may be wrong: nothing leaves
        self._fresh = False  # a channel is wanted that no SUBSCRIBE has asked for yet
        # Publishes that come back to this node, counted; the frames held until the markers
        # behind them are back: (mark, [(subscription, frame), ...]); the last mark whose
        # frames may go (every publish up to it came back), and the last the publisher sent
        # markers for.
        self._sent_here = 0
        self._confirmed = 0
        self._marked = 0
        self._held: deque[tuple[int, list[tuple[Subscription, dict[str, Any]]]]] = deque()
        self._held_frames = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._sending = False
        self.socket_timeout = socket_timeout
        self._closed = False
        self.lost = 0  # messages dropped because Redis stayed away too long
        self.batches = 0
        self.reconnects = 0
        # Told the seconds of every batch, written and confirmed (the node's metrics).
        self.on_published: Callable[[float], None] | None = None

    # ------------------------------------------------------------------ the interface

    def publish_now(self, channel: str, message: dict[str, Any]) -> None:
        """Queue for the next pipeline without awaiting: the actor's hot path."""
        self._publish(channel, message, None)

    async def publish_heard(self, channel: str, message: dict[str, Any]) -> int:
        """Queue for the next pipeline; the number of nodes subscribed to ``channel`` that
        Redis handed it to (0 as well when it was dropped unsent, Redis away too long)."""
        heard: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._publish(channel, message, heard)
        return await heard

    def _publish(
        self, channel: str, message: dict[str, Any], heard: asyncio.Future[int] | None
    ) -> None:
        if not self._tasks:
            if self._closed:
                if heard is not None:
                    heard.set_result(0)
                return
            self._start()
        self.published += 1
        if channel in self._subscribers:
            self._sent_here += 1
        payload = orjson.dumps(message, option=_SERIALISE)
        self._enqueue(self._prefix + channel.encode(), payload, heard)

    def subscribe(self, *channels: str, size: int = DEFAULT_QUEUE_SIZE) -> Subscription:
        if not self._tasks and not self._closed:
            self._start()
        return super().subscribe(*channels, size=size)

    @property
    def channel_prefix(self) -> str:
        """What this deployment's channels are named with in Redis (the URL's
        ``channel_prefix``): where to look for its subscribers (``PUBSUB NUMSUB``)."""
        return self._prefix.decode()

    @property
    def cluster(self) -> bool:
        """On a Redis Cluster (sharded pub/sub), not one Redis."""
        return self._redis.cluster is not None

    @property
    def servers(self) -> list[str]:
        """The Redis servers the bus uses now (``host:port`` of each master on a cluster)."""
        return sorted(self._redis.by_name)

    @property
    def connected(self) -> bool:
        """Subscribed to every channel wanted here: what a readiness probe asks."""
        return self._ready.is_set()

    async def wait_ready(self, timeout: float | None = None) -> None:
        """Wait until connected and subscribed (raises TimeoutError)."""
        if not self._tasks and not self._closed:
            self._start()
        async with asyncio.timeout(timeout):
            while not self._ready.is_set():
                await self._ready.wait()

    async def close(self, timeout: float = 1.0) -> None:
        """Send what is pending (for ``timeout`` at most), then stop and end every subscription."""
        if self._closed:
            return
        self._closed = True
        if self._tasks:
            try:
                async with asyncio.timeout(timeout):
                    while self._pending or self._sending:
                        await asyncio.sleep(0.001)
            except TimeoutError:
                log.warning("redis bus: closed with %d messages unsent", len(self._pending))
            pending = set(self._tasks)
            pending.update(s.task for s in self._redis.by_name.values() if s.task is not None)
            while pending:
                # Again and again: Python 3.11's wait_for (inside redis-py) can swallow one.
                for task in pending:
                    task.cancel()
                _, pending = await asyncio.wait(pending, timeout=0.1)
            self._tasks.clear()
        for _, _, heard in self._pending:
            tell(heard, 0)  # never sent
        self._release_held()
        await super().close()
        for server in self._redis.by_name.values():
            await hang_up(server.publisher)
        await self._redis.close()

    # ------------------------------------------------------------------ local side

    def attach(self, subscription: Subscription, channel: str) -> None:
        fresh = channel not in self._subscribers
        super().attach(subscription, channel)
        if fresh:
            # The next batch waits for this SUBSCRIBE (see the module docstring).
            self._fresh = True
            self._ready.clear()
            self._dirty.set()

    def detach(self, subscription: Subscription, channel: str) -> None:
        super().detach(subscription, channel)
        if channel not in self._subscribers:
            self._dirty.set()

    def offer(self, subscription: Subscription, message: dict[str, Any]) -> None:
        """Hold a local frame until what this node published before it has come back."""
        held, mark = self._held, self._sent_here
        fresh_mark = not held or held[-1][0] != mark
        if fresh_mark:
            if not held and self._confirmed >= mark:
                subscription.deliver(message)  # nothing of ours in flight
                return
            held.append((mark, []))
        held[-1][1].append((subscription, message))
        self._held_frames += 1
        if fresh_mark:
            self._enqueue(None, str(mark).encode())
        if self._held_frames > self.max_pending:
            log.warning("redis bus: markers are not coming back; releasing held frames")
            self._release_held()

    def _settle(self) -> None:
        """Let go of the frames held on marks every server has answered for: those the
        publisher has sent markers for, below the oldest marker still out anywhere."""
        mark = self._marked
        for server in self._redis.by_name.values():
            if server.marks:
                mark = min(mark, server.marks[0] - 1)
        if mark > self._confirmed:
            self._confirm(mark)

    def _confirm(self, mark: int) -> None:
        self._confirmed = max(self._confirmed, mark)
        held = self._held
        while held and held[0][0] <= mark:
            _, frames = held.popleft()
            self._held_frames -= len(frames)
            for subscription, message in frames:
                subscription.deliver(message)

    def _release_held(self) -> None:
        self._confirm(self._sent_here)

    def _marker_back(self, server: RedisServer, mark: int) -> None:
        marks = server.marks
        while marks and marks[0] <= mark:
            marks.popleft()
        self._settle()

    def _deliver(self, channel: bytes, payload: bytes) -> None:
        subscribers = self._subscribers.get(channel[len(self._prefix) :].decode())
        if not subscribers:
            return  # unsubscribed meanwhile
        try:
            message = Delivered(orjson.loads(payload))
        except (orjson.JSONDecodeError, TypeError, ValueError):
            log.warning("redis bus: not a JSON object on %r; ignored", channel)
            return
        for subscription in tuple(subscribers):
            subscription.deliver(message)

    # ------------------------------------------------------------------ Redis side

    def _start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._sync_forever(), name="redis-bus-subscribe"),
            asyncio.create_task(self._flush_forever(), name="redis-bus-publish"),
        ]
        if self._redis.cluster is not None:
            self._tasks.append(
                asyncio.create_task(self._slots_forever(), name="redis-bus-cluster-slots")
            )
            self._refresh.set()
        for server in self._redis.by_name.values():
            self._listen_to(server)

    def _listen_to(self, server: RedisServer) -> None:
        server.task = asyncio.create_task(
            self._listen_forever(server), name=f"redis-bus-listen-{server.name}"
        )

    def _enqueue(
        self, channel: bytes | None, payload: bytes, heard: asyncio.Future[int] | None = None
    ) -> None:
        if len(self._pending) >= self.max_pending:
            _, _, dropped = self._pending.popleft()
            tell(dropped, 0)
            self.lost += 1
            self._release_held()  # its marker may be the one dropped
        self._pending.append((channel, payload, heard))
        self._wake.set()

    def _check_ready(self) -> None:
        if self._fresh or self._stale or not self._redis.by_name:
            return
        for server in self._redis.by_name.values():
            if server.listener is None or server.awaiting:
                return
        self._ready.set()

    async def _sync(self, only: RedisServer | None = None) -> None:
        """Bring the listeners' subscriptions (or ``only``'s) in line with the local
        subscriptions."""
        if self._stale:
            return  # the cluster's slots are being asked for: then every listener syncs
        prefix = self._prefix
        shares = self._redis.shares({prefix + channel.encode() for channel in self._subscribers})
        sends = []
        # State first, then the awaits: a listener may be replaced meanwhile.
        for server, share in shares.items():
            if (only is None or server is only) and server.listener is not None:
                sends.append((server.listener, *self._redis.update(server, share)))
        if only is None:
            self._fresh = False
        for connection, new, gone in sends:
            with contextlib.suppress(*BROKEN):  # the listener sees it and reconnects
                await self._redis.send_subscriptions(connection, new, gone)
        self._check_ready()

    async def _sync_forever(self) -> None:
        while not self._closed:
            await self._dirty.wait()
            self._dirty.clear()
            await self._sync()

    async def _listen_forever(self, server: RedisServer) -> None:
        delay = 0.05
        first = True
        while not self._closed and self._redis.by_name.get(server.name) is server:
            connection = server.connect()
            try:
                await connection.connect()  # type: ignore[no-untyped-call]
                server.listener, server.requested, server.awaiting = connection, set(), 0
                if not first:
                    self.reconnects += 1
                    log.info("redis bus: reconnected to %s; subscribing again", server.name)
                    # Messages published before the break may never come back: a marker
                    # sent after the new subscriptions frees what waits on them.
                    server.unmarked = True
                    if self._held:
                        self._enqueue(None, str(self._sent_here).encode())
                first = False
                await self._sync(server)
                delay = 0.05
                await self._listen(server, connection)
            except BROKEN as error:
                log.warning(
                    "redis bus: subscriber connection to %s lost (%s); retrying",
                    server.name,
                    named(error),
                )
                self._ask_slots()  # a master gone, or a slot moved
            except Exception:  # noqa: BLE001 - a bug must not end the bus: start over
                log.exception("redis bus: the subscriber failed; reconnecting")
            finally:
                if server.listener is connection:
                    server.listener = None
                if self._redis.by_name.get(server.name) is server:
                    self._ready.clear()
                await hang_up(connection)
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.retry_max)

    async def _listen(self, server: RedisServer, connection: AbstractConnection) -> None:
        watchdog = asyncio.create_task(
            server.watch(connection, self.ping_interval), name=f"redis-bus-watchdog-{server.name}"
        )
        message, subscribed = self._redis.verbs[2:]
        try:
            while True:
                # No timer per read (they cost more than the read): the watchdog pings.
                reply = await connection.read_response(timeout=math.inf)
                server.heard = True
                kind = reply[0]
                if kind == message:
                    if reply[1] == server.marker:
                        self._marker_back(server, int(reply[2]))
                    else:
                        self._deliver(reply[1], reply[2])
                elif kind == subscribed:
                    server.awaiting -= 1
                    if server.awaiting == 0:
                        self._check_ready()
                elif kind == b"sunsubscribe" and reply[1] in server.requested:
                    # Not asked for: the cluster moved the channel's slot to another master.
                    server.requested.discard(reply[1])
                    self._fresh = True
                    self._ask_slots()
                    self._dirty.set()
        finally:
            watchdog.cancel()

    # ------------------------------------------------------------------ publishing

    async def _flush_forever(self) -> None:
        delay = 0.05
        try:
            while not self._closed or self._pending:
                await self._wake.wait()
                while not self._ready.is_set():
                    await self._ready.wait()
                self._wake.clear()
                if not self._pending:
                    continue
                batch = list(self._pending)
                self._pending.clear()
                self._sending = True
                try:
                    again = await self._send(batch)
                    if again:  # kept, in order, for the next batch
                        self._pending.extendleft(reversed(again))
                        self._wake.set()
                        await asyncio.sleep(delay)
                        delay = min(delay * 2, self.retry_max)
                    else:
                        delay = 0.05
                finally:
                    self._sending = False
        finally:
            for server in self._redis.by_name.values():
                await hang_up(server.publisher)

    def _route(self, batch: list[Entry]) -> dict[RedisServer, list[int]]:
        """The batch's entries by the server each goes to (by their place in the batch): a
        message to its channel's, a marker to every server sent something since its last."""
        groups: dict[RedisServer, list[int]] = defaultdict(list)
        servers = self._redis.by_name.values()
        slots = self._redis.slots
        only = next(iter(servers))  # one Redis: every channel's server
        for index, (channel, payload, _) in enumerate(batch):
            if channel is not None:
                server = only if slots is None else slots[key_slot(channel)]
                server.unmarked = True
                groups[server].append(index)
                continue
            mark = int(payload)
            for server in servers:
                if server.unmarked:
                    server.unmarked = False
                    server.marks.append(mark)
                    groups[server].append(index)
            self._marked = max(self._marked, mark)
        return groups

    async def _send(self, batch: list[Entry]) -> list[Entry]:
        """One pipeline to each server the batch goes to, side by side. What is to go again
        (a server away, or no longer the master of a channel's slot), in batch order."""
        started = time.perf_counter()
        groups = self._route(batch)
        self._settle()  # markers that needed sending nowhere
        results: list[list[int] | BaseException]
        if len(groups) == 1:
            ((server, indices),) = groups.items()
            try:
                results = [await self._redis.pipeline(server, batch, indices, self.socket_timeout)]
            except Exception as error:  # noqa: BLE001 - kept, sent again
                results = [error]
        else:
            results = await asyncio.gather(
                *(
                    self._redis.pipeline(server, batch, indices, self.socket_timeout)
                    for server, indices in groups.items()
                ),
                return_exceptions=True,
            )
        again: set[int] = set()
        for (server, indices), result in zip(groups.items(), results, strict=True):
            if isinstance(result, BaseException):
                log.warning(
                    "redis bus: publishing to %s failed (%s); retrying", server.name, named(result)
                )
                failed = indices
            else:
                failed = result
            if failed:
                again.update(failed)
                server.unmarked = True  # a marker follows whatever reached it after all
                self._ask_slots()  # (on a cluster) a master gone, or a slot moved
        if again:
            return [batch[index] for index in sorted(again)]
        self.batches += 1
        if self.on_published is not None:
            self.on_published(time.perf_counter() - started)
        return []

    # ------------------------------------------------------------------ the cluster's slots

    def _ask_slots(self) -> None:
        """The cluster's slots may have moved: nothing leaves until they are known again."""
        if self._redis.cluster is None:
            return
        self._stale = True
        self._ready.clear()
        self._refresh.set()

    async def _slots_forever(self) -> None:
        assert self._redis.cluster is not None
        delay = 0.05
        while not self._closed:
            await self._refresh.wait()
            self._refresh.clear()
            try:
                await self._apply_slots(await self._redis.ask_cluster())
            except Exception as error:  # noqa: BLE001 - the cluster away, or moving: ask again
                log.warning(
                    "redis bus: the cluster's slots are not known (%s); asking again", named(error)
                )
                self._refresh.set()
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.retry_max)
                continue
            delay = 0.05
            if not self._refresh.is_set():
                self._stale = False
                self._dirty.set()  # every channel subscribed where it lives now

    async def _apply_slots(self, slots_cache: dict[int, list[ClusterNode]]) -> None:
        """Each slot's master as the cluster tells it: a listener for each new master, gone
        for each master gone; every channel subscribed again where it lives."""
        gone = self._redis.apply_slots(slots_cache)
        if gone is None:
            return
        servers = self._redis.by_name
        for server in gone:
            # What was sent there and not back may never come: the frames held on it wait
            # for the markers that follow (below), behind whatever goes again elsewhere (the
            # publisher puts back what a master refused or did not answer, ahead of them).
            if server.marks:
                self._marked = min(self._marked, server.marks[0] - 1)
            if server.task is not None:
                server.task.cancel()
        for server in servers.values():
            if server.task is None:
                self._listen_to(server)
        if self._held:
            self._enqueue(None, str(self._sent_here).encode())
        self._fresh = True
        self._ready.clear()
        self._dirty.set()
        log.info("redis bus: the cluster's masters: %s", ", ".join(sorted(servers)))
        for server in gone:
            await hang_up(server.publisher)
