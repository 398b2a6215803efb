"""A director's task timed step by step (``CpuTimed``): each step's CPU counted, the
coroutine's result, errors and cancellation passed through as the plain coroutine's."""

from __future__ import annotations

import asyncio

import pytest

from server.tournaments.directors import CpuTimed


async def busy(steps: int) -> int:
    total = 0
    for _ in range(steps):
        total += sum(range(20_000))
        await asyncio.sleep(0)
    return total


async def test_each_step_is_counted_and_the_result_passes_through() -> None:
    counted: list[float] = []
    result = await asyncio.get_running_loop().create_task(CpuTimed(busy(5), counted.append))
    assert result == 5 * sum(range(20_000))
    assert len(counted) == 6  # five steps ending at a sleep, and the last
    assert sum(counted) > 0


async def test_an_error_and_a_cancellation_pass_through() -> None:
    async def failing() -> None:
        await asyncio.sleep(0)
        raise LookupError("gone")

    counted: list[float] = []
    with pytest.raises(LookupError, match="gone"):
        await asyncio.get_running_loop().create_task(CpuTimed(failing(), counted.append))
    waiting = asyncio.get_running_loop().create_task(CpuTimed(asyncio.sleep(60), counted.append))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert len(counted) == 2 + 2  # the failing one's two steps; the sleeper's start and its end
