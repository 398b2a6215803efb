"""``GET /metrics``: this node's metrics for Prometheus (names in docs/architecture.md).

Public like ``/healthz`` by default (``STUD_METRICS_PUBLIC``): operators keep it on their own
network. With ``STUD_METRICS_PUBLIC=false`` it asks for a staff token (operator or support).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from server.api.deps import SettingsDep, get_current_token, get_staff
from server.metrics import Metrics

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
    body, content_type = node_metrics.exposition(request.headers.get("accept"))
    return Response(content=body, media_type=content_type)
