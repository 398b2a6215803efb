"""The lobby: the open tables, their stakes and how busy they are. Public."""

from __future__ import annotations

from fastapi import APIRouter

from server.deps import CardroomDep
from server.schemas import TableSummaryPublic

router = APIRouter(tags=["lobby"])


@router.get("/tables")
async def list_tables(cardroom: CardroomDep) -> list[TableSummaryPublic]:
    """Every open table: variant, stakes, structure, seats taken, waiting list, average pot
    and hands per hour. Sit down through the websocket (``/ws``)."""
    return [TableSummaryPublic.model_validate(summary) for summary in cardroom.lobby()]
