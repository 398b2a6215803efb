"""The lobby gossip between nodes: each node tells, every lease round, its load (how many
tables it runs, how busy it is, whether it drains: ``server.cardroom.placement``), what its
tables look like (their lobby lines, their hands as the back office lists them) and what a
node taking one over keeps of its players (who sits out, asking for free checks or not; who
leaves or sits out after the hand; the waiting list). Every node hears the others' and keeps
what it heard a few leases (:class:`HeardTable`, :class:`HeardNode`): its lobby names who runs
each table, its live list shows them, its placement knows each node's load, and the node that
takes a table over carries its players on as they were.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from server.bus.memory import Bus, Subscription
from server.cardroom.cluster import COMMAND_QUEUE_SIZE, LOBBY_CHANNEL
from server.cardroom.live_tables import live_state
from server.cardroom.placement import NodeLoad
from server.table.actor import TableActor

# How long, in leases, what another node last told of a table is kept once it stops telling.
KEEP_HEARD_LEASES = 4


@dataclass(frozen=True, slots=True)
class HeardTable:
    """A table another node runs, as it last told: its lobby line, and what a node taking
    it over keeps of its players."""

    node: str  # the node that told
    summary: dict[str, Any]
    sitting_out: list[str]
    waiting: list[str]
    after_hand: dict[str, dict[str, bool]]  # player -> {"leaving", "sit_out"}
    at: float  # when it was heard (monotonic)
    released: bool = False  # its node stopped and gave the table back: free to take at once
    live: dict[str, Any] | None = None  # its hand as the node told (server.cardroom.live_tables)
    check_when_free: tuple[str, ...] = ()  # those sitting out who asked for free checks


@dataclass(frozen=True, slots=True)
class HeardNode:
    """Another node, as it last told of itself (its load: ``server.cardroom.placement``)."""

    load: NodeLoad
    at: float  # when it was heard (monotonic)


class Lobby(Protocol):
    """What the gossip asks of the node's cardroom: the tables it runs, each with its lobby
    line, its own load, and to forget a table closed for good."""

    def running(self) -> Iterable[tuple[int, TableActor]]: ...

    def load(self) -> NodeLoad: ...

    def runs(self, table_id: int) -> bool: ...

    def summary(self, table_id: int) -> dict[str, Any]: ...

    def forget_table(self, table_id: int) -> None: ...


class Gossip:
    """One node's side of the gossip: what it tells of its tables, and what it heard of the
    others' (``heard``, by table)."""

    def __init__(
        self,
        bus: Bus,
        node_id: str,
        lobby: Lobby,
        *,
        lease_seconds: float,
        lapses: Callable[[], bool],
    ) -> None:
        self.bus = bus
        self.node_id = node_id
        self.lobby = lobby
        self.lease_seconds = lease_seconds
        self.lapses = lapses  # leases that can lapse: other nodes may be there to tell
        self.heard: dict[int, HeardTable] = {}  # tables other nodes run, as told
        self.nodes: dict[str, HeardNode] = {}  # the other nodes, as they told of themselves

    def live_nodes(self) -> list[NodeLoad]:
        """The other nodes that told of themselves within a lease, each with its tables as
        last told, or as many as it was heard run since, if more: a node tells of a table
        as soon as it takes it, a round before its next word on itself, and every node must
        count it there at once to share out the same way."""
        recent = time.monotonic() - self.lease_seconds
        running: Counter[str] = Counter()
        for table_id in self.heard:
            heard = self.run_elsewhere(table_id)
            if heard is not None:
                running[heard.node] += 1
        loads = []
        for node in self.nodes.values():
            if node.at < recent:
                continue
            load = node.load
            leaving = sum(
                1
                for table_id in load.moving
                if (heard := self.run_elsewhere(table_id)) is not None and heard.node == load.node
            )
            loads.append(replace(load, tables=max(load.tables, running[load.node] - leaving)))
        return loads

    def run_elsewhere(self, table_id: int) -> HeardTable | None:
        """What another node said of the table, if it said lately that it runs it (within a
        lease, and not giving it back)."""
        heard = self.heard.get(table_id)
        if heard is None or heard.released:
            return None
        return heard if heard.at >= time.monotonic() - self.lease_seconds else None

    def next_lapse(self, after: float) -> float | None:
        """The first moment after ``after`` (monotonic) at which a table another node runs
        is free to take, if that node has gone quiet: a node renews its leases just before
        it tells, so a table's lease lapses by a lease after it was last heard of."""
        lapses = [
            heard.at + self.lease_seconds
            for heard in self.heard.values()
            if not heard.released and heard.at + self.lease_seconds > after
        ]
        return min(lapses, default=None)

    def forget_stale(self) -> None:
        """What a node said of a table it no longer tells of is kept a while (the node
        taking the table over keeps its players as they were), then forgotten."""
        forgotten = time.monotonic() - KEEP_HEARD_LEASES * self.lease_seconds
        for table_id, heard in list(self.heard.items()):
            if heard.at < forgotten:
                del self.heard[table_id]
        for node_id, node in list(self.nodes.items()):
            if node.at < forgotten:
                del self.nodes[node_id]

    def tell(self, released: bool = False) -> None:
        """This node's tables for the other nodes' lobbies, with what a node taking one
        over keeps of its players (who sits out, who waits); ``released``: this node gives
        them back, another may take them at once. A node alone (leases that never lapse) has
        nobody to tell: its lobby lines and live states are not made for nothing each round."""
        if not self.lapses():
            return
        self.bus.publish_now(LOBBY_CHANNEL, self.node_message(gone=released))
        for table_id, actor in self.lobby.running():
            self.bus.publish_now(LOBBY_CHANNEL, self.told(table_id, actor, released=released))

    def node_message(self, *, gone: bool = False) -> dict[str, Any]:
        """What this node tells of itself (``gone``: it stops)."""
        load = self.lobby.load()
        return {
            "type": "node",
            "node": self.node_id,
            "tables": load.tables,
            "busy": load.busy,
            "draining": load.draining,
            "moving": {str(t): node for t, node in load.moving.items()},
            "gone": gone,
        }

    def tell_table(self, table_id: int, actor: TableActor) -> None:
        """One table at once (a node that just took it: the others' lobbies need not wait
        for its next round to name it)."""
        if self.lapses():
            self.bus.publish_now(LOBBY_CHANNEL, self.told(table_id, actor))

    def told(self, table_id: int, actor: TableActor, *, released: bool = False) -> dict[str, Any]:
        """What this node tells of one of its tables (a node taking it over keeps its players
        as it says). ``released``: this node gives it back."""
        seats = actor.table.seats
        players = actor.players
        return {
            "type": "lobby",
            "node": self.node_id,
            "table": table_id,
            "summary": self.lobby.summary(table_id),
            "sitting_out": [s.player for s in seats if s is not None and s.sitting_out],
            "check_when_free": [
                s.player
                for s in seats
                if s is not None
                and s.sitting_out
                and s.player in players
                and players[s.player].check_when_free
            ],
            "after_hand": {
                s.player: {"leaving": s.leaving, "sit_out": s.sit_out_next_hand}
                for s in seats
                if s is not None and (s.leaving or s.sit_out_next_hand)
            },
            "waiting_list": list(actor.waiting),
            "released": released,
            "live": live_state(actor),
        }

    def note(self, message: dict[str, Any]) -> None:
        """What another node told of one of its tables (:meth:`told`)."""
        table_id = message.get("table")
        if not isinstance(table_id, int) or self.lobby.runs(table_id):
            return  # ours now: what the old node said is out of date
        self.heard[table_id] = HeardTable(
            node=str(message.get("node")),
            summary=dict(message.get("summary") or {}),
            sitting_out=list(message.get("sitting_out") or []),
            waiting=list(message.get("waiting_list") or []),
            after_hand=dict(message.get("after_hand") or {}),
            at=time.monotonic(),
            released=bool(message.get("released")),
            live=message.get("live") if isinstance(message.get("live"), dict) else None,
            check_when_free=tuple(message.get("check_when_free") or ()),
        )

    def note_placed(self, node_id: str) -> None:
        """A table this node handed to ``node_id``: counted as its own until it next tells
        (else every table made before then would go to it, as the node with the fewest)."""
        heard = self.nodes.get(node_id)
        if heard is not None:
            load = heard.load
            self.nodes[node_id] = HeardNode(replace(load, tables=load.tables + 1), heard.at)

    def note_node(self, message: dict[str, Any]) -> None:
        """What another node told of itself (:meth:`node_message`)."""
        node_id = str(message.get("node"))
        if message.get("gone"):
            self.nodes.pop(node_id, None)
            return
        moving = message.get("moving")
        self.nodes[node_id] = HeardNode(
            NodeLoad(
                node_id,
                tables=int(message.get("tables") or 0),
                busy=float(message.get("busy") or 0.0),
                draining=bool(message.get("draining")),
                moving={int(t): str(n) for t, n in moving.items()}
                if isinstance(moving, dict)
                else {},
            ),
            time.monotonic(),
        )

    async def hear(self, lobby: Subscription) -> None:
        """What the other nodes tell, for as long as the node runs."""
        while True:
            async for message in lobby:
                table_id = message.get("table")
                if message.get("node") == self.node_id:
                    continue
                if message.get("type") == "hello":
                    self.tell()
                    continue
                if message.get("type") == "node":
                    self.note_node(message)
                    continue
                if message.get("type") == "closed":  # no node runs it again
                    if isinstance(table_id, int):
                        self.lobby.forget_table(table_id)
                        self.heard.pop(table_id, None)
                    continue
                self.note(message)
            lobby = self.bus.subscribe(LOBBY_CHANNEL, size=COMMAND_QUEUE_SIZE)
