"""``create_app``: wiring only. Settings in, a FastAPI app out; no work at import time."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from server import demo
from server.accounts.passwords import Passwords
from server.api.body_limit import BodyLimit
from server.api.errors import install_error_handlers
from server.api.routers import (
    admin,
    admin_accounts,
    admin_bots,
    admin_hands,
    admin_nodes,
    admin_players,
    admin_tables,
    admin_tournaments,
    auth,
    hands,
    health,
    lobby,
    metrics,
    tournament_deals,
    tournaments,
    wallet,
    web,
)
from server.api.security_headers import REDOC_POLICY, SecurityHeaders
from server.bus.backends import bus_from_url
from server.bus.redis_bus import RedisBus
from server.cardroom.cluster import leases_for
from server.cardroom.supervisor import Cardroom
from server.db.migrate import head_revision
from server.db.session import make_engine, make_sessionmaker
from server.edge import ws
from server.edge.overload import LagMonitor
from server.edge.rate_limits import Gateway
from server.edge.sessions import SessionRegistry
from server.edge.spectators import Spectators
from server.edge.stalls import StallWatch
from server.metrics import Metrics
from server.settings import Settings
from server.table.loop import Lifecycle
from server.tournaments.directors import CardroomTables, TournamentDirectors
from server.tournaments.registry import EntryTurns
from server.tournaments.standing import Standings


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app: HTTP and the websocket, with a table actor for every open table. It expects
    a migrated database (``stud-server`` migrates on start)."""
    settings = settings or Settings()
    # This app's registry, never the library's global one.
    app_metrics = Metrics(settings.node_id)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        seal = settings.deck_seal()  # first: no key, no start (server/store/deck_seal.py)
        engine = make_engine(
            settings.database_url,
            timeout=settings.db_timeout_seconds,
            pool_size=settings.db_pool_size,
            pool_overflow=settings.db_pool_overflow,
        )
        app.state.engine = engine
        app.state.sessionmaker = make_sessionmaker(engine)
        # In memory for one process; REDIS_URL puts every node on one Redis bus.
        bus = bus_from_url(settings.redis_url)
        if isinstance(bus, RedisBus):
            bus.on_published = app_metrics.bus_published
        # Which node runs which table: Redis leases among nodes, all of them alone.
        leases = leases_for(settings.redis_url, settings.node_id, settings.lease_seconds)
        cardroom = Cardroom(
            bus=bus,
            sessionmaker=app.state.sessionmaker,
            settings=settings,
            seal=seal,
            leases=leases,
            metrics=app_metrics,
        )
        app_metrics.watch_tables(cardroom.actors, states=(state.value for state in Lifecycle))
        app.state.cardroom = cardroom
        # The tournaments this node directs (a lease in each one's row).
        directors = TournamentDirectors(
            cardroom=cardroom,
            sessionmaker=app.state.sessionmaker,
            node_id=settings.node_id,
            lease_seconds=settings.lease_seconds,
        )
        app.state.directors = directors
        app_metrics.watch_tournaments(lambda: tuple(directors.directors.values()))
        # Where each tournament stands, read from its journal, for the websockets following it.
        app.state.standings = Standings(
            tables=CardroomTables(cardroom), sessionmaker=app.state.sessionmaker, seal=seal
        )
        # Signed-in websockets, ended on every node when their token or account is.
        sessions = SessionRegistry(
            bus, app.state.sessionmaker, check_seconds=settings.session_check_seconds
        )
        app.state.sessions = sessions
        app.state.spectators = Spectators(bus)
        house_bots: asyncio.Task[None] | None = None
        overload: LagMonitor = app.state.overload
        stalls = StallWatch(settings.stall_watch_ms / 1000) if settings.stall_watch_ms else None
        try:
            overload.start()
            if stalls is not None:
                stalls.start()
            sessions.start()
            await cardroom.start()
            directors.start()
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
            app.state.spectators.close()
            await overload.stop()
            if stalls is not None:
                stalls.stop()
            await directors.stop()
            await cardroom.stop()
            await sessions.close()
            await leases.close()
            await bus.close()
            await engine.dispose()

    app = FastAPI(
        title="stud-server",
        summary="Multiplayer stud poker: accounts, play-money wallets, tables.",
        version="0.1.0",
        lifespan=lifespan,
        # Served by server.api.routers.web from installed files, not from a CDN.
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.metrics = app_metrics
    app.state.passwords = Passwords(
        time_cost=settings.password_time_cost,
        memory_kib=settings.password_memory_kib,
        parallelism=settings.password_parallelism,
        threads=settings.password_hash_threads,
        queue=settings.password_hash_queue,
    )
    app.state.gateway = Gateway(settings)
    app.state.entry_turns = EntryTurns()  # entries into one tournament take turns here
    app.state.overload = LagMonitor(settings.overload_lag_seconds, app_metrics)
    app.state.head_revision = head_revision()
    install_error_handlers(app)
    # Inside the headers: a body refused 413 carries them too.
    app.add_middleware(BodyLimit, max_bytes=settings.http_body_max_bytes)
    app.add_middleware(SecurityHeaders, policies={web.REDOC_PATH: REDOC_POLICY})
    # admin_hands before admin: its fixed paths (/admin/tables/live) come first.
    routers = (
        *(health, metrics, auth, wallet, lobby, hands, tournaments, tournament_deals),
        *(admin_hands, admin, admin_players, admin_tables, admin_nodes, admin_accounts, admin_bots),
        admin_tournaments,
    )
    for module in (*routers, ws, web):
        app.include_router(module.router)
    return app
