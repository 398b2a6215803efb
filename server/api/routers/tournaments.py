"""Tournaments for players: the list and each one's details (public), registering and
unregistering (signed in). The money of an entry moves in the request's transaction
(``server.tournaments.registry``); once it is committed, the entry's event (``registered``,
``unregistered``) goes to the player's websockets and to the tournament's followers
(``server.tournaments.announcer``). Once the tournament runs, an entry (late registration, a
re-entry), a rebuy and the add-on are requests its director takes and pays in its own
transaction (``server.tournaments.purchases``): the answer is its outcome."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Response, status
from fastapi.responses import JSONResponse

from engine.tournament.games import sheet
from engine.tournament.payouts import payouts
from engine.tournament.templates import TEMPLATES
from server.accounts import ledger
from server.api.deps import (
    CardroomDep,
    CurrentUser,
    EntryTurnsDep,
    OptionalUser,
    SessionDep,
    StandingsDep,
)
from server.api.tournament_schemas import (
    DealPublic,
    EntryPublic,
    PurchaseCreate,
    RegistrationCreate,
    RegistrationPublic,
    SheetLinePublic,
    TournamentHandPagePublic,
    TournamentHandPublic,
    TournamentPublic,
    TournamentRecordPublic,
    TournamentRequestPublic,
    TournamentSpecBody,
    TournamentSummaryPublic,
    TournamentTableSeatsPublic,
    YourEntryPublic,
)
from server.db.models import (
    Account,
    EntryStatus,
    TournamentEntry,
    TournamentRecord,
    TournamentRequest,
    TournamentStatus,
)
from server.edge.overload import SHED_RESPONSE, shed_when_busy
from server.tournaments import final_deals, published, registry, requests, results
from server.tournaments.announcer import announce_entry
from server.tournaments.standing import Seating, Standings

# How long a player's request waits for the tournament's director before it is answered 202.
REQUEST_WAIT_SECONDS = 10.0
_WAITING: dict[int | str, dict[str, Any]] = {
    202: {"model": TournamentRequestPublic, "description": "filed; not taken yet"}
}

router = APIRouter(
    tags=["tournaments"],
    dependencies=[Depends(shed_when_busy("tournaments"))],
    responses=SHED_RESPONSE,
)

TournamentId = Annotated[int, Path(ge=1, le=2**31 - 1, description="the tournament's id")]
RequestPk = Annotated[int, Path(ge=1, le=2**63 - 1, description="the request's id")]


async def summary(
    session: SessionDep, record: TournamentRecord, entrants: int
) -> TournamentSummaryPublic:
    format_ = registry.spec_of(record)
    return TournamentSummaryPublic(
        id=record.id,
        name=record.name,
        kind=format_.kind,
        variant=format_.variant,
        games=list(format_.games),
        betting=format_.betting,
        buy_in=format_.buy_in,
        fee=format_.fee,
        status=record.status,
        starts_at=record.starts_at,
        entrants=entrants,
        max_entrants=format_.max_entrants,
        prize_pool=await ledger.balance(session, wallet=ledger.tournament_pool(record.id)),
    )


@router.get("/tournaments")
async def list_tournaments(
    session: SessionDep,
    status_: Annotated[
        list[TournamentStatus] | None,
        Query(alias="status", description="any of these (default: registering and running)"),
    ] = None,
    kind: Annotated[Literal["sit_and_go", "scheduled"] | None, Query()] = None,
    game: Annotated[
        str | None,
        Query(max_length=32, description="a variant's name (a mixed tournament: any it plays)"),
    ] = None,
    buy_in_min: Annotated[int | None, Query(ge=0, le=2**62)] = None,
    buy_in_max: Annotated[int | None, Query(ge=0, le=2**62)] = None,
) -> list[TournamentSummaryPublic]:
    """Tournaments, the soonest first, filtered by status, kind, game and buy-in."""
    statuses = status_ or [TournamentStatus.REGISTERING, TournamentStatus.RUNNING]
    found = await registry.find(
        session,
        statuses=statuses,
        kind=kind,
        variant=game,
        buy_in_min=buy_in_min,
        buy_in_max=buy_in_max,
    )
    return [await summary(session, record, entrants) for record, entrants in found]


@router.get("/tournaments/templates")
async def list_templates() -> dict[str, TournamentSpecBody]:
    """The shipped formats an operator may make a tournament from, by name, each as a format
    is posted (a mixed tournament's levels name their games)."""
    return {
        name: TournamentSpecBody.model_validate(spec.to_dict())
        for name, spec in sorted(TEMPLATES.items())
    }


@router.get("/tournaments/{tournament_id}")
async def tournament(
    tournament_id: TournamentId,
    session: SessionDep,
    standings: StandingsDep,
    user: OptionalUser,
    entries: Annotated[
        bool, Query(description="false: leave the list of entries out (a big field's)")
    ] = True,
) -> TournamentPublic:
    """One tournament: its format, the entrants, the prize pool and the prizes by place as
    the field stands, the commitment to its seat draw; while it runs, its tables with their
    players and chips; signed in, your own entry (your table and seat while you play)."""
    player = user.username if user is not None else None
    return await tournament_details(
        session, tournament_id, standings=standings, player=player, with_entries=entries
    )


async def tournament_details(
    session: SessionDep,
    tournament_id: int,
    *,
    standings: Standings | None = None,
    player: str | None = None,
    with_entries: bool = True,
) -> TournamentPublic:
    """A tournament's details (``GET /tournaments/{id}``); its tables only with the node's
    ``standings`` (read from the journal, as ``tournament_state`` is)."""
    record = await registry.get(session, tournament_id=tournament_id)
    entries = await registry.entries(session, tournament_id=record.id)
    active = sum(1 for entry, _ in entries if entry.status in registry.ACTIVE)
    head = await summary(session, record, active)
    format_ = registry.spec_of(record)
    # The prizes by the field and the pool so far: every entry paid, every chip of the pool
    # (those paid out as prizes too).
    field = sum(1 for entry, _ in entries if entry.status in registry.PAID)
    pool = head.prize_pool + sum(entry.prize or 0 for entry, _ in entries)
    bought = await registry.bought(session, tournament_id=record.id) if with_entries else {}
    seating = None
    if standings is not None and record.status == TournamentStatus.RUNNING:
        seating = await standings.seating(record.id)
    stacks = seating.stacks if seating is not None else {}
    return TournamentPublic(
        **head.model_dump(),
        template=record.template,
        spec=record.spec,
        sheet=[SheetLinePublic.model_validate(line.to_dict()) for line in sheet(format_)],
        draw_commitment=record.draw_commitment,
        payouts=list(payouts(pool, field, format_.payout_table)) if field >= 2 else [],
        entries=[
            EntryPublic(
                player=name,
                number=entry.number,
                status=results.entry_status(entry),
                place=entry.place,
                prize=entry.prize,
                rebuys=bought.get(entry.id, (0, False))[0],
                add_on=bought.get(entry.id, (0, False))[1],
                chips=stacks.get(name) if entry.status == EntryStatus.PLAYING else None,
            )
            for entry, name in entries
        ]
        if with_entries
        else None,
        tables=[TournamentTableSeatsPublic.model_validate(t) for t in seating.tables]
        if seating is not None
        else [],
        you=_yours(entries, player, seating),
        cancelled_reason=record.cancelled_reason,
        deal=await deal_now(session, record.id),
    )


def _yours(
    entries: list[tuple[TournamentEntry, str]], player: str | None, seating: Seating | None
) -> YourEntryPublic | None:
    """The player's entry in play (else their latest), with their table and seat."""
    mine = [entry for entry, name in entries if name == player]
    if player is None or not mine:
        return None
    entry = next(
        (e for e in mine if e.status in registry.ACTIVE), max(mine, key=lambda e: e.number)
    )
    playing = seating is not None and entry.status == EntryStatus.PLAYING
    where = seating.where.get(player) if seating is not None and playing else None
    return YourEntryPublic(
        status=results.entry_status(entry),
        number=entry.number,
        stack=seating.stacks.get(player) if seating is not None and playing else None,
        table_id=where[0] if where is not None else None,
        table_number=where[1] if where is not None else None,
        seat=where[2] if where is not None else None,
        place=entry.place,
        prize=entry.prize,
    )


async def deal_now(session: SessionDep, tournament_id: int) -> DealPublic | None:
    """The deal proposed or offered now, else the last deal made (docs/tournaments.md)."""
    deal = await final_deals.view(session, tournament_id)
    return DealPublic.model_validate(deal) if deal is not None else None


NOT_FINISHED: dict[int | str, dict[str, Any]] = {
    404: {"description": "error code unknown_tournament"},
    409: {"description": "error code tournament_not_finished: published once it is"},
}


@router.get("/tournaments/{tournament_id}/record", responses=NOT_FINISHED)
async def tournament_record(
    tournament_id: TournamentId, session: SessionDep, cardroom: CardroomDep
) -> TournamentRecordPublic:
    """A finished tournament as ``stud-verify`` checks it (docs/fairness.md): the seed of its
    seat draws, revealed now, its journal of play, its places and prizes."""
    found = await published.tournament_record(
        session, tournament_id=tournament_id, seal=cardroom.seal
    )
    return TournamentRecordPublic.model_validate(found)


@router.get("/tournaments/{tournament_id}/hands", responses=NOT_FINISHED)
async def tournament_hands(
    tournament_id: TournamentId,
    session: SessionDep,
    after: Annotated[
        int | None, Query(ge=1, le=2**63 - 1, description="a hand id: later hands only")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=published.HANDS_PAGE_MOST)] = 100,
) -> TournamentHandPagePublic:
    """A finished tournament's hands, oldest first, a page at a time, each as everyone at
    its table saw it, with what ``stud-verify`` checks its deal with."""
    page = await published.tournament_hands(
        session, tournament_id=tournament_id, after=after, limit=limit
    )
    return TournamentHandPagePublic(
        hands=[TournamentHandPublic.model_validate(hand) for hand in page.hands],
        next_after=page.next_after,
    )


