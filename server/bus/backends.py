"""The bus by URL: one process's, or the one every node shares on Redis."""

from __future__ import annotations

from server.bus.memory import Bus, MemoryBus

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def bus_from_url(url: str | None) -> Bus:
    """Pick the backend by URL: ``None`` or ``memory://`` is the in-process bus, a Redis URL
    (``redis://``, ``rediss://``, ``unix://``) the bus shared by every node on that Redis, or
    on the Redis Cluster it names a node of (``?cluster=yes``: sharded pub/sub)."""
    if url is None or url.startswith("memory://"):
        return MemoryBus()
    if url.startswith(REDIS_SCHEMES):
        from server.bus.redis_bus import RedisBus  # redis-py loads only for the Redis bus

        return RedisBus(url)
    raise ValueError(f"no bus backend for {url!r}: use memory:// or redis://")
