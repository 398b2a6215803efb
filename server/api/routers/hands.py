"""A player's own hand histories: the list, and one hand as the player saw it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import PlainTextResponse

from server.api.deps import CardroomDep, CurrentUser, SessionDep, SettingsDep
from server.api.schemas import HandLinePublic, HandPagePublic, HandPublic
from server.edge.overload import SHED_RESPONSE, shed_when_busy
from server.store import hands

# Listings can wait: shed while the node is behind (server/edge/overload.py).
router = APIRouter(
    tags=["hands"], dependencies=[Depends(shed_when_busy("hands"))], responses=SHED_RESPONSE
)

# What the database's id column holds: anything else is a bad value (400).
HandId = Annotated[int, Path(ge=1, le=2**63 - 1, description="the hand's id")]


@router.get("/hands")
async def list_hands(
    user: CurrentUser,
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    before: Annotated[
        int | None, Query(ge=1, le=2**63 - 1, description="a hand id: older hands only")
    ] = None,
) -> HandPagePublic:
    """Your hands, newest first, a page at a time."""
    lines = await hands.player_hands(session, account_id=user.id, before=before, limit=limit)
    return HandPagePublic(
        hands=[HandLinePublic.model_validate(line) for line in lines],
        next_before=lines[-1].id if len(lines) == limit else None,
    )


@router.get("/hands/{hand_id}", responses={404: {"description": "error code unknown_hand"}})
async def get_hand(hand_id: HandId, user: CurrentUser, session: SessionDep) -> HandPublic:
    """One of your hands: its event log as your seat saw it (others' down cards only where
    shown at showdown), the result, the PHH text when it shows nothing you did not see, and
    what ``stud-verify`` checks the deal with (docs/fairness.md)."""
    seen = await hands.player_hand(session, hand_id=hand_id, account_id=user.id)
    return HandPublic.model_validate(
        {
            **HandLinePublic.model_validate(seen.line).model_dump(),
            "players": seen.players,
            "result": seen.result,
            "events": seen.events,
            "phh": seen.phh,
            "phh_withheld": seen.phh_withheld,
            "fairness": seen.fairness,
        }
    )


@router.get(
    "/hands/{hand_id}/phh",
    response_class=PlainTextResponse,
    responses={
        200: {"content": {"text/plain": {}}, "description": "the hand's PHH file as you saw it"},
        404: {"description": "error code unknown_hand (not one of yours) or no_phh"},
    },
)
async def get_hand_phh(
    hand_id: HandId, user: CurrentUser, session: SessionDep
) -> PlainTextResponse:
    """One of your hands as a PHH file, to download: your down cards, the others' only where
    shown at the showdown (unseen cards written ``??``, as PHH writes unknown cards); 404
    ``no_phh`` when PHH cannot express its table's rules."""
    text, filename = await hands.player_phh(session, hand_id=hand_id, account_id=user.id)
    return PlainTextResponse(
        text, headers={"Content-Disposition": f'attachment; filename="{filename}"'}
    )


@router.get(
    "/hands/{hand_id}/deck",
    responses={
        403: {"description": "error code deck_not_published (not yet, or never here)"},
        404: {"description": "error code unknown_hand (not one of yours) or no_deck"},
    },
)
async def get_hand_deck(
    hand_id: HandId,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    cardroom: CardroomDep,
) -> dict[str, Any]:
    """One of your stud-deck/2 hands' whole deck opened (every position's card, salt and path,
    the server seed, the deal order), where the cardroom publishes decks: the setting
    ``publish_deck_after_seconds`` after the hand ended (off by default: 403
    ``deck_not_published``; docs/fairness.md)."""
    return await hands.published_deck(
        session,
        hand_id=hand_id,
        account_id=user.id,
        seal=cardroom.seal,
        after_seconds=settings.publish_deck_after_seconds,
        now=datetime.now(UTC),
    )
