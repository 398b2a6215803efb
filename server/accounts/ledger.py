"""The only module that moves chips.

Every movement is one :class:`~server.db.models.LedgerEntry`: ``amount`` leaves the
*debit* wallet and reaches the *credit* wallet, with a ``kind`` and a ``reference`` that
say why (the buy-in, the hand). Wallets are named: ``player:<account id>``,
``house:bankroll`` (the issuer of play money), ``house:revenue`` (what the house collects:
the rake of pots, time fees, tournaments' entry fees), ``table:<table id>`` (the chips in play
at a table) and ``tournament:<id>`` (a tournament's prize pool: its buy-ins until they are
paid out as prizes; tournament chips are not money and never reach a wallet).

These functions never commit: the caller commits the movement in the same transaction as
its cause (the new account, the seat taken, the hand result), so both happen or neither.
A refused movement raises before it changes anything; when one cause makes several
movements, the caller's rollback undoes the earlier ones.

Balances cannot go below zero, checked twice in SQL: the debit is a conditional UPDATE
(``... WHERE balance >= amount``), and a CHECK constraint backs it. The house bankroll alone
goes below zero: it is minus every chip issued, which keeps the books double-entry.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import CursorResult, case, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.db.models import LedgerEntry, Wallet, WalletKind

HOUSE = "house:bankroll"
REVENUE = "house:revenue"


class EntryKind(enum.StrEnum):
    GRANT = "grant"  # play money issued by the house
    BUY_IN = "buy_in"  # wallet -> table pool
    CASH_OUT = "cash_out"  # table pool -> wallet
    HAND_RESULT = "hand_result"  # between table pools and wallets, reference: the hand
    REFUND = "refund"  # a cancelled hand's chips going back
    ADJUSTMENT = "adjustment"  # an operator's correction, reference: why
    RAKE = "rake"  # table pool -> house revenue, reference: the hand
    TIME_FEE = "time_fee"  # table pool -> house revenue, reference: the table and the player
    ENTRY = "entry"  # wallet -> tournament pool, reference: the entry
    ENTRY_FEE = "entry_fee"  # wallet -> house revenue, reference: the entry
    ENTRY_REFUND = "entry_refund"  # back to the wallet (pool and revenue), reference: the entry
    PRIZE = "prize"  # tournament pool -> wallet, reference: the entry
    REBUY = "rebuy"  # wallet -> tournament pool, reference: the entry and the rebuy
    ADD_ON = "add_on"  # wallet -> tournament pool, reference: the entry's add-on


class InsufficientFunds(Refusal):
    code = ErrorCode.INSUFFICIENT_FUNDS


class UnknownWallet(Refusal):
    code = ErrorCode.UNKNOWN_WALLET


class BadAmount(Refusal):
    code = ErrorCode.BAD_AMOUNT


def player_wallet(account_id: int) -> str:
    return f"player:{account_id}"


def table_pool(table_id: int) -> str:
    return f"table:{table_id}"


def tournament_pool(tournament_id: int) -> str:
    return f"tournament:{tournament_id}"


async def open_wallet(
    session: AsyncSession, *, name: str, kind: WalletKind, account_id: int | None = None
) -> Wallet:
    """A new empty wallet; chips reach it only through :func:`transfer`."""
    wallet = Wallet(name=name, kind=kind.value, account_id=account_id, balance=0)
    session.add(wallet)
    await session.flush()
    return wallet


async def transfer(
    session: AsyncSession,
    *,
    debit: str,
    credit: str,
    amount: int,
    kind: EntryKind,
    reference: str | None = None,
) -> LedgerEntry:
    """Move ``amount`` chips from wallet ``debit`` to wallet ``credit``, or refuse and change
    nothing (:class:`InsufficientFunds`, :class:`UnknownWallet`, :class:`BadAmount`)."""
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        raise BadAmount(f"an amount of chips is a whole number > 0, not {amount!r}")
    if debit == credit:
        raise BadAmount("a movement needs two different wallets")
    # Lock both rows in id order (PostgreSQL; SQLite locks the file): no deadlocks.
    rows = (
        await session.execute(
            select(Wallet.id, Wallet.name, Wallet.kind)
            .where(Wallet.name.in_((debit, credit)))
            .order_by(Wallet.id)
            .with_for_update()
        )
    ).all()
    found = {row.name: row for row in rows}
    for name in (debit, credit):
        if name not in found:
            raise UnknownWallet(f"no wallet {name!r}")
    source, target = found[debit], found[credit]

    take = update(Wallet).where(Wallet.id == source.id)
    if source.name != HOUSE:  # the issuer alone goes below zero
        take = take.where(Wallet.balance >= amount)
    taken = cast(
        CursorResult[object],
        await session.execute(take.values(balance=Wallet.balance - amount)),
    )
    if taken.rowcount != 1:
        raise InsufficientFunds(f"{debit} holds less than {amount}")
    await session.execute(
        update(Wallet).where(Wallet.id == target.id).values(balance=Wallet.balance + amount)
    )
    entry = LedgerEntry(
        debit_wallet_id=source.id,
        credit_wallet_id=target.id,
        amount=amount,
        kind=kind.value,
        reference=reference,
    )
    session.add(entry)
    await session.flush()
    return entry


async def grant(
    session: AsyncSession, *, account_id: int, amount: int, reference: str | None = None
) -> LedgerEntry:
    """Issue play money from the house to a player's wallet."""
    return await transfer(
        session,
        debit=HOUSE,
        credit=player_wallet(account_id),
        amount=amount,
        kind=EntryKind.GRANT,
        reference=reference,
    )


