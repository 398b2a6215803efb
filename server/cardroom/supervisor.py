"""The cardroom: every open table, run by one table actor on one node, supervised and listed.

A node runs the tables whose lease it holds (``server.cardroom.cluster``; alone, it holds them all).
Taking a table, it claims the table's fencing token in the database and builds the actor from
what is stored (``server.cardroom.takeover``): the seated players with the chips their seat rows
hold, the hand numbers carried on, and the hand in progress dealt again from its stored deck
and replayed to where it was (or, when that cannot be done, voided with every chip back). The
sequence of the table's events jumps ahead at every change of node, so clients resync.

Where tables run (``server.cardroom.placement``, from the load each node tells every round): an
operator's new table goes at once to the node with the most room, wherever it was made (its
lease set aside for that node, then an order over the bus to take it); a node with more than
its share hands tables over between hands (no hand in progress, none started: the players
carried over as a node that stops gives them back, to one node); a node drained by an operator
hands over all its tables and takes no new one; the tables nobody runs are shared out over the
nodes. Each move is audited by the node that takes the table (``table.move``) and counted on
both. Every third of a lease the node renews its leases, stops running a table whose lease it
lost (writing nothing more), takes its share of the tables nobody runs (none another node told
of lately, unless it gave the table back; the rest at the next round if still free), tells the
other nodes its load and how its tables look for their lobbies, and starts the moves it owes
(``server.cardroom.lease_rounds``).
If an actor's task dies, its hand in progress is recorded as cancelled and the actor is built
again from the database: the other tables never notice. The lobby list (seats taken, waiting
list, average pot, hands per hour) comes from the actors, this node's and the others', never
from the database.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.cards import Deck
from engine.protocol import ErrorCode
from engine.table_events import TableRestarted
from server.accounts import audit_log
from server.accounts.audit_log import AuditAction, NodeActor
from server.bus.memory import Bus
from server.cardroom import lobby_lists, placement
from server.cardroom.cluster import (
    COMMAND_QUEUE_SIZE,
    LEASE_FAILURES,
    LOBBY_CHANNEL,
    CommandRouter,
    Leases,
    LocalLeases,
    RemoteTable,
    TableHandle,
    renewal_failed,
)
from server.cardroom.gossip import Gossip
from server.cardroom.handover import Handover, Handovers, LetGo, NodeReport, move_of
from server.cardroom.lease_rounds import LAPSE_MARGIN, LeaseRounds
from server.cardroom.placement import NodeLoad
from server.cardroom.table_stats import TableStats, seed_stats
from server.cardroom.takeover import build_actor
from server.db.models import TableRecord, TableStatus
from server.logs import named
from server.metrics import Metrics
from server.settings import Settings
from server.store import fencing, tables
from server.store.deck_seal import DeckSeal
from server.store.write_ahead import WriteAhead
from server.table.actor import TableActor
from server.table.lease import LeaseProof
from server.table.operators import ShutTable

log = logging.getLogger(__name__)

RESTART_BACKOFF_MAX = 30.0
# How soon a command for a table being taken over is worth sending again.
RETRY_SOON = 0.25


@dataclass(slots=True)
class _Table:
    record: TableRecord
    stats: TableStats
    actor: TableActor
    fence: int
    lease: LeaseProof  # until when this node may speak for the table
    restarts: int = 0
    crashes: deque[float] = field(default_factory=lambda: deque(maxlen=10))


@dataclass(frozen=True, slots=True)
class RunningTable:
    """A table this node runs, as the cardroom holds it at this moment: its actor (a restart
    builds another), its fencing token, the proof of its lease (renewed by each lease round,
    lost once another node holds the lease) and how many times its actor was restarted."""

    table_id: int
    actor: TableActor
    fence: int
    lease: LeaseProof
    restarts: int


class Cardroom:
    """Every open table; runs those whose lease this node holds (all of them, alone);
    what ``server.edge.ws`` calls the cardroom."""

    def __init__(
        self,
        *,
        bus: Bus,
        sessionmaker: async_sessionmaker[AsyncSession],
        settings: Settings,
        seal: DeckSeal,
        leases: Leases | None = None,
        deck_factory: Callable[[], Deck] | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.bus = bus
        self.seal = seal  # what the decks of hands in progress are sealed with at rest
        self.metrics = metrics if metrics is not None else Metrics()
        self.settings = settings
        self.node_id = settings.node_id
        self.sessionmaker = sessionmaker
        # Every table's actions written ahead in groups; on SQLite, its one writer's gate.
        self.write_ahead = WriteAhead(sessionmaker.kw["bind"])
        self.leases: Leases = leases or LocalLeases(settings.node_id)
        self.deck_factory = deck_factory  # tests stack the deck; None: a fresh shuffle
        self.router = CommandRouter(
            bus,
            settings.node_id,
            timeout=max(10.0, 2 * settings.lease_seconds),
            retry_after=settings.lease_seconds / 3,
            runner=self.runner,
            back_in=self.back_in,
        )
        self._records: dict[int, TableRecord] = {}  # every open table of the cardroom
        self._tables: dict[int, _Table] = {}  # the tables this node runs
        self._taking: dict[int, asyncio.Lock] = {}  # one take of a table at a time
        self._claiming: dict[int, LeaseProof] = {}  # leases held by takes not yet running
        self.gossip = Gossip(  # what it tells of its tables, what it heard of the others'
            bus,
            settings.node_id,
            self,
            lease_seconds=settings.lease_seconds,
            lapses=lambda: self.leases.lapses,
        )
        self._background: set[asyncio.Task[None]] = set()
        self._stopping = False
        # Tables between nodes (server.cardroom.handover), and the tables nobody ran at the
        # last look (taken by any node at the next).
        self.handovers = Handovers(
            self,
            node_id=settings.node_id,
            lease_seconds=settings.lease_seconds,
            leases=self.leases,
            router=self.router,
            gossip=self.gossip,
            metrics=self.metrics,
        )
        self._free_before: set[int] = set()
        self.lease_rounds = LeaseRounds(  # server.cardroom.lease_rounds
            self,
            lease_seconds=settings.lease_seconds,
            leases=self.leases,
            gossip=self.gossip,
            handovers=self.handovers,
        )

    # ------------------------------------------------------------------ ws.Cardroom

    def actor(self, table_id: int) -> TableActor | None:
        """The table's actor, if this node runs it."""
        table = self._tables.get(table_id)
        return table.actor if table is not None else None

    def actors(self) -> list[TableActor]:
        """The actors of the tables this node runs."""
        return [table.actor for table in self._tables.values()]

    def running_tables(self) -> dict[int, RunningTable]:
        """The tables this node runs, by id, each as it is at this moment: what an operator
        (or a test) looks at to see which tables a node holds and how their leases stand.
        A view: changing it changes nothing in the cardroom."""
        return {
            table_id: RunningTable(table_id, t.actor, t.fence, t.lease, t.restarts)
            for table_id, t in self._tables.items()
        }

    def claiming(self) -> dict[int, LeaseProof]:
        """The leases held by takes not yet running (renewed by the lease rounds too)."""
        return dict(self._claiming)

    async def table(self, table_id: int) -> TableHandle | None:
        """The table wherever it runs (None: no such table; a closed one refuses everything)."""
        actor = self.actor(table_id)
        if actor is not None:
            return actor
        if table_id not in self._records:
            async with self.sessionmaker() as session:
                record = await session.get(TableRecord, table_id)
            if record is None:
                return None
            if record.status != TableStatus.OPEN:
                return ShutTable(table_id)
            self._records[table_id] = record
        return RemoteTable(self.router, table_id)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Run every open table this node can take. A database that does not answer yet (or
        is not migrated) is tried again in the background: the app still starts, and
        ``/readyz`` says why it is not ready."""
        self.router.start()
        self.router.serve_orders(self.handovers.on_order)
        lobby = self.bus.subscribe(LOBBY_CHANNEL, size=COMMAND_QUEUE_SIZE)
        self.spawn(self.gossip.hear(lobby))
        # A node (re)started knows of no other node's tables until they next tell: ask now,
        # so its lobby names who runs each table at once, not a third of a lease later.
        self.bus.publish_now(LOBBY_CHANNEL, {"type": "hello", "node": self.node_id})
        await self.lease_rounds.start()

    async def take_tables(self, *, shares_only: bool = False) -> None:
        """Run every open table nobody runs (none another node told of lately) and whose
        lease is free: what ``start`` does first and each lease round does again, so a
        table another node dropped or made is run here within a round. ``shares_only``:
        this node's share alone (a look between rounds, at a lapse), the others' left to
        their nodes until the next round's look."""
        async with self.sessionmaker() as session:
            records = await tables.list_tables(session, status=TableStatus.OPEN)
        self._records = {record.id: record for record in records}
        # A table another node told of lately is its node's, even when its lease is missing
        # (Redis restarted empty: the holder sets it again at its renewal).
        free = [
            record
            for record in records
            if record.id not in self._tables and self.gossip.run_elsewhere(record.id) is None
        ]
        if self.leases.lapses:
            # Shared out over the nodes: this node's part now, the rest if still free at the
            # next look (their node-to-be may be gone too).
            shares = placement.share_out([r.id for r in free], self.nodes())
            waited = set() if shares_only else self._free_before
            if not shares_only:
                self._free_before = {r.id for r in free}
            free = [
                record
                for record in free
                if shares.get(record.id) == self.node_id
                or (
                    record.id in waited and (not self.handovers.draining or record.id not in shares)
                )
            ]
        for record in free:
            await self.take(record)

    def runner(self, table_id: int) -> str | None:
        """The node running the table, as far as this node knows (None: nobody lately)."""
        if table_id in self._tables:
            return self.node_id
        heard = self.gossip.run_elsewhere(table_id)
        return heard.node if heard is not None else None

    def back_in(self, table_id: int) -> float:
        """Seconds until the table should run again, for a command no node heard: once the
        lease of a node gone quiet lapses, and a take later (``LeaseRounds``)."""
        heard = self.gossip.heard.get(table_id)
        if heard is None or heard.released:
            return self.settings.lease_seconds / 3  # taken at the next round
        every = self.settings.lease_seconds / 3
        lapses_in = heard.at + self.settings.lease_seconds - time.monotonic()
        if lapses_in < -every:
            return every  # long lapsed and still nobody's: a round, not a busy wait
        return max(RETRY_SOON, lapses_in + LAPSE_MARGIN + RETRY_SOON)

    async def take(self, record: TableRecord, handover: Handover | None = None) -> bool:
        """Run the table if its lease is free (or set aside for this node): claim it in the
        database, build its actor from what is stored, resume the hand in progress, start.
        One take of a table at a time: an operator's new table and a lease round may both
        reach for it, and a second claim would start a second actor (and fence out the
        first)."""
        async with self._taking.setdefault(record.id, asyncio.Lock()):
            if record.id in self._tables:
                return True
            return await self._claim(record, handover)

    async def _claim(self, record: TableRecord, handover: Handover | None) -> bool:
        handover = handover or self.handovers.coming(record.id)
        lease = LeaseProof(
            self.settings.lease_seconds if self.leases.lapses else None, time.monotonic()
        )
        try:
            if not await self.leases.acquire(record.id):
                return False
        except Exception as exc:  # noqa: BLE001 - Redis away: not now
            if not renewal_failed(exc):
                raise
            return False
        self._claiming[record.id] = lease
        seen = self.gossip.heard.get(record.id)
        moved = move_of(handover, seen)
        try:
            async with self.sessionmaker() as session, session.begin():
                fence = await fencing.claim_table(session, table_id=record.id)
                # As it is now: an operator's change made since the list was read holds.
                record = await session.get(TableRecord, record.id, populate_existing=True) or record
                if moved is not None and record.status == TableStatus.OPEN:
                    source, reason = moved
                    await audit_log.record(
                        session,
                        actor=NodeActor(self.node_id),
                        action=AuditAction.TABLE_MOVE,
                        target_kind="table",
                        target_id=record.id,
                        before={"node": source},
                        after={"node": self.node_id, "token": fence},
                        reason=reason,
                    )
            if record.status != TableStatus.OPEN:
                self._records.pop(record.id, None)
                await self._release(record.id, "the table is closed")
                return False
            self._records[record.id] = record
            stats = TableStats()
            await seed_stats(self.sessionmaker, record.id, stats)
            actor = await self._build(record, stats, fence, lease)
        except BaseException:
            await self._release(record.id, "the table could not be taken")
            raise
        finally:
            self._claiming.pop(record.id, None)
        if lease.lost:  # another node holds the lease now (and, claiming, fenced this one out)
            log.warning("table %s: its lease was lost while it was taken", record.id)
            return False
        heard = self.gossip.heard.pop(record.id, None)
        self._tables[record.id] = _Table(record, stats, actor, fence, lease)
        self._run(record.id, actor)
        self.gossip.tell_table(record.id, actor)
        if handover is not None:
            if handover.source is not None:
                self.metrics.takeover("moved")
        elif heard is not None:  # another node ran it lately: a takeover
            self.metrics.takeover("released" if heard.released else "lease_expired")
        log.info(
            "table %s: run by node %s (token %s)",
            record.id,
            self.node_id,
            fence,
            extra={"table": record.id},
        )
        return True

    async def drop(self, table_id: int, why: str) -> None:
        """Stop running the table here, writing nothing more (another node runs it)."""
        table = self._tables.pop(table_id, None)
        if table is None:
            return
        table.lease.lose()  # whatever the actor still does, it says nothing of it
        log.warning(
            "table %s: no longer run by node %s: %s",
            table_id,
            self.node_id,
            why,
            extra={"table": table_id},
        )
        self.router.unserve(table_id)
        await table.actor.stop(taken_over=True)
        await self._release(table_id, why)

    async def _release(self, table_id: int, why: str) -> None:
        """Give the lease back; if Redis does not answer, it runs out by itself."""
        try:
            await self.leases.release(table_id)
        except LEASE_FAILURES as exc:
            log.warning(
                "table %s: lease not given back (%s: %s); it runs out by itself",
                table_id,
                why,
                named(exc),
                extra={"table": table_id},
            )

    async def open_table(self, record: TableRecord) -> TableActor | None:
        """A new table, run at once by the node with the most room (``placement.choose``;
        this one, on a tie): here, or by the node it is handed to before this returns.
        Idempotent. None if another node runs it."""
        self._records[record.id] = record
        existing = self._tables.get(record.id)
        if existing is not None:
            return existing.actor
        if self.leases.lapses:
            target = placement.choose(self.nodes(), prefer=self.node_id)
            if (
                target is not None
                and target != self.node_id
                and await self.handovers.place(record, target)
            ):
                return None
        await self.take(record)
        return self.actor(record.id)

    def spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run in the background until the cardroom stops (cancelled then)."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def stop(self) -> None:
        """Stop every actor and give the leases back, so other nodes take over at once."""
        self._stopping = True
        # The lease rounds end first; everything else in the background waits on the bus or
        # a timer and is cancelled.
        await self.lease_rounds.stop()
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        await self.router.close()
        for table in self._tables.values():
            await table.actor.stop()
        self.gossip.tell(released=True)  # the players as they are now, for whoever takes over
        for table_id in self._tables:
            await self._release(table_id, "the node stops")
        await self.write_ahead.close()

    async def _build(
        self,
        record: TableRecord,
        stats: TableStats,
        fence: int,
        lease: LeaseProof,
        previous: TableActor | None = None,
    ) -> TableActor:
        seen = self.gossip.heard.get(record.id) if previous is None else None
        return await build_actor(self, record, stats, fence, lease, previous=previous, seen=seen)

    # ------------------------------------------------------------------ supervision

    def _run(self, table_id: int, actor: TableActor) -> None:
        task = actor.start()
        task.add_done_callback(lambda done: self._on_done(table_id, actor, done))
        self.router.serve(actor)

    def _on_done(self, table_id: int, actor: TableActor, task: asyncio.Task[None]) -> None:
        if self._stopping or task.cancelled():
            return
        if actor.shut:
            self.spawn(self._retire(table_id))
            return
        if actor.taken_over:
            self.spawn(self.drop(table_id, "another node took the table over"))
            return
        error = task.exception()
        if error is None:
            # The loop ends by itself only when asked to stop (a table let go to another
            # node waits for what its actor was doing): whoever asked carries on from here.
            return
        log.error(
            "table %s: the actor died (%r); restarting it",
            table_id,
            error,
            extra={"table": table_id, "hand": actor.hand_number},
        )
        self.spawn(self._restart(table_id, actor))

    async def _retire(self, table_id: int) -> None:
        """An operator closed the table: nobody runs it again; the other nodes forget it."""
        self._tables.pop(table_id, None)
        self._records.pop(table_id, None)
        self.router.unserve(table_id)
        self.bus.publish_now(
            LOBBY_CHANNEL, {"type": "closed", "node": self.node_id, "table": table_id}
        )
        await self._release(table_id, "the table is closed")
        log.info("table %s: closed", table_id, extra={"table": table_id})

    async def _restart(self, table_id: int, dead: TableActor) -> None:
        """Void the dead actor's hand (every chip back) and build the table again."""
        table = self._tables.get(table_id)
        if table is None or table.actor is not dead:
            return
        dead.fail_pending(ErrorCode.TABLE_RESTARTING, "the table is restarting; try again")
        record = dead.cancelled_record("table_restarted")
        if record is not None:
            try:
                await dead.store.save_hand(record)
            except Exception:  # noqa: BLE001 - the stored stacks are still the hand's start
                log.exception(
                    "table %s: could not record the voided hand",
                    table_id,
                    extra={"table": table_id, "hand": record.number},
                )
        now = time.monotonic()
        table.crashes.append(now)
        recent = sum(1 for at in table.crashes if at > now - 60.0)
        await asyncio.sleep(min(RESTART_BACKOFF_MAX, 0.05 * 2 ** (recent - 1)))
        while True:
            try:
                actor = await self._build(
                    table.record, table.stats, table.fence, table.lease, previous=dead
                )
                break
            except Exception:  # noqa: BLE001 - the database may be back in a moment
                log.exception(
                    "table %s: could not rebuild the actor", table_id, extra={"table": table_id}
                )
                await asyncio.sleep(RESTART_BACKOFF_MAX)
        seats = actor.table.seats
        actor.announce(
            TableRestarted(
                cancelled_hand=record.number if record is not None else None,
                stacks=tuple((n, s.stack) for n, s in enumerate(seats) if s is not None),
            )
        )
        if self._tables.get(table_id) is not table:
            return  # dropped meanwhile: another node runs it
        table.actor = actor
        table.restarts += 1
        self._run(table_id, actor)

    # ------------------------------------------------------------------ the lobby

    def lobby(self) -> list[dict[str, Any]]:
        """Every open table, as the lobby lists it (``server.cardroom.lobby_lists``)."""
        return lobby_lists.lobby_list(self.gossip, self._tables, self.summary, self._records)

    def live_tables(self, *, stuck_after: float) -> list[dict[str, Any]]:
        """Every open table as it is now, for the back office (``server.cardroom.live_tables``)."""
        return lobby_lists.live_list(
            self.gossip, self.running(), self.summary, self._records, stuck_after=stuck_after
        )

    # ------------------------------------------------------------------ tables between nodes

    def load(self) -> NodeLoad:
        """This node as it tells the others of itself (``server.cardroom.placement``)."""
        return self.handovers.load()

    def nodes(self) -> list[NodeLoad]:
        """Every node of the cardroom heard within a lease, this one first."""
        return self.handovers.nodes()

    def node_reports(self) -> list[NodeReport]:
        """Every node of the cardroom heard within a lease, as the back office lists it."""
        return self.handovers.node_reports()

    async def drain_node(self, node_id: str, *, draining: bool) -> NodeReport:
        """Drain a node of the cardroom, or stop draining it (``Handovers.drain_node``)."""
        return await self.handovers.drain_node(node_id, draining=draining)

    @property
    def stopping(self) -> bool:
        return self._stopping

    async def let_go(self, table_id: int, actor: TableActor) -> LetGo | None:
        """Stop running the table to hand it over: nothing more is written or said of it
        here; what the gossip tells of its players goes with it."""
        table = self._tables.get(table_id)
        if table is None or table.actor is not actor:
            return None
        self.router.unserve(table_id)
        await actor.stop()
        told = self.gossip.told(table_id, actor, released=True)
        del self._tables[table_id]
        table.lease.lose()  # this node says nothing more of the table
        return LetGo(table.record, told)

    async def record(self, table_id: int) -> TableRecord | None:
        """The table's record as stored now."""
        async with self.sessionmaker() as session:
            return await session.get(TableRecord, table_id)

    # ------------------------------------------------------------------ what the gossip asks

    def running(self) -> list[tuple[int, TableActor]]:
        """The tables this node runs, with their actors."""
        return [(table_id, table.actor) for table_id, table in self._tables.items()]

    def runs(self, table_id: int) -> bool:
        return table_id in self._tables

    def forget_table(self, table_id: int) -> None:
        """A table closed for good, told by the node that closed it."""
        self._records.pop(table_id, None)

    def summary(self, table_id: int) -> dict[str, Any]:
        table = self._tables[table_id]
        return lobby_lists.running_summary(
            table.record, table.actor, table.stats, restarts=table.restarts, node=self.node_id
        )
