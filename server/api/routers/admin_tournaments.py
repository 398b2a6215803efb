"""The back office's tournaments: create one (from a shipped template or a full format),
edit it before its start, cancel it (every entry refunded); once it runs, pause and resume
it, move and disqualify players, add time to the level (requests its director takes, on
whichever node runs it); its results (its standing while it runs). Operators change;
support reads. Every change audited."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Response, status

from server.accounts import audit_log
from server.api.deps import CardroomDep, OperatorUser, SessionDep, known_query_only, staff_only
from server.api.routers.tournaments import tournament_details
from server.api.schemas import OperatorReason
from server.api.tournament_schemas import (
    AddTimeRequestBody,
    DisqualifyRequestBody,
    MoveRequestBody,
    OperatorRequestBody,
    TournamentCreate,
    TournamentPublic,
    TournamentRequestPublic,
    TournamentResultsPublic,
    TournamentUpdate,
)
from server.db.models import Account
from server.tournaments import registry, requests, results

# How long a request waits for the tournament's director before it is answered 202.
REQUEST_WAIT_SECONDS = 10.0

router = APIRouter(
    prefix="/admin", tags=["admin"], dependencies=[Depends(staff_only), Depends(known_query_only)]
)

TournamentId = Annotated[int, Path(ge=1, le=2**31 - 1, description="the tournament's id")]
RequestPk = Annotated[int, Path(ge=1, le=2**63 - 1, description="the request's id")]


@router.post("/tournaments", status_code=status.HTTP_201_CREATED)
async def create_tournament(
    body: TournamentCreate, operator: OperatorUser, session: SessionDep, cardroom: CardroomDep
) -> TournamentPublic:
    """A new tournament taking entries, from a template or a full format (``bad_structure``
    with the field at fault). Audited (``tournament.create``)."""
    record = await registry.create(
        session,
        name=body.name,
        template=body.template,
        spec=body.spec.posted() if body.spec is not None else None,
        starts_at=body.starts_at,
        created_by=operator.username,
        seal=cardroom.seal,
    )
    await audit_log.record(
        session,
        actor=operator,
        action=audit_log.AuditAction.TOURNAMENT_CREATE,
        target_kind="tournament",
        target_id=record.id,
        after=registry.summary(record),
    )
    await session.commit()
    return await tournament_details(session, record.id)


@router.patch("/tournaments/{tournament_id}")
async def update_tournament(
    tournament_id: TournamentId, body: TournamentUpdate, operator: OperatorUser, session: SessionDep
) -> TournamentPublic:
    """Edit a tournament before its start: name, start, format (not its buy-in or fee once
    anyone has paid). Audited (``tournament.update``)."""
    before, record = await registry.edit(
        session,
        tournament_id=tournament_id,
        name=body.name,
        spec=body.spec.posted() if body.spec is not None else None,
        starts_at=body.starts_at,
    )
    await audit_log.record(
        session,
        actor=operator,
        action=audit_log.AuditAction.TOURNAMENT_UPDATE,
        target_kind="tournament",
        target_id=record.id,
        before=before,
        after=registry.summary(record),
        reason=body.reason,
    )
    await session.commit()
    return await tournament_details(session, record.id)


@router.post("/tournaments/{tournament_id}/cancel")
async def cancel_tournament(
    tournament_id: TournamentId, body: OperatorReason, operator: OperatorUser, session: SessionDep
) -> TournamentPublic:
    """Cancel a tournament before its start: every entry's buy-in and fee go back to its
    player's wallet, in this request's transaction. Audited (``tournament.cancel``)."""
    record, refunded = await registry.cancel(
        session, tournament_id=tournament_id, reason=body.reason
    )
    await audit_log.record(
        session,
        actor=operator,
        action=audit_log.AuditAction.TOURNAMENT_CANCEL,
        target_kind="tournament",
        target_id=record.id,
        after={**registry.summary(record), "refunded": len(refunded)},
        reason=body.reason,
    )
    await session.commit()
    return await tournament_details(session, record.id)


@router.post(
    "/tournaments/{tournament_id}/pause",
    responses={202: {"description": "filed; its director has not taken it yet"}},
)
async def pause_tournament(
    tournament_id: TournamentId,
    body: OperatorRequestBody,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
    response: Response,
) -> TournamentRequestPublic:
    """Stop the tournament's clock: the hands in play are played out, no table deals
    another until it resumes (``tournament_paused`` if it is). Audited
    (``tournament.pause``)."""
    return await _ask("pause", {}, tournament_id, body, operator, session, cardroom, response)


@router.post(
    "/tournaments/{tournament_id}/resume",
    responses={202: {"description": "filed; its director has not taken it yet"}},
)
async def resume_tournament(
    tournament_id: TournamentId,
    body: OperatorRequestBody,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
    response: Response,
) -> TournamentRequestPublic:
    """Start the clock again where it stopped (``tournament_not_paused`` if it runs); the
    tables deal again. Audited (``tournament.resume``)."""
    return await _ask("resume", {}, tournament_id, body, operator, session, cardroom, response)


@router.post(
    "/tournaments/{tournament_id}/move",
    responses={202: {"description": "filed; its director has not taken it yet"}},
)
async def move_player(
    tournament_id: TournamentId,
    body: MoveRequestBody,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
    response: Response,
) -> TournamentRequestPublic:
    """Move a player to another table between their hands, with their chips: at once when
    their table is between hands (the outcome names the table, seat and chips), else when
    its hand ends (``after_hand_at``: their table). Refused: ``not_in_tournament``,
    ``unknown_tournament_table``, ``already_seated``, ``seat_taken``, ``bad_seat``,
    ``table_full``, ``move_pending``, ``already_disqualified``. Audited
    (``tournament.move``)."""
    return await _ask(
        "move", body.data(), tournament_id, body, operator, session, cardroom, response
    )


@router.post(
    "/tournaments/{tournament_id}/disqualify",
    responses={202: {"description": "filed; its director has not taken it yet"}},
)
async def disqualify_player(
    tournament_id: TournamentId,
    body: DisqualifyRequestBody,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
    response: Response,
) -> TournamentRequestPublic:
    """Disqualify a player: their chips out of play, no place, no prize. At once between
    their hands (``chips_removed``); during one their hand is killed and they leave when it
    ends (``after_hand_at``). Refused: ``not_in_tournament``, ``already_disqualified``.
    Audited (``tournament.disqualify``)."""
    return await _ask(
        "disqualify", body.data(), tournament_id, body, operator, session, cardroom, response
    )


@router.post(
    "/tournaments/{tournament_id}/add-time",
    responses={202: {"description": "filed; its director has not taken it yet"}},
)
async def add_time(
    tournament_id: TournamentId,
    body: AddTimeRequestBody,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
    response: Response,
) -> TournamentRequestPublic:
    """Lengthen the level (or break) in play by ``minutes`` (``level_not_timed`` for a
    level of hands or the last level). Audited (``tournament.add_time``)."""
    return await _ask(
        "add_time", body.data(), tournament_id, body, operator, session, cardroom, response
    )


@router.get("/tournaments/{tournament_id}/results")
async def tournament_results(
    tournament_id: TournamentId, session: SessionDep, cardroom: CardroomDep
) -> TournamentResultsPublic:
    """Places, prizes, players, entries, each player's chips and the totals (chips issued,
    in play, removed); while it runs, its standing now: the clock, the tables, the players
    left, the moves and disqualifications waiting for a hand."""
    found = await results.results(
        session, cardroom.sessionmaker, cardroom.seal, cardroom.bus, tournament_id=tournament_id
    )
    return TournamentResultsPublic.model_validate(found)


@router.get("/tournaments/{tournament_id}/requests/{request_pk}")
async def tournament_request(
    tournament_id: TournamentId, request_pk: RequestPk, session: SessionDep
) -> TournamentRequestPublic:
    """A request as it stands: waiting, done (its fact in the journal) or refused."""
    request = await requests.get(session, tournament_id=tournament_id, request_pk=request_pk)
    return TournamentRequestPublic.model_validate(requests.summary(request))


_AUDITED = {
    "pause": audit_log.AuditAction.TOURNAMENT_PAUSE,
    "resume": audit_log.AuditAction.TOURNAMENT_RESUME,
    "move": audit_log.AuditAction.TOURNAMENT_MOVE,
    "disqualify": audit_log.AuditAction.TOURNAMENT_DISQUALIFY,
    "add_time": audit_log.AuditAction.TOURNAMENT_ADD_TIME,
}


async def _ask(
    kind: str,
    data: dict[str, object],
    tournament_id: int,
    body: OperatorRequestBody,
    operator: Account,
    session: SessionDep,
    cardroom: CardroomDep,
    response: Response,
) -> TournamentRequestPublic:
    """File an operator's request (audited with it, in its transaction: who asked, why),
    wake the director, answer its outcome: done, refused (its code, nothing changed), or
    still waiting (202, readable at ``/requests/{id}``)."""
    request, filed = await requests.file(
        session,
        tournament_id=tournament_id,
        kind=kind,
        data=dict(data),
        asked_by=f"operator:{operator.username}",
        request_id=body.request_id,
    )
    if filed:
        await audit_log.record(
            session,
            actor=operator,
            action=_AUDITED[kind],
            target_kind="tournament",
            target_id=tournament_id,
            after=requests.summary(request),
            reason=body.reason,
        )
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
    return TournamentRequestPublic.model_validate(requests.summary(request))
