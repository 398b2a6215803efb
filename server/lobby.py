"""The cardroom: every open table, run by one table actor on one node, supervised and listed.

A node runs the tables whose lease it holds (``server.cluster``; alone, it holds them all).
Taking a table, it claims the table's fencing token in the database and builds the actor from
what is stored: the seated players with the chips their seat rows hold, the hand numbers
carried on, and the hand in progress dealt again from its stored deck and replayed to where
it was (or, when that cannot be done, voided with every chip back). The sequence of the
table's events jumps ahead at every change of node, so clients resync. An operator's new
table is run at once by the node that made it. Every third of a lease the node renews its
leases, stops running a table whose lease it lost (writing nothing more), takes the tables
nobody runs (none another node told of lately, unless it gave the table back), and tells the
other nodes how its tables look for their lobbies. If an actor's task dies, its hand in
progress is recorded as cancelled and the actor is built again from the database: the other
tables never notice. The lobby list (seats taken, waiting list, average pot, hands per hour)
comes from the actors, this node's and the others', never from the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.cards import Deck
from server import table_store, tables
from server.actor import (
    SEQ_PER_RUN,
    FinishedHand,
    LiveHandState,
    TableActor,
    TableSettings,
    TableStore,
)
from server.bus import MemoryBus, Subscription
from server.cluster import (
    COMMAND_QUEUE_SIZE,
    LOBBY_CHANNEL,
    CommandRouter,
    Leases,
    LocalLeases,
    RemoteTable,
    TableHandle,
    renewal_failed,
)
from server.db.models import HandRecord, TableRecord, TableStatus
from server.settings import Settings

log = logging.getLogger(__name__)

STATS_WINDOW = 3600.0  # hands per hour counts the last hour
AVERAGE_OF = 50  # the average pot is over the last hands, this many at most
RESTART_BACKOFF_MAX = 30.0


class TableStats:
    """A table's recent hands (wall-clock time, pot) for the lobby."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.opened = clock()
        self.hands: deque[tuple[float, int]] = deque(maxlen=1000)

    def record(self, pot: int, at: float | None = None) -> None:
        self.hands.append((self.clock() if at is None else at, pot))

    def average_pot(self) -> int:
        pots = [pot for _, pot in list(self.hands)[-AVERAGE_OF:]]
        return round(sum(pots) / len(pots)) if pots else 0

    def hands_per_hour(self) -> int:
        """Hands in the last hour; a table younger than that is extrapolated from its age."""
        now = self.clock()
        recent = sum(1 for at, _ in self.hands if at > now - STATS_WINDOW)
        span = min(STATS_WINDOW, max(60.0, now - self.opened))
        return round(recent * STATS_WINDOW / span)


def pot_of(result: dict[str, Any]) -> int:
    return sum(int(pot["amount"]) for pot in result.get("pots", ()))


class _CountingStore:
    """The real store, telling the table's stats about every hand saved."""

    def __init__(self, inner: TableStore, stats: TableStats) -> None:
        self.inner = inner
        self.stats = stats

    async def buy_in(self, table_id: int, player: str, amount: int, *, seat: int) -> None:
        await self.inner.buy_in(table_id, player, amount, seat=seat)

    async def cash_out(self, table_id: int, player: str, amount: int) -> None:
        await self.inner.cash_out(table_id, player, amount)

    async def save_hand(self, hand: FinishedHand) -> None:
        await self.inner.save_hand(hand)
        if not hand.cancelled:
            self.stats.record(pot_of(hand.result))

    async def start_hand(self, live: LiveHandState) -> None:
        await self.inner.start_hand(live)

    async def record_action(
        self, table_id: int, number: int, position: int, action: dict[str, Any]
    ) -> None:
        await self.inner.record_action(table_id, number, position, action)


# How long, in leases, what another node last told of a table is kept once it stops telling.
KEEP_HEARD_LEASES = 4


@dataclass(frozen=True, slots=True)
class _HeardTable:
    """A table another node runs, as it last told: its lobby line, and what a node taking
    it over keeps of its players."""

    summary: dict[str, Any]
    sitting_out: list[str]
    waiting: list[str]
    after_hand: dict[str, dict[str, bool]]  # player -> {"leaving", "sit_out"}
    at: float  # when it was heard (monotonic)
    released: bool = False  # its node stopped and gave the table back: free to take at once


