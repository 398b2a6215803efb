"""``create_app``: wiring only. Settings in, a FastAPI app out; no work at import time."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from server import demo, ws
from server.bus import bus_from_url
from server.cluster import leases_for
from server.db.migrate import head_revision
from server.db.session import make_engine, make_sessionmaker
from server.errors import install_error_handlers
from server.lobby import Cardroom
from server.passwords import Passwords
from server.routers import admin, auth, hands, health, lobby, wallet, web
from server.settings import Settings


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app: HTTP and the websocket, with a table actor for every open table. It expects
    a migrated database (``stud-server`` migrates on start)."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = make_engine(settings.database_url, timeout=settings.db_timeout_seconds)
        app.state.engine = engine
        app.state.sessionmaker = make_sessionmaker(engine)
        # In memory for one process; REDIS_URL puts every node on one Redis bus.
        bus = bus_from_url(settings.redis_url)
        # Which node runs which table: Redis leases among nodes, all of them alone.
        leases = leases_for(settings.redis_url, settings.node_id, settings.lease_seconds)
        cardroom = Cardroom(
            bus=bus, sessionmaker=app.state.sessionmaker, settings=settings, leases=leases
        )
        app.state.cardroom = cardroom
        house_bots: asyncio.Task[None] | None = None
        try:
            await cardroom.start()
            if settings.demo:
                bots = await demo.open_demo_tables(
                    app.state.sessionmaker, cardroom, app.state.passwords
                )
                house_bots = asyncio.create_task(
                    demo.run_house_bots(settings.base_url, bots, settings.demo_think_seconds)
                )
            yield
        finally:
            if house_bots is not None:
                house_bots.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await house_bots
            await cardroom.stop()
            await leases.close()
            await bus.close()
            await engine.dispose()

    app = FastAPI(
        title="stud-server",
        summary="Multiplayer stud poker: accounts, play-money wallets, tables.",
        version="0.1.0",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.passwords = Passwords(
        time_cost=settings.password_time_cost,
        memory_kib=settings.password_memory_kib,
        parallelism=settings.password_parallelism,
    )
    app.state.head_revision = head_revision()
    install_error_handlers(app)
    for module in (health, auth, wallet, lobby, hands, admin, ws, web):
        app.include_router(module.router)
    return app
