"""The back office: tables and their rules, the books (hands and the live list of tables:
``admin_hands``).

Staff only (``deps.staff_only`` on the router): operators use every endpoint, support
accounts every ``GET``; players, bots and anonymous callers none.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request, status

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.accounts import audit_log
from server.api.deps import (
    CardroomDep,
    OperatorUser,
    SessionDep,
    StaffUser,
    known_query_only,
    staff_only,
)
from server.api.schemas import BooksPublic, TableCreate, TablePublic
from server.store import tables
from server.store.books import audit_books
from server.store.table_config import TableConfigJson

router = APIRouter(
    prefix="/admin", tags=["admin"], dependencies=[Depends(staff_only), Depends(known_query_only)]
)


@router.get("/table-config")
async def table_config_schema(_staff: StaffUser) -> dict[str, Any]:
    """Every rule setting a table accepts, with its type and default (a JSON schema)."""
    return TableConfigJson.model_json_schema()


@router.post("/tables", status_code=status.HTTP_201_CREATED)
async def create_table(
    body: TableCreate, operator: OperatorUser, session: SessionDep, cardroom: CardroomDep
) -> TablePublic:
    """A new table from a full rule set, checked by the engine (``bad_config`` if refused),
    or a mixed table from its rotation (``bad_rotation``); its table actor starts at once, and
    the lobby lists it. Audited (``table.create``)."""
    if body.rotation is not None and "config" in body.model_fields_set:
        raise Refusal(
            "config: a mixed table's rules are its rotation's games'",
            code=ErrorCode.BAD_ROTATION,
        )
    record = await tables.create(
        session,
        name=body.name,
        config=body.config.model_dump(),
        rotation=body.rotation.posted() if body.rotation is not None else None,
        seats=body.seats,
        min_buy_in=body.min_buy_in,
        max_buy_in=body.max_buy_in,
        spectator_chat=body.spectator_chat,
        time_fee=body.time_fee,
        time_fee_period=body.time_fee_period,
    )
    table = TablePublic.model_validate(record)
    await audit_log.record(
        session,
        actor=operator,
        action=audit_log.AuditAction.TABLE_CREATE,
        target_kind="table",
        target_id=record.id,
        after=table.model_dump(mode="json"),
    )
    await session.commit()
    await cardroom.open_table(record)
    return table


@router.get("/tables")
async def list_tables(_staff: StaffUser, session: SessionDep) -> list[TablePublic]:
    return [TablePublic.model_validate(r) for r in await tables.list_tables(session)]


@router.get("/books")
async def books(_staff: StaffUser, request: Request) -> BooksPublic:
    """The books: every balance is the sum of its movements, the chips held everywhere (the
    house revenue included) are the chips the house issued, each table's seats hold exactly
    its pool, every hand nets to zero after its rake, and every tournament's chips and
    prize pool are what it issued and took (read from one snapshot of the
    database, as ``stud-server audit`` reads it, while the tables play on)."""
    check = await audit_books(request.app.state.sessionmaker)
    return BooksPublic(
        balanced=check.balanced,
        granted=check.books.granted,
        reclaimed=check.books.reclaimed,
        held=check.books.held,
        house=check.books.house,
        revenue=check.books.revenue,
        rake=check.ledger_rake,
        mismatched=list(check.books.mismatched),
        tables={t: {"pool": pool, "seats": seats} for t, (pool, seats) in check.tables.items()},
        tournaments={
            t.tournament_id: {
                "issued": t.issued,
                "removed": t.removed,
                "in_play": t.in_play,
                "pool": t.pool,
            }
            for t in check.tournaments
        },
    )
