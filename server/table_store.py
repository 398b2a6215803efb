"""The database behind the table actors: seats, buy-ins, cash-outs and finished hands.

A table's chips live in its pool (the ledger wallet ``table:<id>``); the ``seats`` rows say
whose they are, so the seats of a table always hold exactly its pool. Every write here is one
transaction: a buy-in is the ledger movement and the seat's chips; a finished hand is its
record (PHH, event log, result), each player's part in it (``hand_players``, which nets to
zero) and the new seat chips, checked against the pool before it commits. Chips are never
made or lost: a write that would break the books raises :class:`BooksError` and changes
nothing (the actor then cancels the hand, every chip going back).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import CursorResult, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server import accounts, ledger, tables
from server.actor import CommandRefused, FinishedHand
from server.db.models import Account, HandPlayer, HandRecord, SeatRecord, TableRecord, Wallet
from server.db.types import utcnow
from server.errors import Refusal


class BooksError(Exception):
    """A write that would make or lose chips; nothing was written."""


class DatabaseTableStore:
    """The :class:`~server.actor.TableStore` of production: SQL through SQLAlchemy."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self._sessionmaker = sessionmaker
        self._account_ids: dict[str, int] = {}

    async def _account_id(self, session: AsyncSession, player: str) -> int:
        account_id = self._account_ids.get(player)
        if account_id is None:
            account = await accounts.find_by_username(session, username=player)
            if account is None:
                raise CommandRefused("unknown_player", f"no account {player!r}")
            account_id = self._account_ids[player] = account.id
        return account_id

    async def buy_in(self, table_id: int, player: str, amount: int, *, seat: int) -> None:
        try:
            async with self._sessionmaker() as session, session.begin():
                account_id = await self._account_id(session, player)
                await ledger.buy_in(
                    session, account_id=account_id, table_id=table_id, amount=amount
                )
                row = await session.get(SeatRecord, (table_id, seat))
                if row is None:
                    session.add(SeatRecord(
                        table_id=table_id, seat=seat, account_id=account_id, chips=amount
                    ))
                elif row.account_id != account_id:
                    raise BooksError(f"table {table_id} seat {seat} is someone else's")
                else:
                    row.chips += amount
                    row.updated_at = utcnow()
        except Refusal as refusal:
            raise CommandRefused(refusal.code, refusal.message) from None

    async def cash_out(self, table_id: int, player: str, amount: int) -> None:
        async with self._sessionmaker() as session, session.begin():
            account_id = await self._account_id(session, player)
            row = await session.scalar(
                select(SeatRecord).where(
                    SeatRecord.table_id == table_id, SeatRecord.account_id == account_id
                )
            )
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

    async def save_hand(self, hand: FinishedHand) -> None:
        if sum(hand.stacks.values()) != sum(hand.starting.values()):
            raise BooksError(f"hand {hand.number} at table {hand.table_id} makes or loses chips")
        async with self._sessionmaker() as session, session.begin():
            ids = {p: await self._account_id(session, p) for p in hand.players.values()}
            record = await tables.record_hand(
                session,
                table_id=hand.table_id,
                number=hand.number,
                phh=hand.phh,
                events=hand.events,
                # A cancelled hand's result says why ({"cancelled": reason}); others say False.
                result={"cancelled": False, **hand.result},
            )
            for seat, player in hand.players.items():
                start, end = hand.starting[player], hand.stacks[player]
                session.add(HandPlayer(
                    hand_id=record.id, account_id=ids[player], seat=seat,
                    starting=start, ending=end,
                ))
                if end != start:
                    moved = cast(CursorResult[Any], await session.execute(
                        update(SeatRecord)
                        .where(SeatRecord.table_id == hand.table_id,
                               SeatRecord.account_id == ids[player])
                        .values(chips=SeatRecord.chips + (end - start), updated_at=utcnow())
                    ))
                    if moved.rowcount != 1:
                        raise BooksError(f"{player} has no seat at table {hand.table_id}")
            await session.flush()
            pool, seated = await table_chips(session, table_id=hand.table_id)
            if pool != seated:
                raise BooksError(
                    f"table {hand.table_id}: the seats would hold {seated}, the pool {pool}"
                )


# ---------------------------------------------------------------------- reading


async def table_chips(session: AsyncSession, *, table_id: int) -> tuple[int, int]:
    """The table's pool balance and the chips its seats hold (equal when the books hold)."""
    pool = await session.scalar(
        select(Wallet.balance).where(Wallet.name == ledger.table_pool(table_id))
    )
    seated = await session.scalar(
        select(func.coalesce(func.sum(SeatRecord.chips), 0)).where(
            SeatRecord.table_id == table_id
        )
    )
    return int(pool or 0), int(seated or 0)


async def seated_players(session: AsyncSession, *, table_id: int) -> list[tuple[int, str, int]]:
    """(seat, username, chips) of everyone seated at the table, by seat."""
    rows = await session.execute(
        select(SeatRecord.seat, Account.username, SeatRecord.chips)
        .join(Account, Account.id == SeatRecord.account_id)
        .where(SeatRecord.table_id == table_id)
        .order_by(SeatRecord.seat)
    )
    return [(seat, username, chips) for seat, username, chips in rows.all()]


async def last_hand_number(session: AsyncSession, *, table_id: int) -> int:
    number = await session.scalar(
        select(func.max(HandRecord.number)).where(HandRecord.table_id == table_id)
    )
    return int(number or 0)


@dataclass(frozen=True, slots=True)
class BooksCheck:
    """The ledger's books, and each table's pool against the chips in its seats."""

    books: ledger.Books
    tables: Mapping[int, tuple[int, int]] = field(default_factory=dict)  # id -> (pool, seats)

    @property
    def balanced(self) -> bool:
        return self.books.balanced and all(p == s for p, s in self.tables.values())


async def check_books(session: AsyncSession) -> BooksCheck:
    """:func:`server.ledger.verify_books`, plus every table's seats == its pool."""
    books = await ledger.verify_books(session)
    ids = (await session.scalars(select(TableRecord.id).order_by(TableRecord.id))).all()
    return BooksCheck(
        books=books,
        tables={table_id: await table_chips(session, table_id=table_id) for table_id in ids},
    )
