"""``create_app``: wiring only. Settings in, a FastAPI app out; no work at import time."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from server.db.migrate import head_revision
from server.db.session import make_engine, make_sessionmaker
from server.errors import install_error_handlers
from server.passwords import Passwords
from server.routers import admin, auth, health, wallet
from server.settings import Settings


def create_app(settings: Settings | None = None) -> FastAPI:
    """The HTTP app. It expects a migrated database (``stud-server`` migrates on start)."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = make_engine(settings.database_url)
        app.state.engine = engine
        app.state.sessionmaker = make_sessionmaker(engine)
        try:
            yield
        finally:
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
    for module in (health, auth, wallet, admin):
        app.include_router(module.router)
    return app
