"""Hand histories as a player may read them. Keyword-only repository functions.

A player reads only the hands they were dealt into, and sees of each exactly what their
seat saw at the table: the events addressed to everyone or to their seat
(``engine.views.visible_events``), so other players' down cards appear only where a
``showdown`` event showed them. The stored PHH text names every card dealt; it is handed
out only when the player saw every one of those cards, decided from the same events.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from engine import fair, fair2, phh, phh_export
from engine.errors import Refusal
from engine.events import Event, HandEnded, HandStarted, decode_all
from engine.protocol import ErrorCode
from engine.table_events import HandCancelled
from engine.views import visible_events
from server.db.models import Account, HandPlayer, HandRecord, TableRecord
from server.store.deck_seal import DeckSeal, full_opening
from server.store.tournament_hands import (
    TournamentHand,
    hand_at,
    phh_fields,
    phh_name,
    tournament_tables,
    with_fields,
)


class UnknownHand(Refusal):
    code = ErrorCode.UNKNOWN_HAND


class NoPhh(Refusal):
    code = ErrorCode.NO_PHH


@dataclass(frozen=True, slots=True)
class HandLine:
    """One hand in a player's list."""

    id: int
    table_id: int
    table_name: str
    variant: str
    number: int
    seat: int
    starting: int
    ending: int
    cancelled: bool
    created_at: datetime
    tournament: TournamentHand | None = None  # a tournament's hand: which, table and level

    @property
    def net(self) -> int:
        return self.ending - self.starting

    @property
    def tournament_id(self) -> int | None:
        return None if self.tournament is None else self.tournament.tournament_id

    @property
    def tournament_name(self) -> str | None:
        return None if self.tournament is None else self.tournament.name

    @property
    def tournament_table(self) -> int | None:
        return None if self.tournament is None else self.tournament.table

    @property
    def level(self) -> int | None:
        return None if self.tournament is None else self.tournament.level


async def player_hands(
    session: AsyncSession, *, account_id: int, before: int | None = None, limit: int = 20
) -> list[HandLine]:
    """The player's hands, newest first; ``before``: only hands with a smaller id (paging)."""
    query = (
        select(HandRecord, HandPlayer, TableRecord.name, TableRecord.variant)
        .join(HandPlayer, HandPlayer.hand_id == HandRecord.id)
        .join(TableRecord, TableRecord.id == HandRecord.table_id)
        .where(HandPlayer.account_id == account_id)
        .order_by(HandRecord.id.desc())
        .limit(limit)
    )
    if before is not None:
        query = query.where(HandRecord.id < before)
    rows = (await session.execute(query)).all()
    tables = await tournament_tables(session, table_ids=[hand.table_id for hand, *_ in rows])
    return [
        HandLine(
            id=hand.id,
            table_id=hand.table_id,
            table_name=name,
            # The hand's own game: a mixed table's (or tournament's) hands differ.
            variant=(hand.config or {}).get("variant", variant),
            number=hand.number,
            seat=part.seat,
            starting=part.starting,
            ending=part.ending,
            cancelled=bool(hand.result.get("cancelled")),
            created_at=hand.created_at,
            tournament=(
                hand_at(tables[hand.table_id], hand.config) if hand.table_id in tables else None
            ),
        )
        for hand, part, name, variant in rows
    ]


@dataclass(frozen=True, slots=True)
class HandSeen:
    """A hand as one of its players may see it."""

    line: HandLine
    players: list[dict[str, Any]]
    result: dict[str, Any]
    events: list[dict[str, Any]]
    phh: str | None
    phh_withheld: str | None
    fairness: dict[str, Any] | None = None


async def player_hand(session: AsyncSession, *, hand_id: int, account_id: int) -> HandSeen:
    """The hand as the player saw it, or :class:`UnknownHand` (also for others' hands)."""
    line = await _own_line(session, hand_id=hand_id, account_id=account_id)
    hand = await session.get(HandRecord, hand_id)
    assert hand is not None
    parts = (
        await session.execute(
            select(HandPlayer, Account.username)
            .join(Account, Account.id == HandPlayer.account_id)
            .where(HandPlayer.hand_id == hand_id)
            .order_by(HandPlayer.seat)
        )
    ).all()
    players = [
        {"seat": part.seat, "player": username, "starting": part.starting, "ending": part.ending}
        for part, username in parts
    ]
    events = decode_all(hand.events)
    seen = visible_events(events, line.seat)
    phh_text, withheld = _phh_for(hand.phh, line, seen)
    return HandSeen(
        line=line,
        players=players,
        result=hand.result,
        events=[e.record() for e in seen],
        phh=phh_text,
        phh_withheld=withheld,
        fairness=fairness_of(
            events, table_id=line.table_id, number=line.number, config=hand.config
        ),
    )


