"""The back office's players and audit log: find a player, read their account, chips, seats
and hands, credit or debit their wallet; read what every operator did.

Staff only (``deps.staff_only`` on the router): support accounts read, operators also
credit and debit. Every credit or debit is a ledger movement against the house and an audit
entry, committed together.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import AwareDatetime

from server.accounts import audit_log, ledger, players
from server.api.admin_schemas import (
    AdjustmentCreate,
    AdjustmentPublic,
    AuditEntryPublic,
    AuditPagePublic,
    PlayerLinePublic,
    PlayerPagePublic,
    PlayerPublic,
    SeatPublic,
    SuspensionPublic,
)
from server.api.deps import OperatorUser, SessionDep, StaffUser, known_query_only, staff_only
from server.api.schemas import HandLinePublic, LedgerLinePublic
from server.cardroom import suspensions
from server.store import hands

router = APIRouter(
    prefix="/admin", tags=["admin"], dependencies=[Depends(staff_only), Depends(known_query_only)]
)

Limit = Annotated[int, Query(ge=1, le=200)]
Cursor = Annotated[int | None, Query(ge=1, le=2**63 - 1)]


@router.get("/players")
async def search_players(
    _staff: StaffUser,
    session: SessionDep,
    prefix: Annotated[str, Query(max_length=32)] = "",
    limit: Limit = 50,
    offset: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
) -> PlayerPagePublic:
    """Accounts whose name starts with ``prefix`` (whatever its case), by name, paged."""
    found, total = await players.search(session, prefix=prefix, limit=limit, offset=offset)
    return PlayerPagePublic(
        players=[PlayerLinePublic.model_validate(a) for a in found],
        total=total,
        limit=limit,
        offset=offset,
    )


@router.get("/players/{name}")
async def player(
    name: str,
    _staff: StaffUser,
    session: SessionDep,
    entries: Limit = 20,
    entries_before: Cursor = None,
    hands_limit: Limit = 20,
    hands_before: Cursor = None,
) -> PlayerPublic:
    """One player: account, wallet balance, latest ledger movements, seats, latest hands
    (``unknown_player`` if no account has that name)."""
    account = await players.find(session, name=name)
    suspended = await suspensions.of(session, account_id=account.id)
    wallet = ledger.player_wallet(account.id)
    lines = await ledger.statement(session, wallet=wallet, limit=entries, before=entries_before)
    played = await hands.player_hands(
        session, account_id=account.id, before=hands_before, limit=hands_limit
    )
    return PlayerPublic(
        account=PlayerLinePublic.model_validate(account),
        balance=await ledger.balance(session, wallet=wallet),
        entries=[LedgerLinePublic.model_validate(line) for line in lines],
        next_entries_before=lines[-1].id if len(lines) == entries else None,
        seats=[
            SeatPublic.model_validate(s)
            for s in await players.seats(session, account_id=account.id)
        ],
        hands=[HandLinePublic.model_validate(h) for h in played],
        next_hands_before=played[-1].id if len(played) == hands_limit else None,
        suspension=SuspensionPublic.model_validate(suspended) if suspended else None,
    )


async def _adjust(
    session: SessionDep, operator: OperatorUser, name: str, amount: int, reason: str
) -> AdjustmentPublic:
    account = await players.find(session, name=name)
    done = await players.adjust(
        session, operator=operator, player=account, amount=amount, reason=reason
    )
    await session.commit()
    return AdjustmentPublic(
        player=done.player,
        amount=done.amount,
        balance_before=done.balance_before,
        balance_after=done.balance_after,
        ledger_entry=done.ledger_entry,
        audit_id=done.audit.id,
    )


@router.post("/players/{name}/credit")
async def credit(
    name: str, body: AdjustmentCreate, operator: OperatorUser, session: SessionDep
) -> AdjustmentPublic:
    """Chips from the house bankroll to the player's wallet, with the reason (audited)."""
    return await _adjust(session, operator, name, body.amount, body.reason)


@router.post("/players/{name}/debit")
async def debit(
    name: str, body: AdjustmentCreate, operator: OperatorUser, session: SessionDep
) -> AdjustmentPublic:
    """Chips from the player's wallet back to the house, with the reason (audited); never
    past the balance (``insufficient_funds``, nothing changed)."""
    return await _adjust(session, operator, name, -body.amount, body.reason)


@router.get("/audit")
async def audit(
    _staff: StaffUser,
    session: SessionDep,
    actor: Annotated[str | None, Query(max_length=80)] = None,
    action: Annotated[str | None, Query(max_length=64)] = None,
    target_kind: Annotated[str | None, Query(max_length=32)] = None,
    target_id: Annotated[str | None, Query(max_length=64)] = None,
    since: Annotated[AwareDatetime | None, Query()] = None,
    until: Annotated[AwareDatetime | None, Query()] = None,
    limit: Limit = 50,
    before: Cursor = None,
) -> AuditPagePublic:
    """The audit log, newest first: every filter given must hold (``since`` at or after,
    ``until`` before; ISO 8601 with a zone); ``before`` (an entry id) pages on."""
    query = audit_log.AuditQuery(
        actor=actor,
        action=action,
        target_kind=target_kind,
        target_id=target_id,
        since=since,
        until=until,
    )
    found = await audit_log.entries(session, query=query, before=before, limit=limit)
    return AuditPagePublic(
        entries=[AuditEntryPublic.model_validate(e) for e in found],
        next_before=found[-1].id if len(found) == limit else None,
    )
