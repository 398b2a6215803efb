"""The tournaments' books, for ``stud-server audit``: their chips and their money.

Tournament chips are not money and never touch the ledger, so they are counted on their own,
for every tournament running or finished:

* **Issued.** The chips a tournament issued are the sum of what its journal's facts issued
  (:data:`ISSUING`): the start, its starting chips to each player. A fact that issues more
  (a rebuy, an add-on, a late entry) is counted by adding its kind there.
* **Removed.** A disqualified player's chips leave play: their journal's ``chips_removed``
  record says how many, which must be all they held.
* **Every hand boundary.** The journal walked fact by fact: each hand's players start it with
  the chips they held after their last hand (at any table: a move carries them), each hand
  keeps its chips, and the chips in play after each fact are the chips issued less the
  chips removed.
* **The tables' records.** Each hand in the journal is the hand its table recorded (its
  ``hand_players`` rows: each player's chips before and after), and each recorded hand is in
  the journal; a running tournament's hand recorded but not yet taken by its director is
  the next of its table and carries on from the journal. A running tournament's chips now,
  every seat row of its tables plus the players between two tables (out of one, not yet
  seated at the other: their chips are the journal's), are the chips issued.

Its money: the prize pool (``tournament:<id>``) took each entry's buy-in and gave back the
refunds and the prizes, what it holds is the rest (a finished tournament's: nothing), each
entry's prize is the prize the ledger paid it, and the prizes sum to the pool at the start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from engine.tournament.journal import REMOVED
from engine.tournament.spec import TournamentSpec
from server.accounts import ledger
from server.db.models import (
    Account,
    EntryStatus,
    HandPlayer,
    HandRecord,
    LedgerEntry,
    SeatRecord,
    TableRecord,
    TournamentEntry,
    TournamentFact,
    TournamentRecord,
    TournamentStatus,
    Wallet,
)

MOST_LINES = 20
"""A tournament's differences listed at most: the first of them say where its books broke."""

Issue = Callable[[TournamentSpec, Mapping[str, Any]], dict[str, int]]


def _start(spec: TournamentSpec, data: Mapping[str, Any]) -> dict[str, int]:
    return {str(player): spec.structure.starting_chips for player in data["players"]}


def _entered(spec: TournamentSpec, data: Mapping[str, Any]) -> dict[str, int]:
    return {str(data["player"]): spec.structure.starting_chips}


def _rebought(spec: TournamentSpec, data: Mapping[str, Any]) -> dict[str, int]:
    return {str(data["player"]): spec.rebuys.chips if spec.rebuys is not None else 0}


def _added_on(spec: TournamentSpec, data: Mapping[str, Any]) -> dict[str, int]:
    add_on = spec.rebuys.add_on_chips if spec.rebuys is not None else None
    return {str(data["player"]): add_on or 0}


ISSUING: dict[str, Issue] = {
    "started": _start,
    "entered": _entered,
    "rebought": _rebought,
    "added_on": _added_on,
}
"""The journal facts that issue chips, each with the chips it gives each player."""

PAID_FACTS = frozenset({"entered", "rebought", "added_on"})
"""The facts that took a buy-in into the prize pool while the tournament ran."""


@dataclass(slots=True)
class TournamentBooks:
    """One tournament's chips and money as the audit found them; ``differences`` in words."""

    tournament_id: int
    name: str
    status: str
    issued: int = 0
    removed: int = 0  # out of play with disqualified players
    in_play: int = 0
    hands: int = 0
    pool: int = 0
    differences: list[str] = field(default_factory=list)

    def differ(self, line: str) -> None:
        self.differences.append(f"tournament {self.tournament_id} ({self.name}): {line}")


@dataclass(frozen=True, slots=True)
class _Hand:
    """A recorded hand of the tournament: its table's number there, and each player's chips
    before and after it, by name."""

    hand_id: int
    table: int
    number: int
    chips: dict[str, tuple[int, int]]


async def check_tournaments(session: AsyncSession) -> list[TournamentBooks]:
    """Every tournament's books (chips for those running or finished; money for all)."""
    records = (await session.scalars(select(TournamentRecord).order_by(TournamentRecord.id))).all()
    return [await check_tournament(session, record) for record in records]


async def check_tournament(session: AsyncSession, record: TournamentRecord) -> TournamentBooks:
    books = TournamentBooks(record.id, record.name, record.status)
    facts = list(
        (
            await session.scalars(
                select(TournamentFact)
                .where(TournamentFact.tournament_id == record.id)
                .order_by(TournamentFact.seq)
            )
        ).all()
    )
    await _check_money(session, record, facts, books)
    if record.status in (TournamentStatus.RUNNING, TournamentStatus.FINISHED):
        await _check_chips(session, record, facts, books)
    if len(books.differences) > MOST_LINES:
        more = len(books.differences) - MOST_LINES
        del books.differences[MOST_LINES:]
        books.differ(f"and {more} more difference{'s' * (more > 1)}")
    return books


