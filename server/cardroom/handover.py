"""Tables between nodes, carried out: a new table placed on another node, a table handed over
between hands, a node drained, and the orders the nodes give each other for it.

``server.cardroom.placement`` decides where tables should run, from the load each node tells;
this module moves them. A table changes node only between hands: its actor holds play, stops
once no hand is in progress (nothing voided, nothing resumed), its lease is set aside for the
node that is to take it, and that node is ordered over the bus to take it, the players carried
over as the gossip tells them. A node that does not take it leaves the table where it was. The
cardroom is reached through :class:`Tables`: what runs here, taking a table, letting one go.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.cardroom import placement
from server.cardroom.cluster import LEASE_FAILURES, CommandRouter, Leases
from server.cardroom.gossip import Gossip
from server.cardroom.placement import NodeLoad
from server.db.models import TableRecord
from server.logs import named
from server.metrics import Metrics
from server.table import commands as cmd
from server.table.actor import TableActor

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Handover:
    """Why a table comes to this node from another: the node it comes from (None: a new
    table placed here) and why (``balance``, ``drain``, ``placed``, ``returned``: a move that
    did not happen, the table back on its node)."""

    source: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class NodeReport:
    """A node of the cardroom as the back office lists it."""

    node: str
    tables: int
    busy: float
    draining: bool
    moving: dict[int, str]
    heard_ago: float  # seconds since it last told (0: this node)

    @property
    def drained(self) -> bool:
        """Draining, and nothing left to move: the node may be stopped."""
        return self.draining and self.tables == 0 and not self.moving


@dataclass(frozen=True, slots=True)
class LetGo:
    """A table this node stopped running to hand it over: its record, and what the gossip
    told of it as it stopped (its players, for the node that takes it)."""

    record: TableRecord
    told: dict[str, Any]


class Tables(Protocol):
    """What the moves ask of the node's cardroom."""

    @property
    def stopping(self) -> bool: ...

    def running(self) -> list[tuple[int, TableActor]]: ...

    def actor(self, table_id: int) -> TableActor | None: ...

    async def take(self, record: TableRecord, handover: Handover) -> bool:
        """Run the table here (False: its lease is not free, or not set aside for us)."""
        ...

    async def let_go(self, table_id: int, actor: TableActor) -> LetGo | None:
        """Stop running the table (its actor already between hands) and say nothing more of
        it; None if ``actor`` no longer runs it here."""
        ...

    async def record(self, table_id: int) -> TableRecord | None: ...

    def spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]: ...