async def buy_in(
    session: AsyncSession, *, account_id: int, table_id: int, amount: int
) -> LedgerEntry:
    """Chips from a player's wallet to a table's pool, as the player sits down or tops up."""
    return await transfer(
        session,
        debit=player_wallet(account_id),
        credit=table_pool(table_id),
        amount=amount,
        kind=EntryKind.BUY_IN,
        reference=f"table:{table_id}",
    )


async def cash_out(
    session: AsyncSession, *, account_id: int, table_id: int, amount: int
) -> LedgerEntry:
    """Chips from a table's pool back to a player's wallet, as the player leaves."""
    return await transfer(
        session,
        debit=table_pool(table_id),
        credit=player_wallet(account_id),
        amount=amount,
        kind=EntryKind.CASH_OUT,
        reference=f"table:{table_id}",
    )


async def collect(
    session: AsyncSession, *, table_id: int, amount: int, kind: EntryKind, reference: str
) -> LedgerEntry:
    """Chips the house collects at a table (``RAKE`` or ``TIME_FEE``), from its pool to the
    house's revenue."""
    return await transfer(
        session,
        debit=table_pool(table_id),
        credit=REVENUE,
        amount=amount,
        kind=kind,
        reference=reference,
    )


async def adjust(
    session: AsyncSession, *, account_id: int, amount: int, reference: str | None = None
) -> LedgerEntry:
    """An operator's correction of a player's wallet, against the house bankroll: ``amount``
    > 0 credits the player (house -> wallet), < 0 debits it (wallet -> house), never below
    zero (:class:`InsufficientFunds`, nothing changed)."""
    if not isinstance(amount, int) or isinstance(amount, bool) or amount == 0:
        raise BadAmount(f"an adjustment is a whole number of chips other than 0, not {amount!r}")
    player = player_wallet(account_id)
    return await transfer(
        session,
        debit=HOUSE if amount > 0 else player,
        credit=player if amount > 0 else HOUSE,
        amount=abs(amount),
        kind=EntryKind.ADJUSTMENT,
        reference=reference,
    )


async def enter_tournament(
    session: AsyncSession,
    *,
    account_id: int,
    tournament_id: int,
    buy_in: int,
    fee: int,
    entry: str,
    kind: EntryKind = EntryKind.ENTRY,
) -> None:
    """An entry paid (or, by ``kind``, a rebuy or an add-on): the buy-in to the tournament's
    prize pool, the fee to the house's revenue; both or neither (the caller's transaction),
    :class:`InsufficientFunds` before any change when the wallet holds less than both."""
    wallet = player_wallet(account_id)
    if await balance(session, wallet=wallet, lock=True) < buy_in + fee:
        what = {EntryKind.REBUY: "a rebuy", EntryKind.ADD_ON: "an add-on"}.get(kind, "an entry")
        raise InsufficientFunds(f"{what} costs {buy_in + fee} chips: {buy_in} + {fee} fee")
    if buy_in:
        await transfer(
            session,
            debit=wallet,
            credit=tournament_pool(tournament_id),
            amount=buy_in,
            kind=kind,
            reference=entry,
        )
    if fee:
        await transfer(
            session,
            debit=wallet,
            credit=REVENUE,
            amount=fee,
            kind=EntryKind.ENTRY_FEE,
            reference=entry,
        )


