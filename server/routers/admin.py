"""Operator endpoints: tables and their rules."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, status

from server import tables
from server.deps import OperatorUser, SessionDep
from server.schemas import TableCreate, TablePublic
from server.table_config import TableConfigJson

router = APIRouter(prefix="/admin", tags=["admin"])


@router.get("/table-config")
async def table_config_schema(_operator: OperatorUser) -> dict[str, Any]:
    """Every rule setting a table accepts, with its type and default (a JSON schema)."""
    return TableConfigJson.model_json_schema()


@router.post("/tables", status_code=status.HTTP_201_CREATED)
async def create_table(
    body: TableCreate, _operator: OperatorUser, session: SessionDep
) -> TablePublic:
    """A new table from a full rule set, checked by the engine (``bad_config`` if refused)."""
    record = await tables.create(
        session,
        name=body.name,
        config=body.config,
        seats=body.seats,
        min_buy_in=body.min_buy_in,
        max_buy_in=body.max_buy_in,
    )
    await session.commit()
    return TablePublic.model_validate(record)


@router.get("/tables")
async def list_tables(_operator: OperatorUser, session: SessionDep) -> list[TablePublic]:
    return [TablePublic.model_validate(r) for r in await tables.list_tables(session)]
