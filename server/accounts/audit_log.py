"""The audit log: every operator action, and every table a node moved, appended and never
changed. Keyword-only repository functions; no commits.

:func:`record` goes in the transaction of the change it records (the caller commits both,
or neither happens); nothing here updates or deletes an entry. :func:`entries` reads the log,
newest first, paged by a cursor (``before``: an entry id).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.models import AuditEntry


class AuditAction(enum.StrEnum):
    """What an operator did."""

    TABLE_CREATE = "table.create"
    TABLE_UPDATE = "table.update"
    TABLE_PAUSE = "table.pause"
    TABLE_RESUME = "table.resume"
    TABLE_CLOSE = "table.close"
    TABLE_ROTATION = "table.rotation"  # a mixed table's rotation set, from its next switch
    HAND_VOID = "hand.void"
    HAND_OPEN_DECK = "hand.open_deck"
    PLAYER_CREDIT = "player.credit"
    PLAYER_DEBIT = "player.debit"
    PLAYER_SUSPEND = "player.suspend"
    PLAYER_UNSUSPEND = "player.unsuspend"
    PLAYER_KICK = "player.kick"
    BOT_CREATE = "bot.create"
    NODE_DRAIN = "node.drain"
    NODE_UNDRAIN = "node.undrain"
    TABLE_MOVE = "table.move"  # a table changed nodes (before/after name them; reason: why)
    TOURNAMENT_CREATE = "tournament.create"
    TOURNAMENT_UPDATE = "tournament.update"
    TOURNAMENT_CANCEL = "tournament.cancel"
    TOURNAMENT_PAUSE = "tournament.pause"
    TOURNAMENT_RESUME = "tournament.resume"
    TOURNAMENT_MOVE = "tournament.move"
    TOURNAMENT_DISQUALIFY = "tournament.disqualify"
    TOURNAMENT_ADD_TIME = "tournament.add_time"


class Staff(Protocol):
    """Who acted: an ``Account``, a table's note of the operator who asked it, or a node on
    its own (:class:`NodeActor`: no account)."""

    @property
    def id(self) -> int | None: ...

    @property
    def username(self) -> str: ...


@dataclass(frozen=True, slots=True)
class NodeActor:
    """A node acting on its own, with no staff account behind it (it moved a table)."""

    node_id: str

    @property
    def id(self) -> None:
        return None

    @property
    def username(self) -> str:
        return f"node:{self.node_id}"


async def record(
    session: AsyncSession,
    *,
    actor: Staff,
    action: AuditAction,
    target_kind: str,
    target_id: str | int,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    reason: str | None = None,
) -> AuditEntry:
    """Append one entry (flushed, not committed: it commits with the change it records)."""
    entry = AuditEntry(
        actor_id=actor.id,
        actor=actor.username,
        action=action.value,
        target_kind=target_kind,
        target_id=str(target_id),
        before=before,
        after=after,
        reason=reason,
    )
    session.add(entry)
    await session.flush()
    return entry


@dataclass(frozen=True, slots=True)
class AuditQuery:
    """Which entries: every filter given must hold (None: any)."""

    actor: str | None = None  # the staff account's name, whatever its case
    action: str | None = None
    target_kind: str | None = None
    target_id: str | None = None
    since: datetime | None = None  # at or after
    until: datetime | None = None  # before


async def entries(
    session: AsyncSession, *, query: AuditQuery, before: int | None = None, limit: int = 50
) -> list[AuditEntry]:
    """The entries that match, newest first; ``before``: only entries with a smaller id."""
    statement = select(AuditEntry).order_by(AuditEntry.id.desc()).limit(limit)
    if query.actor is not None:
        statement = statement.where(func.lower(AuditEntry.actor) == query.actor.lower())
    if query.action is not None:
        statement = statement.where(AuditEntry.action == query.action)
    if query.target_kind is not None:
        statement = statement.where(AuditEntry.target_kind == query.target_kind)
    if query.target_id is not None:
        statement = statement.where(AuditEntry.target_id == query.target_id)
    if query.since is not None:
        statement = statement.where(AuditEntry.created_at >= query.since)
    if query.until is not None:
        statement = statement.where(AuditEntry.created_at < query.until)
    if before is not None:
        statement = statement.where(AuditEntry.id < before)
    return list((await session.scalars(statement)).all())
