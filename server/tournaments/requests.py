"""Requests to a running tournament: filed by the API on whichever node a player or an
operator reaches, taken by the tournament's director on whichever node runs it.

A request is a row (``tournament_requests``) and a wake on the tournament's channel. The
director takes the waiting requests in the order they came, each as a fact of its journal
in one transaction with the request marked done (or refused, nothing changed, its code in
the outcome), so a request is taken once whatever crashes, and a director that takes over
finds the ones still waiting. The API waits a little for the outcome and answers it; a
director slow to come (its node lost, the lease not yet lapsed) leaves the request waiting,
answered ``202`` and readable later.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.bus.memory import Bus, tournament_requests_channel
from server.db.models import TournamentRecord, TournamentRequest, TournamentStatus
from server.tournaments import registry


class UnknownRequest(Refusal):
    code = ErrorCode.UNKNOWN_REQUEST


async def file(
    session: AsyncSession,
    *,
    tournament_id: int,
    kind: str,
    data: dict[str, Any],
    asked_by: str,
    request_id: str | None = None,
) -> tuple[TournamentRequest, bool]:
    """The request written (not committed) and True, or the one ``request_id`` filed
    already and False: a tournament not running refuses it (``tournament_not_started``,
    ``tournament_over``)."""
    if request_id is not None:
        filed = await session.scalar(
            select(TournamentRequest).where(
                TournamentRequest.tournament_id == tournament_id,
                TournamentRequest.asked_by == asked_by,
                TournamentRequest.request_id == request_id,
            )
        )
        if filed is not None:
            return filed, False
    record = await registry.get(session, tournament_id=tournament_id)
    check_running(record)
    request = TournamentRequest(
        tournament_id=tournament_id,
        kind=kind,
        data=data,
        asked_by=asked_by,
        request_id=request_id,
    )
    session.add(request)
    await session.flush()
    return request, True


async def count_waiting(session: AsyncSession) -> int:
    """Requests filed and not yet taken, across the cardroom (``/metrics``)."""
    count = await session.scalar(
        select(func.count())
        .select_from(TournamentRequest)
        .where(TournamentRequest.done_at.is_(None))
    )
    return int(count or 0)


def check_running(record: TournamentRecord) -> None:
    if record.status == TournamentStatus.REGISTERING:
        raise Refusal(
            f"tournament {record.id} has not started", code=ErrorCode.TOURNAMENT_NOT_STARTED
        )
    if record.status != TournamentStatus.RUNNING:
        raise Refusal(f"tournament {record.id} is {record.status}", code=ErrorCode.TOURNAMENT_OVER)


async def wake(bus: Bus, tournament_id: int) -> None:
    """The tournament's director told a request waits (it also looks every second)."""
    await bus.publish(tournament_requests_channel(tournament_id), {"kind": "request"})


async def outcome(
    sessionmaker: async_sessionmaker[AsyncSession],
    request_pk: int,
    *,
    timeout: float,
    every: float = 0.05,
) -> TournamentRequest:
    """The request once its director has taken or refused it, or as it stands after
    ``timeout`` seconds (still waiting)."""
    deadline = time.monotonic() + timeout
    while True:
        async with sessionmaker() as session:
            request = await session.get(TournamentRequest, request_pk)
        if request is None:
            raise UnknownRequest(f"no request {request_pk}")
        if request.done_at is not None or time.monotonic() >= deadline:
            return request
        await asyncio.sleep(every)


async def get(session: AsyncSession, *, tournament_id: int, request_pk: int) -> TournamentRequest:
    request = await session.get(TournamentRequest, request_pk)
    if request is None or request.tournament_id != tournament_id:
        raise UnknownRequest(f"no request {request_pk} in tournament {tournament_id}")
    return request


def refusal_of(request: TournamentRequest) -> Refusal | None:
    """The refusal a request met, to answer as the API answers any (None: taken, or
    waiting)."""
    outcome = request.outcome or {}
    if "code" not in outcome:
        return None
    return Refusal(str(outcome.get("message", "")), code=ErrorCode(outcome["code"]))


def summary(request: TournamentRequest) -> dict[str, Any]:
    return {
        "id": request.id,
        "kind": request.kind,
        "data": request.data,
        "asked_by": request.asked_by,
        "request_id": request.request_id,
        "status": (
            "waiting"
            if request.done_at is None
            else "refused"
            if refusal_of(request) is not None
            else "done"
        ),
        "fact_seq": request.fact_seq,
        "outcome": request.outcome,
    }
