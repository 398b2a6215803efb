"""Tournaments as operators make them and players enter them, with the money of each entry.

Keyword-only repository functions; they flush and the route commits, so an entry's row and
its ledger movements (the buy-in to the tournament's prize pool, the fee to the house's
revenue) commit together or not at all. Tournament chips are not money: nothing here moves
them; only buy-ins, fees, refunds and prizes touch a wallet.

A registration is idempotent: a request carries the player's ``request_id``, and the same id
again finds the entry it made (whatever became of it) instead of paying twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import secrets
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from engine.errors import Refusal
from engine.fair import commitment
from engine.protocol import ErrorCode
from engine.tournament.spec import TournamentSpec
from engine.tournament.templates import TEMPLATES
from server.accounts import ledger
from server.db.models import (
    Account,
    EntryStatus,
    LedgerEntry,
    TournamentEntry,
    TournamentRecord,
    TournamentStatus,
    WalletKind,
)
from server.db.types import utcnow
from server.store.deck_seal import DeckSeal

ACTIVE = (EntryStatus.REGISTERED.value, EntryStatus.PLAYING.value)
"""An entry still in the tournament: it holds a place in the field."""

PAID = (*ACTIVE, EntryStatus.OUT.value)
"""An entry that counts in the field the prizes are paid by (not taken back)."""


class UnknownTournament(Refusal):
    code = ErrorCode.UNKNOWN_TOURNAMENT


class TournamentNameTaken(Refusal):
    code = ErrorCode.TOURNAMENT_NAME_TAKEN


class RegistrationClosed(Refusal):
    code = ErrorCode.REGISTRATION_CLOSED


def draw_binding(tournament_id: int) -> bytes:
    """What a tournament's sealed draw seed is bound to: its own row."""
    return f"stud-seat-draw\ntournament={tournament_id}\n".encode()


def spec_of(record: TournamentRecord) -> TournamentSpec:
    """The tournament's format, judged once for each text of it: reading a long structure
    takes a millisecond and more, and a registration, the lobby and a director ask for it
    again and again."""
    return _spec_from_text(orjson.dumps(record.spec, option=orjson.OPT_SORT_KEYS))


@functools.lru_cache(maxsize=256)
def _spec_from_text(text: bytes) -> TournamentSpec:
    return TournamentSpec.from_dict(orjson.loads(text))  # frozen: shared safely


def check_spec(
    *, template: str | None, spec: Mapping[str, Any] | None
) -> tuple[TournamentSpec, str | None]:
    """The format of a new tournament: a shipped template by name, or a full spec (judged by
    the engine: ``bad_structure`` with the field at fault)."""
    if (template is None) == (spec is None):
        raise Refusal("give a template or a spec, one of the two", code=ErrorCode.BAD_REQUEST)
    if template is not None:
        if template not in TEMPLATES:
            known = ", ".join(sorted(TEMPLATES))
            raise Refusal(
                f"no template {template!r} (there are {known})", code=ErrorCode.BAD_REQUEST
            )
        return TEMPLATES[template], template
    assert spec is not None
    return TournamentSpec.from_dict(spec), None


def check_start(spec: TournamentSpec, starts_at: datetime | None, *, now: datetime) -> None:
    """A scheduled tournament starts at a set time to come; a sit-and-go when it fills."""
    if spec.kind == "scheduled":
        if starts_at is None:
            raise Refusal("a scheduled tournament needs starts_at", code=ErrorCode.BAD_REQUEST)
        if starts_at <= now:
            raise Refusal("starts_at must be in the future", code=ErrorCode.BAD_REQUEST)
    elif starts_at is not None:
        raise Refusal(
            "a sit-and-go starts when its seats are filled: no starts_at",
            code=ErrorCode.BAD_REQUEST,
        )


async def create(
    session: AsyncSession,
    *,
    name: str,
    template: str | None,
    spec: Mapping[str, Any] | None,
    starts_at: datetime | None,
    created_by: str,
    seal: DeckSeal,
) -> TournamentRecord:
    """A new tournament taking entries, with its empty prize pool, and the commitment to the
    seed of its seat draw (the seed itself sealed at rest until the draw reveals it)."""
    format_, template_name = check_spec(template=template, spec=spec)
    check_start(format_, starts_at, now=utcnow())
    await _check_name_free(session, name)
    seed = secrets.token_bytes(32)
    record = TournamentRecord(
        name=name,
        template=template_name,
        spec=format_.to_dict(),
        status=TournamentStatus.REGISTERING.value,
        starts_at=starts_at,
        created_by=created_by,
        draw_commitment=commitment(seed),
        draw_seed={},
    )
    session.add(record)
    try:
        await session.flush()
    except IntegrityError:
        raise TournamentNameTaken(f"a tournament is already named {name!r}") from None
    record.draw_seed = seal.seal_bound({"seed": seed.hex()}, draw_binding(record.id))
    await ledger.open_wallet(
        session, name=ledger.tournament_pool(record.id), kind=WalletKind.TOURNAMENT
    )
    await session.flush()
    return record


