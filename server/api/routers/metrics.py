"""``GET /metrics``: this node's metrics for Prometheus (names in docs/architecture.md).

Public like ``/healthz`` by default (``STUD_METRICS_PUBLIC``): operators keep it on their own
network. With ``STUD_METRICS_PUBLIC=false`` it asks for a staff token (operator or support).
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.exc import SQLAlchemyError

from server.api.deps import SettingsDep, get_current_token, get_staff
from server.metrics import Metrics
from server.tournaments import requests

# How long a scrape waits for the database's count of the tournaments' requests waiting.
REQUESTS_COUNT_SECONDS = 2.0

router = APIRouter(tags=["health"])
_bearer = HTTPBearer(auto_error=False, description="a staff token, when metrics are not public")


async def metrics_allowed(
    request: Request,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """Anyone when the metrics are public; else staff (401 without a token, 403 others)."""
    if settings.metrics_public:
        return
    async with request.app.state.sessionmaker() as session:
        _, account = await get_current_token(session, credentials)
    get_staff(account)


@router.get(
    "/metrics",
    response_class=Response,
    dependencies=[Depends(metrics_allowed)],
    responses={
        200: {"content": {"text/plain": {}}, "description": "Prometheus' text format"},
        401: {"description": "not public, and no token: not_authenticated"},
        403: {"description": "not public, and not staff: not_operator"},
    },
)
async def metrics(request: Request) -> Response:
    """This node's counters, gauges and histograms, in Prometheus' text format (or
    OpenMetrics, when the scraper's ``Accept`` asks for it)."""
    node_metrics: Metrics = request.app.state.metrics
    await _count_requests_waiting(request, node_metrics)
    body, content_type = node_metrics.exposition(request.headers.get("accept"))
    return Response(content=body, media_type=content_type)


async def _count_requests_waiting(request: Request, node_metrics: Metrics) -> None:
    """The tournaments' requests waiting for their directors, from the database (-1 when
    it does not answer within a second or two: the scrape still answers the rest)."""
    sessionmaker = getattr(request.app.state, "sessionmaker", None)
    if sessionmaker is None:
        return
    try:
        async with asyncio.timeout(REQUESTS_COUNT_SECONDS), sessionmaker() as session:
            waiting = await requests.count_waiting(session)
    except (TimeoutError, SQLAlchemyError, OSError):
        waiting = -1
    node_metrics.tournament_requests_waiting.set(waiting)
