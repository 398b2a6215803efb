"""What players buy from a running tournament: a late entry (or a re-entry), a rebuy, the
add-on. Each is a request (``server.tournaments.requests``) its director takes as a fact of
the journal (``entered``, ``rebought``, ``added_on``), paid in the fact's transaction: the
buy-in to the tournament's prize pool and the fee to the house's revenue
(:func:`server.accounts.ledger.enter_tournament`), a late entry's row made with it.

Everything that could refuse it is judged before anything changes, in this order: the player
(known, not suspended), the tournament's rules (the run's ``check_*``: registration closed,
in already, no re-entry left, the field full, the rebuy period or the add-on's time over, a
stack too big, the add-on taken), then the wallet (locked, holding the price and the fee).
A refusal leaves the run, the wallet and the journal as they were.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from engine.errors import Refusal
from engine.protocol import ErrorCode
from engine.tournament.run import AddChips, Order, TournamentRun
from engine.tournament.spec import TournamentSpec
from server.accounts import ledger
from server.db.models import (
    Account,
    EntryStatus,
    HandRecord,
    LiveHand,
    SeatRecord,
    Suspension,
    TournamentEntry,
    TournamentFact,
    TournamentRequest,
)
from server.db.types import utcnow
from server.tournaments import registry

# What each request a player files becomes in the journal.
PAID_FACTS = {"enter": "entered", "rebuy": "rebought", "add_on": "added_on"}
_KINDS = {
    "entered": ledger.EntryKind.ENTRY,
    "rebought": ledger.EntryKind.REBUY,
    "added_on": ledger.EntryKind.ADD_ON,
}


def player_of(request: TournamentRequest) -> str:
    return str((request.data or {}).get("player", ""))


def _check_of(run: TournamentRun, kind: str) -> Callable[[str, float], None]:
    return {
        "entered": run.check_entry,
        "rebought": run.check_rebuy,
        "added_on": run.check_add_on,
    }[kind]


async def check(
    session: AsyncSession, run: TournamentRun, spec: TournamentSpec, fact: TournamentFact
) -> Account:
    """The paying player, once everything that could refuse the purchase has not: raises
    the :class:`Refusal` otherwise, having changed nothing (the wallet's row is locked for
    the transaction that pays)."""
    player = str(fact.data.get("player", ""))
    account = await session.scalar(select(Account).where(Account.username == player))
    if account is None:
        raise Refusal(f"no player {player!r}", code=ErrorCode.NOT_REGISTERED)
    if await session.get(Suspension, account.id) is not None:
        raise Refusal("this account is suspended", code=ErrorCode.ACCOUNT_SUSPENDED)
    _check_of(run, fact.kind)(player, fact.at)
    wallet = ledger.player_wallet(account.id)
    if await ledger.balance(session, wallet=wallet, lock=True) < spec.buy_in + spec.fee:
        raise ledger.InsufficientFunds(
            f"it costs {spec.buy_in + spec.fee} chips: {spec.buy_in} + {spec.fee} fee"
        )
    return account


async def pay(
    session: AsyncSession,
    *,
    tournament_id: int,
    spec: TournamentSpec,
    fact: TournamentFact,
    account: Account,
    request: TournamentRequest,
) -> TournamentEntry:
    """The purchase paid, in the fact's transaction: a late entry's row made (playing, the
    next number of the player's entries), the price and fee moved; the entry it is for."""
    if fact.kind == "entered":
        numbers = await session.scalar(
            select(func.max(TournamentEntry.number)).where(
                TournamentEntry.tournament_id == tournament_id,
                TournamentEntry.account_id == account.id,
            )
        )
        entry = TournamentEntry(
            tournament_id=tournament_id,
            account_id=account.id,
            number=int(numbers or 0) + 1,
            request_id=request.request_id,
            status=EntryStatus.PLAYING.value,
            buy_in=spec.buy_in,
            fee=spec.fee,
        )
        session.add(entry)
        await session.flush()
        reference = registry.entry_reference(entry)
    else:
        found = await session.scalar(
            select(TournamentEntry).where(
                TournamentEntry.tournament_id == tournament_id,
                TournamentEntry.account_id == account.id,
                TournamentEntry.status == EntryStatus.PLAYING.value,
            )
        )
        if found is None:
            raise LookupError(f"{account.username} holds no entry playing in {tournament_id}")
        entry = found
        what = "rebuy" if fact.kind == "rebought" else "add_on"
        reference = f"{registry.entry_reference(entry)}:{what}:{fact.seq}"
    await ledger.enter_tournament(
        session,
        account_id=account.id,
        tournament_id=tournament_id,
        buy_in=spec.buy_in,
        fee=spec.fee,
        entry=reference,
        kind=_KINDS[fact.kind],
    )
    return entry


async def entry_in_play(
    session: AsyncSession, *, tournament_id: int, player: str, ordinal: int
) -> TournamentEntry:
    """The player's ``ordinal``-th entry in play (the run counts the entries it saw: 1 for
    the one seated at the start, 2 for a re-entry...): their entries that played, by number
    (an entry taken back before the start never did)."""
    entries = list(
        (
            await session.scalars(
                select(TournamentEntry)
                .join(Account, Account.id == TournamentEntry.account_id)
                .where(
                    TournamentEntry.tournament_id == tournament_id,
                    Account.username == player,
                    TournamentEntry.status.in_((EntryStatus.PLAYING.value, EntryStatus.OUT.value)),
                )
                .order_by(TournamentEntry.number)
            )
        ).all()
    )
    if not 1 <= ordinal <= len(entries):
        raise LookupError(f"{player} holds no entry {ordinal} in tournament {tournament_id}")
    return entries[ordinal - 1]


def outcome(spec: TournamentSpec, fact: TournamentFact, entry: TournamentEntry) -> dict[str, Any]:
    """A purchase's answer: the entry it is for, what it cost, the chips it gives."""
    chips = spec.structure.starting_chips
    if spec.rebuys is not None and fact.kind == "rebought":
        chips = spec.rebuys.chips
    elif spec.rebuys is not None and spec.rebuys.add_on_chips and fact.kind == "added_on":
        chips = spec.rebuys.add_on_chips
    return {
        "ok": True,
        "entry": entry.number,
        "price": spec.buy_in,
        "fee": spec.fee,
        "chips": chips,
    }


async def mark_out(session: AsyncSession, tournament_id: int, player: str, ordinal: int) -> None:
    """An entry out before the prizes are fixed: over (its place and prize come then)."""
    entry = await entry_in_play(
        session, tournament_id=tournament_id, player=player, ordinal=ordinal
    )
    entry.status, entry.left_at = EntryStatus.OUT.value, utcnow()
    await session.flush()


async def chips_not_added(
    session: AsyncSession,
    run: TournamentRun,
    table_ids: dict[int, int],
    seated: dict[str, tuple[int, int]],
) -> list[Order]:
    """The chips bought that the state says were added and a table does not hold yet
    (the director stopped before it told the table). Only at a table that has not begun
    its next hand since: its seats then hold its players' chips at the last hand's end,
    and a permit given after the chips' order means that order was carried out."""
    orders: list[Order] = []
    for number, state in sorted(run.tables.items()):
        table_id = table_ids[number]
        live = await session.scalar(select(LiveHand.number).where(LiveHand.table_id == table_id))
        written = await session.scalar(
            select(HandRecord.id)
            .where(HandRecord.table_id == table_id, HandRecord.number >= state.next_hand)
            .limit(1)
        )
        if state.in_hand or live == state.next_hand or written is not None:
            continue
        rows = await session.execute(
            select(Account.username, SeatRecord.chips)
            .join(Account, Account.id == SeatRecord.account_id)
            .where(SeatRecord.table_id == table_id)
        )
        for player, chips in sorted(rows.all()):
            stack = run.stacks.get(player)
            if seated.get(player, (None,))[0] == number and stack is not None and stack > chips:
                orders.append(AddChips(number, player, stack - int(chips), stack))
    return orders
