"""Nodes of one cardroom in this process, each with its own Redis bus, Redis leases and
cardroom over one shared database: what the cluster's in-process tests start, stop and kill."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.bus.redis_bus import RedisBus
from server.cardroom.cluster import RedisLeases
from server.cardroom.supervisor import Cardroom
from server.settings import Settings


class Node:
    """One node of the cardroom, in this process: its own bus, leases and cardroom."""

    def __init__(
        self,
        name: str,
        url: str,
        sessionmaker: async_sessionmaker[AsyncSession],
        settings: Settings,
    ) -> None:
        self.url = url
        self.bus = RedisBus(url)
        self.leases = RedisLeases(url, name, settings.lease_seconds)
        self.cardroom = Cardroom(
            bus=self.bus,
            sessionmaker=sessionmaker,
            leases=self.leases,
            settings=settings.model_copy(update={"node_id": name}),
            seal=settings.deck_seal(),
        )
        self.bus.on_published = self.cardroom.metrics.bus_published  # as the app wires it
        self.down = False  # stopped, or dead

    def metric(self, name: str, **labels: str) -> float:
        value = self.cardroom.metrics.registry.get_sample_value(name, labels)
        return 0.0 if value is None else value

    async def start(self) -> None:
        await self.cardroom.start()

    async def die(self) -> None:
        """Like SIGKILL: everything stops at once; no lease is given back, nothing written."""
        self.down = True
        room = self.cardroom
        room._stopping = True
        for task in list(room._background):
            task.cancel()
        await room.router.close()
        for actor in room.actors():
            # Whatever it was doing, it never finishes.
            await actor.stop(taken_over=True)
        await self.bus.close()
        await self.leases.close()

    async def stop(self) -> None:
        self.down = True
        await self.cardroom.stop()
        await self.leases.close()
        await self.bus.close()
