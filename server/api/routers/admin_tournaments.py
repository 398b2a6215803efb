"""The back office's tournaments: create one (from a shipped template or a full format),
edit it before its start, cancel it (every entry refunded). Operators change; support reads
through the players' routes. Every change audited."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, status

from server.accounts import audit_log
from server.api.deps import CardroomDep, OperatorUser, SessionDep, known_query_only, staff_only
from server.api.routers.tournaments import tournament
from server.api.schemas import OperatorReason
from server.api.tournament_schemas import TournamentCreate, TournamentPublic, TournamentUpdate
from server.tournaments import registry

router = APIRouter(
    prefix="/admin", tags=["admin"], dependencies=[Depends(staff_only), Depends(known_query_only)]
)

TournamentId = Annotated[int, Path(ge=1, le=2**31 - 1, description="the tournament's id")]


@router.post("/tournaments", status_code=status.HTTP_201_CREATED)
async def create_tournament(
    body: TournamentCreate, operator: OperatorUser, session: SessionDep, cardroom: CardroomDep
) -> TournamentPublic:
    """A new tournament taking entries, from a template or a full format (``bad_structure``
    with the field at fault). Audited (``tournament.create``)."""
    record = await registry.create(
        session,
        name=body.name,
        template=body.template,
        spec=body.spec.posted() if body.spec is not None else None,
        starts_at=body.starts_at,
        created_by=operator.username,
        seal=cardroom.seal,
    )
    await audit_log.record(
        session,
        actor=operator,
        action=audit_log.AuditAction.TOURNAMENT_CREATE,
        target_kind="tournament",
        target_id=record.id,
        after=registry.summary(record),
    )
    await session.commit()
    return await tournament(record.id, session)


@router.patch("/tournaments/{tournament_id}")
async def update_tournament(
    tournament_id: TournamentId, body: TournamentUpdate, operator: OperatorUser, session: SessionDep
) -> TournamentPublic:
    """Edit a tournament before its start: name, start, format (not its buy-in or fee once
    anyone has paid). Audited (``tournament.update``)."""
    before, record = await registry.edit(
        session,
        tournament_id=tournament_id,
        name=body.name,
        spec=body.spec.posted() if body.spec is not None else None,
        starts_at=body.starts_at,
    )
    await audit_log.record(
        session,
        actor=operator,
        action=audit_log.AuditAction.TOURNAMENT_UPDATE,
        target_kind="tournament",
        target_id=record.id,
        before=before,
        after=registry.summary(record),
        reason=body.reason,
    )
    await session.commit()
    return await tournament(record.id, session)


@router.post("/tournaments/{tournament_id}/cancel")
async def cancel_tournament(
    tournament_id: TournamentId, body: OperatorReason, operator: OperatorUser, session: SessionDep
) -> TournamentPublic:
    """Cancel a tournament before its start: every entry's buy-in and fee go back to its
    player's wallet, in this request's transaction. Audited (``tournament.cancel``)."""
    record, refunded = await registry.cancel(
        session, tournament_id=tournament_id, reason=body.reason
    )
    await audit_log.record(
        session,
        actor=operator,
        action=audit_log.AuditAction.TOURNAMENT_CANCEL,
        target_kind="tournament",
        target_id=record.id,
        after={**registry.summary(record), "refunded": len(refunded)},
        reason=body.reason,
    )
    await session.commit()
    return await tournament(record.id, session)
