"""The database behind the table actors: seats, buy-ins, cash-outs and finished hands.

A table's chips live in its pool (the ledger wallet ``table:<id>``); the ``seats`` rows say
whose they are, so the seats of a table always hold exactly its pool. Every write here is one
transaction: a buy-in is the ledger movement and the seat's chips; a finished hand is its
record (PHH, event log, result), each player's part in it (``hand_players``, which nets to
minus the hand's rake), the rake's movement from the pool to the house's revenue and the new
seat chips, checked against the pool before it commits; a hand about to be dealt is written
with the time fees collected before it. Chips are never made or lost: a write that would
break the books raises :class:`BooksError` and changes nothing (the actor then cancels the
hand, every chip going back).

A tournament's table keeps its players' tournament chips in its seat rows too, but they are
not money: its director seats a player with their chips and takes them away
(:meth:`DatabaseTableStore.seat_entrant`, :meth:`DatabaseTableStore.give_up_seat`) with no
ledger movement, the table has no pool, and its hands move chips between its seats alone.

The hand in progress is written ahead of what the players see: its deck (sealed:
:mod:`server.store.deck_seal`) and players before it is dealt (``live_hands``), each action before
it is announced (``live_actions``); the record of the finished hand deletes them in its own
transaction. That is what a node taking
the table over resumes from (:func:`live_hand`).

Fencing (:mod:`server.store.fencing`): a store made with ``fence`` (the token
:func:`~server.store.fencing.claim_table` gave the node running the
table) checks it first thing in every write of the table, under the table row's lock; a node
that has lost the table to another (a newer token) is refused with
:class:`~server.store.records.TableTakenOver` and writes nothing. A database that does not answer
raises :class:`~server.store.records.StoreUnavailable`: the write did not happen, or happened
exactly once (every write here may be retried).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import (
    CursorResult,
    Table,
    bindparam,
    case,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.accounts import audit_log, ledger, registry
from server.db.models import (
    Account,
    HandPlayer,
    HandRecord,
    LiveAction,
    LiveHand,
    SeatRecord,
    TableRecord,
    Wallet,
)
from server.db.session import is_outage
from server.db.types import utcnow
from server.store import tables
from server.store.deck_seal import DeckSeal, SealBroken
from server.store.fencing import check_fence
from server.store.records import AuditNote, FinishedHand, LiveHandState, StoreUnavailable
from server.store.write_ahead import WriteAhead


class BooksError(Exception):
    """A write that would make or lose chips; nothing was written."""


class DatabaseTableStore:
    """The :class:`~server.table.ports.TableStore` of production: SQL through SQLAlchemy.

    ``fence``: the fencing token of the node running the tables written through this store
    (None: no check, for tools and tests that own the database alone)."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        *,
        seal: DeckSeal,
        fence: int | None = None,
        write_ahead: WriteAhead | None = None,
    ) -> None:
        self._sessionmaker = sessionmaker
        self.seal = seal
        self._account_ids: dict[str, int] = {}
        self.fence = fence
        # The node's (shared by its tables) or one of the store's own.
        self.write_ahead = write_ahead or WriteAhead(sessionmaker.kw["bind"])

    @contextlib.asynccontextmanager
    async def _write(self, table_id: int) -> AsyncIterator[AsyncSession]:
        """One transaction writing the table: fenced first, outages told apart from refusals."""
        try:
            async with (
                self.write_ahead.gate(),
                self._sessionmaker() as session,
                session.begin(),
            ):
                if self.fence is not None:
                    await check_fence(session, table_id=table_id, fence=self.fence)
                yield session
        except Exception as error:
            if is_outage(error):
                raise StoreUnavailable(str(error) or type(error).__name__) from error
            raise

    async def _account_id(self, session: AsyncSession, player: str) -> int:
        account_id = self._account_ids.get(player)
        if account_id is None:
            account = await registry.find_by_username(session, username=player)
            if account is None:
                raise Refusal(f"no account {player!r}", code=ErrorCode.UNKNOWN_PLAYER)
            account_id = self._account_ids[player] = account.id
        return account_id

    async def buy_in(self, table_id: int, player: str, amount: int, *, seat: int) -> None:
        """A refusal of the ledger's (``insufficient_funds``) reaches the player as it is."""
        async with self._write(table_id) as session:
            account_id = await self._account_id(session, player)
            await ledger.buy_in(session, account_id=account_id, table_id=table_id, amount=amount)
            row = await session.get(SeatRecord, (table_id, seat))
            if row is None:
                session.add(
                    SeatRecord(table_id=table_id, seat=seat, account_id=account_id, chips=amount)
                )
            elif row.account_id != account_id:
                raise BooksError(f"table {table_id} seat {seat} is someone else's")
            else:
                row.chips += amount
                row.updated_at = utcnow()

    async def cash_out(self, table_id: int, player: str, amount: int) -> None:
        async with self._write(table_id) as session:
            account_id = await self._account_id(session, player)
            row = await session.scalar(
                select(SeatRecord).where(
                    SeatRecord.table_id == table_id, SeatRecord.account_id == account_id
                )
            )
            if row is None:
                # Only a seated player is cashed out: no seat means a retry of a cash-out
                # that went through (the seat row goes in its transaction). No chip moves.
                return
            held = row.chips if row is not None else 0
            if held != amount:
                raise BooksError(
                    f"{player} holds {held} at table {table_id}, not the {amount} cashed out"
                )
            if amount:
                await ledger.cash_out(
                    session, account_id=account_id, table_id=table_id, amount=amount
                )
            if row is not None:
                await session.delete(row)

    async def seat_entrant(self, table_id: int, player: str, chips: int, *, seat: int) -> None:
        """A tournament player seated with their tournament chips (the director's draw or
        move): the seat row alone, no ledger movement, since tournament chips are not money.
        Refused at a cash table (chips out of nothing); a retry that went through finds the
        row and writes nothing."""
        async with self._write(table_id) as session:
            account_id = await self._account_id(session, player)
            if await session.scalar(_TOURNAMENT_OF, {"table_id": table_id}) is None:
                raise BooksError(f"table {table_id} is no tournament's: its chips are bought")
            row = await session.get(SeatRecord, (table_id, seat))
            if row is not None and row.account_id != account_id:
                raise BooksError(f"table {table_id} seat {seat} is someone else's")
            if row is None:
                session.add(
                    SeatRecord(table_id=table_id, seat=seat, account_id=account_id, chips=chips)
                )

    async def give_up_seat(self, table_id: int, player: str, chips: int) -> None:
        """A tournament player the director takes away with their chips (``chips``, maybe
        0), to seat them elsewhere: their seat row goes, no ledger movement. A retry that
        went through finds no row and writes nothing."""
        async with self._write(table_id) as session:
            account_id = await self._account_id(session, player)
            row = await session.scalar(
                select(SeatRecord).where(
                    SeatRecord.table_id == table_id, SeatRecord.account_id == account_id
                )
            )
            if row is None:
                return
            if row.chips != chips:
                raise BooksError(
                    f"{player} holds {row.chips} at table {table_id}, not the {chips} given up"
                )
            await session.delete(row)

    async def add_entrant_chips(
        self, table_id: int, player: str, chips: int, *, stack: int
    ) -> None:
        """A tournament player's chips bought (a rebuy, an add-on; the director took the
        money into the prize pool): their seat row to ``stack``, no ledger movement. A retry
        that went through finds the row at ``stack`` and writes nothing."""
        async with self._write(table_id) as session:
            account_id = await self._account_id(session, player)
            if await session.scalar(_TOURNAMENT_OF, {"table_id": table_id}) is None:
                raise BooksError(f"table {table_id} is no tournament's: its chips are bought")
            row = await session.scalar(
                select(SeatRecord).where(
                    SeatRecord.table_id == table_id, SeatRecord.account_id == account_id
                )
            )
            if row is None:
                raise BooksError(f"{player} has no seat at table {table_id}")
            if row.chips == stack:
                return
            if row.chips + chips != stack:
                raise BooksError(
                    f"{player} holds {row.chips} at table {table_id}, not the {stack - chips} "
                    f"{chips} chips are added to"
                )
            row.chips = stack
            row.updated_at = utcnow()

    async def start_hand(self, live: LiveHandState) -> None:
        """The hand about to be dealt: its deck and players (replacing any left over), and
        the time fees collected before it, each from its seat to the house's revenue."""
        async with self._write(live.table_id) as session:
            left = await session.scalar(_LIVE_NUMBER, {"table_id": live.table_id})
            if left == live.number:
                return  # a retry that went through
            if left is not None:
                await session.execute(_DROP_LIVE, {"table_id": live.table_id})
            for player, fee in live.time_fees.items():
                await self._collect_time(session, live, player, fee)
            row = {
                "table_id": live.table_id,
                "number": live.number,
                "deck": self.seal.seal(live.deck, table_id=live.table_id, number=live.number),
                "players": [list(player) for player in live.players],
                "config": live.config,
            }
            if live.absent:  # a tournament's hand, dealt to players away (else left null)
                row["absent"] = list(live.absent)
            if live.rotation is not None:  # a mixed table's hand: its place in the rotation
                row["rotation"] = live.rotation
            await session.execute(_INSERT_LIVE, row)

    async def _collect_time(
        self, session: AsyncSession, live: LiveHandState, player: str, fee: int
    ) -> None:
        account_id = await self._account_id(session, player)
        paid_until = (
            datetime.fromtimestamp(live.time_paid_until, UTC)
            if live.time_paid_until is not None
            else None
        )
        taken = cast(
            CursorResult[Any],
            await session.execute(
                update(SeatRecord)
                .where(
                    SeatRecord.table_id == live.table_id,
                    SeatRecord.account_id == account_id,
                    SeatRecord.chips >= fee,
                )
                .values(
                    chips=SeatRecord.chips - fee, time_paid_until=paid_until, updated_at=utcnow()
                )
            ),
        )
        if taken.rowcount != 1:
            raise BooksError(f"{player} has no seat holding {fee} chips at table {live.table_id}")
        await ledger.collect(
            session,
            table_id=live.table_id,
            amount=fee,
            kind=ledger.EntryKind.TIME_FEE,
            reference=f"table:{live.table_id} hand:{live.number} player:{player}",
        )

    async def record_action(
        self, table_id: int, number: int, position: int, action: dict[str, Any]
    ) -> None:
        """The ``position``-th action of the hand in progress (a retry writes it once).

        On the path of every action: written with the node's other tables' actions, in
        one transaction (:mod:`server.store.write_ahead`)."""
        await self.write_ahead.record(table_id, self.fence, number, position, action)

    async def save_table(
        self, table_id: int, values: dict[str, Any], note: AuditNote | None
    ) -> None:
        async with self._write(table_id) as session:
            record = await session.get(TableRecord, table_id)
            if record is None:
                raise LookupError(f"no table {table_id}")
            before = {name: getattr(record, name) for name in values}
            for name, value in values.items():
                setattr(record, name, value)
            if note is None:
                return
            changed = note.changes
            await audit_log.record(
                session,
                actor=_Operator(note.operator_id, note.operator),
                action=audit_log.AuditAction(note.action),
                target_kind="table",
                target_id=table_id,
                before=_json(before) if changed else note.before,
                after=_json(values) if changed else note.after,
                reason=note.reason,
            )

    async def save_hand(self, hand: FinishedHand) -> None:
        if hand.rake < 0 or sum(hand.stacks.values()) + hand.rake != sum(hand.starting.values()):
            raise BooksError(f"hand {hand.number} at table {hand.table_id} makes or loses chips")
        # Every table writes this once a hand: statements built once (module level), no
        # object of the ORM's, so SQLAlchemy's work for each is the least it can be.
        key = {"table_id": hand.table_id, "number": hand.number}
        async with self._write(hand.table_id) as session:
            if await session.scalar(_HAND_DONE, key) is not None:
                return  # a retry of a save that went through
            await session.execute(_DROP_LIVE_NUMBER, key)
            ids = {p: await self._account_id(session, p) for p in hand.players.values()}
            hand_id = await tables.record_hand(
                session,
                table_id=hand.table_id,
                number=hand.number,
                phh=hand.phh,
                events=hand.events,
                # A cancelled hand's result says why ({"cancelled": reason}); others say False.
                result={"cancelled": False, **hand.result},
                config=hand.config,
                rake=hand.rake,
                rotation=hand.rotation,
                deck=(
                    self.seal.seal(hand.deck, table_id=hand.table_id, number=hand.number)
                    if hand.deck is not None
                    else None
                ),
            )
            if hand.rake:
                await ledger.collect(
                    session,
                    table_id=hand.table_id,
                    amount=hand.rake,
                    kind=ledger.EntryKind.RAKE,
                    reference=f"hand:{hand_id}",
                )
            parts = []
            changes: dict[int, int] = {}  # account -> chips won (or lost)
            for seat, player in hand.players.items():
                start, end = hand.starting[player], hand.stacks[player]
                parts.append(
                    {
                        "hand_id": hand_id,
                        "account_id": ids[player],
                        "seat": seat,
                        "starting": start,
                        "ending": end,
                    }
                )
                if end != start:
                    changes[ids[player]] = end - start
            if parts:
                await session.execute(_INSERT_PARTS, parts)
            if changes:
                # Every seat's chips in one statement (each stack changes in stud: the antes).
                moved = cast(
                    CursorResult[Any],
                    await session.execute(
                        update(SeatRecord)
                        .where(
                            SeatRecord.table_id == hand.table_id,
                            SeatRecord.account_id.in_(changes),
                        )
                        .values(
                            chips=SeatRecord.chips
                            + case(changes, value=SeatRecord.account_id, else_=0),
                            updated_at=utcnow(),
                        )
                    ),
                )
                if moved.rowcount != len(changes):
                    missing = sorted(p for p, a in ids.items() if a in changes)
                    raise BooksError(
                        f"not every one of {', '.join(missing)} has a seat at table {hand.table_id}"
                    )
            values = {"pool": ledger.table_pool(hand.table_id), "table_id": hand.table_id}
            row = (await session.execute(_TABLE_CHIPS, values)).one()
            pool, seated = int(row[0] or 0), int(row[1] or 0)
            # A tournament table has no pool: its chips are no money (the hand nets to zero).
            if row[2] is None and pool != seated:
                raise BooksError(
                    f"table {hand.table_id}: the seats would hold {seated}, the pool {pool}"
                )