@router.post(
    "/tournaments/{tournament_id}/register",
    status_code=status.HTTP_201_CREATED,
    response_model=RegistrationPublic,
    responses={
        200: {"description": "this request_id had registered already: its entry"},
        **_WAITING,
    },
)
async def register(
    tournament_id: TournamentId,
    body: RegistrationCreate,
    user: CurrentUser,
    session: SessionDep,
    cardroom: CardroomDep,
    turns: EntryTurnsDep,
    response: Response,
) -> RegistrationPublic | JSONResponse:
    """Enter the tournament: the buy-in and the fee leave your wallet now. The same
    ``request_id`` again answers with the entry it made (200), never paying twice. Once it
    runs: a late entry, or a re-entry once out, while late registration lasts (taken by its
    director, 202 while it has not)."""
    account_id, name = user.id, user.username  # the rollback below expires the row
    try:
        async with turns.of(tournament_id):
            made = await registry.register(
                session,
                tournament_id=tournament_id,
                account_id=account_id,
                request_id=body.request_id,
            )
            await session.commit()
    except registry.RegistrationClosed:
        await session.rollback()
        record = await registry.get(session, tournament_id=tournament_id)
        late = registry.spec_of(record).late_registration_levels
        if record.status != TournamentStatus.RUNNING or late is None:
            raise
        return await _enter_late(
            tournament_id, body.request_id, account_id, name, session, cardroom
        )
    if not made.made:
        response.status_code = status.HTTP_200_OK
    else:
        await _announce(session, cardroom, made.entry, user.username, "registered")
    return _registration(made.entry, created=made.made)


