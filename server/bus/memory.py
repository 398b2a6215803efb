"""The bus: fan-out of table events to every subscriber of a channel.

One interface, backends chosen by URL (:func:`server.bus.backends.bus_from_url`):
``memory://`` for one process, ``redis://`` (``server.bus.redis_bus``: one Redis, or a Redis
Cluster) for several nodes.
Every subscription has a bounded queue: a subscriber that falls behind is cut off (its
``dropped`` flag set and its iterator ended) rather than slowing the table down; its client
resyncs from a snapshot.

Channels are plain strings: ``table:{<id>}`` carries a table's public events,
``table:{<id>}:player:<player>`` the events only that player may see, and
``table:{<id>}:to:<listener>`` what the table answers one listener (the braces: see
:func:`table_tag`). A tournament's events go on ``tournament:{<id>}`` (what everyone
following it hears) and ``player:{<player>}:tournaments`` (a player's own, in any tournament).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Any, Protocol

DEFAULT_QUEUE_SIZE = 1024


def table_tag(table_id: int) -> str:
    """``table:{<id>}``: how every Redis name of one table begins (its channels, here and in
    ``server.cardroom.cluster``, and its lease key). On a Redis Cluster the braces are a hash
    tag, the only part hashed: all of them sit in one slot, on one master."""
    return f"table:{{{table_id}}}"


def table_channel(table_id: int) -> str:
    return table_tag(table_id)


def player_channel(table_id: int, player: str) -> str:
    return f"{table_tag(table_id)}:player:{player}"


def tournament_requests_channel(tournament_id: int) -> str:
    """Where a tournament's director is woken: a request filed for it, on any node."""
    return f"tournament:{{{tournament_id}}}:requests"


def table_reply_channel(table_id: int, listener: str) -> str:
    """Where the table answers one listener alone (a connection's snapshot, a node's command
    replies), in line with the table's events: on a Redis Cluster only the messages of one
    slot keep their order, so this one is in the table's slot too."""
    return f"{table_tag(table_id)}:to:{listener}"


def tournament_channel(tournament_id: int) -> str:
    """A tournament's events for everyone following it (``server.tournaments.announcer``)."""
    return f"tournament:{{{tournament_id}}}"


def player_tournaments_channel(player: str) -> str:
    """A player's own tournament events, whichever tournament: every signed-in websocket of
    the player hears them, on any node."""
    return f"player:{{{player}}}:tournaments"


class Delivered(dict[str, Any]):
    """A message as the bus hands it to every subscriber of its channel: one object for
    all of them, so what is made of it once (its wire text, its websocket frame) serves
    every socket (``server.edge.frames``)."""

    __slots__ = ("frame", "wire")

    def __init__(self, message: dict[str, Any]) -> None:
        super().__init__(message)
        self.wire: str | None = None
        self.frame: bytes | None = None


class Mailbox:
    """A subscription's bounded queue, read by one task.

    Every event goes into one of these for every socket that shows it, so its cost is
    paid a dozen times an action. ``asyncio.Queue`` serves any number of readers and
    writers and pays for that on each put and get (its waiters, its count of unfinished
    tasks); here a deque and the one reader's waiting future do, and the reader takes
    what is queued in one call rather than asking ``empty()`` before each message.
    """

    __slots__ = ("_items", "_size", "_waiter")

    def __init__(self, size: int) -> None:
        self._items: deque[dict[str, Any] | None] = deque()
        self._size = size
        self._waiter: asyncio.Future[None] | None = None

    def empty(self) -> bool:
        return not self._items

    def put_nowait(self, message: dict[str, Any] | None) -> None:
        """Queue ``message``; raise ``asyncio.QueueFull`` when the queue is full."""
        if len(self._items) >= self._size:
            raise asyncio.QueueFull
        self._items.append(message)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def get_nowait(self) -> dict[str, Any] | None:
        """The first message queued; raise ``asyncio.QueueEmpty`` when there is none."""
        if not self._items:
            raise asyncio.QueueEmpty
        return self._items.popleft()

    async def _wait(self) -> None:
        while not self._items:
            if self._waiter is not None:
                raise RuntimeError("a subscription is read by one task at a time")
            waiter = asyncio.get_running_loop().create_future()
            self._waiter = waiter
            try:
                await waiter
            finally:
                if self._waiter is waiter:  # cancelled while waiting
                    self._waiter = None

    async def get(self) -> dict[str, Any] | None:
        await self._wait()
        return self._items.popleft()

    async def get_many(self, limit: int) -> list[dict[str, Any] | None]:
        """Wait for a message, then take it and those queued behind it (at most ``limit``)."""
        await self._wait()
        items = self._items
        if len(items) <= limit:
            taken = list(items)
            items.clear()
            return taken
        return [items.popleft() for _ in range(limit)]