class Handovers:
    """One node's side of the moves: its load as it tells it, whether it drains, the tables
    on their way to another node and those another node is handing to it."""

    def __init__(
        self,
        tables: Tables,
        *,
        node_id: str,
        lease_seconds: float,
        leases: Leases,
        router: CommandRouter,
        gossip: Gossip,
        metrics: Metrics,
    ) -> None:
        self.tables = tables
        self.node_id = node_id
        self.lease_seconds = lease_seconds
        self.leases = leases
        self.router = router
        self.gossip = gossip
        self.metrics = metrics
        self.draining = False  # gives every table away, takes no new one
        self._moving: dict[int, str] = {}  # this node's tables on their way, to which node
        self._coming: dict[int, Handover] = {}  # tables another node is handing to this one
        self._busy = 0.0  # how busy the process was over the last round (CPU / wall)
        self._cpu_mark = (time.process_time(), time.monotonic())

    def coming(self, table_id: int) -> Handover | None:
        """The handover bringing the table here, if another node is handing it over."""
        return self._coming.get(table_id)

    # ------------------------------------------------------------------ the load

    def load(self) -> NodeLoad:
        """This node as it tells the others of itself (``server.cardroom.placement``)."""
        running = {table_id for table_id, _ in self.tables.running()}
        moving = {t: node for t, node in self._moving.items() if t in running}
        return NodeLoad(
            self.node_id,
            tables=len(running) - len(moving),
            busy=round(self._busy, 3),
            draining=self.draining,
            moving=moving,
        )

    def nodes(self) -> list[NodeLoad]:
        """Every node of the cardroom heard within a lease, this one first."""
        return [self.load(), *self.gossip.live_nodes()]

    def node_reports(self) -> list[NodeReport]:
        """Every node of the cardroom heard within a lease, as the back office lists it."""
        now = time.monotonic()
        heard = {
            node_id: now - told.at
            for node_id, told in self.gossip.nodes.items()
            if told.at >= now - self.lease_seconds
        }
        return [
            NodeReport(
                n.node, n.tables, n.busy, n.draining, dict(n.moving), round(heard.get(n.node, 0), 2)
            )
            for n in sorted(self.nodes(), key=lambda n: n.node)
        ]

    def measure_busy(self) -> None:
        cpu, at = time.process_time(), time.monotonic()
        last_cpu, last_at = self._cpu_mark
        if at > last_at:
            self._busy = (cpu - last_cpu) / (at - last_at)
        self._cpu_mark = (cpu, at)

    # ------------------------------------------------------------------ draining

    async def drain_node(self, node_id: str, *, draining: bool) -> NodeReport:
        """Drain a node (its tables move to the others between hands; it takes no new one)
        or stop draining it: this node, or another by an order over the bus."""
        if node_id == self.node_id:
            self.drain(draining)
        elif node_id not in {n.node for n in self.gossip.live_nodes()}:
            raise Refusal(f"no node {node_id!r} in the cardroom", code=ErrorCode.UNKNOWN_NODE)
        else:
            answer = await self.router.order(
                node_id,
                {"order": "drain", "draining": draining},
                timeout=max(2.0, self.lease_seconds),
            )
            self.gossip.note_node(answer)  # the node as it stands now
        return next(r for r in self.node_reports() if r.node == node_id)

    def drain(self, draining: bool) -> None:
        """This node gives every table away between hands and takes no new one (or stops)."""
        if draining != self.draining:
            log.info("node %s: %s", self.node_id, "draining" if draining else "no longer draining")
        self.draining = draining
        self.gossip.tell()
        if draining:
            self.balance()

    # ------------------------------------------------------------------ moving tables

    async def place(self, record: TableRecord, target: str) -> bool:
        """Hand a new table to node ``target``: its lease set aside for it, then the order
        to take it. False (the reservation given back) when it did not take it."""
        try:
            if not await self.leases.reserve(record.id, target, ours=False):
                return False  # some node took it meanwhile (its lease round saw it first)
            reply = await self.router.order(
                target,
                {"order": "take", "table": record.id, "reason": "placed"},
                timeout=self.lease_seconds,
            )
            if reply.get("taken"):
                self.gossip.note_placed(target)
                return True
        except Refusal as refusal:
            log.warning("table %s: not placed on node %s (%s)", record.id, target, refusal.message)
        except LEASE_FAILURES as exc:
            log.warning("table %s: not placed on node %s (%s)", record.id, target, named(exc))
            return False
        with contextlib.suppress(*LEASE_FAILURES):
            await self.leases.unreserve(record.id, target)
        return False

    def balance(self) -> None:
        """Start the moves this node owes the others (``placement.moves``): each table
        between hands, the rounds going on meanwhile."""
        if not self.leases.lapses or self.tables.stopping:
            return
        actors = dict(self.tables.running())

        def reluctance(table_id: int) -> tuple[bool, int, int]:
            table = actors[table_id].table  # mid-hand and full tables move last
            return (table.hand is not None, sum(s is not None for s in table.seats), table_id)

        movable = sorted((t for t in actors if t not in self._moving), key=reluctance)
        plan = placement.moves(self.nodes(), self.node_id, movable)
        reason = "drain" if self.draining else "balance"
        for table_id, target in plan.items():
            self._moving[table_id] = target  # counted from now on: the next round knows
            self.tables.spawn(self._hand_over(table_id, target, reason))

    async def _hand_over(self, table_id: int, target: str, reason: str) -> None:
        """Move one of this node's tables to node ``target`` between hands, as a node that
        stops gives its tables back, but to one node: no hand is voided or resumed, the
        players are carried over as they are (the gossip's word on them goes with the
        order), and their clients follow as on a takeover. If ``target`` does not take it,
        the table plays on here."""
        try:
            actor = self.tables.actor(table_id)
            if actor is None:
                return
            try:
                await actor.submit(cmd.HoldPlay(player=""))
            except Refusal:
                return  # the actor is going anyway (closed, restarting, taken over)
            try:
                await _between_hands(actor)
            finally:
                moving_on = (
                    self.tables.actor(table_id) is actor
                    and not self.tables.stopping
                    and self._moving.get(table_id) == target
                    and target in {n.node for n in self.gossip.live_nodes()}
                )
                if not moving_on:
                    with contextlib.suppress(Refusal):
                        await actor.submit(cmd.PlayOn(player=""))
            if not moving_on:
                return
            let_go = await self.tables.let_go(table_id, actor)
            if let_go is not None:
                await self._give(let_go, target, reason)
        finally:
            self._moving.pop(table_id, None)

    async def _give(self, table: LetGo, target: str, reason: str) -> None:
        """The stopped table's lease to ``target``, then the order to take it; back here if
        it did not."""
        table_id = table.record.id
        try:
            if not await self.leases.reserve(table_id, target, ours=True):
                log.warning("table %s: its lease was lost before it was handed over", table_id)
                return
        except LEASE_FAILURES as exc:
            log.warning("table %s: not handed over (%s)", table_id, named(exc))
            await self._take_back(table)
            return
        try:
            reply = await self.router.order(
                target,
                {"order": "take", "table": table_id, "told": table.told, "reason": reason},
                timeout=self.lease_seconds,
            )
            taken = bool(reply.get("taken"))
        except Refusal as refusal:
            log.warning("table %s: node %s did not take it (%s)", table_id, target, refusal.message)
            taken = False
        if taken:
            self.gossip.note_placed(target)
            self.metrics.table_moved(reason)
            log.info(
                "table %s: moved to node %s (%s)",
                table_id,
                target,
                reason,
                extra={"table": table_id},
            )
            return
        with contextlib.suppress(*LEASE_FAILURES):
            if await self.leases.unreserve(table_id, target):
                await self._take_back(table)

    async def _take_back(self, table: LetGo) -> None:
        """A move that did not happen: the table runs here again, its players as they were."""
        self.gossip.note({**table.told, "node": self.node_id})
        with contextlib.suppress(Exception):
            await self.tables.take(table.record, Handover(None, "returned"))

    # ------------------------------------------------------------------ the orders

    async def on_order(self, order: dict[str, Any]) -> dict[str, Any]:
        """What another node asks of this one: take a table it hands over or placed here;
        drain or stop draining."""
        kind = order.get("order")
        if kind == "take":
            table_id = order.get("table")
            if type(table_id) is not int:
                raise Refusal("a take names its table", code=ErrorCode.BAD_COMMAND)
            told = order.get("told")
            record = await self.tables.record(table_id)
            if record is None:
                raise Refusal(f"no table {table_id}", code=ErrorCode.UNKNOWN_TABLE)
            handover = Handover(
                str(told.get("node")) if isinstance(told, dict) else None,
                str(order.get("reason") or "placed"),
            )
            # Told as given back from here on, the table may be taken by this node's lease
            # round first: whichever takes it, takes it as handed over.
            self._coming[table_id] = handover
            try:
                if isinstance(told, dict) and told.get("table") == table_id:
                    self.gossip.note(told)
                return {"taken": await self.tables.take(record, handover)}
            finally:
                if self._coming.get(table_id) is handover:
                    del self._coming[table_id]
        if kind == "drain":
            self.drain(bool(order.get("draining")))
            return self.gossip.node_message()
        raise Refusal(f"no order {kind!r}", code=ErrorCode.BAD_COMMAND)


def move_of(handover: Handover | None, seen: Any) -> tuple[str, str] | None:
    """Where the table comes from and why, when it comes from another node (the audit's
    ``table.move``): handed over, or taken over from a node that stopped or died."""
    if handover is not None:
        if handover.source is None:
            return None  # a new table placed here, or one back on its node
        return handover.source, handover.reason
    if seen is not None:
        return seen.node, "released" if seen.released else "lease_expired"
    return None


async def _between_hands(actor: TableActor) -> None:
    """Until the table has no hand in progress, or its actor ends (closed, restarting)."""
    if actor.between_hands.is_set():
        return
    waiter = asyncio.ensure_future(actor.between_hands.wait())
    running = actor.task
    try:
        await asyncio.wait(
            {waiter} if running is None else {waiter, running}, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        waiter.cancel()
