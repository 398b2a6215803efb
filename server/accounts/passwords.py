"""Argon2id password hashing, off the event loop and bounded.

A hash costs tens of milliseconds of CPU and tens of MiB of memory by design. Done inline it
would freeze every table of the process for that long; done in threads without a bound, a
burst of logins takes every core and gigabytes from the tables. So hashing runs on a pool of
its own, a few threads (argon2 releases the GIL) behind a short queue, and a hash asked for
while the queue is full is refused at once (``server_busy``) rather than waited for.

The hashing threads (and the lanes argon2 starts from them, which inherit it) run at a lower
scheduling priority than the event loop: on a machine of few cores a burst of logins uses the
cores the tables leave idle, and a table's turn of the loop never waits behind a hash.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError

from engine.errors import Refusal
from engine.protocol import ErrorCode

T = TypeVar("T")
HASHING_NICENESS = 10  # added to the process's niceness for the hashing threads


def _yield_to_the_tables() -> None:
    """Lower the calling thread's priority (on Linux the niceness is a thread's own)."""
    if not hasattr(os, "setpriority"):
        return
    thread = threading.get_native_id()
    with contextlib.suppress(OSError):
        os.setpriority(
            os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + HASHING_NICENESS
        )


class HashingBusy(Refusal):
    """Every hashing thread is busy and the queue behind them is full."""

    code = ErrorCode.SERVER_BUSY
    retry_after = 1


class Passwords:
    """Hash and check passwords at one cost, set from the settings, on ``threads`` threads
    with at most ``queue`` hashes waiting for one."""

    def __init__(
        self,
        *,
        time_cost: int = 3,
        memory_kib: int = 64 * 1024,
        parallelism: int = 4,
        threads: int = 2,
        queue: int = 16,
    ):
        self._hasher = PasswordHasher(
            time_cost=time_cost, memory_cost=memory_kib, parallelism=parallelism, type=Type.ID
        )
        self._dummy: str | None = None
        self._pool = ThreadPoolExecutor(
            max_workers=threads, thread_name_prefix="argon2", initializer=_yield_to_the_tables
        )
        self.capacity = threads + queue
        self.pending = 0  # hashes running or waiting

    async def _run(self, work: Callable[..., T], *args: str) -> T:
        if self.pending >= self.capacity:
            raise HashingBusy("the server is busy checking passwords; try again in a moment")
        self.pending += 1
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool, work, *args)
        finally:
            self.pending -= 1

    async def hash(self, password: str) -> str:
        return await self._run(self._hasher.hash, password)

    async def verify(self, hashed: str, password: str) -> bool:
        try:
            return await self._run(self._hasher.verify, hashed, password)
        except (VerificationError, InvalidHashError):
            return False

    def needs_rehash(self, hashed: str) -> bool:
        """True when the hash was made at another cost: rehash it at the next login."""
        return self._hasher.check_needs_rehash(hashed)

    async def waste(self, password: str) -> None:
        """Spend a verification's time, so an unknown username answers as slowly as a known one."""
        if self._dummy is None:
            self._dummy = await self.hash("not a password")
        await self.verify(self._dummy, password)
