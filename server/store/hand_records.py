"""Every recorded hand, for staff: found by table, player and time, each with its full
record (PHH file, event log with every event's audience). Keyword-only repository
functions; a player's own view of their hands is ``server.store.hands``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.models import Account, HandPlayer, HandRecord, TableRecord
from server.store.hands import NoPhh, UnknownHand
from server.store.tournament_hands import phh_name, tournament_hand, tournament_phh


@dataclass(frozen=True, slots=True)
class HandPart:
    """One player's part in a hand: seat, chips before and after."""

    seat: int
    player: str
    starting: int
    ending: int


@dataclass(frozen=True, slots=True)
class HandRow:
    """One hand in the back office's list."""

    id: int
    table_id: int
    table_name: str
    number: int
    ended_at: datetime
    players: list[HandPart]
    pot: int
    cancelled: bool
    rake: int = 0


@dataclass(frozen=True, slots=True)
class HandPage:
    total: int
    hands: list[HandRow]
    next_offset: int | None


def _pot(result: dict[str, Any]) -> int:
    return sum(int(pot["amount"]) for pot in result.get("pots", ()))


async def find_hands(
    session: AsyncSession,
    *,
    table_id: int | None = None,
    player: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = 50,
    offset: int = 0,
) -> HandPage:
    """The hands that meet every filter given, newest first: ``player`` by name (any case),
    ``since`` inclusive and ``until`` exclusive on the time the hand ended; a page of them
    and how many there are in all."""
    matching: Select[tuple[int]] = select(HandRecord.id)
    if table_id is not None:
        matching = matching.where(HandRecord.table_id == table_id)
    if player is not None:
        matching = matching.where(
            HandRecord.id.in_(
                select(HandPlayer.hand_id)
                .join(Account, Account.id == HandPlayer.account_id)
                .where(func.lower(Account.username) == player.lower())
            )
        )
    if since is not None:
        matching = matching.where(HandRecord.created_at >= since)
    if until is not None:
        matching = matching.where(HandRecord.created_at < until)
    total = (await session.execute(select(func.count()).select_from(matching.subquery()))).scalar()
    rows = (
        await session.execute(
            select(HandRecord, TableRecord.name)
            .join(TableRecord, TableRecord.id == HandRecord.table_id)
            .where(HandRecord.id.in_(matching.scalar_subquery()))
            .order_by(HandRecord.id.desc())
            .limit(limit)
            .offset(offset)
        )
    ).all()
    parts = await _parts(session, [hand.id for hand, _ in rows])
    hands = [
        HandRow(
            id=hand.id,
            table_id=hand.table_id,
            table_name=name,
            number=hand.number,
            ended_at=hand.created_at,
            players=parts.get(hand.id, []),
            pot=_pot(hand.result),
            cancelled=bool(hand.result.get("cancelled")),
            rake=hand.rake,
        )
        for hand, name in rows
    ]
    count = int(total or 0)
    following = offset + len(hands)
    return HandPage(total=count, hands=hands, next_offset=following if following < count else None)


async def _parts(session: AsyncSession, hand_ids: list[int]) -> dict[int, list[HandPart]]:
    if not hand_ids:
        return {}
    rows = (
        await session.execute(
            select(HandPlayer, Account.username)
            .join(Account, Account.id == HandPlayer.account_id)
            .where(HandPlayer.hand_id.in_(hand_ids))
            .order_by(HandPlayer.hand_id, HandPlayer.seat)
        )
    ).all()
    parts: dict[int, list[HandPart]] = {}
    for part, username in rows:
        parts.setdefault(part.hand_id, []).append(
            HandPart(part.seat, username, part.starting, part.ending)
        )
    return parts


async def hand(session: AsyncSession, *, hand_id: int) -> HandRecord:
    """The hand's record, or :class:`UnknownHand`."""
    record = await session.get(HandRecord, hand_id)
    if record is None:
        raise UnknownHand(f"no hand {hand_id}")
    return record


async def phh_file(session: AsyncSession, *, hand_id: int) -> tuple[str, str]:
    """The hand's PHH file and a name for it; :class:`NoPhh` when PHH cannot express the
    rules of its table (its record keeps no PHH text)."""
    record = await hand(session, hand_id=hand_id)
    if not record.phh:
        raise NoPhh(f"hand {hand_id} has no PHH file: PHH cannot express its table's rules")
    found = await tournament_hand(session, table_id=record.table_id, config=record.config)
    text = tournament_phh(record.phh, found, record.number)
    return text, phh_name(record.table_id, record.number, found)


async def phh_text(session: AsyncSession, record: HandRecord) -> str:
    """The hand's PHH text as exported: a tournament's hand with its tournament, level,
    table and number (``server.store.tournament_hands``)."""
    found = await tournament_hand(session, table_id=record.table_id, config=record.config)
    return tournament_phh(record.phh, found, record.number)


async def event_log(session: AsyncSession, *, hand_id: int) -> list[dict[str, Any]]:
    """The hand's every event as stored (``kind``, ``data``, ``to``: None for everyone,
    else the one seat it was sent to), with its ``audience`` in words: ``everyone`` or the
    name of the player in that seat."""
    record = await hand(session, hand_id=hand_id)
    seats = {p.seat: p.player for p in (await _parts(session, [hand_id])).get(hand_id, [])}
    log = []
    for event in record.events:
        to = event.get("to")
        audience = "everyone" if to is None else seats.get(to, f"seat {to}")
        log.append({**event, "audience": audience})
    return log
