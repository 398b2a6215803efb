"""What a tournament's fact settles, written in its transaction (``Director``): the records
of what it decided (a deal's, the chips a disqualified player took out of play), the
players out placed and paid (their prizes through the ledger), a deal's amounts paid, an
entry out before the prizes are fixed marked out, a new table's row, the tournament
finished.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from engine.tournament import journal
from engine.tournament.offers import DealMade
from engine.tournament.run import (
    Busted,
    Disqualified,
    Finished,
    OpenTable,
    Order,
    Placed,
    PrizesFixed,
    TournamentRun,
)
from server.accounts import ledger
from server.db.models import EntryStatus, TournamentFact, TournamentRecord, TournamentStatus
from server.db.types import utcnow
from server.tournaments import final_deals, purchases, registry

log = logging.getLogger(__name__)


def records(orders: list[Order]) -> list[tuple[str, dict[str, Any]]]:
    """The records of a fact's orders (``engine.tournament.journal.RECORD_KINDS``), in their
    order: (kind, data): a deal's, and the chips a disqualified player took out of play."""
    found: list[tuple[str, dict[str, Any]]] = []
    for order in orders:
        if isinstance(order, Disqualified):
            found.append((journal.REMOVED, {"player": order.player, "chips": order.chips}))
        else:
            found += final_deals.records([order])
    return found


async def settle(
    session: AsyncSession,
    *,
    run: TournamentRun,
    fact: TournamentFact,
    orders: list[Order],
    make_table: Callable[[AsyncSession, int], Awaitable[None]],
) -> int:
    """The places and prizes a fact decided, the deals, and the tournament's end; the
    journal's last fact after it (its deal records follow it)."""
    tournament_id, seq = fact.tournament_id, fact.seq
    for kind, data in records(orders):
        seq += 1
        session.add(
            TournamentFact(tournament_id=tournament_id, seq=seq, kind=kind, at=fact.at, data=data)
        )
    for order in orders:
        if isinstance(order, DealMade):
            await final_deals.pay(session, tournament_id, order)
        elif isinstance(order, Placed):
            await _pay(session, tournament_id, order)
        elif isinstance(order, Disqualified):
            await _disqualify(session, tournament_id, run, order)
        elif isinstance(order, Busted):
            await purchases.mark_out(session, tournament_id, order.player, order.entry)
        elif isinstance(order, OpenTable):
            await make_table(session, order.table)
        elif isinstance(order, PrizesFixed):
            log.info("tournament %s: prizes fixed %s", tournament_id, order)
        elif isinstance(order, Finished):
            await session.execute(
                update(TournamentRecord)
                .where(TournamentRecord.id == tournament_id)
                .values(status=TournamentStatus.FINISHED.value, finished_at=utcnow())
            )
    return seq


async def _disqualify(
    session: AsyncSession, tournament_id: int, run: TournamentRun, order: Disqualified
) -> None:
    """Out with no place and no prize (the journal says why: its ``disqualified``
    fact, and the chips that left play: its ``chips_removed`` record)."""
    entry = await purchases.entry_in_play(
        session,
        tournament_id=tournament_id,
        player=order.player,
        ordinal=run.entries[order.player],
    )
    entry.status, entry.left_at = EntryStatus.OUT.value, utcnow()
    entry.place = None
    entry.prize = entry.prize or 0
    await session.flush()


async def _pay(session: AsyncSession, tournament_id: int, placed: Placed) -> None:
    finish = placed.finish
    entry = await purchases.entry_in_play(
        session, tournament_id=tournament_id, player=finish.player, ordinal=placed.entry
    )
    if entry.status != EntryStatus.OUT.value:  # out now; else out since it busted
        entry.status, entry.left_at = EntryStatus.OUT.value, utcnow()
    entry.place = finish.place
    entry.prize = (entry.prize or 0) + finish.prize  # a deal's amounts paid already
    if finish.prize:
        await ledger.pay_prize(
            session,
            account_id=entry.account_id,
            tournament_id=tournament_id,
            amount=finish.prize,
            entry=registry.entry_reference(entry),
        )
    await session.flush()
