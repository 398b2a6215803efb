"""The stall watch: a callback that holds the event loop is logged with how long and where,
and the collector's share of a stall is told apart."""

from __future__ import annotations

import asyncio
import gc
import logging
import time

import pytest

from server.edge.stalls import StallWatch


def hold_the_loop(seconds: float) -> None:
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass  # busy: the GIL is taken back now and then, as by any long callback


def collect_for(seconds: float) -> None:
    garbage = [[[] for _ in range(100)] for _ in range(2_000)]
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        gc.collect()
    del garbage


async def test_a_stall_is_logged_with_where_the_loop_was(caplog: pytest.LogCaptureFixture) -> None:
    watch = StallWatch(0.03)
    watch.start()
    try:
        await asyncio.sleep(0.05)
        with caplog.at_level(logging.WARNING, logger="server.edge.stalls"):
            hold_the_loop(0.2)
            await asyncio.sleep(0.1)  # the loop runs again: the stall ends
    finally:
        watch.stop()
    held = [s for s in watch.stalls if s.seconds >= 0.15]
    assert held, [s.seconds for s in watch.stalls]
    stall = held[-1]
    assert any("hold_the_loop" in stack for stack in stall.stacks), stall.stacks
    assert stall.seconds < 5, stall.seconds  # it ended when the loop came back
    lines = [r.getMessage() for r in caplog.records if "stalled" in r.getMessage()]
    assert any("hold_the_loop" in line for line in lines), lines


async def test_the_collector_s_share_of_a_stall_is_counted() -> None:
    callbacks = list(gc.callbacks)
    watch = StallWatch(0.03)
    watch.start()
    try:
        await asyncio.sleep(0.05)
        collect_for(0.2)
        await asyncio.sleep(0.1)
    finally:
        watch.stop()
    held = [s for s in watch.stalls if s.seconds >= 0.15]
    assert held, [s.seconds for s in watch.stalls]
    assert held[-1].collector_seconds >= 0.5 * held[-1].seconds, held[-1]
    assert held[-1].passes[2] >= 1, held[-1].passes  # gc.collect(): full passes
    assert gc.callbacks == callbacks, "stop takes its callback away"