_LIVE_HANDS = cast(Table, LiveHand.__table__)
_LIVE_NUMBER = select(_LIVE_HANDS.c.number).where(_LIVE_HANDS.c.table_id == bindparam("table_id"))
_DROP_LIVE = delete(_LIVE_HANDS).where(_LIVE_HANDS.c.table_id == bindparam("table_id"))
_DROP_LIVE_NUMBER = _DROP_LIVE.where(_LIVE_HANDS.c.number == bindparam("number"))
_INSERT_LIVE = insert(_LIVE_HANDS)
_HANDS = cast(Table, HandRecord.__table__)
_HAND_DONE = select(_HANDS.c.id).where(
    _HANDS.c.table_id == bindparam("table_id"), _HANDS.c.number == bindparam("number")
)
_INSERT_PARTS = insert(cast(Table, HandPlayer.__table__))


@dataclass(frozen=True, slots=True)
class _Operator:
    """The operator an ``AuditNote`` names, as the audit log takes its actor."""

    id: int
    username: str


def _json(values: Mapping[str, Any]) -> dict[str, Any]:
    """Column values as the audit log's JSON keeps them (times in ISO 8601)."""
    return {k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in values.items()}


# ---------------------------------------------------------------------- reading


async def live_hand(
    session: AsyncSession, *, table_id: int, seal: DeckSeal
) -> LiveHandState | None:
    """The hand in progress at the table as written so far, or None. A deck that does not
    open (a key no longer configured) is read as unrecorded: the hand is voided, every chip
    back (``server.table.dealing.deck_of``)."""
    row = await session.get(LiveHand, table_id)
    if row is None:
        return None
    actions = (
        await session.scalars(
            select(LiveAction.action)
            .where(LiveAction.table_id == table_id, LiveAction.number == row.number)
            .order_by(LiveAction.position)
        )
    ).all()
    try:
        deck = seal.open(dict(row.deck), table_id=table_id, number=row.number)
    except SealBroken as error:
        deck = {"unreadable": str(error)}
    return LiveHandState(
        table_id=table_id,
        number=row.number,
        deck=deck,
        players=[(int(seat), str(player), int(stack)) for seat, player, stack in row.players],
        actions=[dict(action) for action in actions],
        config=dict(row.config) if row.config is not None else None,
        absent=tuple(int(seat) for seat in row.absent or ()),
        rotation=dict(row.rotation) if row.rotation is not None else None,
    )


