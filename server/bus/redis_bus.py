"""The Redis bus: the events of every table reach every node, each node fans them out locally.

A node keeps two connections to Redis: one publishes, one is subscribed to each channel some
local subscription wants (``SUBSCRIBE`` on the first, ``UNSUBSCRIBE`` after the last). A
message from Redis is decoded once (orjson) and offered to the bounded queue of every local
subscription of its channel, exactly as :class:`~server.bus.memory.MemoryBus` does: a subscriber
that falls behind is dropped, and a subscription only ever sees the channels it asked for.

Ordering, as on the memory bus:

- Publishes made during one event-loop tick leave together, in one pipeline; while a
  pipeline is on the wire the next one gathers, so batches grow with the load.
- A batch leaves only once Redis has confirmed every ``SUBSCRIBE`` asked for before it, so a
  websocket that watches a table and then asks its actor for a snapshot sees every event
  after the snapshot.
- A frame a node queues straight into a subscription (:meth:`Subscription.offer
  <server.bus.memory.Subscription.offer>`: a command's reply) waits until the messages this node
  published before it have come back from Redis: a marker published behind them does the
  telling. A reply still follows the events its command caused.

Redis pub/sub delivers at most once. After a Redis restart or a killed connection the bus
reconnects (backing off up to ``retry_max`` seconds) and subscribes again; publishes made
meanwhile wait (at most ``max_pending``, the oldest dropped and counted in ``lost``) and
leave once every subscription is back. Messages on the wire when a connection broke are lost,
or sent twice if the publishing connection broke mid-batch: clients see the gap (or the
repeat) in the table's ``seq`` and resync.

The URL may carry ``channel_prefix`` (``redis://host:6379/0?channel_prefix=prod:``): pub/sub
ignores the database number, so two deployments (or two test runs) on one Redis keep apart
by prefix; the nodes of one cluster must share it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
import time
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson
from redis.asyncio.connection import AbstractConnection, ConnectionPool
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from server.bus.memory import DEFAULT_QUEUE_SIZE, Delivered, MemoryBus, Subscription
from server.logs import named

log = logging.getLogger(__name__)

_SERIALISE = orjson.OPT_NON_STR_KEYS  # seat numbers key some maps; JSON writes them as strings
_BROKEN = (RedisError, OSError)


def split_url(url: str) -> tuple[str, str]:
    """The Redis URL without our own ``channel_prefix`` query field, and that prefix.

    >>> split_url("redis://r:6379/0?channel_prefix=a:&socket_timeout=3")
    ('redis://r:6379/0?socket_timeout=3', 'a:')
    """
    parts = urlsplit(url)
    fields = parse_qsl(parts.query, keep_blank_values=True)
    prefix = "".join(value for key, value in fields if key == "channel_prefix")
    query = urlencode([(key, value) for key, value in fields if key != "channel_prefix"])
    return urlunsplit(parts._replace(query=query)), prefix


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
        redis_url, prefix = split_url(url)
        self._pool = ConnectionPool.from_url(
            redis_url,
            retry=Retry(NoBackoff(), 0),  # the bus retries on its own terms
            socket_timeout=socket_timeout,
            socket_connect_timeout=socket_timeout,
        )
        # RESP2: pub/sub messages are plain replies (RESP3 would route them to push handlers).
        self._pool.connection_kwargs["protocol"] = 2
        self._prefix = prefix.encode()
        self.max_pending = max_pending
        self.ping_interval = ping_interval
        self.retry_max = retry_max
        # The node's own marker channel: see offer.
        self._marker = self._prefix + f"_bus:{secrets.token_hex(8)}:marker".encode()
        # What is to be published, each with the future told how many nodes heard it (if
        # anybody asked: ``publish_heard``).
        self._pending: deque[tuple[bytes, bytes, asyncio.Future[int] | None]] = deque()
        self._wake = asyncio.Event()  # something is pending
        self._ready = asyncio.Event()  # subscribed to every channel wanted, confirmed
        self._dirty = asyncio.Event()  # the set of wanted channels changed
        self._listener: AbstractConnection | None = None
        self._requested: set[bytes] = set()  # SUBSCRIBEd on the current listener
        self._awaiting = 0  # subscribe confirmations still to come
        self._fresh = False  # a channel is wanted that no SUBSCRIBE has asked for yet
        # Publishes that come back to this node, the last of them confirmed by a marker, and
        # the frames held until a marker: (mark, [(subscription, frame), ...]).
        self._sent_here = 0
        self._confirmed = 0
        self._held: deque[tuple[int, list[tuple[Subscription, dict[str, Any]]]]] = deque()
        self._held_frames = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._sending = False
        self._heard = False  # the listener read something since the watchdog last looked
        self.socket_timeout = socket_timeout
        self._closed = False
        self.lost = 0  # messages dropped because Redis stayed away too long
        self.batches = 0
        self.reconnects = 0
        # Told the seconds of every pipeline, written and confirmed (the node's metrics).
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
            while pending:
                # Again and again: Python 3.11's wait_for (inside redis-py) can swallow one.
                for task in pending:
                    task.cancel()
                _, pending = await asyncio.wait(pending, timeout=0.1)
            self._tasks.clear()
        for _, _, heard in self._pending:
            _tell(heard, 0)  # never sent
        self._release_held()
        await super().close()
        await self._pool.disconnect()

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
            self._enqueue(self._marker, str(mark).encode())
        if self._held_frames > self.max_pending:
            log.warning("redis bus: markers are not coming back; releasing held frames")
            self._release_held()

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

    def _deliver(self, channel: bytes, payload: bytes) -> None:
        if channel == self._marker:
            self._confirm(int(payload))
            return
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
            asyncio.create_task(self._listen_forever(), name="redis-bus-listen"),
            asyncio.create_task(self._sync_forever(), name="redis-bus-subscribe"),
            asyncio.create_task(self._flush_forever(), name="redis-bus-publish"),
        ]

    def _connection(self) -> AbstractConnection:
        """A connection of its own, outside the pool: each has one job and one task."""
        return self._pool.connection_class(**self._pool.connection_kwargs)

    def _enqueue(
        self, channel: bytes, payload: bytes, heard: asyncio.Future[int] | None = None
    ) -> None:
        if len(self._pending) >= self.max_pending:
            _, _, dropped = self._pending.popleft()
            _tell(dropped, 0)
            self.lost += 1
            self._release_held()  # its marker may be the one dropped
        self._pending.append((channel, payload, heard))
        self._wake.set()

    def _wanted(self) -> set[bytes]:
        prefix = self._prefix
        return {prefix + channel.encode() for channel in self._subscribers} | {self._marker}

    def _check_ready(self) -> None:
        if self._listener is not None and self._awaiting == 0 and not self._fresh:
            self._ready.set()

    async def _sync(self, connection: AbstractConnection) -> None:
        """Bring the listener's subscriptions in line with the local subscriptions."""
        if connection is not self._listener:
            return
        wanted = self._wanted()
        new, gone = wanted - self._requested, self._requested - wanted
        self._requested, self._fresh = wanted, False
        self._awaiting += len(new)
        # State first, then the awaits: the listener may replace the connection meanwhile.
        if new:
            await connection.send_command("SUBSCRIBE", *new, check_health=False)
        if gone:
            await connection.send_command("UNSUBSCRIBE", *gone, check_health=False)
        self._check_ready()

    async def _sync_forever(self) -> None:
        while not self._closed:
            await self._dirty.wait()
            self._dirty.clear()
            listener = self._listener
            if listener is not None:
                with contextlib.suppress(*_BROKEN):  # the listener sees it and reconnects
                    await self._sync(listener)

    async def _listen_forever(self) -> None:
        delay = 0.05
        first = True
        while not self._closed:
            connection = self._connection()
            try:
                await connection.connect()  # type: ignore[no-untyped-call]
                self._listener, self._requested, self._awaiting = connection, set(), 0
                if not first:
                    self.reconnects += 1
                    log.info("redis bus: reconnected; subscribing again")
                    if self._held:
                        # Messages published before the break may never come back: this
                        # marker, sent after the new subscriptions, frees what waits on them.
                        self._enqueue(self._marker, str(self._sent_here).encode())
                first = False
                await self._sync(connection)
                delay = 0.05
                await self._listen(connection)
            except _BROKEN as error:
                log.warning("redis bus: subscriber connection lost (%s); retrying", named(error))
            except Exception:  # noqa: BLE001 - a bug must not end the bus: start over
                log.exception("redis bus: the subscriber failed; reconnecting")
            finally:
                self._listener = None
                self._ready.clear()
                with contextlib.suppress(*_BROKEN):
                    await connection.disconnect(nowait=True)
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.retry_max)

    async def _listen(self, connection: AbstractConnection) -> None:
        watchdog = asyncio.create_task(self._watch(connection), name="redis-bus-watchdog")
        try:
            while True:
                # No timer per read (they cost more than the read): the watchdog pings.
                reply = await connection.read_response(timeout=math.inf)
                self._heard = True
                self._dispatch(reply)
        finally:
            watchdog.cancel()

    async def _watch(self, connection: AbstractConnection) -> None:
        """PING a quiet listener; one that stays quiet a whole interval after is cut off,
        which ends its read and has the listener reconnect."""
        pinged = False
        while True:
            self._heard = False
            await asyncio.sleep(self.ping_interval)
            if self._heard:
                pinged = False
            elif not pinged:
                pinged = True
                with contextlib.suppress(*_BROKEN):
                    await connection.send_command("PING", check_health=False)
            else:
                log.warning("redis bus: no answer to PING; reconnecting")
                await connection.disconnect(nowait=True)
                return

    def _dispatch(self, reply: Any) -> None:
        kind = reply[0]
        if kind == b"message":
            self._deliver(reply[1], reply[2])
        elif kind == b"subscribe":
            self._awaiting -= 1
            if self._awaiting == 0:
                self._check_ready()

    async def _flush_forever(self) -> None:
        connection = self._connection()
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
                    await self._send(connection, batch)
                    delay = 0.05
                except Exception as error:  # noqa: BLE001 - keep the batch, try again
                    log.warning("redis bus: publishing failed (%r); retrying", error)
                    self._pending.extendleft(reversed(batch))
                    self._wake.set()
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, self.retry_max)
                finally:
                    self._sending = False
        finally:
            with contextlib.suppress(*_BROKEN):
                await connection.disconnect(nowait=True)

    async def _send(
        self,
        connection: AbstractConnection,
        batch: list[tuple[bytes, bytes, asyncio.Future[int] | None]],
    ) -> None:
        """One pipeline: every PUBLISH written at once, then every answer read (one timeout
        for them all: a timer per answer cost more than the rest of the read)."""
        started = time.perf_counter()
        await connection.send_packed_command(
            b"".join([_publish_command(channel, payload) for channel, payload, _ in batch]),
            check_health=False,
        )
        async with asyncio.timeout(self.socket_timeout):
            for _, _, heard in batch:
                listeners = await connection.read_response(timeout=math.inf)
                _tell(heard, listeners)
        self.batches += 1
        if self.on_published is not None:
            self.on_published(time.perf_counter() - started)


def _tell(heard: asyncio.Future[int] | None, listeners: Any) -> None:
    """Tell whoever awaits a publish how many nodes it reached."""
    if heard is not None and not heard.done():
        heard.set_result(listeners if isinstance(listeners, int) else 0)


def _publish_command(channel: bytes, payload: bytes) -> bytes:
    """``PUBLISH channel payload`` in the Redis protocol (RESP), without redis-py's packer."""
    return b"*3\r\n$7\r\nPUBLISH\r\n$%d\r\n%b\r\n$%d\r\n%b\r\n" % (
        len(channel),
        channel,
        len(payload),
        payload,
    )