async def _check_name_free(session: AsyncSession, name: str, *, but: int | None = None) -> None:
    query = select(TournamentRecord.id).where(TournamentRecord.name == name)
    if but is not None:
        query = query.where(TournamentRecord.id != but)
    if await session.scalar(query) is not None:
        raise TournamentNameTaken(f"a tournament is already named {name!r}")


async def get(session: AsyncSession, *, tournament_id: int, lock: bool = False) -> TournamentRecord:
    """The tournament's row (locked for the transaction when ``lock``: entries into one
    tournament take turns), or :class:`UnknownTournament`."""
    if lock:
        # A write first: PostgreSQL locks the row, SQLite takes its one write lock, so the
        # counts read after it (the field, the player's entries) stay true until the commit.
        await session.execute(
            update(TournamentRecord)
            .where(TournamentRecord.id == tournament_id)
            .values(id=TournamentRecord.id)
        )
    record = await session.scalar(
        select(TournamentRecord).where(TournamentRecord.id == tournament_id)
    )
    if record is None:
        raise UnknownTournament(f"no tournament {tournament_id}")
    return record


def _before_start(record: TournamentRecord, doing: str) -> None:
    if record.status != TournamentStatus.REGISTERING:
        code = (
            ErrorCode.TOURNAMENT_STARTED
            if record.status == TournamentStatus.RUNNING
            else ErrorCode.TOURNAMENT_OVER
        )
        raise Refusal(f"tournament {record.id} is {record.status}: no {doing}", code=code)


async def edit(
    session: AsyncSession,
    *,
    tournament_id: int,
    name: str | None = None,
    spec: Mapping[str, Any] | None = None,
    starts_at: datetime | None = None,
) -> tuple[dict[str, Any], TournamentRecord]:
    """An operator's edit before the start: its name, its start, its format; a format whose
    buy-in or fee differs, once anyone has paid, is refused (``tournament_has_entries``: cancel
    it instead, which refunds them). The values before, for the audit, and the row after."""
    record = await get(session, tournament_id=tournament_id, lock=True)
    _before_start(record, "edit")
    before = summary(record)
    format_ = spec_of(record) if spec is None else TournamentSpec.from_dict(spec)
    if spec is not None:
        old = spec_of(record)
        if (format_.buy_in, format_.fee) != (old.buy_in, old.fee) and await entrants(
            session, tournament_id=record.id
        ):
            raise Refusal(
                "players have paid this buy-in and fee: cancel the tournament instead",
                code=ErrorCode.TOURNAMENT_HAS_ENTRIES,
            )
        if format_.kind != old.kind:
            raise Refusal("a tournament's kind cannot change", code=ErrorCode.BAD_REQUEST)
        record.spec = format_.to_dict()
        record.template = None
    if starts_at is not None or spec is not None:
        check_start(format_, starts_at if starts_at is not None else record.starts_at, now=utcnow())
        if starts_at is not None:
            record.starts_at = starts_at
    if name is not None and name != record.name:
        await _check_name_free(session, name, but=record.id)
        record.name = name
    await session.flush()
    return before, record


async def entrants(session: AsyncSession, *, tournament_id: int) -> int:
    """Entries still in the tournament (registered or playing)."""
    count = await session.scalar(
        select(func.count())
        .select_from(TournamentEntry)
        .where(TournamentEntry.tournament_id == tournament_id, TournamentEntry.status.in_(ACTIVE))
    )
    return int(count or 0)


def entry_reference(entry: TournamentEntry) -> str:
    """What an entry's ledger movements name: the tournament and the entry."""
    return f"tournament:{entry.tournament_id}:entry:{entry.id}"


@dataclass(frozen=True, slots=True)
class Registration:
    """An entry, and whether this request made it (a retried request finds it made)."""

    entry: TournamentEntry
    made: bool