async def _enter_late(
    tournament_id: int,
    request_id: str,
    account_id: int,
    name: str,
    session: SessionDep,
    cardroom: CardroomDep,
) -> JSONResponse:
    """An entry into a running tournament: a request its director takes (and pays)."""
    made = await registry.by_request(
        session, tournament_id=tournament_id, account_id=account_id, request_id=request_id
    )
    if made is not None:
        return _entry_answer(made, created=False)
    request, filed = await _ask("enter", tournament_id, request_id, name, session, cardroom)
    if request.done_at is None:
        return _waiting(request)
    made = await registry.by_request(
        session, tournament_id=tournament_id, account_id=account_id, request_id=request_id
    )
    if made is None:
        raise LookupError(f"request {request.id} was taken without its entry")
    if filed:
        await _announce(session, cardroom, made, name, "registered")
    return _entry_answer(made, created=filed)


@router.post(
    "/tournaments/{tournament_id}/rebuy", response_model=TournamentRequestPublic, responses=_WAITING
)
async def rebuy(
    tournament_id: TournamentId,
    body: PurchaseCreate,
    user: CurrentUser,
    session: SessionDep,
    cardroom: CardroomDep,
) -> TournamentRequestPublic | JSONResponse:
    """Buy the format's rebuy chips for the buy-in and the fee, during the rebuy period,
    holding at most the starting chips (or out of chips, for a while): added before your
    next hand. The same ``request_id`` again finds the request it filed, paid once."""
    return await _purchase("rebuy", tournament_id, body, user, session, cardroom)


