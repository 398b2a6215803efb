"""The back office's table operations: change a table's settings, pause and resume it, void
its hand in progress, close it. A tournament's table is its director's to change, void or
close (``409 tournament_table``).

Operators only (``deps.staff_only`` on the router lets support read, and these all change).
Each becomes a command of :mod:`server.table.commands` carried to the node that runs the table,
whose actor checks it against the table as it is, writes it with its audit entry and
answers (``server.table.operators``); the route reads the table's row back for the answer.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.api.deps import CardroomDep, OperatorUser, SessionDep, known_query_only, staff_only
from server.api.rotation_schemas import RotationChangePublic, RotationState, RotationUpdate
from server.api.schemas import (
    HandVoidPublic,
    OperatorReason,
    TableOperationPublic,
    TablePublic,
    TableUpdate,
)
from server.cardroom.supervisor import Cardroom
from server.db.models import Account, TableRecord, TableStatus
from server.store import tables
from server.table import commands as cmd
from server.table import edit

router = APIRouter(
    prefix="/admin", tags=["admin"], dependencies=[Depends(staff_only), Depends(known_query_only)]
)

TableId = Annotated[int, Path(ge=1, le=2**31 - 1, description="the table's id")]


async def _record(session: SessionDep, table_id: int, *, cash_only: str = "") -> TableRecord:
    """The table's row, or ``404 unknown_table``; a closed table is ``409 table_shut``.
    ``cash_only``: what is done, which a tournament's table refuses (``409
    tournament_table``: its director's to do)."""
    record = await tables.get(session, table_id=table_id)
    if record is None:
        raise Refusal(f"no table {table_id}", code=ErrorCode.UNKNOWN_TABLE)
    if record.status != TableStatus.OPEN:
        raise Refusal(f"table {table_id} is closed", code=ErrorCode.TABLE_SHUT)
    if cash_only and record.tournament_id is not None:
        raise Refusal(
            f"table {table_id} is tournament {record.tournament_id}'s: its director's, not an "
            f"operator's, to {cash_only}",
            code=ErrorCode.TOURNAMENT_TABLE,
        )
    # Read: the table's own actor writes the change, in a transaction of its own.
    await session.commit()
    return record


async def _send(cardroom: Cardroom, table_id: int, command: cmd.OperatorCommand) -> dict[str, Any]:
    """The command answered by the table's actor, wherever it runs."""
    handle = await cardroom.table(table_id)
    if handle is None:
        raise Refusal(f"no table {table_id}", code=ErrorCode.UNKNOWN_TABLE)
    return await handle.submit(command)


async def _answer(
    session: SessionDep, record: TableRecord, reply: dict[str, Any]
) -> TableOperationPublic:
    await session.refresh(record)
    return TableOperationPublic(
        table=TablePublic.model_validate(record),
        after_hand=bool(reply.get("after_hand")),
        cashed_out=dict(reply.get("cashed_out") or {}),
    )


def _who(operator: Account) -> dict[str, Any]:
    return {"player": operator.username, "operator_id": operator.id}


@router.patch("/tables/{table_id}")
async def change_table(
    table_id: TableId,
    body: TableUpdate,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
) -> TableOperationPublic:
    """New settings (rules, seats, buy-in range, clocks), judged as at creation
    (``bad_config``); a hand in progress finishes under the old ones. Audited
    (``table.update``)."""
    changes = body.model_dump(exclude_unset=True, exclude={"reason"})
    if not changes:
        raise Refusal("nothing to change", code=ErrorCode.BAD_REQUEST)
    record = await _record(session, table_id, cash_only="change")
    rotation = (record.rotation or {}).get("rotation")
    if rotation is not None and "config" in changes:
        raise Refusal(
            "config: a mixed table's rules are its rotation's games' (PUT .../rotation)",
            code=ErrorCode.BAD_ROTATION,
        )
    values = edit.merged(record, changes)
    if rotation is not None:  # every game must fit the seats and buy-ins to be
        tables.check_rotation(
            rotation,
            seats=values["seats"],
            min_buy_in=values["min_buy_in"],
            max_buy_in=values["max_buy_in"],
        )
    command = cmd.ChangeSettings(**_who(operator), reason=body.reason, settings=values)
    return await _answer(session, record, await _send(cardroom, table_id, command))


@router.put("/tables/{table_id}/rotation")
async def change_rotation(
    table_id: TableId,
    body: RotationUpdate,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
) -> RotationChangePublic:
    """A mixed table's games in turn (a table of one game becomes mixed), or none (``null``):
    dealt from the next switch, so the game in play finishes its turn, or from the next hand
    when the table is idle. Each game judged with the table's seats and buy-ins
    (``bad_rotation``, with the field at fault). Audited (``table.rotation``)."""
    record = await _record(session, table_id, cash_only="change")
    spec = body.rotation.posted() if body.rotation is not None else None
    if spec is not None:
        tables.check_rotation(
            spec,
            seats=record.seats,
            min_buy_in=record.min_buy_in,
            max_buy_in=record.max_buy_in,
        )
    command = cmd.SetRotation(**_who(operator), reason=body.reason, rotation=spec)
    reply = await _send(cardroom, table_id, command)
    await session.refresh(record)
    assert record.rotation is not None  # the table wrote it
    return RotationChangePublic(
        table_id=table_id,
        rotation=RotationState.model_validate(record.rotation),
        after_hand=bool(reply["after_hand"]),
    )


@router.post("/tables/{table_id}/pause")
async def pause_table(
    table_id: TableId,
    body: OperatorReason,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
) -> TableOperationPublic:
    """No new hand after the one in progress, until resumed. Audited (``table.pause``)."""
    record = await _record(session, table_id)
    command = cmd.PauseTable(**_who(operator), reason=body.reason)
    return await _answer(session, record, await _send(cardroom, table_id, command))


@router.post("/tables/{table_id}/resume")
async def resume_table(
    table_id: TableId,
    body: OperatorReason,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
) -> TableOperationPublic:
    """Hands are dealt again. Audited (``table.resume``)."""
    record = await _record(session, table_id)
    command = cmd.ResumeTable(**_who(operator), reason=body.reason)
    return await _answer(session, record, await _send(cardroom, table_id, command))


@router.post("/tables/{table_id}/close")
async def close_table(
    table_id: TableId,
    body: OperatorReason,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
    void: Annotated[
        bool, Query(description="void the hand in progress and close now (else it finishes)")
    ] = False,
) -> TableOperationPublic:
    """Everyone cashed out, for good: the hand in progress finishes first (or is voided,
    ``?void=true``). Audited (``table.close``)."""
    record = await _record(session, table_id, cash_only="close")
    command = cmd.CloseTable(**_who(operator), reason=body.reason, void=void)
    return await _answer(session, record, await _send(cardroom, table_id, command))


@router.post("/tables/{table_id}/void")
async def void_hand(
    table_id: TableId,
    body: OperatorReason,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
) -> HandVoidPublic:
    """The hand in progress void now: every chip back as at its start. Audited
    (``hand.void``)."""
    await _record(session, table_id, cash_only="void")
    command = cmd.VoidHand(**_who(operator), reason=body.reason)
    reply = await _send(cardroom, table_id, command)
    return HandVoidPublic(
        table_id=table_id, hand=reply["hand"], stacks=reply["stacks"], reason=body.reason
    )