class EntryTurns:
    """Entries into one tournament taking turns in this process, each to its commit: they
    would anyway (the tournament's row is locked for each), but on SQLite the one waiting
    for the lock sleeps in SQLite's busy handler, in steps up to 100 ms (and fails after its
    timeout), and on PostgreSQL it holds a pooled connection while it waits. A burst of a
    thousand entries at once went through at about a hundred a second."""

    def __init__(self) -> None:
        self._turns: dict[int, tuple[asyncio.Lock, int]] = {}  # tournament: (lock, holders)

    @contextlib.asynccontextmanager
    async def of(self, tournament_id: int) -> AsyncIterator[None]:
        lock, holders = self._turns.get(tournament_id) or (asyncio.Lock(), 0)
        self._turns[tournament_id] = (lock, holders + 1)
        try:
            async with lock:
                yield
        finally:
            lock, holders = self._turns[tournament_id]
            if holders == 1:
                del self._turns[tournament_id]
            else:
                self._turns[tournament_id] = (lock, holders - 1)


async def register(
    session: AsyncSession, *, tournament_id: int, account_id: int, request_id: str
) -> Registration:
    """The player's entry, paid: the buy-in to the prize pool and the fee to the house, with
    the entry's row. Refused, with nothing paid, when registration is closed, the field is
    full, the player is already in, or their wallet holds less than the buy-in and fee."""
    record = await get(session, tournament_id=tournament_id, lock=True)
    made_before = await _by_request(session, tournament_id, account_id, request_id)
    if made_before is not None:
        return Registration(made_before, made=False)
    if record.status != TournamentStatus.REGISTERING:
        raise RegistrationClosed(f"registration for tournament {record.id} is closed")
    format_ = spec_of(record)
    mine = list(
        (
            await session.scalars(
                select(TournamentEntry).where(
                    TournamentEntry.tournament_id == record.id,
                    TournamentEntry.account_id == account_id,
                )
            )
        ).all()
    )
    if any(entry.status in ACTIVE for entry in mine):
        raise Refusal(
            f"you are registered for tournament {record.id} already",
            code=ErrorCode.ALREADY_REGISTERED,
        )
    if await entrants(session, tournament_id=record.id) >= format_.max_entrants:
        raise Refusal(
            f"tournament {record.id} is full ({format_.max_entrants} entrants)",
            code=ErrorCode.TOURNAMENT_FULL,
        )
    entry = TournamentEntry(
        tournament_id=record.id,
        account_id=account_id,
        number=max((entry.number for entry in mine), default=0) + 1,
        request_id=request_id,
        status=EntryStatus.REGISTERED.value,
        buy_in=format_.buy_in,
        fee=format_.fee,
    )
    session.add(entry)
    try:
        await session.flush()
    except IntegrityError:
        # The same request made it meanwhile (SQLite takes no row lock: the unique key on
        # the request is the judge). The request's transaction holds nothing else yet.
        await session.rollback()
        made_meanwhile = await _by_request(session, tournament_id, account_id, request_id)
        if made_meanwhile is None:
            raise Refusal(
                f"you are registered for tournament {tournament_id} already",
                code=ErrorCode.ALREADY_REGISTERED,
            ) from None
        return Registration(made_meanwhile, made=False)
    await ledger.enter_tournament(
        session,
        account_id=account_id,
        tournament_id=record.id,
        buy_in=entry.buy_in,
        fee=entry.fee,
        entry=entry_reference(entry),
    )
    return Registration(entry, made=True)


async def by_request(
    session: AsyncSession, *, tournament_id: int, account_id: int, request_id: str
) -> TournamentEntry | None:
    """The entry this request of the player's made, before the start or in play."""
    return await _by_request(session, tournament_id, account_id, request_id)


async def bought(session: AsyncSession, *, tournament_id: int) -> dict[int, tuple[int, bool]]:
    """Each entry's rebuys and whether it took the add-on, by entry id, as the ledger has
    them (``<entry reference>:rebuy:<fact>``, ``<entry reference>:add_on:<fact>``)."""
    prefix = f"tournament:{tournament_id}:entry:"
    rows = await session.execute(
        select(LedgerEntry.kind, LedgerEntry.reference).where(
            LedgerEntry.kind.in_((ledger.EntryKind.REBUY.value, ledger.EntryKind.ADD_ON.value)),
            LedgerEntry.reference.like(f"{prefix}%"),
        )
    )
    found: dict[int, tuple[int, bool]] = {}
    for kind, reference in rows.all():
        entry_id = int(str(reference)[len(prefix) :].split(":", 1)[0])
        rebuys, add_on = found.get(entry_id, (0, False))
        if kind == ledger.EntryKind.REBUY.value:
            found[entry_id] = (rebuys + 1, add_on)
        else:
            found[entry_id] = (rebuys, True)
    return found