async def refund_entry(
    session: AsyncSession, *, account_id: int, tournament_id: int, buy_in: int, fee: int, entry: str
) -> None:
    """An entry taken back (unregistered, or the tournament cancelled): the buy-in and the fee
    returned exactly, from where :func:`enter_tournament` put them."""
    wallet = player_wallet(account_id)
    if buy_in:
        await transfer(
            session,
            debit=tournament_pool(tournament_id),
            credit=wallet,
            amount=buy_in,
            kind=EntryKind.ENTRY_REFUND,
            reference=entry,
        )
    if fee:
        await transfer(
            session,
            debit=REVENUE,
            credit=wallet,
            amount=fee,
            kind=EntryKind.ENTRY_REFUND,
            reference=entry,
        )


async def pay_prize(
    session: AsyncSession, *, account_id: int, tournament_id: int, amount: int, entry: str
) -> LedgerEntry:
    """A place's prize, from the tournament's prize pool to the player's wallet."""
    return await transfer(
        session,
        debit=tournament_pool(tournament_id),
        credit=player_wallet(account_id),
        amount=amount,
        kind=EntryKind.PRIZE,
        reference=entry,
    )


async def balance(session: AsyncSession, *, wallet: str, lock: bool = False) -> int:
    """The wallet's balance; ``lock``: the row locked for the transaction (PostgreSQL), so
    that it still holds it when the transaction moves chips out."""
    query = select(Wallet.balance).where(Wallet.name == wallet)
    value = await session.scalar(query.with_for_update() if lock else query)
    if value is None:
        raise UnknownWallet(f"no wallet {wallet!r}")
    return value


@dataclass(frozen=True, slots=True)
class StatementLine:
    """One ledger row seen from one wallet: plus when chips came in, minus when they left."""

    id: int
    kind: str
    amount: int
    counterparty: str
    reference: str | None
    created_at: datetime


async def statement(
    session: AsyncSession, *, wallet: str, limit: int = 20, before: int | None = None
) -> list[StatementLine]:
    """The wallet's latest movements, newest first; ``before``: only entries with a smaller
    id (paging)."""
    own = await session.scalar(select(Wallet.id).where(Wallet.name == wallet))
    if own is None:
        raise UnknownWallet(f"no wallet {wallet!r}")
    debit, credit = aliased(Wallet), aliased(Wallet)
    query = (
        select(LedgerEntry, debit.name.label("debit"), credit.name.label("credit"))
        .join(debit, LedgerEntry.debit_wallet_id == debit.id)
        .join(credit, LedgerEntry.credit_wallet_id == credit.id)
        .where((LedgerEntry.debit_wallet_id == own) | (LedgerEntry.credit_wallet_id == own))
        .order_by(LedgerEntry.id.desc())
        .limit(limit)
    )
    if before is not None:
        query = query.where(LedgerEntry.id < before)
    rows = (await session.execute(query)).all()
    lines = []
    for entry, debit_name, credit_name in rows:
        incoming = entry.credit_wallet_id == own
        lines.append(
            StatementLine(
                id=entry.id,
                kind=entry.kind,
                amount=entry.amount if incoming else -entry.amount,
                counterparty=debit_name if incoming else credit_name,
                reference=entry.reference,
                created_at=entry.created_at,
            )
        )
    return lines


# What the chips held in each kind of wallet are called in the audit's words (the house's
# wallets but its bankroll hold its revenue).
_HOLDERS = {
    WalletKind.PLAYER.value: "player wallets",
    WalletKind.TABLE.value: "table pools",
    WalletKind.HOUSE.value: "house revenue",
    WalletKind.TOURNAMENT.value: "tournament prize pools",
}


def _holder(kind: str) -> str:
    return _HOLDERS.get(kind, f"{kind} wallets")


@dataclass(frozen=True, slots=True)
class WalletMismatch:
    """A wallet whose balance is not the sum of its movements (changed behind the ledger, or
    a movement gone)."""

    name: str
    balance: int
    movements: int  # what the ledger rows add up to: chips in minus chips out

    def __str__(self) -> str:
        gap = self.balance - self.movements
        return (
            f"wallet {self.name} holds {self.balance} chips, but its ledger movements add up "
            f"to {self.movements} ({_chips(abs(gap))} {'more' if gap > 0 else 'fewer'})"
        )


