"""Fixtures: each test gets its own migrated database (SQLite, then PostgreSQL: see
``backends``) and an app on it, over ASGI.

The tests sit in one directory per package of the server they test (``table/``,
``cardroom/``, ``edge/``, ``api/``, ``store/``, ``accounts/``, ``bus/``, ``db/``, and
``process/`` for the app, the command line, the workers and the rest of a node's process).
The helpers they share (``backends``, ``play``, ``live``, ``server_helpers``, ...) and the
golden transcripts stay here: with no ``__init__.py`` anywhere, this directory is on
``sys.path`` for every test below it, so they import as ``from play import submit``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from backends import *  # noqa: F403 - the database_url fixture: SQLite, PostgreSQL
from fastapi import FastAPI
from server_helpers import FAST_HASHING
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from server.app import create_app
from server.db import migrate
from server.db.session import make_engine, make_sessionmaker
from server.settings import Settings


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        starting_bankroll=10_000,
        **FAST_HASHING,
    )


@pytest.fixture
async def engine(settings: Settings) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(settings.database_url)
    await migrate.upgrade(engine)
    yield engine
    await engine.dispose()


@pytest.fixture
async def session(engine: AsyncEngine) -> AsyncIterator[AsyncSession]:
    async with make_sessionmaker(engine)() as session:
        yield session


@pytest.fixture
async def app(settings: Settings, engine: AsyncEngine) -> AsyncIterator[FastAPI]:
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://stud.test") as client:
        yield client
