"""The collector's policy of a node: what survives a full pass is frozen (later passes skip
it), and everything is thawed now and then, so a cycle that became garbage while frozen is
still collected."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from server.collector import FreezeAfterFullPasses


class Node:
    """A cycle: two of them referring to each other."""

    other: Node | None = None


@pytest.fixture(autouse=True)
def thawed_after() -> Iterator[None]:
    yield
    gc.unfreeze()  # the rest of the suite's process as it was


async def next_turns() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


async def test_what_survives_a_full_pass_is_frozen_and_thawed_when_its_time_comes() -> None:
    policy = FreezeAfterFullPasses(thaw_seconds=3600)
    policy.install(asyncio.get_running_loop())
    try:
        gc.unfreeze()
        survivor = [object()]
        gc.collect()
        await next_turns()
        assert policy.freezes == 1 and gc.get_freeze_count() > 0
        assert gc.is_tracked(survivor) and gc.get_freeze_count() >= len(gc.get_objects()) // 2
        gc.collect(1)  # a young pass: nothing frozen for it
        await next_turns()
        assert policy.freezes == 1
        policy.thaw_seconds = 0  # the time has come
        gc.collect()
        await next_turns()
        assert policy.thaws == 1 and gc.get_freeze_count() == 0
    finally:
        policy.uninstall()


async def test_a_cycle_that_became_garbage_while_frozen_is_collected_after_the_thaw() -> None:
    callbacks = list(gc.callbacks)
    policy = FreezeAfterFullPasses(thaw_seconds=3600)
    policy.install(asyncio.get_running_loop())
    try:
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        gc.collect()
        await next_turns()  # a and b survived the pass: frozen
        del a, b
        gc.collect()
        await next_turns()
        assert gone() is not None, "frozen: the full pass did not look at the cycle"
        policy.thaw_seconds = 0
        gc.collect()  # its stop thaws everything
        await next_turns()
        gc.collect()  # the next full pass looks at everything
        assert gone() is None
    finally:
        policy.uninstall()
    assert gc.callbacks == callbacks, "uninstalled: its callback gone"
