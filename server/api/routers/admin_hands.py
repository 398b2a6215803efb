"""The back office's read side of play: any hand (found by table, player and time, its PHH
file and its event log) and the live list of tables.

Staff only (``deps.staff_only`` on the router): operators and support accounts read it;
players, bots and anonymous callers do not.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import PlainTextResponse

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.accounts import audit_log
from server.accounts.registry import USERNAME_PATTERN
from server.api.deps import (
    CardroomDep,
    OperatorUser,
    SessionDep,
    SettingsDep,
    StaffUser,
    known_query_only,
    staff_only,
)
from server.api.schemas import HandEventsPublic, HandRowPagePublic, HandRowPublic, LiveTablePublic
from server.store import deck_seal, hand_records

router = APIRouter(
    prefix="/admin", tags=["admin"], dependencies=[Depends(staff_only), Depends(known_query_only)]
)

# What the database's id columns hold (a hand's id is a 64-bit integer, a table's 32-bit):
# anything else is a bad value (400), not a question for the database.
HandId = Annotated[int, Path(ge=1, le=2**63 - 1, description="the hand's id")]


class BadTime(Refusal):
    code = ErrorCode.BAD_REQUEST


def _aware(name: str, value: datetime | None) -> datetime | None:
    """The time in UTC; a time without an offset (or past the calendar in UTC) is refused."""
    if value is None:
        return None
    if value.utcoffset() is None:
        raise BadTime(f"{name}: give the time with its offset (e.g. 2026-12-01T08:00:00Z)")
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise BadTime(f"{name}: {value.isoformat()} is outside the calendar in UTC") from None


@router.get("/hands")
async def find_hands(
    _staff: StaffUser,
    session: SessionDep,
    table: Annotated[int | None, Query(ge=1, le=2**31 - 1, description="the table's id")] = None,
    player: Annotated[
        str | None, Query(pattern=USERNAME_PATTERN, description="a player's name (any case)")
    ] = None,
    since: Annotated[
        datetime | None, Query(description="ended at or after (ISO 8601, with an offset)")
    ] = None,
    until: Annotated[
        datetime | None, Query(description="ended before (ISO 8601, with an offset)")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
) -> HandRowPagePublic:
    """Every recorded hand meeting all the filters given, newest first, a page at a time:
    the total, and the offset of the next page (None: the last)."""
    page = await hand_records.find_hands(
        session,
        table_id=table,
        player=player,
        since=_aware("since", since),
        until=_aware("until", until),
        limit=limit,
        offset=offset,
    )
    return HandRowPagePublic(
        total=page.total,
        hands=[HandRowPublic.model_validate(row) for row in page.hands],
        next_offset=page.next_offset,
    )


@router.get("/hands/{hand_id}")
async def hand_record(hand_id: HandId, _staff: StaffUser, session: SessionDep) -> dict[str, Any]:
    """A hand's full record, every card in it: PHH text, event log, result."""
    hand = await hand_records.hand(session, hand_id=hand_id)
    return {
        "id": hand.id,
        "table_id": hand.table_id,
        "number": hand.number,
        "phh": await hand_records.phh_text(session, hand),
        "events": hand.events,
        "result": hand.result,
        "created_at": hand.created_at,
    }


@router.get(
    "/hands/{hand_id}/phh",
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/plain": {}}, "description": "the hand's PHH file"}},
)
async def hand_phh(hand_id: HandId, _staff: StaffUser, session: SessionDep) -> PlainTextResponse:
    """The hand's PHH file (every card), to download; 404 ``no_phh`` when PHH cannot
    express its table's rules."""
    text, filename = await hand_records.phh_file(session, hand_id=hand_id)
    return PlainTextResponse(
        text, headers={"Content-Disposition": f'attachment; filename="{filename}"'}
    )


@router.get("/hands/{hand_id}/events")
async def hand_events(hand_id: HandId, _staff: StaffUser, session: SessionDep) -> HandEventsPublic:
    """The hand's full event log, each event with who it was sent to."""
    hand = await hand_records.hand(session, hand_id=hand_id)
    events = await hand_records.event_log(session, hand_id=hand_id)
    return HandEventsPublic.model_validate(
        {"id": hand.id, "table_id": hand.table_id, "number": hand.number, "events": events}
    )


@router.post(
    "/hands/{hand_id}/open-deck",
    responses={404: {"description": "error code unknown_hand, or no_deck (none kept)"}},
)
async def hand_deck(
    hand_id: HandId, operator: OperatorUser, session: SessionDep, cardroom: CardroomDep
) -> dict[str, Any]:
    """The whole deck of a stud-deck/2 hand opened, for an audit or a player's dispute (every
    position's card, salt and path to the commitment, the server seed, the deal order): an
    operator's act, not a read (support may not), written to the audit log
    (``hand.open_deck``)."""
    hand = await hand_records.hand(session, hand_id=hand_id)
    opened = deck_seal.full_opening(hand, cardroom.seal)
    await audit_log.record(
        session,
        actor=operator,
        action=audit_log.AuditAction.HAND_OPEN_DECK,
        target_kind="hand",
        target_id=hand_id,
        after={"table_id": hand.table_id, "number": hand.number},
    )
    await session.commit()
    return opened


@router.get("/tables/live")
async def live_tables(
    _staff: StaffUser,
    cardroom: CardroomDep,
    settings: SettingsDep,
    stuck_after: Annotated[
        float | None,
        Query(
            gt=0,
            allow_inf_nan=False,
            description="seconds; default: the server's STUD_STUCK_AFTER_SECONDS",
        ),
    ] = None,
) -> list[LiveTablePublic]:
    """Every open table as it is now: run here, by another node (as it told lately) or
    between nodes; its street, players and stacks, pot, hand number and the seconds since
    it last moved, ``stuck`` when a hand has not moved for longer than ``stuck_after``."""
    threshold = settings.stuck_after_seconds if stuck_after is None else stuck_after
    return [
        LiveTablePublic.model_validate(row) for row in cardroom.live_tables(stuck_after=threshold)
    ]
