"""The lobby gossip between nodes: each node tells, every lease round, what its tables look
like (their lobby lines, their hands as the back office lists them) and what a node taking one
over keeps of its players (who sits out, asking for free checks or not; who leaves or sits out
after the hand; the waiting list). Every node hears the others' and keeps what it heard a few
leases (:class:`HeardTable`): its lobby names who runs each table, its live list shows them,
and the node that takes a table over carries its players on as they were.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from server.bus.memory import Bus, Subscription
from server.cardroom.cluster import COMMAND_QUEUE_SIZE, LOBBY_CHANNEL
from server.cardroom.live_tables import live_state
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


class Lobby(Protocol):
    """What the gossip asks of the node's cardroom: the tables it runs, each with its lobby
    line, and to forget a table closed for good."""

    def running(self) -> Iterable[tuple[int, TableActor]]: ...

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

    def run_elsewhere(self, table_id: int) -> HeardTable | None:
        """What another node said of the table, if it said lately that it runs it (within a
        lease, and not giving it back)."""
        heard = self.heard.get(table_id)
        if heard is None or heard.released:
            return None
        return heard if heard.at >= time.monotonic() - self.lease_seconds else None

    def forget_stale(self) -> None:
        """What a node said of a table it no longer tells of is kept a while (the node
        taking the table over keeps its players as they were), then forgotten."""
        forgotten = time.monotonic() - KEEP_HEARD_LEASES * self.lease_seconds
        for table_id, heard in list(self.heard.items()):
            if heard.at < forgotten:
                del self.heard[table_id]

    def tell(self, released: bool = False) -> None:
        """This node's tables for the other nodes' lobbies, with what a node taking one
        over keeps of its players (who sits out, who waits); ``released``: this node gives
        them back, another may take them at once. A node alone (leases that never lapse) has
        nobody to tell: its lobby lines and live states are not made for nothing each round."""
        if not self.lapses():
            return
        for table_id, actor in self.lobby.running():
            seats = actor.table.seats
            players = actor.players
            self.bus.publish_now(
                LOBBY_CHANNEL,
                {
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
                },
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
                if message.get("type") == "closed":  # no node runs it again
                    if isinstance(table_id, int):
                        self.lobby.forget_table(table_id)
                        self.heard.pop(table_id, None)
                    continue
                if not isinstance(table_id, int):
                    continue
                if self.lobby.runs(table_id):
                    continue  # ours now: what the old node said is out of date
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
            lobby = self.bus.subscribe(LOBBY_CHANNEL, size=COMMAND_QUEUE_SIZE)