# ---------------------------------------------------------------------- chips


def walk_journal(
    spec: TournamentSpec, facts: Sequence[TournamentFact], books: TournamentBooks
) -> tuple[dict[str, int], dict[str, int], dict[tuple[int, int], TournamentFact]]:
    """The journal fact by fact: the chips issued, every hand boundary's chips; each
    player's chips after the last fact, the chips issued to them not yet seen at a hand's
    start (bought during a hand, added as it ends), and the hand facts by (table, hand
    number)."""
    stacks: dict[str, int] = {}
    pending: dict[str, int] = {}
    hands: dict[tuple[int, int], TournamentFact] = {}
    broken = False
    for expected, fact in enumerate(facts, 1):
        if fact.seq != expected:
            books.differ(f"its journal goes from fact {expected - 1} to fact {fact.seq}")
        issue = ISSUING.get(fact.kind)
        if issue is not None:
            for player, chips in issue(spec, fact.data).items():
                if fact.kind == "started":
                    stacks[player] = stacks.get(player, 0) + chips
                else:
                    pending[player] = pending.get(player, 0) + chips
                books.issued += chips
        if fact.kind == "hand":
            table, number = int(fact.data["table"]), int(fact.data["number"])
            starting, ending = fact.data["starting"], fact.data["stacks"]
            where = f"hand {number} at table {table} (journal fact {fact.seq})"
            if (table, number) in hands:
                books.differ(f"{where} is in its journal twice")
            hands[table, number] = fact
            added: dict[str, int] = {}  # bought during this hand: added as it ends
            for player, chips in sorted(starting.items()):
                held, bought = stacks.get(player, 0), pending.pop(player, 0)
                if bought and chips == held + bought:
                    stacks[player] = chips  # added before the hand
                elif bought:
                    added[player] = bought
                if stacks.get(player) != chips:
                    books.differ(
                        f"{where}: {player} started it with {chips} chips, but held "
                        f"{_held(stacks, player)} after their last hand"
                    )
            if sum(ending.values()) != sum(starting.values()):
                books.differ(
                    f"{where}: its players ended it with {sum(ending.values())} chips, "
                    f"having started it with {sum(starting.values())}"
                )
            stacks.update({str(player): int(chips) for player, chips in ending.items()})
            for player, bought in added.items():
                stacks[player] = stacks.get(player, 0) + bought
        if fact.kind == REMOVED:
            player, chips = str(fact.data["player"]), int(fact.data["chips"])
            if stacks.get(player) != chips:
                books.differ(
                    f"journal fact {fact.seq} takes {chips} chips of {player} out of play, "
                    f"who held {_held(stacks, player)}"
                )
            stacks[player] = stacks.get(player, 0) - chips
            books.removed += chips
        in_play = sum(stacks.values()) + sum(pending.values())
        if in_play != books.issued - books.removed and not broken:
            broken = True  # the first boundary out says where; the later ones follow from it
            removed = f" and {books.removed} removed" if books.removed else ""
            books.differ(
                f"after journal fact {fact.seq} ({fact.kind}) {in_play} chips are in play, "
                f"{books.issued} were issued{removed}"
            )
    return stacks, pending, hands


def _held(stacks: Mapping[str, int], player: str) -> str:
    return str(stacks[player]) if player in stacks else "none (never issued any)"


