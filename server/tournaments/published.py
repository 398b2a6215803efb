"""A finished tournament as anyone may check it afterwards (``stud-verify``, docs/fairness.md):
its seat draw's seed, revealed now, its journal, its places and prizes, and every hand its
tables played as a spectator saw it. Keyword-only repository functions.

Nothing of this is published before the finish: every draw of a tournament (the start, each
table broken, the final table) takes the same seed, so the seed revealed sooner would tell
the seats of every table yet to break; and the journal names the players' chips after each
hand, which the tables show anyway. A hand is given as the table showed it to everyone
(``engine.views.visible_events`` with no seat): the cards dealt face up, those shown at the
showdown, each with its opening of the deck's commitment (``stud-deck/2``), never a card a
player kept hidden.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from engine.errors import Refusal
from engine.events import decode_all
from engine.protocol import ErrorCode
from engine.tournament import draw
from engine.views import visible_events
from server.db.models import (
    Account,
    HandPlayer,
    HandRecord,
    TableRecord,
    TournamentFact,
    TournamentRecord,
    TournamentStatus,
)
from server.store.deck_seal import DeckSeal
from server.store.hands import fairness_of
from server.store.tournament_hands import hand_at, tournament_tables
from server.tournaments import registry

HANDS_PAGE_MOST = 200


class TournamentNotFinished(Refusal):
    code = ErrorCode.TOURNAMENT_NOT_FINISHED


async def finished(session: AsyncSession, *, tournament_id: int) -> TournamentRecord:
    """The tournament's row once it is finished; :class:`TournamentNotFinished` before (and
    for one cancelled: nothing was drawn or played), ``UnknownTournament`` when none."""
    record = await registry.get(session, tournament_id=tournament_id)
    if record.status != TournamentStatus.FINISHED:
        raise TournamentNotFinished(
            f"tournament {record.id} is {record.status}: its record is published once it is "
            f"finished"
        )
    return record


async def tables_of(session: AsyncSession, *, tournament_id: int) -> dict[int, int]:
    """The tournament's tables: table id -> its number in the tournament."""
    rows = await session.execute(
        select(TableRecord.id, TableRecord.tournament_table).where(
            TableRecord.tournament_id == tournament_id
        )
    )
    return {int(table_id): int(number or 0) for table_id, number in rows.all()}


async def tournament_record(
    session: AsyncSession, *, tournament_id: int, seal: DeckSeal
) -> dict[str, Any]:
    """What ``stud-verify`` checks a finished tournament with, but its hands (a page at a time:
    :func:`tournament_hands`)."""
    record = await finished(session, tournament_id=tournament_id)
    seed = seal.open_bound(record.draw_seed, registry.draw_binding(record.id))["seed"]
    facts = (
        await session.scalars(
            select(TournamentFact)
            .where(TournamentFact.tournament_id == record.id)
            .order_by(TournamentFact.seq)
        )
    ).all()
    tables = await tables_of(session, tournament_id=record.id)
    hands = await session.scalar(
        select(func.count()).select_from(HandRecord).where(HandRecord.table_id.in_(list(tables)))
    )
    entries = await registry.entries(session, tournament_id=record.id)
    return {
        "id": record.id,
        "name": record.name,
        "status": record.status,
        "spec": record.spec,
        "draw": {"method": draw.METHOD, "commitment": record.draw_commitment, "seed": seed},
        "journal": [
            {"seq": fact.seq, "kind": fact.kind, "at": fact.at, "data": fact.data} for fact in facts
        ],
        "entries": [
            {
                "player": name,
                "number": entry.number,
                "status": entry.status,
                "place": entry.place,
                "prize": entry.prize,
            }
            for entry, name in entries
        ],
        "tables": [
            {"table": number, "table_id": table_id}
            for table_id, number in sorted(tables.items(), key=lambda item: item[1])
        ],
        "hands": int(hands or 0),
        "started_at": record.started_at,
        "finished_at": record.finished_at,
    }


@dataclass(frozen=True, slots=True)
class HandsPage:
    hands: list[dict[str, Any]]
    next_after: int | None


async def tournament_hands(
    session: AsyncSession, *, tournament_id: int, after: int | None = None, limit: int = 100
) -> HandsPage:
    """The finished tournament's hands in the order they were recorded (by id), after the
    hand ``after``: each as everyone saw it (no seat's down cards but those shown), with its
    table's number, its level, its players' chips and what ``stud-verify`` checks its deal
    with."""
    await finished(session, tournament_id=tournament_id)
    tables = await tables_of(session, tournament_id=tournament_id)
    query = (
        select(HandRecord)
        .where(HandRecord.table_id.in_(list(tables)))
        .order_by(HandRecord.id)
        .limit(limit)
    )
    if after is not None:
        query = query.where(HandRecord.id > after)
    records = list((await session.scalars(query)).all())
    rows = (
        await session.execute(
            select(HandPlayer, Account.username)
            .join(Account, Account.id == HandPlayer.account_id)
            .where(HandPlayer.hand_id.in_([hand.id for hand in records]))
            .order_by(HandPlayer.hand_id, HandPlayer.seat)
        )
    ).all()
    players: dict[int, list[dict[str, Any]]] = {}
    for part, name in rows:
        players.setdefault(part.hand_id, []).append(
            {"seat": part.seat, "player": name, "starting": part.starting, "ending": part.ending}
        )
    found = await tournament_tables(session, table_ids=tables)
    hands = []
    for hand in records:
        events = decode_all(hand.events)
        hands.append(
            {
                "id": hand.id,
                "table_id": hand.table_id,
                "table": tables[hand.table_id],
                "number": hand.number,
                "level": hand_at(found[hand.table_id], hand.config).level,
                "seat": None,
                "players": players.get(hand.id, []),
                "result": hand.result,
                "events": [event.record() for event in visible_events(events, None)],
                "fairness": fairness_of(
                    events, table_id=hand.table_id, number=hand.number, config=hand.config
                ),
                "created_at": hand.created_at,
            }
        )
    more = len(records) == limit
    return HandsPage(hands, records[-1].id if more and records else None)
