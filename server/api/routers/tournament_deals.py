"""Deals at the final table, for the players left (signed in): propose one, accept or
decline the one offered. Each is a request its tournament's director takes, on whichever
node runs it (``server.tournaments.requests``); the answer is the request as the director
left it, and the deal as it stands (also in ``GET /tournaments/{id}``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Response, status

from engine.tournament import offers
from server.api.deps import CardroomDep, CurrentUser, SessionDep
from server.api.routers.tournaments import deal_now
from server.api.tournament_schemas import (
    DealAnswerBody,
    DealProposalBody,
    DealRequestPublic,
)
from server.db.models import Account
from server.edge.overload import SHED_RESPONSE, shed_when_busy
from server.tournaments import requests

# How long a request waits for the tournament's director before it is answered 202.
REQUEST_WAIT_SECONDS = 10.0

router = APIRouter(
    tags=["tournaments"],
    dependencies=[Depends(shed_when_busy("tournaments"))],
    responses={**SHED_RESPONSE, 202: {"description": "filed; its director has not taken it yet"}},
)

TournamentId = Annotated[int, Path(ge=1, le=2**31 - 1, description="the tournament's id")]


@router.post("/tournaments/{tournament_id}/deal")
async def propose_deal(
    tournament_id: TournamentId,
    body: DealProposalBody,
    user: CurrentUser,
    session: SessionDep,
    cardroom: CardroomDep,
    response: Response,
) -> DealRequestPublic:
    """Propose a deal at the final table: its amounts are worked out on the stacks once the
    hand in play ends, and shown to every player left (``deal`` in the answer and in
    ``GET /tournaments/{id}``); no hand is dealt while it stands. Refused:
    ``not_final_table``, ``deal_offer_standing``, ``not_playing``, ``bad_deal``."""
    data = {
        "player": user.username,
        "method": body.method,
        "played_for": body.played_for,
        "seconds": offers.DEAL_OFFER_SECONDS,
    }
    return await _ask(
        "deal", data, tournament_id, body.request_id, user, session, cardroom, response
    )


@router.post("/tournaments/{tournament_id}/deal/accept")
async def accept_deal(
    tournament_id: TournamentId,
    body: DealAnswerBody,
    user: CurrentUser,
    session: SessionDep,
    cardroom: CardroomDep,
    response: Response,
) -> DealRequestPublic:
    """Accept the deal offered (``offer``: its number, as shown): once every player left has,
    each is paid their amount at once and play goes on for the amount played for.
    Refused: ``no_deal_offer`` (none, another, not shown yet, out of time), ``not_playing``."""
    data = {"player": user.username, "offer": body.offer}
    return await _ask(
        "deal_accept", data, tournament_id, body.request_id, user, session, cardroom, response
    )


@router.post("/tournaments/{tournament_id}/deal/decline")
async def decline_deal(
    tournament_id: TournamentId,
    body: DealAnswerBody,
    user: CurrentUser,
    session: SessionDep,
    cardroom: CardroomDep,
    response: Response,
) -> DealRequestPublic:
    """Decline the deal offered (or proposed): it is withdrawn, and play goes on."""
    data = {"player": user.username, "offer": body.offer}
    return await _ask(
        "deal_decline", data, tournament_id, body.request_id, user, session, cardroom, response
    )


async def _ask(
    kind: str,
    data: dict[str, Any],
    tournament_id: int,
    request_id: str,
    user: Account,
    session: SessionDep,
    cardroom: CardroomDep,
    response: Response,
) -> DealRequestPublic:
    """File a player's request, wake the director, answer its outcome: done, refused (its
    code, nothing changed), or still waiting (202)."""
    request, filed = await requests.file(
        session,
        tournament_id=tournament_id,
        kind=kind,
        data=data,
        asked_by=user.username,
        request_id=request_id,
    )
    if filed:
        await session.commit()
    await requests.wake(cardroom.bus, tournament_id)
    request = await requests.outcome(
        cardroom.sessionmaker, request.id, timeout=REQUEST_WAIT_SECONDS
    )
    refusal = requests.refusal_of(request)
    if refusal is not None:
        raise refusal
    if request.done_at is None:
        response.status_code = status.HTTP_202_ACCEPTED
    async with cardroom.sessionmaker() as fresh:
        deal = await deal_now(fresh, tournament_id)
    return DealRequestPublic(**requests.summary(request), deal=deal)
