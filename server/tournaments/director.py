"""A tournament's director: the one task that runs a tournament, on the node that holds it.

What to do is decided by ``engine.tournament.run`` from facts alone; this module feeds it the
facts and carries out its orders:

* **Facts.** The start (its players), each hand of the tournament's tables as the tables
  wrote it (the chips of every player seated at the table at its start and end, from the
  ``hands`` and ``hand_players`` rows), the clock's wakes. Each fact is journaled
  (``tournament_facts``) in one transaction with what it settles: the players out placed and
  paid (their prizes through the ledger), the tournament finished (``settlement``); the
  hands of one read all in one transaction (``director_hands``). A director that takes over
  replays the journal into the same state.
* **Orders to the tables** (``server.table.director_commands``: seat a player with chips,
  take one away, the next hand's stakes, the permit to deal the next hand) are carried out
  after the fact is written (a read's hands: all of theirs together, ``dispatch``). Each is
  safe to repeat, and a director that takes over first makes the tables match the state it
  replayed (:meth:`Director.reconcile`): a player taken from one table and not yet seated at
  the other is seated where the state says, never on both, and nothing else is done until
  then.
* **Deals at the final table** (``server.tournaments.final_deals``): a player's proposal,
  acceptance or decline is a request, taken as a fact like an operator's; what a fact decided
  of a deal is journaled after it as a record, and a deal made is paid in its transaction.
* **Telling the players** (``server.tournaments.announcer``): after each fact's orders are
  carried out (the end: before its tables close), the events they make (seated, moved, out,
  the final table, the end) and the clock's (a level, a break) go on the bus; a director
  that takes over says the facts of its journal's last seconds again (``RETELL_SECONDS``),
  since it cannot know whether they left; a client drops an event whose key it has.
* **Hearing the tables.** The director reads each table's new hands from the database: the
  bus only wakes it (a table's ``hand_ended`` or ``hand_cancelled``), so an event lost on the
  bus delays it by at most ``poll_seconds`` and changes nothing.
* **Requests** (``server.tournaments.director_requests``), in the order they came.
* **Entries, rebuys and add-ons in play** (``server.tournaments.purchases``): requests whose
  fact is paid for in its transaction (checked first: a refusal debits nothing); a new table
  a late entrant needs is made in it too; an entry out before the prizes are fixed is marked
  out then, and placed and paid when they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.errors import Refusal
from engine.protocol import ErrorCode
from engine.table import DISQUALIFIED
from engine.tournament import journal
from engine.tournament.run import (
    AddChips,
    CloseTable,
    Deal,
    KillHand,
    Moved,
    OpenTable,
    Order,
    RemovePlayer,
    SeatPlayer,
    Stakes,
    TournamentRun,
)
from engine.tournament.spec import TournamentSpec
from server import collector
from server.accounts import ledger
from server.bus.memory import Bus, table_channel, tournament_requests_channel
from server.db.models import (
    EntryStatus,
    TableRecord,
    TableStatus,
    TournamentEntry,
    TournamentFact,
    TournamentRecord,
    TournamentStatus,
)
from server.db.types import utcnow
from server.metrics import Metrics
from server.store import tables as table_records
from server.store.deck_seal import DeckSeal
from server.table import commands as cmd
from server.table.ports import CommandRefused
from server.tournaments import (
    director_hands,
    director_requests,
    dispatch,
    reconciling,
    registry,
    settlement,
)
from server.tournaments.announcer import Announcer, Told
from server.tournaments.director_hands import WrittenHand

log = logging.getLogger(__name__)

WAKING_EVENTS = frozenset({"hand_ended", "hand_cancelled", "request"})

# A director taking over tells again the events of the facts written in the last seconds of
# the journal (those of one read's hands, written together, included): whether they left
# before the director it replaces stopped cannot be known.
RETELL_SECONDS = 10.0

# Facts replayed between two turns of the event loop: a director taking over a field of a
# thousand replays thousands of facts, half a second in one go.
REPLAY_SLICE = 200


class Tables(Protocol):
    """What a director needs of the cardroom: its tables opened, and their commands."""

    bus: Bus

    async def open_table(self, record: TableRecord) -> Any: ...

    async def submit(self, table_id: int, command: cmd.TableCommand) -> dict[str, Any]: ...


class Director:
    """Runs tournament ``tournament_id`` from its journal to its end (see the module)."""

    def __init__(
        self,
        *,
        tournament_id: int,
        tables: Tables,
        sessionmaker: async_sessionmaker[AsyncSession],
        seal: DeckSeal,
        clock: Callable[[], float] = time.time,
        poll_seconds: float = 1.0,
        metrics: Metrics | None = None,
    ) -> None:
        self.tournament_id = tournament_id
        self.metrics = metrics
        self.tables = tables
        self.sessionmaker = sessionmaker
        self.seal = seal
        self.clock = clock
        self.poll_seconds = poll_seconds
        self.run: TournamentRun | None = None
        self.spec: TournamentSpec | None = None
        self.table_ids: dict[int, int] = {}  # the tournament's table number -> table id
        self.seq = 0  # the journal's last fact
        self.announcer = Announcer(tables.bus, tournament_id)
        self.retold: list[Told] = []  # the events of the journal's last facts, loaded

    # ------------------------------------------------------------------ the life of it

    async def play(self) -> None:
        """Start the tournament (or take it over where its journal ends) and run it out."""
        await self.load()
        for told in self.retold:  # taken over: their events may not have left
            await self.announcer.tell(told)
        self.retold = []
        subscription = self.tables.bus.subscribe(
            tournament_requests_channel(self.tournament_id),
            *(table_channel(i) for i in self.table_ids.values()),
        )
        try:
            # The tables as the journal left them first: a new hand's orders assume it (a
            # player in transit is seated before a table may deal without them).
            await self.reconcile()
            await self.take_new_hands()
            await self.take_requests()
            while not self._run().over:
                await self._wait(subscription)
                await self.take_new_hands()
                await self.take_requests()
                await self.wake_if_due()
                await self.announcer.clock(self._run(), seq=self.seq, at=self.clock())
                for table_id in self.table_ids.values():
                    subscription.add(table_channel(table_id))
        finally:
            subscription.close()

    async def _wait(self, subscription: Any) -> None:
        """Until a table's hand ends, the clock is due, or ``poll_seconds`` pass."""
        timeout = self.poll_seconds
        due = self._run().next_wake(self.clock())
        if due is not None:
            timeout = max(0.0, min(timeout, due - self.clock()))
        try:
            async with asyncio.timeout(timeout):
                while True:
                    message = await subscription.get()
                    if message is None or message.get("kind") in WAKING_EVENTS:
                        return
        except TimeoutError:
            return

    # ------------------------------------------------------------------ the journal

    async def load(self) -> None:
        """The tournament's state: its journal replayed, or the start made now."""
        seed = await self.read_journal()
        if self.run is None:
            await self.start(seed)

    async def read_journal(self) -> bytes:
        """The journal replayed into :attr:`run` (left None while nothing is written: the
        tournament has not started); the seat draw's seed."""
        async with self.sessionmaker() as session:
            record = await registry.get(session, tournament_id=self.tournament_id)
            self.spec = registry.spec_of(record)
            seed = bytes.fromhex(
                self.seal.open_bound(record.draw_seed, registry.draw_binding(record.id))["seed"]
            )
            facts = list(
                (
                    await session.scalars(
                        select(TournamentFact)
                        .where(TournamentFact.tournament_id == self.tournament_id)
                        .order_by(TournamentFact.seq)
                    )
                ).all()
            )
            self.table_ids = await self._table_ids(session)
        if not facts:
            return seed
        started = facts[0]
        self.run = TournamentRun(
            self.spec,
            tournament_id=self.tournament_id,
            seed=seed,
            prize_pool=int(started.data["prize_pool"]),
        )
        expected: list[tuple[str, dict[str, Any]]] = []  # the records a fact's orders make
        retell_from = facts[-1].at - RETELL_SECONDS
        for count, fact in enumerate(facts, 1):
            if count % REPLAY_SLICE == 0:
                await asyncio.sleep(0)  # a long journal is not replayed in one go
            if fact.kind in journal.RECORD_KINDS:
                if not expected or expected.pop(0) != (fact.kind, fact.data):
                    raise ValueError(f"fact {fact.seq}, a {fact.kind}, is not what its fact made")
            elif expected:
                raise ValueError(f"fact {fact.seq - 1}'s deal records are missing")
            else:
                orders = self._replay(fact)
                expected = settlement.records(orders)
                if fact.at >= retell_from:
                    # Made as the fact left the run, keyed as its director made them (the
                    # journal's number after its records): a client that has them drops them.
                    self.retold.append(
                        self.announcer.told(
                            self._run(),
                            self.table_ids,
                            seq=fact.seq + len(expected),
                            kind=fact.kind,
                            orders=orders,
                            at=fact.at,
                        )
                    )
            self.seq = fact.seq
        return seed

    def _replay(self, fact: TournamentFact) -> list[Order]:
        return journal.replay(self._run(), fact.kind, fact.data, fact.at)

    async def _take(self, kind: str, data: dict[str, Any], at: float) -> list[Order]:
        """A fact taken: journaled, with what it settles, in one transaction; its orders."""
        fact = TournamentFact(
            tournament_id=self.tournament_id, seq=self.seq + 1, kind=kind, at=at, data=data
        )
        orders = self._replay(fact)
        async with self.sessionmaker() as session:
            session.add(fact)
            last = await self._settle(session, fact, orders)
            await session.commit()
        self.seq = last
        return orders

    async def _settle(
        self, session: AsyncSession, fact: TournamentFact, orders: list[Order]
    ) -> int:
        """What the fact settles, written in its transaction (``server.tournaments.settlement``);
        the journal's last fact after it (its deal records follow it)."""
        return await settlement.settle(
            session, run=self._run(), fact=fact, orders=orders, make_table=self._make_table
        )

    # ------------------------------------------------------------------ the start

    async def start(self, seed: bytes) -> None:
        """The field drawn and seated, its tables made and opened, the first hands allowed:
        in one transaction with the tournament's row locked, the entries playing, the
        tournament running and the start's fact (an entry taken back meanwhile waits). The
        players are seated and told where before any table may deal."""
        assert self.spec is not None
        at, began = self.clock(), time.perf_counter()
        async with self.sessionmaker() as session:
            await registry.get(session, tournament_id=self.tournament_id, lock=True)
            entries = await registry.entries(session, tournament_id=self.tournament_id)
            players = [name for entry, name in entries if entry.status == EntryStatus.REGISTERED]
            pool = await ledger.balance(session, wallet=ledger.tournament_pool(self.tournament_id))
            self.run = TournamentRun(
                self.spec, tournament_id=self.tournament_id, seed=seed, prize_pool=pool
            )
            fact = TournamentFact(
                tournament_id=self.tournament_id,
                seq=1,
                kind="started",
                at=at,
                data={"players": players, "prize_pool": pool},
            )
            orders = self._replay(fact)
            session.add(fact)
            await self._make_tables(session, sorted(self._run().tables))
            await session.execute(
                update(TournamentEntry)
                .where(
                    TournamentEntry.tournament_id == self.tournament_id,
                    TournamentEntry.status == EntryStatus.REGISTERED.value,
                )
                .values(status=EntryStatus.PLAYING.value)
            )
            await session.execute(
                update(TournamentRecord)
                .where(TournamentRecord.id == self.tournament_id)
                .values(status=TournamentStatus.RUNNING.value, started_at=utcnow())
            )
            await session.commit()
        self.seq = 1
        written = time.perf_counter()
        await self._open_tables()
        opened = time.perf_counter()
        # The players told where they sit before their tables may deal: the first hand comes
        # a pause after its permit, time for them to go there.
        await self.carry_out([order for order in orders if not isinstance(order, Deal)])
        seated = time.perf_counter()
        await self.announcer.tell(self._told("started", orders))
        told = time.perf_counter()
        # The node's heap grew by the tables and their players at once: its full pass now,
        # before any of them deals, not in their first minutes of play (server/collector.py).
        collector.settle_now()
        settled = time.perf_counter()
        await self.carry_out([order for order in orders if isinstance(order, Deal)])
        log.info(
            "tournament %s started: %d players at %d tables; the fact written in %.2f s, the "
            "tables opened in %.2f s, the players seated in %.2f s, told in %.2f s, the "
            "node's heap settled in %.2f s, the tables let deal in %.2f s",
            self.tournament_id, len(self._run().stacks), len(self.table_ids), written - began,
            opened - written, seated - opened, told - seated, settled - told,
            time.perf_counter() - settled,
        )  # fmt: skip

    async def _make_table(self, session: AsyncSession, number: int) -> None:
        """Table ``number``'s row, open (its actor opened once the fact is written)."""
        await self._make_tables(session, [number])

    async def _make_tables(self, session: AsyncSession, numbers: list[int]) -> None:
        assert self.spec is not None
        made = await table_records.create_tournament_tables(
            session,
            tournament_id=self.tournament_id,
            numbers=numbers,
            config=self.spec.table_config(self.spec.structure.levels[0]),
            seats=self.spec.seats_per_table,
        )
        self.table_ids.update((record.tournament_table or 0, record.id) for record in made)

    async def _open_tables(self) -> None:
        """Every open table's actor started where the cardroom places it, a few at once."""
        async with self.sessionmaker() as session:
            records = (
                await session.scalars(
                    select(TableRecord).where(
                        TableRecord.id.in_(list(self.table_ids.values())),
                        TableRecord.status == TableStatus.OPEN.value,
                    )
                )
            ).all()
        gate = asyncio.Semaphore(dispatch.LANES)

        async def open_one(record: TableRecord) -> None:
            async with gate:
                await self.tables.open_table(record)

        await asyncio.gather(*(open_one(record) for record in records))

    async def _table_ids(self, session: AsyncSession) -> dict[int, int]:
        rows = await session.execute(
            select(TableRecord.tournament_table, TableRecord.id).where(
                TableRecord.tournament_id == self.tournament_id
            )
        )
        return {int(number): int(table_id) for number, table_id in rows.all() if number}

    # ------------------------------------------------------------------ the hands

    async def take_new_hands(self) -> None:
        """Every hand the tables wrote since the last one taken: the hands of each read
        taken together (:meth:`_take_hands`), until a read finds none."""
        while not self._run().over:
            found = await director_hands.written(self.sessionmaker, self._run(), self.table_ids)
            if not found:
                return
            await self._take_hands(found)

    async def _take_hands(self, found: list[WrittenHand]) -> None:
        """The hands of a read, table by table, in one transaction: each replayed against the
        run as the ones before it left it (``director_hands.fact_of``; one whose table no
        longer waits for it left for the next read) and journaled with what it settles, its
        events made then; once committed, all their orders carried out together (each
        table's in order, a player moving let go before being seated elsewhere), then each
        fact's events told, in order. A director stopped before the commit took none.

        Every hand is replayed before the transaction writes anything: on SQLite a
        transaction that has written holds the one writer's lock, and the tables' actions
        wait for it (a read's replays are tens of milliseconds at a hundred tables)."""
        run, seq = self._run(), self.seq
        taken: list[tuple[TournamentFact, list[Order]]] = []
        told: list[Told] = []
        for hand in found:
            hand_fact = director_hands.fact_of(hand, run)
            if hand_fact is None:
                continue
            at = self.clock()
            fact = TournamentFact(
                tournament_id=self.tournament_id,
                seq=seq + 1,
                kind="hand",
                at=at,
                data=hand_fact.data(),
            )
            its = self._replay(fact)
            taken.append((fact, its))
            seq = fact.seq + len(settlement.records(its))
            told.append(
                self.announcer.told(run, self.table_ids, seq=seq, kind="hand", orders=its, at=at)
            )
            if run.over:
                break
        orders: list[Order] = []
        async with self.sessionmaker() as session:
            for fact, its in taken:
                session.add(fact)
                # (The run as the whole read left it: what a hand's settling reads of it, an
                # entry's number, only a request changes, as only a request opens a table.)
                await self._settle(session, fact, its)
                orders += its
            await session.commit()
        self.seq = seq
        await self.deliver(orders, told)

    async def take_requests(self) -> None:
        """The requests waiting, in the order they came, each a fact of the journal or refused
        (``server.tournaments.director_requests``)."""
        await director_requests.take_requests(self)

    async def wake_if_due(self) -> None:
        run = self._run()
        if run.over:
            return
        at = self.clock()
        due = run.next_wake(at)
        if due is not None and due <= at:
            orders = await self._take("woke", {}, at)
            await self.deliver(orders, [self._told("woke", orders)])

    # ------------------------------------------------------------------ the tables

    async def carry_out(self, orders: list[Order]) -> None:
        """The tables told: each table in the order its orders came, the tables side by side
        (``server.tournaments.dispatch``: a player moving leaves one table before the other
        seats them)."""
        await dispatch.carry_out(orders, self._carry_out_one)

    async def _carry_out_one(self, order: Order) -> None:
        match order:
            case SeatPlayer(table, seat, player, stack):
                await self._tell(
                    table, cmd.SeatEntrant(player=player, seat=seat, stack=stack, **self._me())
                )
            case RemovePlayer(table, player):
                await self._tell(table, cmd.GiveUpPlayer(player=player, **self._me()))
            case Stakes(table, level):
                assert self.spec is not None  # a mixed tournament's level: its game too
                await self._tell(table, cmd.SetStakes.at_level(self.spec, level, **self._me()))
            case Deal(table, number):
                await self._tell(table, cmd.DealNext(number=number, **self._me()))
            case CloseTable(table):
                await self._close(table)
            case KillHand(table, player):
                # Their hand killed at their turn; gone at its end whatever this answers.
                with contextlib.suppress(CommandRefused):
                    await self._tell(table, cmd.Remove(player=player, cause=DISQUALIFIED))
            case Moved(reason=reason, waited=waited) if self.metrics is not None:
                self.metrics.tournament_moved(reason, waited)
            case AddChips(table, player, chips, stack):
                await self._tell(
                    table,
                    cmd.AddEntrantChips(player=player, chips=chips, stack=stack, **self._me()),
                )
            case OpenTable(table):
                async with self.sessionmaker() as session:
                    record = await session.get(TableRecord, self.table_ids[table])
                if record is not None:
                    await self.tables.open_table(record)

    def _told(self, kind: str, orders: list[Order]) -> Told:
        """The events of the fact just taken (``self.seq`` the journal's last), and of the
        clock, made from the state it left."""
        return self.announcer.told(
            self._run(), self.table_ids, seq=self.seq, kind=kind, orders=orders, at=self.clock()
        )

    async def deliver(self, orders: list[Order], told: list[Told]) -> None:
        """Facts taken: their orders carried out, then their events told (a player told they
        moved sits there already). The tournament's end is told first: a director cut short
        once its tables are closed has no one to take over and tell it."""
        if self._run().over:
            for each in told:
                await self.announcer.tell(each)
            await self.carry_out(orders)
            return
        await self.carry_out(orders)
        for each in told:
            await self.announcer.tell(each)

    def _me(self) -> dict[str, Any]:
        return {"tournament_id": self.tournament_id}

    async def _tell(self, table: int, command: cmd.TableCommand) -> dict[str, Any]:
        return await self.tables.submit(self.table_ids[table], command)

    async def _close(self, table: int) -> None:
        """The table closed as the cardroom closes one (``CloseTournamentTable``): its actor
        stops, its lease is given back, the other nodes forget it. One closed already (a
        director that took over resends the order) is left as it is."""
        table_id = self.table_ids[table]
        async with self.sessionmaker() as session:
            status = await session.scalar(
                select(TableRecord.status).where(TableRecord.id == table_id)
            )
        if status != TableStatus.OPEN:
            return
        reason = (
            "the tournament is over"
            if self._run().over
            else f"table {table} broke: its players play on at the other tables"
        )
        try:
            await self._tell(table, cmd.CloseTournamentTable(reason=reason, **self._me()))
        except Refusal as refused:
            if refused.code != ErrorCode.TABLE_SHUT:
                raise

    async def reconcile(self) -> None:
        """The tables made to match the state the journal gives (``reconciling``): what a
        director that took over does first (each step harmless when already done), also once
        the tournament is over (its last orders may not have been carried out)."""
        orders = await reconciling.orders(
            self.sessionmaker, self._run(), self.tournament_id, self.table_ids, self.clock()
        )
        await self.carry_out(orders)

    # ------------------------------------------------------------------ reading

    @property
    def players_left(self) -> int | None:
        """Players still in; None before the start (nothing read yet) and once over."""
        run = self.run
        return None if run is None or run.over else len(run.stacks)

    def _run(self) -> TournamentRun:
        if self.run is None:
            raise RuntimeError("the director has not loaded its tournament")
        return self.run
