"""The requests a tournament's director takes (``server.tournaments.requests``): an
operator's pause, resume, move, disqualification or added time, a player's deal at the
final table, and the purchases a player pays for in play (an entry, a rebuy, an add-on:
``server.tournaments.purchases``).

Each waiting request, in the order it came, becomes a fact of the journal in one
transaction with what it settles and the request marked done, or is refused with nothing
changed (its code in the outcome), marked done alone. A purchase is checked first (a refusal
debits nothing), then its fact, its money and what it settles are written together.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, cast

from sqlalchemy import CursorResult, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.errors import Refusal
from engine.protocol import ErrorCode
from engine.tournament.run import Disqualified, Order, SeatPlayer, TournamentRun
from engine.tournament.spec import TournamentSpec
from server.db.models import TournamentFact, TournamentRequest
from server.db.types import utcnow
from server.tournaments import final_deals, purchases
from server.tournaments.announcer import Told

# What each request becomes in the journal (``server.tournaments.requests``).
REQUEST_FACTS = {
    "pause": "paused",
    "resume": "resumed",
    # an operator's moves, disqualifications and added time
    "move": "moved",
    "disqualify": "disqualified",
    "add_time": "time_added",
    **final_deals.REQUEST_FACTS,
    **purchases.PAID_FACTS,
}
_OVER = ErrorCode.TOURNAMENT_OVER


class Taker(Protocol):
    """What taking a request needs of its director (``server.tournaments.director``)."""

    tournament_id: int
    sessionmaker: async_sessionmaker[AsyncSession]
    spec: TournamentSpec | None
    seq: int
    clock: Callable[[], float]

    def _run(self) -> TournamentRun: ...

    def _replay(self, fact: TournamentFact) -> list[Order]: ...

    async def _settle(
        self, session: AsyncSession, fact: TournamentFact, orders: list[Order]
    ) -> int: ...

    async def carry_out(self, orders: list[Order]) -> None: ...

    def _told(self, kind: str, orders: list[Order]) -> Told: ...

    async def deliver(self, orders: list[Order], told: list[Told]) -> None: ...


async def take_requests(director: Taker) -> None:
    """The requests waiting, in the order they came: each a fact of the journal, or
    refused with nothing changed; either way marked done in the fact's transaction."""
    async with director.sessionmaker() as session:
        waiting = list(
            (
                await session.scalars(
                    select(TournamentRequest)
                    .where(
                        TournamentRequest.tournament_id == director.tournament_id,
                        TournamentRequest.done_at.is_(None),
                    )
                    .order_by(TournamentRequest.id)
                )
            ).all()
        )
    for request in waiting:
        if director._run().over:
            await _refuse(director, request, Refusal("the tournament is over", code=_OVER))
            continue
        kind = REQUEST_FACTS.get(request.kind)
        if kind is None:
            await _refuse(director, request, Refusal(f"no request {request.kind!r}"))
            continue
        fact = TournamentFact(
            tournament_id=director.tournament_id,
            seq=director.seq + 1,
            kind=kind,
            at=director.clock(),
            data=dict(request.data),
        )
        if request.kind in purchases.PAID_FACTS:
            await _take_paid(director, request, fact)
            continue
        try:
            orders = director._replay(fact)
        except Refusal as refusal:  # the run's state is as it was
            await _refuse(director, request, refusal)
            continue
        async with director.sessionmaker() as session:
            session.add(fact)
            last = await director._settle(session, fact, orders)
            outcome = {"ok": True, **_taken(director._run(), request, orders)}
            await _done(session, request, outcome, fact_seq=fact.seq)
            await session.commit()
        director.seq = last
        await director.deliver(orders, [director._told(kind, orders)])


def _taken(run: TournamentRun, request: TournamentRequest, orders: list[Order]) -> dict[str, Any]:
    """What an operator's move or disqualification did: done (where to, the chips out
    of play), or waiting for the player's hand to end (at which table)."""
    player = request.data.get("player")
    if request.kind not in ("move", "disqualify") or not isinstance(player, str):
        return {}
    for order in orders:
        if isinstance(order, SeatPlayer) and order.player == player:
            return {"table": order.table, "seat": order.seat, "chips": order.stack}
        if isinstance(order, Disqualified) and order.player == player:
            return {"chips_removed": order.chips}
    waiting = [n for n, t in run.tables.items() if player in t.seats.values()]
    return {"after_hand_at": waiting[0] if waiting else None}


async def _take_paid(director: Taker, request: TournamentRequest, fact: TournamentFact) -> None:
    """A player's entry, rebuy or add-on: checked (a refusal changes nothing, debits
    nothing), then the fact, its money and what it settles in one transaction."""
    assert director.spec is not None
    async with director.sessionmaker() as session:
        try:
            account = await purchases.check(session, director._run(), director.spec, fact)
        except Refusal as refusal:
            await session.rollback()
            await _refuse(director, request, refusal)
            return
        orders = director._replay(fact)
        entry = await purchases.pay(
            session,
            tournament_id=director.tournament_id,
            spec=director.spec,
            fact=fact,
            account=account,
            request=request,
        )
        session.add(fact)
        last = await director._settle(session, fact, orders)
        outcome = purchases.outcome(director.spec, fact, entry)
        await _done(session, request, outcome, fact_seq=fact.seq)
        await session.commit()
    director.seq = last
    await director.deliver(orders, [director._told(fact.kind, orders)])


async def _refuse(director: Taker, request: TournamentRequest, refusal: Refusal) -> None:
    async with director.sessionmaker() as session:
        await _done(session, request, {"code": refusal.code.value, "message": refusal.message})
        await session.commit()


async def _done(
    session: AsyncSession,
    request: TournamentRequest,
    outcome: dict[str, Any],
    *,
    fact_seq: int | None = None,
) -> None:
    """The request marked done, unless another director marked it first (then this
    transaction fails, as its fact's number is taken too)."""
    done = await session.execute(
        update(TournamentRequest)
        .where(TournamentRequest.id == request.id, TournamentRequest.done_at.is_(None))
        .values(done_at=utcnow(), outcome=outcome, fact_seq=fact_seq)
    )
    if cast(CursorResult[Any], done).rowcount != 1:
        raise RuntimeError(f"request {request.id} was taken by another director")