@dataclass(slots=True)
class _Table:
    record: TableRecord
    stats: TableStats
    actor: TableActor
    fence: int
    renewed: float  # when this node last made sure the lease is still its own (monotonic)
    restarts: int = 0
    crashes: deque[float] = field(default_factory=lambda: deque(maxlen=10))


class Cardroom:
    """Every open table; runs those whose lease this node holds (all of them, alone);
    what ``server.ws`` calls the cardroom."""

    def __init__(
        self,
        *,
        bus: MemoryBus,
        sessionmaker: async_sessionmaker[AsyncSession],
        settings: Settings,
        leases: Leases | None = None,
        deck_factory: Callable[[], Deck] | None = None,
    ) -> None:
        self.bus = bus
        self.settings = settings
        self.node_id = settings.node_id
        self.sessionmaker = sessionmaker
        self.leases: Leases = leases or LocalLeases(settings.node_id)
        self.deck_factory = deck_factory  # tests stack the deck; None: a fresh shuffle
        self.router = CommandRouter(bus, settings.node_id,
                                    timeout=max(10.0, 2 * settings.lease_seconds))
        self._records: dict[int, TableRecord] = {}  # every open table of the cardroom
        self._tables: dict[int, _Table] = {}  # the tables this node runs
        self._elsewhere: dict[int, _HeardTable] = {}  # tables other nodes run, as told
        self._background: set[asyncio.Task[None]] = set()
        self._stopping = False
        self._stop_asked = asyncio.Event()  # wakes the lease rounds to end
        self._lease_rounds: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ ws.Cardroom

    def actor(self, table_id: int) -> TableActor | None:
        """The table's actor, if this node runs it."""
        table = self._tables.get(table_id)
        return table.actor if table is not None else None

    async def table(self, table_id: int) -> TableHandle | None:
        """The table wherever it runs (None: no such open table)."""
        actor = self.actor(table_id)
        if actor is not None:
            return actor
        if table_id not in self._records:
            async with self.sessionmaker() as session:
                record = await session.get(TableRecord, table_id)
            if record is None or record.status != TableStatus.OPEN:
                return None
            self._records[table_id] = record
        return RemoteTable(self.router, table_id)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Run every open table this node can take. A database that does not answer yet (or
        is not migrated) is tried again in the background: the app still starts, and
        ``/readyz`` says why it is not ready."""
        self.router.start()
        lobby = self.bus.subscribe(LOBBY_CHANNEL, size=COMMAND_QUEUE_SIZE)
        self._spawn(self._hear_lobby(lobby))
        try:
            await self._open_all()
        except Exception as exc:  # noqa: BLE001 - retried below
            log.warning("cardroom: tables not loaded yet (%s); retrying", exc)
        self._lease_rounds = self._spawn(self._keep_leases())

    async def _open_all(self) -> None:
        async with self.sessionmaker() as session:
            records = await tables.list_tables(session, status=TableStatus.OPEN)
        self._records = {record.id: record for record in records}
        for record in records:
            # A table another node told of lately is its node's, even when its lease is
            # missing (Redis restarted empty: the holder sets it again at its renewal).
            if record.id not in self._tables and self._run_elsewhere(record.id) is None:
                await self._take(record)

    async def _keep_leases(self) -> None:
        """Every third of a lease: renew ours, drop those lost, take those nobody runs,
        tell the other nodes what ours look like."""
        every = self.settings.lease_seconds / 3
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop_asked.wait(), every)
            if self._stopping:
                return
            try:
                await self._renew_all()
                await self._open_all()
            except Exception as exc:  # noqa: BLE001 - Redis or the database away: next time
                log.warning("cardroom: lease round failed (%s)", exc)
            self._tell_lobby()
            # What a node said of a table it no longer tells of is kept a while: the node
            # taking the table over keeps its players as they were.
            forgotten = time.monotonic() - KEEP_HEARD_LEASES * self.settings.lease_seconds
            for table_id, heard in list(self._elsewhere.items()):
                if heard.at < forgotten:
                    del self._elsewhere[table_id]

    def _run_elsewhere(self, table_id: int) -> _HeardTable | None:
        """What another node said of the table, if it said lately that it runs it (within a
        lease, and not giving it back)."""
        heard = self._elsewhere.get(table_id)
        if heard is None or heard.released:
            return None
        return heard if heard.at >= time.monotonic() - self.settings.lease_seconds else None

    async def _renew_all(self) -> None:
        now = time.monotonic()
        for table_id, table in list(self._tables.items()):
            if table.actor.taken_over:
                await self._drop(table_id, "another node took the table over")
                continue
            try:
                held = await self.leases.renew(table_id)
            except Exception as exc:  # noqa: BLE001 - Redis away: keep it while the lease lasts
                if not renewal_failed(exc):
                    raise
                if now - table.renewed > self.settings.lease_seconds * 0.9:
                    await self._drop(table_id, f"the lease could not be renewed ({exc})")
                continue
            if held:
                table.renewed = now
            else:
                await self._drop(table_id, "another node holds the lease")

    async def _take(self, record: TableRecord) -> bool:
        """Run the table if its lease is free: claim it in the database, build its actor
        from what is stored, resume the hand in progress, start."""
        try:
            if not await self.leases.acquire(record.id):
                return False
        except Exception as exc:  # noqa: BLE001 - Redis away: not now
            if not renewal_failed(exc):
                raise
            return False
        try:
            async with self.sessionmaker() as session, session.begin():
                fence = await table_store.claim_table(session, table_id=record.id)
            stats = TableStats()
            await self._seed_stats(record.id, stats)
            actor = await self._build(record, stats, fence)
        except BaseException:
            with contextlib.suppress(Exception):
                await self.leases.release(record.id)
            raise
        self._elsewhere.pop(record.id, None)
        self._tables[record.id] = _Table(record, stats, actor, fence, time.monotonic())
        self._run(record.id, actor)
        log.info("table %s: run by node %s (token %s)", record.id, self.node_id, fence)
        return True

    async def _drop(self, table_id: int, why: str) -> None:
        """Stop running the table here, writing nothing more (another node runs it)."""
        table = self._tables.pop(table_id, None)
        if table is None:
            return
        log.warning("table %s: no longer run by node %s: %s", table_id, self.node_id, why)
        self.router.unserve(table_id)
        table.actor.taken_over = True
        await table.actor.stop()
        with contextlib.suppress(Exception):
            await self.leases.release(table_id)

    async def open_table(self, record: TableRecord) -> TableActor | None:
        """A new table: run it here at once (idempotent). None if another node runs it."""
        self._records[record.id] = record
        existing = self._tables.get(record.id)
        if existing is not None:
            return existing.actor
        await self._take(record)
        return self.actor(record.id)

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def stop(self) -> None:
        """Stop every actor and give the leases back, so other nodes take over at once."""
        self._stopping = True
        # A lease round in the middle of its database work finishes it (cancelled there, the
        # connection's reset would be cut short); everything else in the background waits on
        # the bus or a timer and is cancelled.
        self._stop_asked.set()
        if self._lease_rounds is not None:
            await asyncio.wait({self._lease_rounds}, timeout=self.settings.lease_seconds)
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        await self.router.close()
        for table in self._tables.values():
            await table.actor.stop()
        self._tell_lobby(released=True)  # the players as they are now, for whoever takes over
        for table_id in self._tables:
            with contextlib.suppress(Exception):
                await self.leases.release(table_id)

    async def _build(
        self,
        record: TableRecord,
        stats: TableStats,
        fence: int,
        previous: TableActor | None = None,
    ) -> TableActor:
        async with self.sessionmaker() as session:
            seats = await table_store.seated_players(session, table_id=record.id)
            last = await table_store.last_hand_number(session, table_id=record.id)
            live = await table_store.live_hand(session, table_id=record.id)
        store = table_store.DatabaseTableStore(self.sessionmaker, fence=fence)
        actor = TableActor(
            record.id,
            tables.table_config(record),
            bus=self.bus,
            store=_CountingStore(store, stats),
            settings=self.table_settings(record),
            deck_factory=self.deck_factory,
        )
        if previous is not None:
            sitting_out = {
                s.player for s in previous.table.seats if s is not None and s.sitting_out
            }
            actor.restore(
                seats,
                hand_number=max(last, previous.hand_number),
                seq=previous.seq,
                sitting_out=sitting_out,
                waiting=previous.waiting,
                connections={p: s.connections for p, s in previous.players.items()},
            )
            return actor
        # A table another node was running a moment ago keeps its players as they were;
        # after a restart of the cardroom nobody is connected yet, so everyone sits out.
        seen = self._elsewhere.get(record.id)
        actor.restore(
            seats,
            hand_number=last,
            # The sequence jumps past anything the previous node may have sent: clients
            # see the gap and resync.
            seq=(fence - 1) * SEQ_PER_RUN,
            sitting_out=set(seen.sitting_out) if seen is not None else None,
            waiting=list(seen.waiting) if seen is not None else None,
        )
        resumed = None
        if live is not None and live.number > last:
            resumed = actor.resume(live)
        if resumed and seen is not None:
            # What players asked for the end of the resumed hand (leave, sit out) still holds.
            for player, wishes in seen.after_hand.items():
                number = actor.table.seat_of(player)
                occupant = actor.table.seats[number] if number is not None else None
                if occupant is not None and actor.table.in_hand(number):  # type: ignore[arg-type]
                    occupant.leaving = bool(wishes.get("leaving"))
                    occupant.sit_out_next_hand = bool(wishes.get("sit_out"))
        if resumed is not None or seen is not None:
            actor.announce("table_resumed", {
                "hand": live.number if live is not None and resumed else None,
                "node": self.node_id, "resumed": bool(resumed),
            })
        return actor

    def table_settings(self, record: TableRecord) -> TableSettings:
        s = self.settings
        return TableSettings(
            seat_count=record.seats,
            min_buy_in=record.min_buy_in,
            max_buy_in=record.max_buy_in,
            action_clock=s.action_clock_seconds,
            time_bank=s.time_bank_seconds,
            pause_between_hands=s.pause_between_hands_seconds,
            waiting_offer=s.waiting_offer_seconds,
            sit_out_limit=s.sit_out_limit_seconds,
        )

    async def _seed_stats(self, table_id: int, stats: TableStats) -> None:
        since = stats.clock() - STATS_WINDOW
        async with self.sessionmaker() as session:
            rows = await session.execute(
                select(HandRecord.created_at, HandRecord.result)
                .where(HandRecord.table_id == table_id)
                .order_by(HandRecord.id.desc())
                .limit(AVERAGE_OF)
            )
        for created_at, result in reversed(rows.all()):
            if not result.get("cancelled"):
                at = created_at.timestamp()
                if at > since:
                    stats.record(pot_of(result), at=at)

    # ------------------------------------------------------------------ supervision

    def _run(self, table_id: int, actor: TableActor) -> None:
        task = actor.start()
        task.add_done_callback(lambda done: self._on_done(table_id, actor, done))
        self.router.serve(actor)

    def _on_done(self, table_id: int, actor: TableActor, task: asyncio.Task[None]) -> None:
        if self._stopping or task.cancelled():
            return
        if actor.taken_over:
            self._spawn(self._drop(table_id, "another node took the table over"))
            return
        error = task.exception()
        log.error("table %s: the actor died (%r); restarting it", table_id, error)
        self._spawn(self._restart(table_id, actor))

    async def _restart(self, table_id: int, dead: TableActor) -> None:
        """Void the dead actor's hand (every chip back) and build the table again."""
        table = self._tables.get(table_id)
        if table is None or table.actor is not dead:
            return
        dead.fail_pending("table_restarting", "the table is restarting; try again")
        record = dead.cancelled_record("table_restarted")
        if record is not None:
            try:
                await dead.store.save_hand(record)
            except Exception:  # noqa: BLE001 - the stored stacks are still the hand's start
                log.exception("table %s: could not record the voided hand", table_id)
        now = time.monotonic()
        table.crashes.append(now)
        recent = sum(1 for at in table.crashes if at > now - 60.0)
        await asyncio.sleep(min(RESTART_BACKOFF_MAX, 0.05 * 2 ** (recent - 1)))
        while True:
            try:
                actor = await self._build(table.record, table.stats, table.fence, previous=dead)
                break
            except Exception:  # noqa: BLE001 - the database may be back in a moment
                log.exception("table %s: could not rebuild the actor", table_id)
                await asyncio.sleep(RESTART_BACKOFF_MAX)
        actor.announce("table_restarted", {
            "cancelled_hand": record.number if record is not None else None,
            "stacks": {str(n): s.stack for n, s in enumerate(actor.table.seats) if s is not None},
        })
        if self._tables.get(table_id) is not table:
            return  # dropped meanwhile: another node runs it
        table.actor = actor
        table.restarts += 1
        self._run(table_id, actor)

    # ------------------------------------------------------------------ the lobby

    def lobby(self) -> list[dict[str, Any]]:
        """Every open table, as the lobby lists it: this node's own, the others' as they
        last told (a table between nodes is listed from its record)."""
        listed: dict[int, dict[str, Any]] = {}
        for table_id in self._elsewhere:
            heard = self._run_elsewhere(table_id)
            if heard is not None:
                listed[table_id] = heard.summary
        for table_id in self._tables:
            listed[table_id] = self.summary(table_id)
        for table_id, record in self._records.items():
            if table_id not in listed:
                listed[table_id] = self._record_summary(record)
        return [listed[table_id] for table_id in sorted(listed)]

    def summary(self, table_id: int) -> dict[str, Any]:
        table = self._tables[table_id]
        record, actor = table.record, table.actor
        config = actor.table.config
        return {
            "id": record.id,
            "name": record.name,
            "variant": record.variant,
            "structure": config.structure,
            "stakes": {"ante": config.ante, "bring_in": config.bring_in,
                       "small_bet": config.small_bet, "big_bet": config.big_bet},
            "seats": len(actor.table.seats),
            "seats_taken": sum(1 for s in actor.table.seats if s is not None),
            "waiting": len(actor.waiting),
            "min_buy_in": record.min_buy_in,
            "max_buy_in": record.max_buy_in,
            "average_pot": table.stats.average_pot(),
            "hands_per_hour": table.stats.hands_per_hour(),
            "restarts": table.restarts,
            "node": self.node_id,
        }

    def _record_summary(self, record: TableRecord) -> dict[str, Any]:
        config = tables.table_config(record)
        return {
            "id": record.id, "name": record.name, "variant": record.variant,
            "structure": config.structure,
            "stakes": {"ante": config.ante, "bring_in": config.bring_in,
                       "small_bet": config.small_bet, "big_bet": config.big_bet},
            "seats": record.seats, "seats_taken": 0, "waiting": 0,
            "min_buy_in": record.min_buy_in, "max_buy_in": record.max_buy_in,
            "average_pot": 0, "hands_per_hour": 0, "restarts": 0, "node": None,
        }

    def _tell_lobby(self, released: bool = False) -> None:
        """This node's tables for the other nodes' lobbies, with what a node taking one
        over keeps of its players (who sits out, who waits); ``released``: this node gives
        them back, another may take them at once."""
        for table_id, table in self._tables.items():
            seats = table.actor.table.seats
            self.bus.publish_now(LOBBY_CHANNEL, {
                "type": "lobby", "node": self.node_id, "table": table_id,
                "summary": self.summary(table_id),
                "sitting_out": [s.player for s in seats if s is not None and s.sitting_out],
                "after_hand": {s.player: {"leaving": s.leaving, "sit_out": s.sit_out_next_hand}
                               for s in seats if s is not None
                               and (s.leaving or s.sit_out_next_hand)},
                "waiting_list": list(table.actor.waiting),
                "released": released,
            })

    async def _hear_lobby(self, lobby: Subscription) -> None:
        while True:
            async for message in lobby:
                table_id = message.get("table")
                if message.get("node") == self.node_id or not isinstance(table_id, int):
                    continue
                if table_id in self._tables:
                    continue  # ours now: what the old node said is out of date
                self._elsewhere[table_id] = _HeardTable(
                    summary=dict(message.get("summary") or {}),
                    sitting_out=list(message.get("sitting_out") or []),
                    waiting=list(message.get("waiting_list") or []),
                    after_hand=dict(message.get("after_hand") or {}),
                    at=time.monotonic(),
                    released=bool(message.get("released")),
                )
            lobby = self.bus.subscribe(LOBBY_CHANNEL, size=COMMAND_QUEUE_SIZE)
