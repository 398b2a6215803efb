"""Operator endpoints: tables and their rules, the books, full hand records."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, status

from server import table_store, tables
from server.db.models import HandRecord
from server.deps import CardroomDep, OperatorUser, SessionDep
from server.hands import UnknownHand
from server.schemas import BooksPublic, TableCreate, TablePublic
from server.table_config import TableConfigJson

router = APIRouter(prefix="/admin", tags=["admin"])


@router.get("/table-config")
async def table_config_schema(_operator: OperatorUser) -> dict[str, Any]:
    """Every rule setting a table accepts, with its type and default (a JSON schema)."""
    return TableConfigJson.model_json_schema()


@router.post("/tables", status_code=status.HTTP_201_CREATED)
async def create_table(
    body: TableCreate, _operator: OperatorUser, session: SessionDep, cardroom: CardroomDep
) -> TablePublic:
    """A new table from a full rule set, checked by the engine (``bad_config`` if refused);
    its table actor starts at once, and the lobby lists it."""
    record = await tables.create(
        session,
        name=body.name,
        config=body.config,
        seats=body.seats,
        min_buy_in=body.min_buy_in,
        max_buy_in=body.max_buy_in,
    )
    await session.commit()
    await cardroom.open_table(record)
    return TablePublic.model_validate(record)


@router.get("/tables")
async def list_tables(_operator: OperatorUser, session: SessionDep) -> list[TablePublic]:
    return [TablePublic.model_validate(r) for r in await tables.list_tables(session)]


@router.get("/books")
async def books(_operator: OperatorUser, session: SessionDep) -> BooksPublic:
    """The books: every balance is the sum of its movements, the chips held everywhere are
    the chips the house issued, and each table's seats hold exactly its pool."""
    check = await table_store.check_books(session)
    return BooksPublic(
        balanced=check.balanced,
        granted=check.books.granted,
        reclaimed=check.books.reclaimed,
        held=check.books.held,
        house=check.books.house,
        mismatched=list(check.books.mismatched),
        tables={t: {"pool": pool, "seats": seats} for t, (pool, seats) in check.tables.items()},
    )


@router.get("/hands/{hand_id}")
async def hand_record(hand_id: int, _operator: OperatorUser, session: SessionDep) -> dict[str, Any]:
    """A hand's full record, every card in it: PHH text, event log, result."""
    hand = await session.get(HandRecord, hand_id)
    if hand is None:
        raise UnknownHand(f"no hand {hand_id}")
    return {"id": hand.id, "table_id": hand.table_id, "number": hand.number, "phh": hand.phh,
            "events": hand.events, "result": hand.result, "created_at": hand.created_at}
