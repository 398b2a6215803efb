"""Argon2id password hashing, run off the event loop.

A hash costs tens of milliseconds of CPU by design; done inline it would freeze every table
of the process for that long, so it runs in a worker thread (argon2 releases the GIL).
"""

from __future__ import annotations

import asyncio

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError


class Passwords:
    """Hash and check passwords at one cost, set from the settings."""

    def __init__(self, *, time_cost: int = 3, memory_kib: int = 64 * 1024, parallelism: int = 4):
        self._hasher = PasswordHasher(
            time_cost=time_cost, memory_cost=memory_kib, parallelism=parallelism, type=Type.ID
        )
        self._dummy: str | None = None

    async def hash(self, password: str) -> str:
        return await asyncio.to_thread(self._hasher.hash, password)

    async def verify(self, hashed: str, password: str) -> bool:
        try:
            return await asyncio.to_thread(self._hasher.verify, hashed, password)
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
