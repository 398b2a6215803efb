"""A subscription's queue: order, its bound, its end, and a reader's wait."""

from __future__ import annotations

import asyncio

import pytest

from server.bus.memory import MemoryBus


async def test_a_reader_gets_everything_published_in_order_in_batches_up_to_its_limit() -> None:
    bus = MemoryBus()
    subscription = bus.subscribe("table:1")
    for n in range(5):
        bus.publish_now("table:1", {"n": n})
    assert [m["n"] for m in await subscription.get_ready(limit=3)] == [0, 1, 2]
    assert [m["n"] for m in await subscription.get_ready(limit=3)] == [3, 4]
    assert subscription.queue.empty()


async def test_a_waiting_reader_wakes_for_the_next_message() -> None:
    bus = MemoryBus()
    subscription = bus.subscribe("table:1")
    reading = asyncio.create_task(subscription.get_ready())
    await asyncio.sleep(0)
    assert not reading.done()
    bus.publish_now("table:1", {"n": 1})
    bus.publish_now("table:1", {"n": 2})
    assert [m["n"] for m in await asyncio.wait_for(reading, 1)] == [1, 2]


async def test_a_closed_subscription_hands_over_what_was_queued_then_ends() -> None:
    bus = MemoryBus()
    subscription = bus.subscribe("table:1")
    bus.publish_now("table:1", {"n": 1})
    subscription.close()
    bus.publish_now("table:1", {"n": 2})  # after the close: not delivered
    assert [m["n"] for m in await subscription.get_ready()] == [1]
    assert await subscription.get_ready() == []
    assert await subscription.get_ready() == []  # and stays ended


async def test_a_reader_that_falls_behind_is_dropped_and_its_iterator_ends() -> None:
    bus = MemoryBus()
    subscription = bus.subscribe("table:1", size=3)
    for n in range(5):
        bus.publish_now("table:1", {"n": n})
    assert subscription.dropped and subscription.closed
    # The oldest message made room for the end marker: the client resyncs anyway.
    assert [m["n"] async for m in subscription] == [1, 2]


async def test_a_wait_cancelled_after_the_wake_loses_no_message() -> None:
    bus = MemoryBus()
    subscription = bus.subscribe("table:1")
    reading = asyncio.create_task(subscription.get_ready())
    await asyncio.sleep(0)
    bus.publish_now("table:1", {"n": 1})
    reading.cancel()  # woken and cancelled before it ran
    with pytest.raises(asyncio.CancelledError):
        await reading
    assert [m["n"] for m in await subscription.get_ready()] == [1]


async def test_a_second_reader_waiting_at_once_is_refused_and_the_first_still_wakes() -> None:
    bus = MemoryBus()
    subscription = bus.subscribe("table:1")
    first = asyncio.create_task(subscription.get_ready())
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="one task at a time"):
        await subscription.get_ready()
    bus.publish_now("table:1", {"n": 1})
    assert [m["n"] for m in await asyncio.wait_for(first, 1)] == [1]


async def test_a_reader_cancelled_while_waiting_leaves_the_queue_to_the_next_reader() -> None:
    bus = MemoryBus()
    subscription = bus.subscribe("table:1")
    reading = asyncio.create_task(subscription.get_ready())
    await asyncio.sleep(0)
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading
    again = asyncio.create_task(subscription.get_ready())
    await asyncio.sleep(0)
    bus.publish_now("table:1", {"n": 7})
    assert [m["n"] for m in await asyncio.wait_for(again, 1)] == [7]
