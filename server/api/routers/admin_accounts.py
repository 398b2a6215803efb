"""The back office's hold on accounts and seats: suspend and unsuspend a player, kick a
player off a table. Operators only (support reads the results in the player's detail and
the audit log); each is audited. See ``server.cardroom.suspensions``."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from engine.protocol import ErrorCode
from server.accounts import audit_log, players
from server.api.admin_schemas import (
    KickCreate,
    KickPublic,
    RemovalPublic,
    SuspendCreate,
    SuspendPublic,
    SuspensionPublic,
    UnsuspendPublic,
)
from server.api.deps import (
    CardroomDep,
    OperatorUser,
    SessionDep,
    SessionRegistryDep,
    known_query_only,
    staff_only,
)
from server.cardroom import suspensions

router = APIRouter(
    prefix="/admin", tags=["admin"], dependencies=[Depends(staff_only), Depends(known_query_only)]
)


def _removal(done: suspensions.Removal) -> RemovalPublic:
    return RemovalPublic(
        table_id=done.table_id,
        seat=done.seat,
        after_hand=done.after_hand,
        cashed_out=done.cashed_out,
        error=done.error,
    )


@router.post("/players/{name}/suspend")
async def suspend(
    name: str,
    body: SuspendCreate,
    operator: OperatorUser,
    session: SessionDep,
    sessions: SessionRegistryDep,
    cardroom: CardroomDep,
) -> SuspendPublic:
    """Suspend the account: its tokens and login refused, its websockets signed out on
    every node, removed from every table after the hand in play (cashed out); audited."""
    account = await players.find(session, name=name)
    done = await suspensions.suspend(session, operator=operator, player=account, reason=body.reason)
    await session.commit()
    sessions.end_account(account.id, ErrorCode.ACCOUNT_SUSPENDED)
    removed = await suspensions.remove_everywhere(
        session, cardroom, player=account, cause="suspended"
    )
    return SuspendPublic(
        player=account.username,
        suspension=SuspensionPublic.model_validate(done.suspension),
        tokens_revoked=done.tokens_revoked,
        tables=[_removal(r) for r in removed],
        audit_id=done.audit.id,
    )


@router.post("/players/{name}/unsuspend")
async def unsuspend(
    name: str, body: SuspendCreate, operator: OperatorUser, session: SessionDep
) -> UnsuspendPublic:
    """Lift the suspension (audited): the player may log in again."""
    account = await players.find(session, name=name)
    audit = await suspensions.unsuspend(
        session, operator=operator, player=account, reason=body.reason
    )
    await session.commit()
    return UnsuspendPublic(player=account.username, audit_id=audit.id)


@router.post("/tables/{table_id}/kick")
async def kick(
    table_id: int,
    body: KickCreate,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
) -> KickPublic:
    """The player leaves the table after the hand in play, cashed out; the table's players
    see that an operator removed them. Audited once the table has accepted it."""
    account = await players.find(session, name=body.player)
    done = await suspensions.remove(
        cardroom, table_id=table_id, player=account.username, cause="kicked"
    )
    removal = _removal(done)
    audit = await audit_log.record(
        session,
        actor=operator,
        action=audit_log.AuditAction.PLAYER_KICK,
        target_kind="player",
        target_id=account.username,
        before={"table": table_id, "seat": done.seat},
        after={"after_hand": done.after_hand, "cashed_out": done.cashed_out},
        reason=body.reason,
    )
    await session.commit()
    return KickPublic(player=account.username, removal=removal, audit_id=audit.id)
