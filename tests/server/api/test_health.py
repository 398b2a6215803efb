from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from backends import free_port
from server_helpers import FAST_HASHING, error_code

from server.app import create_app
from server.cli import apply_migrations
from server.db.migrate import head_revision
from server.settings import Settings


async def test_healthz(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200 and response.json()["status"] == "ok"


async def test_readyz_checks_the_database_and_its_revision(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    response = await client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["checks"] == {
        "database": "ok",
        "migrations": head_revision(),
        "bus": "memory",
        "node": settings.node_id,
    }


@pytest.fixture
async def unmigrated(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}", **FAST_HASHING)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://stud.test") as client:
            yield client


async def test_not_ready_on_an_unmigrated_database(unmigrated: httpx.AsyncClient) -> None:
    assert (await unmigrated.get("/healthz")).status_code == 200
    response = await unmigrated.get("/readyz")
    assert response.status_code == 503 and error_code(response) == "not_ready"


@pytest.fixture
async def unreachable(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    # A database file under a path that is a file, not a directory, cannot be opened (nor
    # its directory made, as the server makes a missing one).
    (tmp_path / "a-file").write_text("")
    url = f"sqlite+aiosqlite:///{tmp_path / 'a-file' / 'stud.db'}"
    app = create_app(Settings(database_url=url, **FAST_HASHING))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://stud.test") as client:
            yield client
    await _aiosqlite_threads_done()


async def _aiosqlite_threads_done() -> None:
    """Keep the loop alive until aiosqlite's worker threads end.

    After a failed connect, aiosqlite stops its worker thread without awaiting it; the thread
    then reports to the loop, which must still be open (else an unhandled thread exception).
    """
    for _ in range(200):
        if not any("_connection_worker_thread" in t.name for t in threading.enumerate()):
            return
        await asyncio.sleep(0.01)


async def test_not_ready_when_the_database_is_unreachable(unreachable: httpx.AsyncClient) -> None:
    assert (await unreachable.get("/healthz")).status_code == 200
    response = await unreachable.get("/readyz")
    assert response.status_code == 503 and error_code(response) == "not_ready"


async def test_unknown_route_uses_the_error_shape(client: httpx.AsyncClient) -> None:
    response = await client.get("/no/such/thing")
    assert response.status_code == 404 and error_code(response) == "not_found"


async def test_readyz_says_not_ready_while_the_redis_bus_is_away(tmp_path: Path) -> None:
    nobody = free_port()  # no Redis listens there
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'stud.db'}",
        redis_url=f"redis://127.0.0.1:{nobody}/0",
        **FAST_HASHING,
    )
    await apply_migrations(settings)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://stud.test") as client:
            response = await client.get("/readyz")
            assert response.status_code == 503 and error_code(response) == "not_ready"
            assert "Redis" in response.json()["error"]["message"]
            assert (await client.get("/healthz")).status_code == 200
