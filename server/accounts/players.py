"""Players as the back office sees them: search, one player's account, chips, seats and
hands, and an operator's credit or debit. Keyword-only repository functions; no commits.

A credit or debit is one ledger movement against the house bankroll
(:func:`server.accounts.ledger.adjust`) and one audit entry
(:mod:`server.accounts.audit_log`), in the caller's transaction: both are committed, or
neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.accounts import audit_log, ledger, registry
from server.db.models import Account, AuditEntry, SeatRecord, TableRecord


class UnknownPlayer(Refusal):
    code = ErrorCode.UNKNOWN_PLAYER


def _escaped(prefix: str) -> str:
    """``prefix`` as a LIKE pattern that matches it literally (``_`` and ``%`` included)."""
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


async def search(
    session: AsyncSession, *, prefix: str = "", limit: int = 50, offset: int = 0
) -> tuple[list[Account], int]:
    """Accounts whose name starts with ``prefix`` (whatever its case), by name; and how many
    match in all."""
    match = func.lower(Account.username).like(_escaped(prefix.lower()), escape="\\")
    total = await session.scalar(select(func.count()).select_from(Account).where(match))
    rows = await session.scalars(
        select(Account)
        .where(match)
        .order_by(func.lower(Account.username), Account.id)
        .limit(limit)
        .offset(offset)
    )
    return list(rows.all()), int(total or 0)


async def find(session: AsyncSession, *, name: str) -> Account:
    """The account of that name (whatever its case), or :class:`UnknownPlayer`."""
    account = await registry.find_by_username(session, username=name)
    if account is None:
        raise UnknownPlayer(f"no account named {name!r}")
    return account


@dataclass(frozen=True, slots=True)
class Seat:
    table_id: int
    table_name: str
    seat: int
    chips: int
    updated_at: datetime


async def seats(session: AsyncSession, *, account_id: int) -> list[Seat]:
    """The seats the player holds now, with every chip they have at each table."""
    rows = await session.execute(
        select(SeatRecord, TableRecord.name)
        .join(TableRecord, TableRecord.id == SeatRecord.table_id)
        .where(SeatRecord.account_id == account_id)
        .order_by(SeatRecord.table_id)
    )
    return [
        Seat(
            table_id=seat.table_id,
            table_name=name,
            seat=seat.seat,
            chips=seat.chips,
            updated_at=seat.updated_at,
        )
        for seat, name in rows.all()
    ]


@dataclass(frozen=True, slots=True)
class Adjustment:
    """A credit or debit done: the wallet before and after, its ledger row, its audit entry."""

    player: str
    amount: int  # chips in (> 0) or out (< 0) of the player's wallet
    balance_before: int
    balance_after: int
    ledger_entry: int
    audit: AuditEntry


async def adjust(
    session: AsyncSession, *, operator: Account, player: Account, amount: int, reason: str
) -> Adjustment:
    """Credit (``amount`` > 0) or debit (< 0) the player's wallet against the house, with the
    reason; a debit past the balance raises ``InsufficientFunds`` and changes nothing."""
    entry = await ledger.adjust(
        session, account_id=player.id, amount=amount, reference=reason[:128]
    )
    after = await ledger.balance(session, wallet=ledger.player_wallet(player.id))
    before = after - amount  # read under the movement's lock: exact
    audit = await audit_log.record(
        session,
        actor=operator,
        action=audit_log.AuditAction.PLAYER_CREDIT
        if amount > 0
        else audit_log.AuditAction.PLAYER_DEBIT,
        target_kind="player",
        target_id=player.username,
        before={"balance": before},
        after={"balance": after, "ledger_entry": entry.id},
        reason=reason,
    )
    return Adjustment(
        player=player.username,
        amount=amount,
        balance_before=before,
        balance_after=after,
        ledger_entry=entry.id,
        audit=audit,
    )
