"""The collector's clock of a node: a young pass, then what survived it frozen (later passes
skip it); a cycle that became garbage young is freed at once, one among frozen objects at the
next thaw, when a full pass looks at everything: once the heap has grown by a quarter since
the last full pass, and not before its time."""

from __future__ import annotations

import asyncio
import gc
import sys
import time
import weakref
from collections.abc import Iterator

import pytest

from server import collector
from server.collector import Collector


class Link:
    """A cycle: two of them referring to each other."""

    other: Link | None = None


def cycle() -> weakref.ref[Link]:
    a, b = Link(), Link()
    a.other, b.other = b, a
    return weakref.ref(a)


@pytest.fixture(autouse=True)
def as_it_was() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()  # the rest of the suite's process as it was
    gc.set_threshold(*thresholds)


def test_a_young_pass_frees_young_cycles_and_freezes_what_survives() -> None:
    clock = Collector(thaw_seconds=3600)
    gc.unfreeze()
    young = cycle()  # garbage already, never frozen
    kept = [Link()]
    clock.collect()
    assert young() is None
    assert clock.passes == [1, 0, 0]
    assert gc.get_freeze_count() > 0 and not any(o is kept for o in gc.get_objects())


def test_a_cycle_that_became_garbage_frozen_is_freed_at_the_thaw() -> None:
    clock = Collector(thaw_seconds=3600)
    a, b = Link(), Link()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    clock.collect()  # a and b survive: frozen
    del a, b
    clock.collect()
    gc.collect()  # even a full pass of CPython's does not look at frozen objects
    assert gone() is not None
    clock.thaw_seconds = 0.001  # the time has come
    time.sleep(0.01)
    clock.collect()
    assert gone() is None
    assert clock.passes[2] == 1


async def test_the_clock_runs_on_the_event_loop_and_stops() -> None:
    clock = Collector(thaw_seconds=3600)
    clock.start(asyncio.get_running_loop())
    try:
        assert gc.get_threshold() == collector.THRESHOLDS
        await asyncio.sleep(collector.YOUNG_EVERY_SECONDS * 4)
    finally:
        clock.stop()
    ran = clock.passes[0]
    assert ran >= 1
    await asyncio.sleep(collector.YOUNG_EVERY_SECONDS * 3)
    assert clock.passes[0] == ran, "stopped: no pass since"


def test_a_full_pass_waits_for_the_heap_to_grow_by_a_quarter(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Collector(thaw_seconds=3600)
    clock.collect()  # a young pass: what lives is frozen
    clock.thaw_seconds = 0.001
    time.sleep(0.01)
    clock.collect()  # nothing frozen had been counted yet: the first full pass
    assert clock.passes[2] == 1
    after_it = sys.getallocatedblocks()
    time.sleep(0.01)
    for _ in range(3):  # its time has come, but the heap is as it was
        clock.collect()
    assert clock.passes[2] == 1
    grown = [Link() for _ in range(int(after_it * collector.THAW_GROWTH) + 1_000)]
    clock.thaw_seconds = 3600
    clock.collect()  # a young pass: the heap a quarter bigger, but the time has not come
    clock.collect()
    assert clock.passes[2] == 1, "grown, but a full pass came less than its time ago"
    clock.thaw_seconds = 0.001
    with caplog.at_level("INFO", logger="server.collector"):
        clock.collect()
    assert clock.passes[2] == 2
    assert "a full pass over" in caplog.text
    assert len(grown) > 0
