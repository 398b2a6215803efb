"""Liveness and readiness, for load balancers and orchestrators."""

from __future__ import annotations

from fastapi import APIRouter, Request
from sqlalchemy.ext.asyncio import AsyncEngine

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.api.schemas import HealthPublic
from server.bus.redis_bus import RedisBus
from server.db import migrate

router = APIRouter(tags=["health"])


class NotReady(Refusal):
    code = ErrorCode.NOT_READY


@router.get("/healthz")
async def healthz() -> HealthPublic:
    """The process answers: nothing more is checked (a restart would not fix the database)."""
    return HealthPublic(status="ok")


@router.get("/readyz", responses={503: {"description": "not ready: error code not_ready"}})
async def readyz(request: Request) -> HealthPublic:
    """Ready for traffic: the database answers and is migrated to this code's revision, and
    the bus (Redis, shared by the nodes) is connected."""
    engine: AsyncEngine = request.app.state.engine
    expected: str | None = request.app.state.head_revision
    try:
        current = await migrate.current_revision(engine)
    except Exception as exc:  # any failure to reach the database means "not ready"
        raise NotReady(f"database unreachable: {type(exc).__name__}") from None
    if current != expected:
        raise NotReady(f"database at revision {current}, this server needs {expected}")
    bus = request.app.state.cardroom.bus
    if isinstance(bus, RedisBus) and not bus.connected:
        raise NotReady("the bus is not connected to Redis")
    return HealthPublic(
        status="ok",
        checks={
            "database": "ok",
            "migrations": str(current),
            "bus": "redis" if isinstance(bus, RedisBus) else "memory",
            "node": request.app.state.settings.node_id,
        },
    )