async def _check_chips(
    session: AsyncSession,
    record: TournamentRecord,
    facts: list[TournamentFact],
    books: TournamentBooks,
) -> None:
    if not facts or facts[0].kind != "started":
        books.differ(f"it is {record.status} but its journal has no start")
        return
    spec = TournamentSpec.from_dict(record.spec)
    stacks, bought, journaled = walk_journal(spec, facts, books)
    rows = await session.execute(
        select(TableRecord.id, TableRecord.tournament_table).where(
            TableRecord.tournament_id == record.id
        )
    )
    tables = {int(table_id): int(number or 0) for table_id, number in rows.all()}
    recorded = await _hands(session, tables)
    books.hands = len(recorded)
    finished = record.status == TournamentStatus.FINISHED
    pending: list[_Hand] = []
    for hand in recorded:
        fact = journaled.pop((hand.table, hand.number), None)
        if fact is None:
            if finished:
                books.differ(
                    f"hand {hand.number} at table {hand.table} (hand id {hand.hand_id}) was "
                    f"played but is not in its journal"
                )
            else:
                pending.append(hand)  # written, not yet taken by the director
            continue
        _match(hand, fact, books)
    for table, number in sorted(journaled):
        books.differ(f"its journal has hand {number} at table {table}, which no table recorded")
    latest = dict(stacks)
    for hand in pending:
        for player, (start, end) in sorted(hand.chips.items()):
            if bought.get(player) and latest.get(player, 0) + bought[player] == start:
                latest[player] = start  # bought before this hand, added as it began
                del bought[player]
            if latest.get(player) != start:
                books.differ(
                    f"hand {hand.number} at table {hand.table} (hand id {hand.hand_id}, not yet "
                    f"in its journal): {player} started it with {start} chips, but held "
                    f"{_held(latest, player)} after their last hand"
                )
            latest[player] = end
    left = books.issued - books.removed  # the chips still in play
    if finished:
        for player, chips in bought.items():
            latest[player] = latest.get(player, 0) + chips
        books.in_play = sum(latest.values())
        holders = [player for player, chips in latest.items() if chips]
        if len(holders) > 1 or sum(latest[p] for p in holders) != left:
            held = ", ".join(f"{p} ({latest[p]})" for p in sorted(holders)) or "nobody"
            books.differ(
                f"it is finished, but its chips are held by {held}: its winner holds all "
                f"{left} at the end"
            )
        return
    seated = await _seated(session, list(tables))
    for player, (_, chips) in seated.items():
        if bought.get(player) and latest.get(player, 0) + bought[player] == chips:
            latest[player] = chips  # bought, and added at the table already
            del bought[player]
    books.in_play = (
        sum(latest[p] for p in latest if p not in seated)
        + sum(chips for _, chips in seated.values())
        + sum(bought.values())
    )
    for player, (table_id, chips) in sorted(seated.items()):
        number = tables[table_id]
        if player not in latest:
            books.differ(f"{player} sits at its table {number} with {chips} chips it never issued")
        elif chips != latest[player]:
            books.differ(
                f"{player}'s seat at its table {number} holds {chips} chips, but the hands "
                f"leave them {latest[player]}"
            )
    if books.in_play != left:
        removed = f" and removed {books.removed}" if books.removed else ""
        books.differ(
            f"its chips in play now (its seats, and its players between two tables) are "
            f"{books.in_play}, but it issued {books.issued}{removed}"
        )


def _match(hand: _Hand, fact: TournamentFact, books: TournamentBooks) -> None:
    """A journal's hand fact against the hand its table recorded."""
    starting, ending = fact.data["starting"], fact.data["stacks"]
    where = f"hand {hand.number} at table {hand.table} (hand id {hand.hand_id})"
    for player, (start, end) in sorted(hand.chips.items()):
        if (starting.get(player), ending.get(player)) != (start, end):
            books.differ(
                f"{where}: {player}'s chips went from {start} to {end} by its record, from "
                f"{starting.get(player)} to {ending.get(player)} by its journal"
            )
    for player in sorted(set(starting) - set(hand.chips)):
        if starting[player] != ending.get(player):
            books.differ(
                f"{where}: {player}, seated but not dealt in, went from {starting[player]} to "
                f"{ending.get(player)} chips by its journal"
            )


async def _hands(session: AsyncSession, tables: Mapping[int, int]) -> list[_Hand]:
    """The hands recorded at these tables (id -> number), by table number and hand number."""
    if not tables:
        return []
    rows = (
        await session.execute(
            select(
                HandRecord.id,
                HandRecord.table_id,
                HandRecord.number,
                Account.username,
                HandPlayer.starting,
                HandPlayer.ending,
            )
            .join(HandPlayer, HandPlayer.hand_id == HandRecord.id)
            .join(Account, Account.id == HandPlayer.account_id)
            .where(HandRecord.table_id.in_(list(tables)))
        )
    ).all()
    hands: dict[int, _Hand] = {}
    for hand_id, table_id, number, player, start, end in rows:
        hand = hands.setdefault(hand_id, _Hand(hand_id, tables[table_id], number, {}))
        hand.chips[player] = (int(start), int(end))
    return sorted(hands.values(), key=lambda h: (h.table, h.number))


async def _seated(session: AsyncSession, table_ids: list[int]) -> dict[str, tuple[int, int]]:
    """Who sits at these tables now: player -> (table id, chips)."""
    rows = await session.execute(
        select(Account.username, SeatRecord.table_id, SeatRecord.chips)
        .join(Account, Account.id == SeatRecord.account_id)
        .where(SeatRecord.table_id.in_(table_ids))
    )
    return {name: (int(table_id), int(chips)) for name, table_id, chips in rows.all()}


# ---------------------------------------------------------------------- money


