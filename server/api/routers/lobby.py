"""The lobby: the open tables, their stakes and how busy they are. Public."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from server.api.deps import CardroomDep
from server.api.schemas import TableSummaryPublic
from server.edge.overload import SHED_RESPONSE, shed_when_busy

# Listings can wait: shed while the node is behind (server/edge/overload.py).
router = APIRouter(
    tags=["lobby"], dependencies=[Depends(shed_when_busy("lobby"))], responses=SHED_RESPONSE
)


@router.get("/tables")
async def list_tables(cardroom: CardroomDep) -> list[TableSummaryPublic]:
    """Every open table: variant, stakes, structure, seats taken, waiting list, average pot
    and hands per hour. Sit down through the websocket (``/ws``)."""
    return [TableSummaryPublic.model_validate(summary) for summary in cardroom.lobby()]
