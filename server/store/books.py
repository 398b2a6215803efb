"""The books check: chips are never made or lost, end to end (``stud-server audit``,
``GET /admin/books``).

:func:`check_books` adds to the ledger's own check (:func:`server.accounts.ledger.verify_books`)
every cash table's pool against its seats, every recorded hand netting to minus its rake, the
hands' rake against the ledger's, and each tournament's chips and prize pool
(:mod:`server.store.tournament_books`); :func:`audit_books` reads it all on one snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.accounts import ledger
from server.db.models import HandPlayer, HandRecord, LedgerEntry, TableRecord
from server.store import tournament_books
from server.store.table_store import table_chips
from server.store.tournament_books import TournamentBooks


@dataclass(frozen=True, slots=True)
class UnevenHand:
    """A recorded hand whose ``hand_players`` rows do not net to minus its rake: chips made
    or lost."""

    hand_id: int
    table_id: int
    number: int
    net: int  # the players' chips after the hand less before it
    rake: int = 0  # the chips the hand's record says the house raked

    def __str__(self) -> str:
        gap = self.net + self.rake
        chips = f"{abs(gap)} chip{'' if abs(gap) == 1 else 's'}"
        raked = f" after a rake of {self.rake}" if self.rake else ""
        return (
            f"hand {self.number} of table {self.table_id} (hand id {self.hand_id}): its players "
            f"end with {chips} {'more' if gap > 0 else 'fewer'} than they started with{raked}"
        )


@dataclass(frozen=True, slots=True)
class BooksCheck:
    """The ledger's books, each table's pool against the chips in its seats, each recorded
    hand's players netting to minus its rake, and the rake the hands record against the rake
    the ledger moved. :meth:`differences` says what does not."""

    books: ledger.Books
    tables: Mapping[int, tuple[int, int]] = field(default_factory=dict)  # id -> (pool, seats)
    uneven_hands: tuple[UnevenHand, ...] = ()
    hands: int = 0  # how many recorded hands were checked
    hands_rake: int = 0  # the rake every recorded hand says it paid
    ledger_rake: int = 0  # the rake movements of the ledger (pools -> house revenue)
    tournaments: tuple[TournamentBooks, ...] = ()  # each one's chips and prize pool

    @property
    def balanced(self) -> bool:
        return not self.differences()

    def differences(self) -> list[str]:
        """Each difference, in plain words (none when everything balances)."""
        lines = self.books.differences()
        for table_id, (pool, seats) in self.tables.items():
            if pool != seats:
                lines.append(
                    f"table {table_id}: its pool {ledger.table_pool(table_id)} holds {pool} "
                    f"chips, but its seats hold {seats}"
                )
        lines.extend(str(hand) for hand in self.uneven_hands)
        if self.hands_rake != self.ledger_rake:
            lines.append(
                f"the recorded hands raked {self.hands_rake} chips, but the ledger moved "
                f"{self.ledger_rake} chips of rake to {ledger.REVENUE}"
            )
        for tournament in self.tournaments:
            lines.extend(tournament.differences)
        return lines

    def summary(self) -> str:
        """The books in one line, for when they balance."""
        tables = f"{len(self.tables)} table{'s' * (len(self.tables) != 1)}"
        hands = f"{self.hands} hand{'s' * (self.hands != 1)}"
        count = len(self.tournaments)
        tournaments = (
            f", every tournament's chips in play what it issued and its prize pool its buy-ins "
            f"less its refunds and prizes ({count} tournament{'s' * (count != 1)})"
        )
        return (
            f"{self.books.summary()}; every wallet matches its ledger movements, every "
            f"table's pool its seats ({tables}), every recorded hand nets to zero after its "
            f"rake ({hands}, {self.hands_rake} chips raked)" + tournaments * bool(count)
        )


async def check_books(session: AsyncSession) -> BooksCheck:
    """:func:`server.accounts.ledger.verify_books`, plus every cash table's seats == its pool (a
    hand in progress holds its players' chips in their seats until its record is written),
    plus every recorded hand's ``hand_players`` rows netting to minus its rake, plus the
    hands' rake == the ledger's rake movements. A tournament's table has no pool to match
    (its chips are not money, its hands net to zero like any): it is left out of the tables
    checked here and counted with its tournament (:mod:`server.store.tournament_books`)."""
    books = await ledger.verify_books(session)
    ids = (
        await session.scalars(
            select(TableRecord.id)
            .where(TableRecord.tournament_id.is_(None))
            .order_by(TableRecord.id)
        )
    ).all()
    net = func.sum(HandPlayer.ending - HandPlayer.starting)
    uneven = (
        await session.execute(
            select(
                HandRecord.id,
                HandRecord.table_id,
                HandRecord.number,
                HandRecord.rake,
                net.label("net"),
            )
            .join(HandPlayer, HandPlayer.hand_id == HandRecord.id)
            .group_by(HandRecord.id, HandRecord.table_id, HandRecord.number, HandRecord.rake)
            .having(net + HandRecord.rake != 0)
            .order_by(HandRecord.id)
        )
    ).all()
    hands, hands_rake = (
        await session.execute(
            select(func.count(), func.coalesce(func.sum(HandRecord.rake), 0)).select_from(
                HandRecord
            )
        )
    ).one()
    ledger_rake = await session.scalar(
        select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(
            LedgerEntry.kind == ledger.EntryKind.RAKE.value
        )
    )
    return BooksCheck(
        books=books,
        tables={table_id: await table_chips(session, table_id=table_id) for table_id in ids},
        uneven_hands=tuple(
            UnevenHand(
                hand_id=row.id,
                table_id=row.table_id,
                number=row.number,
                net=int(row.net),
                rake=int(row.rake),
            )
            for row in uneven
        ),
        hands=int(hands or 0),
        hands_rake=int(hands_rake or 0),
        ledger_rake=int(ledger_rake or 0),
        tournaments=tuple(await tournament_books.check_tournaments(session)),
    )


async def audit_books(sessionmaker: async_sessionmaker[AsyncSession]) -> BooksCheck:
    """:func:`check_books` on one snapshot of the database, read-only, so that the tables
    may play on meanwhile: a hand recorded halfway through the reads cannot show as a
    difference (PostgreSQL: a repeatable-read transaction; SQLite: one read transaction)."""
    async with sessionmaker() as session:
        if session.get_bind().dialect.name == "postgresql":
            await session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
            await session.execute(text("SET TRANSACTION READ ONLY"))
        else:
            # The sqlite3 module begins a transaction before writes only; begin one for reads.
            await session.execute(text("BEGIN"))
        try:
            return await check_books(session)
        finally:
            await session.rollback()