async def _check_money(
    session: AsyncSession,
    record: TournamentRecord,
    facts: list[TournamentFact],
    books: TournamentBooks,
) -> None:
    """The prize pool's movements against the entries and the pool at the start."""
    pool_name = ledger.tournament_pool(record.id)
    wallet = await session.scalar(select(Wallet).where(Wallet.name == pool_name))
    if wallet is None:
        books.differ(f"it has no prize pool wallet {pool_name}")
        return None
    books.pool = int(wallet.balance)
    movements = (
        await session.execute(
            select(
                LedgerEntry.kind,
                LedgerEntry.reference,
                LedgerEntry.amount,
                LedgerEntry.credit_wallet_id == wallet.id,
            ).where(
                or_(
                    LedgerEntry.credit_wallet_id == wallet.id,
                    LedgerEntry.debit_wallet_id == wallet.id,
                )
            )
        )
    ).all()
    by_entry: dict[tuple[str, str | None], int] = {}
    totals = {"in": 0, "bought": 0, "refunds": 0, "prizes": 0}
    for kind, reference, amount, into in movements:
        known = {
            (ledger.EntryKind.ENTRY.value, True): "in",
            (ledger.EntryKind.REBUY.value, True): "bought",
            (ledger.EntryKind.ADD_ON.value, True): "bought",
            (ledger.EntryKind.ENTRY_REFUND.value, False): "refunds",
            (ledger.EntryKind.PRIZE.value, False): "prizes",
        }.get((kind, bool(into)))
        if known is None:
            books.differ(
                f"its prize pool {'took' if into else 'gave'} {amount} chips as {kind} "
                f"({reference}): a prize pool takes buy-ins and gives refunds and prizes only"
            )
            continue
        totals[known] += int(amount)
        # A deal's amounts, a rebuy, an add-on are the entry's too
        # (``tournament:<id>:entry:<id>:deal:<number>``, ``...:rebuy:<fact>``).
        entry_reference = ":".join(reference.split(":")[:4]) if reference else reference
        by_entry[known, entry_reference] = by_entry.get((known, entry_reference), 0) + int(amount)
    rest = totals["in"] + totals["bought"] - totals["refunds"] - totals["prizes"]
    if rest != books.pool:
        books.differ(
            f"its prize pool took {totals['in'] + totals['bought']} chips of buy-ins, rebuys "
            f"and add-ons and gave {totals['refunds']} "
            f"back in refunds and {totals['prizes']} in prizes, which leaves {rest}, but it "
            f"holds {books.pool}"
        )
    entries = (
        await session.execute(
            select(TournamentEntry, Account.username)
            .join(Account, Account.id == TournamentEntry.account_id)
            .where(TournamentEntry.tournament_id == record.id)
            .order_by(TournamentEntry.id)
        )
    ).all()
    played = 0
    prizes = 0
    for entry, player in entries:
        reference = f"tournament:{record.id}:entry:{entry.id}"
        who = f"entry {entry.id} ({player})"
        paid_in = by_entry.get(("in", reference), 0)
        refunded = by_entry.get(("refunds", reference), 0)
        paid_out = by_entry.get(("prizes", reference), 0)
        if paid_in != entry.buy_in:
            books.differ(f"{who} paid {paid_in} into its prize pool, its buy-in is {entry.buy_in}")
        was_refunded = entry.status in (EntryStatus.UNREGISTERED, EntryStatus.REFUNDED)
        if refunded != (entry.buy_in if was_refunded else 0):
            books.differ(f"{who} is {entry.status} and its prize pool refunded it {refunded} chips")
        if (entry.prize or 0) != paid_out:
            books.differ(
                f"{who} is recorded with a prize of {entry.prize or 0}, the ledger paid it "
                f"{paid_out}"
            )
        if not was_refunded and entry.status != EntryStatus.REGISTERED:
            played += entry.buy_in
        prizes += entry.prize or 0
    started = facts[0] if facts and facts[0].kind == "started" else None
    if started is None:
        return
    spec = TournamentSpec.from_dict(record.spec)
    late = [fact for fact in facts if fact.kind in PAID_FACTS]
    bought = sum(1 for fact in late if fact.kind != "entered") * spec.buy_in
    prize_pool = int(started.data["prize_pool"]) + len(late) * spec.buy_in
    if played + totals["bought"] != prize_pool or totals["bought"] != bought:
        books.differ(
            f"its entries in play paid {played} chips of buy-ins and {totals['bought']} of "
            f"rebuys and add-ons, but its journal makes its pool {prize_pool} (the start's, "
            f"and {len(late)} entries, rebuys and add-ons in play)"
        )
    if record.status == TournamentStatus.FINISHED:
        if books.pool:
            books.differ(f"it is finished, but its prize pool still holds {books.pool} chips")
        if prizes != prize_pool:
            books.differ(f"its prizes sum to {prizes}, but its prize pool was {prize_pool}")