async def table_chips(session: AsyncSession, *, table_id: int) -> tuple[int, int]:
    """The table's pool balance and the chips its seats hold (equal when the books hold)."""
    values = {"pool": ledger.table_pool(table_id), "table_id": table_id}
    row = (await session.execute(_TABLE_CHIPS, values)).one()
    return int(row[0] or 0), int(row[1] or 0)


_TOURNAMENT_OF = select(TableRecord.tournament_id).where(TableRecord.id == bindparam("table_id"))
# Checked at the end of every hand: built once. With the table's tournament (none: cash).
_TABLE_CHIPS = select(
    select(Wallet.balance).where(Wallet.name == bindparam("pool")).scalar_subquery(),
    select(func.coalesce(func.sum(SeatRecord.chips), 0))
    .where(SeatRecord.table_id == bindparam("table_id"))
    .scalar_subquery(),
    _TOURNAMENT_OF.scalar_subquery(),
)


async def seated_players(session: AsyncSession, *, table_id: int) -> list[tuple[int, str, int]]:
    """(seat, username, chips) of everyone seated at the table, by seat."""
    rows = await session.execute(
        select(SeatRecord.seat, Account.username, SeatRecord.chips)
        .join(Account, Account.id == SeatRecord.account_id)
        .where(SeatRecord.table_id == table_id)
        .order_by(SeatRecord.seat)
    )
    return [(seat, username, chips) for seat, username, chips in rows.all()]


async def time_paid(session: AsyncSession, *, table_id: int) -> dict[str, float]:
    """Time collection: when the period each seated player paid for ends (epoch seconds),
    for the players who paid."""
    rows = await session.execute(
        select(Account.username, SeatRecord.time_paid_until)
        .join(Account, Account.id == SeatRecord.account_id)
        .where(SeatRecord.table_id == table_id, SeatRecord.time_paid_until.is_not(None))
    )
    return {username: until.timestamp() for username, until in rows.all() if until is not None}


async def last_hand_number(session: AsyncSession, *, table_id: int) -> int:
    number = await session.scalar(
        select(func.max(HandRecord.number)).where(HandRecord.table_id == table_id)
    )
    return int(number or 0)