class Subscription:
    """A bounded queue of messages from one or more channels."""

    def __init__(self, bus: MemoryBus, channels: set[str], size: int) -> None:
        self._bus = bus
        self.channels = channels
        self.queue = Mailbox(size)
        self.dropped = False
        self.closed = False
        self._ended = False  # the end marker was taken by get_ready

    def offer(self, message: dict[str, Any]) -> None:
        """Queue a frame made on this node behind every message published before it."""
        self._bus.offer(self, message)

    def put_now(self, message: dict[str, Any]) -> None:
        """Queue a frame at once, right behind the messages delivered to this subscription
        so far (a snapshot made of exactly those: ``server.edge.spectators``)."""
        self.deliver(message)

    def deliver(self, message: dict[str, Any]) -> None:
        """The bus hands over a message for this subscription (a full queue cuts it off)."""
        if self.closed:
            return
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            # Too slow: cut it off; the client resyncs from a snapshot.
            self.dropped = True
            self.close()

    def add(self, channel: str) -> None:
        self._bus.attach(self, channel)

    def remove(self, channel: str) -> None:
        self._bus.detach(self, channel)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for channel in list(self.channels):
            self._bus.detach(self, channel)
        try:
            self.queue.put_nowait(None)
        except asyncio.QueueFull:
            # Make room for the end marker: the reader is dropped anyway.
            self.queue.get_nowait()
            self.queue.put_nowait(None)

    async def get(self) -> dict[str, Any] | None:
        """The next message, or None once the subscription is closed."""
        return await self.queue.get()

    async def get_ready(self, limit: int = 256) -> list[dict[str, Any]]:
        """The next message and those queued behind it (at most ``limit``), in order; an
        empty list once the subscription is closed (after what was queued before)."""
        if self._ended:
            return []
        batch = await self.queue.get_many(limit)
        if batch[-1] is None:  # the end marker is always the last thing queued
            self._ended = True
            batch.pop()
        return batch  # type: ignore[return-value]  # None only ever came last

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[dict[str, Any]]:
        while True:
            message = await self.queue.get()
            if message is None:
                return
            yield message


class Bus(Protocol):
    """What the cardroom asks of a bus, whichever backend: :class:`MemoryBus` and
    :class:`~server.bus.redis_bus.RedisBus` (:func:`~server.bus.backends.bus_from_url`
    returns either). Code outside the backends is typed against this, never against a
    backend."""

    async def publish(self, channel: str, message: dict[str, Any]) -> None:
        """Deliver ``message`` to every subscription of ``channel``."""

    def publish_now(self, channel: str, message: dict[str, Any]) -> None:
        """The same, without awaiting (the actors' hot path); order is kept."""

    async def publish_heard(self, channel: str, message: dict[str, Any]) -> int:
        """Publish in order with the rest, and say how many listeners it reached (on Redis:
        how many nodes subscribe to ``channel``; 0 when it was lost). A message nobody
        heard is gone: pub/sub keeps nothing for a listener to come."""

    def subscribe(self, *channels: str, size: int = DEFAULT_QUEUE_SIZE) -> Subscription:
        """A bounded subscription to ``channels`` (more may be added to it)."""

    async def close(self) -> None:
        """End every subscription and let go of the backend."""


class MemoryBus:
    """The in-process bus of the embedded default (one node)."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[Subscription]] = {}
        self.published = 0

    async def publish(self, channel: str, message: dict[str, Any]) -> None:
        self.publish_now(channel, message)

    def publish_now(self, channel: str, message: dict[str, Any]) -> None:
        """Deliver without awaiting: the actor calls this on its hot path."""
        self.published += 1
        subscribers = self._subscribers.get(channel)
        if not subscribers:
            return
        delivered = Delivered(message)
        for subscription in tuple(subscribers):
            subscription.deliver(delivered)

    async def publish_heard(self, channel: str, message: dict[str, Any]) -> int:
        listeners = len(self._subscribers.get(channel, ()))
        self.publish_now(channel, message)
        return listeners

    # ------------------------------------------------------------------ its subscriptions' side

    def offer(self, subscription: Subscription, message: dict[str, Any]) -> None:
        """A frame made on this node for ``subscription``, behind what was published before
        it. Every publish is delivered at once here: nothing is in flight to wait for."""
        subscription.deliver(message)

    def subscribe(self, *channels: str, size: int = DEFAULT_QUEUE_SIZE) -> Subscription:
        subscription = Subscription(self, set(), size)
        for channel in channels:
            self.attach(subscription, channel)
        return subscription

    def attach(self, subscription: Subscription, channel: str) -> None:
        """``subscription`` hears ``channel`` from now on."""
        subscription.channels.add(channel)
        self._subscribers.setdefault(channel, set()).add(subscription)

    def detach(self, subscription: Subscription, channel: str) -> None:
        """``subscription`` no longer hears ``channel``."""
        subscription.channels.discard(channel)
        subscribers = self._subscribers.get(channel)
        if subscribers is not None:
            subscribers.discard(subscription)
            if not subscribers:
                del self._subscribers[channel]

    async def close(self) -> None:
        for subscribers in list(self._subscribers.values()):
            for subscription in list(subscribers):
                subscription.close()
