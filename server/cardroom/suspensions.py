"""Suspending and kicking: an operator takes a player out of the game.

A suspension is a row of ``account_suspensions`` (when, by whom, why), every live token of
the account revoked and an audit entry, in one transaction; then, once committed, the
account's websockets are signed out on every node (``server.edge.sessions``) and it is removed
from every table where it sits (:class:`server.table.commands.Remove`, to the node that runs the
table): it leaves after the hand in play, its chips back to its wallet by the ledger's
cash-out. Unsuspending deletes the row (the audit log keeps the history); the player logs
in again. A kick is one table's removal, audited once the table has accepted it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.accounts import audit_log, tokens
from server.cardroom.cluster import TableHandle
from server.db.models import Account, AuditEntry, SeatRecord, Suspension
from server.db.types import utcnow
from server.table import commands as cmd


class AlreadySuspended(Refusal):
    code = ErrorCode.ALREADY_SUSPENDED


class NotSuspended(Refusal):
    code = ErrorCode.NOT_SUSPENDED


class Tables(Protocol):
    """What this needs of the cardroom (``server.cardroom.supervisor.Cardroom``): a table
    wherever it runs."""

    async def table(self, table_id: int) -> TableHandle | None: ...


async def of(session: AsyncSession, *, account_id: int) -> Suspension | None:
    """The account's suspension (None: not suspended)."""
    return await session.get(Suspension, account_id)


@dataclass(frozen=True, slots=True)
class Suspended:
    suspension: Suspension
    tokens_revoked: int
    audit: AuditEntry


def _described(row: Suspension) -> dict[str, Any]:
    return {"at": row.suspended_at.isoformat(), "by": row.suspended_by, "reason": row.reason}


async def suspend(
    session: AsyncSession, *, operator: Account, player: Account, reason: str
) -> Suspended:
    """Suspend the account and revoke its tokens, audited (``already_suspended`` when it
    is); the caller commits, then signs out and removes (:func:`remove_everywhere`)."""
    if await of(session, account_id=player.id) is not None:
        raise AlreadySuspended(f"{player.username} is suspended already")
    row = Suspension(
        account_id=player.id, suspended_at=utcnow(), suspended_by=operator.username, reason=reason
    )
    session.add(row)
    revoked = await tokens.revoke_all(session, account_id=player.id, now=row.suspended_at)
    audit = await audit_log.record(
        session,
        actor=operator,
        action=audit_log.AuditAction.PLAYER_SUSPEND,
        target_kind="player",
        target_id=player.username,
        before={"suspended": None},
        after={"suspended": _described(row), "tokens_revoked": revoked},
        reason=reason,
    )
    return Suspended(row, revoked, audit)


async def unsuspend(
    session: AsyncSession, *, operator: Account, player: Account, reason: str
) -> AuditEntry:
    """Lift the suspension, audited (``not_suspended`` when there is none); the caller
    commits. The player logs in again for a new token."""
    row = await of(session, account_id=player.id)
    if row is None:
        raise NotSuspended(f"{player.username} is not suspended")
    before = _described(row)
    await session.delete(row)
    await session.flush()
    return await audit_log.record(
        session,
        actor=operator,
        action=audit_log.AuditAction.PLAYER_UNSUSPEND,
        target_kind="player",
        target_id=player.username,
        before={"suspended": before},
        after={"suspended": None},
        reason=reason,
    )


@dataclass(frozen=True, slots=True)
class Removal:
    """One table's answer to a removal."""

    table_id: int
    seat: int | None
    after_hand: bool = False
    cashed_out: int | None = None
    error: ErrorCode | None = None


async def remove(tables: Tables, *, table_id: int, player: str, cause: str) -> Removal:
    """Remove the player from one table (run here or elsewhere); a refusal is raised
    (``unknown_table``, ``not_seated``, a table changing nodes...)."""
    handle = await tables.table(table_id)
    if handle is None:
        raise Refusal(f"no open table {table_id}", code=ErrorCode.UNKNOWN_TABLE)
    reply = await handle.submit(cmd.Remove(player=player, cause=cause))
    return Removal(
        table_id=table_id,
        seat=reply.get("seat"),
        after_hand=bool(reply.get("after_hand", False)),
        cashed_out=reply.get("cashed_out"),
    )


async def remove_everywhere(
    session: AsyncSession, tables: Tables, *, player: Account, cause: str
) -> list[Removal]:
    """Remove the player from every table where they hold a seat; a table that cannot be
    reached now says why (its sit-out limit cashes them out anyway: they never come back)."""
    table_ids = await session.scalars(
        select(SeatRecord.table_id)
        .where(SeatRecord.account_id == player.id)
        .order_by(SeatRecord.table_id)
    )
    done: list[Removal] = []
    for table_id in table_ids.all():
        try:
            done.append(
                await remove(tables, table_id=table_id, player=player.username, cause=cause)
            )
        except Refusal as refusal:
            done.append(Removal(table_id=table_id, seat=None, error=refusal.code))
    return done