async def player_phh(session: AsyncSession, *, hand_id: int, account_id: int) -> tuple[str, str]:
    """The hand's PHH file as the player's seat saw it (others' unseen down cards ``??``)
    and a name for it; :class:`UnknownHand` for a hand the player was not dealt into,
    :class:`NoPhh` when PHH cannot express the rules of its table."""
    line = await _own_line(session, hand_id=hand_id, account_id=account_id)
    hand = await session.get(HandRecord, hand_id)
    assert hand is not None
    seen = visible_events(decode_all(hand.events), line.seat)
    text, _ = _phh_for(hand.phh, line, seen)
    if text is None:
        raise NoPhh(f"hand {hand_id} has no PHH file: PHH cannot express its table's rules")
    return text, phh_name(line.table_id, line.number, line.tournament)


async def _own_line(session: AsyncSession, *, hand_id: int, account_id: int) -> HandLine:
    # The largest id there is (64 bits) has no id past it to page from: the newest line.
    before = hand_id + 1 if hand_id < 2**63 - 1 else None
    lines = await player_hands(session, account_id=account_id, before=before, limit=1)
    if not lines or lines[0].id != hand_id:
        raise UnknownHand(f"no hand {hand_id} of yours")
    return lines[0]


def fairness_of(
    events: list[Event], *, table_id: int, number: int, config: dict[str, Any] | None
) -> dict[str, Any] | None:
    """What a player checks the deal with (docs/fairness.md): the commitment and client seeds
    of ``hand_started``, the hand's identity and its rules; for ``stud-deck/1``, the server
    seed ``hand_ended`` (or a void's ``hand_cancelled``) revealed (``stud-deck/2`` reveals
    none: the openings of the cards the player saw are in the events). None for a hand not
    dealt from a provably fair deck."""
    started = next((e for e in events if isinstance(e, HandStarted)), None)
    if started is None or started.commitment is None or config is None:
        return None
    if started.method == fair2.METHOD:  # no seed is revealed: the openings are in the events
        return {
            "method": fair2.METHOD,
            "table_id": table_id,
            "hand": number,
            "commitment": started.commitment,
            "client_seeds": [{"seat": seat, "seed": seed} for seat, seed in started.client_seeds],
            "config": config,
        }
    revealed = next(
        (e.server_seed for e in events if isinstance(e, HandEnded | HandCancelled)), None
    )
    if revealed is None:
        return None
    return {
        "method": fair.METHOD,
        "table_id": table_id,
        "hand": number,
        "commitment": started.commitment,
        "server_seed": revealed,
        "client_seeds": [{"seat": seat, "seed": seed} for seat, seed in started.client_seeds],
        "config": config,
    }


def _phh_for(text: str, line: HandLine, seen: list[Event]) -> tuple[str | None, str | None]:
    """The hand's PHH as this seat saw it: others' down cards it never saw written ``??``; a
    tournament's hand with its tournament, level, table and number."""
    if not text:
        return None, "no_phh"  # PHH has no code for this game
    history = phh.loads(text)
    seats = list(history.fields.get("seats", []))
    seat = line.seat
    if seat + 1 not in seats:
        return None, "no_phh"
    tabled = [seats.index(e.data["seat"] + 1) for e in seen if e.kind == "showdown"]
    mine = phh_export.as_seen_by(history, seats.index(seat + 1), tabled)
    if line.tournament is not None:
        mine = with_fields(mine, phh_fields(line.tournament, line.number))
    return phh.dumps(mine), None


class DeckNotPublished(Refusal):
    code = ErrorCode.DECK_NOT_PUBLISHED


async def published_deck(
    session: AsyncSession,
    *,
    hand_id: int,
    account_id: int,
    seal: DeckSeal,
    after_seconds: float | None,
    now: datetime,
) -> dict[str, Any]:
    """The whole deck of one of the player's stud-deck/2 hands, once the cardroom publishes
    it (``publish_deck_after_seconds`` after the hand ended; never by default):
    :class:`DeckNotPublished` before, :class:`UnknownHand` for a hand not theirs."""
    line = await _own_line(session, hand_id=hand_id, account_id=account_id)
    if after_seconds is None:
        raise DeckNotPublished("this cardroom does not publish whole decks (docs/fairness.md)")
    ended = line.created_at if line.created_at.tzinfo else line.created_at.replace(tzinfo=UTC)
    due = ended + timedelta(seconds=after_seconds)
    if now < due:
        raise DeckNotPublished(f"the deck of hand {hand_id} is published at {due.isoformat()}")
    hand = await session.get(HandRecord, hand_id)
    assert hand is not None
    return full_opening(hand, seal)