async def _by_request(
    session: AsyncSession, tournament_id: int, account_id: int, request_id: str
) -> TournamentEntry | None:
    return await session.scalar(
        select(TournamentEntry).where(
            TournamentEntry.tournament_id == tournament_id,
            TournamentEntry.account_id == account_id,
            TournamentEntry.request_id == request_id,
        )
    )


async def unregister(
    session: AsyncSession, *, tournament_id: int, account_id: int
) -> TournamentEntry:
    """The player's entry taken back before the start, the buy-in and fee refunded exactly."""
    record = await get(session, tournament_id=tournament_id, lock=True)
    _before_start(record, "unregistering")
    entry = await session.scalar(
        select(TournamentEntry).where(
            TournamentEntry.tournament_id == record.id,
            TournamentEntry.account_id == account_id,
            TournamentEntry.status == EntryStatus.REGISTERED.value,
        )
    )
    if entry is None:
        raise Refusal(
            f"you are not registered for tournament {record.id}", code=ErrorCode.NOT_REGISTERED
        )
    await _refund(session, entry, EntryStatus.UNREGISTERED)
    return entry


async def _refund(session: AsyncSession, entry: TournamentEntry, status: EntryStatus) -> None:
    await ledger.refund_entry(
        session,
        account_id=entry.account_id,
        tournament_id=entry.tournament_id,
        buy_in=entry.buy_in,
        fee=entry.fee,
        entry=entry_reference(entry),
    )
    entry.status = status.value
    entry.left_at = utcnow()
    await session.flush()


async def cancel(
    session: AsyncSession, *, tournament_id: int, reason: str
) -> tuple[TournamentRecord, list[TournamentEntry]]:
    """A tournament cancelled before its start, every entry's buy-in and fee refunded
    exactly; the entries refunded."""
    record = await get(session, tournament_id=tournament_id, lock=True)
    _before_start(record, "cancelling")
    refunded = list(
        (
            await session.scalars(
                select(TournamentEntry)
                .where(
                    TournamentEntry.tournament_id == record.id,
                    TournamentEntry.status == EntryStatus.REGISTERED.value,
                )
                .order_by(TournamentEntry.id)
            )
        ).all()
    )
    for entry in refunded:
        await _refund(session, entry, EntryStatus.REFUNDED)
    record.status = TournamentStatus.CANCELLED.value
    record.cancelled_reason = reason
    record.finished_at = utcnow()
    await session.flush()
    return record, refunded


def summary(record: TournamentRecord) -> dict[str, Any]:
    """What the audit log keeps of a tournament before and after a change."""
    return {
        "name": record.name,
        "template": record.template,
        "spec": record.spec,
        "status": record.status,
        "starts_at": record.starts_at.isoformat() if record.starts_at else None,
    }


async def find(
    session: AsyncSession,
    *,
    statuses: Sequence[TournamentStatus] = (),
    kind: str | None = None,
    variant: str | None = None,
    buy_in_min: int | None = None,
    buy_in_max: int | None = None,
) -> list[tuple[TournamentRecord, int]]:
    """Tournaments with their entrants' count, the soonest first (sit-and-gos, which start
    when they fill, before scheduled ones), filtered; the format's fields are read from each
    row's spec."""
    query = select(TournamentRecord).order_by(
        TournamentRecord.starts_at.is_not(None), TournamentRecord.starts_at, TournamentRecord.id
    )
    if statuses:
        query = query.where(TournamentRecord.status.in_([status.value for status in statuses]))
    records = list((await session.scalars(query)).all())
    counts = dict(
        (
            await session.execute(
                select(TournamentEntry.tournament_id, func.count())
                .where(TournamentEntry.status.in_(ACTIVE))
                .group_by(TournamentEntry.tournament_id)
            )
        ).all()
    )
    found = []
    for record in records:
        format_ = spec_of(record)
        if kind is not None and format_.kind != kind:
            continue
        if variant is not None and variant not in format_.games:  # a mixed one: any of its
            continue
        if buy_in_min is not None and format_.buy_in < buy_in_min:
            continue
        if buy_in_max is not None and format_.buy_in > buy_in_max:
            continue
        found.append((record, int(counts.get(record.id, 0))))
    return found


async def entries(
    session: AsyncSession, *, tournament_id: int
) -> list[tuple[TournamentEntry, str]]:
    """Every entry of a tournament with its player's name, in the order they came."""
    rows = await session.execute(
        select(TournamentEntry, Account.username)
        .join(Account, Account.id == TournamentEntry.account_id)
        .where(TournamentEntry.tournament_id == tournament_id)
        .order_by(TournamentEntry.id)
    )
    return [(entry, name) for entry, name in rows.all()]