@router.post(
    "/tournaments/{tournament_id}/add-on",
    response_model=TournamentRequestPublic,
    responses=_WAITING,
)
async def add_on(
    tournament_id: TournamentId,
    body: PurchaseCreate,
    user: CurrentUser,
    session: SessionDep,
    cardroom: CardroomDep,
) -> TournamentRequestPublic | JSONResponse:
    """Take the add-on, once, in its time (the level after the rebuy period), whatever your
    stack: its chips for the buy-in and the fee, added before your next hand."""
    return await _purchase("add_on", tournament_id, body, user, session, cardroom)


@router.get("/tournaments/{tournament_id}/requests/{request_pk}")
async def my_request(
    tournament_id: TournamentId, request_pk: RequestPk, user: CurrentUser, session: SessionDep
) -> TournamentRequestPublic:
    """One of your requests to a running tournament as it stands: waiting, done, refused."""
    request = await requests.get(session, tournament_id=tournament_id, request_pk=request_pk)
    if request.asked_by != user.username:
        raise requests.UnknownRequest(f"no request {request_pk} of yours in {tournament_id}")
    return TournamentRequestPublic.model_validate(requests.summary(request))


async def _purchase(
    kind: str,
    tournament_id: int,
    body: PurchaseCreate,
    user: Account,
    session: SessionDep,
    cardroom: CardroomDep,
) -> TournamentRequestPublic | JSONResponse:
    request, _ = await _ask(kind, tournament_id, body.request_id, user.username, session, cardroom)
    if request.done_at is None:
        return _waiting(request)
    return TournamentRequestPublic.model_validate(requests.summary(request))


async def _ask(
    kind: str,
    tournament_id: int,
    request_id: str,
    player: str,
    session: SessionDep,
    cardroom: CardroomDep,
) -> tuple[TournamentRequest, bool]:
    """File the player's request (or find the one this ``request_id`` filed), wake the
    director, wait for its outcome: the request as it stands, and whether this call filed
    it; its refusal raised (nothing paid)."""
    request, filed = await requests.file(
        session,
        tournament_id=tournament_id,
        kind=kind,
        data={"player": player},
        asked_by=player,
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
    return request, filed


def _waiting(request: TournamentRequest) -> JSONResponse:
    """Filed, its director not come yet: 202 and the request, to read again later."""
    return JSONResponse(
        TournamentRequestPublic.model_validate(requests.summary(request)).model_dump(mode="json"),
        status_code=status.HTTP_202_ACCEPTED,
    )


@router.delete("/tournaments/{tournament_id}/register")
async def unregister(
    tournament_id: TournamentId,
    user: CurrentUser,
    session: SessionDep,
    cardroom: CardroomDep,
    turns: EntryTurnsDep,
) -> RegistrationPublic:
    """Take your entry back before the start: the buy-in and the fee return to your wallet."""
    async with turns.of(tournament_id):
        entry = await registry.unregister(session, tournament_id=tournament_id, account_id=user.id)
        await session.commit()
    await _announce(session, cardroom, entry, user.username, "unregistered")
    return _registration(entry, created=False)


async def _announce(
    session: SessionDep, cardroom: CardroomDep, entry: TournamentEntry, player: str, kind: str
) -> None:
    """The entry's event, with the field as it stands once committed."""
    record = await registry.get(session, tournament_id=entry.tournament_id)
    entrants = await registry.entrants(session, tournament_id=record.id)
    await session.commit()
    await announce_entry(
        cardroom.bus,
        tournament_id=record.id,
        player=player,
        kind=kind,
        entrants=entrants,
        max_entrants=registry.spec_of(record).max_entrants,
        key=f"{kind}:{entry.id}",
    )


def _registration(entry: TournamentEntry, *, created: bool) -> RegistrationPublic:
    return RegistrationPublic(
        tournament_id=entry.tournament_id,
        status=entry.status,
        number=entry.number,
        buy_in=entry.buy_in,
        fee=entry.fee,
        created=created,
    )


def _entry_answer(entry: TournamentEntry, *, created: bool) -> JSONResponse:
    """A late entry: 201 made by this request, 200 by an earlier one with its id."""
    public = _registration(entry, created=created)
    code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
    return JSONResponse(public.model_dump(mode="json"), status_code=code)