@dataclass(frozen=True, slots=True)
class Books:
    """What :func:`verify_books` found. ``balanced`` is the one answer that matters;
    :meth:`differences` says in words what does not balance."""

    granted: int  # chips the house ever gave out (grants, adjustments)
    reclaimed: int  # chips that went back to the house
    held: int  # chips in every wallet but the bankroll: players', tables', the house revenue
    house: int  # the house bankroll's balance: minus the chips out
    mismatches: tuple[WalletMismatch, ...]  # wallets whose balance is not their movements' sum
    # (wallet kind, chips), every wallet but the bankroll ("house": the house revenue).
    held_by_kind: tuple[tuple[str, int], ...] = ()

    @property
    def revenue(self) -> int:
        """The chips the house collected (rake, time fees) and holds."""
        return dict(self.held_by_kind).get(WalletKind.HOUSE.value, 0)

    @property
    def mismatched(self) -> tuple[str, ...]:
        """The names of the wallets whose balance is not the sum of their movements."""
        return tuple(mismatch.name for mismatch in self.mismatches)

    @property
    def issued(self) -> int:
        """The chips out of the house: given out, less what came back."""
        return self.granted - self.reclaimed

    @property
    def balanced(self) -> bool:
        return not self.differences()

    def differences(self) -> list[str]:
        """Each difference in the books, in plain words (none when they balance)."""
        lines = [str(mismatch) for mismatch in self.mismatches]
        if self.held != self.issued:
            gap = self.held - self.issued
            lines.append(
                f"the {self._holders()} hold {self.held} chips, but the house issued "
                f"{self.issued} ({self.granted} given out, {self.reclaimed} taken back): "
                f"{_chips(abs(gap))} {'too many' if gap > 0 else 'missing'}"
            )
        if self.house != -self.held:
            lines.append(
                f"the house bankroll stands at {self.house}, but the chips out of it are "
                f"{self.held} (it should stand at {-self.held})"
            )
        return lines

    def summary(self) -> str:
        """Where the chips the house issued are, e.g. ``1500 chips issued: 1150 in player
        wallets, 350 in table pools``."""
        parts = ", ".join(f"{chips} in {_holder(kind)}" for kind, chips in self.held_by_kind)
        return f"{self.issued} chips issued by the house" + (f": {parts}" if parts else "")

    def _holders(self) -> str:
        names = [_holder(kind) for kind, _ in self.held_by_kind]
        if len(names) < 2:
            return names[0] if names else "wallets"
        return f"{', '.join(names[:-1])} and {names[-1]}"


def _chips(count: int) -> str:
    return f"{count} chip" if count == 1 else f"{count} chips"


async def verify_books(session: AsyncSession) -> Books:
    """Check the books: each balance is its movements' sum, and the chips held in every
    wallet but the house bankroll (player wallets, table pools, the house revenue, and any
    other kind the ledger has) == the chips the house issued. Hands in progress hold their
    chips in the table pools."""
    credits = (
        select(
            LedgerEntry.credit_wallet_id.label("wallet_id"),
            func.sum(LedgerEntry.amount).label("total"),
        )
        .group_by(LedgerEntry.credit_wallet_id)
        .subquery()
    )
    debits = (
        select(
            LedgerEntry.debit_wallet_id.label("wallet_id"),
            func.sum(LedgerEntry.amount).label("total"),
        )
        .group_by(LedgerEntry.debit_wallet_id)
        .subquery()
    )
    journal = func.coalesce(credits.c.total, 0) - func.coalesce(debits.c.total, 0)
    rows = (
        await session.execute(
            select(Wallet.name, Wallet.kind, Wallet.balance, journal.label("journal"))
            .outerjoin(credits, credits.c.wallet_id == Wallet.id)
            .outerjoin(debits, debits.c.wallet_id == Wallet.id)
            .order_by(Wallet.id)
        )
    ).all()
    mismatches = tuple(
        WalletMismatch(name=row.name, balance=int(row.balance), movements=int(row.journal))
        for row in rows
        if row.balance != row.journal
    )
    by_kind = {kind.value: 0 for kind in (WalletKind.PLAYER, WalletKind.TABLE, WalletKind.HOUSE)}
    for row in rows:
        if row.name != HOUSE:
            by_kind[row.kind] = by_kind.get(row.kind, 0) + int(row.balance)
    held = sum(by_kind.values())
    house = sum(row.balance for row in rows if row.name == HOUSE)
    house_id = select(Wallet.id).where(Wallet.name == HOUSE).scalar_subquery()
    granted, reclaimed = (
        await session.execute(
            select(
                func.coalesce(
                    func.sum(case((LedgerEntry.debit_wallet_id == house_id, LedgerEntry.amount))), 0
                ),
                func.coalesce(
                    func.sum(case((LedgerEntry.credit_wallet_id == house_id, LedgerEntry.amount))),
                    0,
                ),
            )
        )
    ).one()
    return Books(
        granted=int(granted),
        reclaimed=int(reclaimed),
        held=int(held),
        house=int(house),
        mismatches=mismatches,
        held_by_kind=tuple(by_kind.items()),
    )
