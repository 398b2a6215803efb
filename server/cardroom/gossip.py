"""The lobby gossip between nodes: each node tells, every lease round, what its tables look
like (their lobby lines, their hands as the back office lists them) and what a node taking one
over keeps of its players (who sits out, asking for free checks or not; who leaves or sits out
after the hand; the waiting list). Every node hears the others' and keeps what it heard a few
leases (:class:`HeardTable`): its lobby names who runs each table, its live list shows them,
and the node that takes a table over carries its players on as they were.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from server.bus.memory import Subscription
from server.cardroom.cluster import COMMAND_QUEUE_SIZE, LOBBY_CHANNEL
from server.cardroom.live_tables import live_state

if TYPE_CHECKING:
    from server.cardroom.supervisor import Cardroom

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


def forget_stale(cardroom: Cardroom) -> None:
    """What a node said of a table it no longer tells of is kept a while (the node taking
    the table over keeps its players as they were), then forgotten."""
    forgotten = time.monotonic() - KEEP_HEARD_LEASES * cardroom.settings.lease_seconds
    for table_id, heard in list(cardroom._elsewhere.items()):
        if heard.at < forgotten:
            del cardroom._elsewhere[table_id]


def tell_lobby(cardroom: Cardroom, released: bool = False) -> None:
    """This node's tables for the other nodes' lobbies, with what a node taking one
    over keeps of its players (who sits out, who waits); ``released``: this node gives
    them back, another may take them at once. A node alone (leases that never lapse) has
    nobody to tell: its lobby lines and live states are not made for nothing each round."""
    if not cardroom.leases.lapses:
        return
    for table_id, table in cardroom._tables.items():
        seats = table.actor.table.seats
        players = table.actor.players
        cardroom.bus.publish_now(
            LOBBY_CHANNEL,
            {
                "type": "lobby",
                "node": cardroom.node_id,
                "table": table_id,
                "summary": cardroom.summary(table_id),
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
                "waiting_list": list(table.actor.waiting),
                "released": released,
                "live": live_state(table.actor),
            },
        )


async def hear_lobby(cardroom: Cardroom, lobby: Subscription) -> None:
    while True:
        async for message in lobby:
            table_id = message.get("table")
            if message.get("node") == cardroom.node_id:
                continue
            if message.get("type") == "hello":
                tell_lobby(cardroom)
                continue
            if message.get("type") == "closed":  # no node runs it again
                cardroom._records.pop(table_id, None)  # type: ignore[arg-type]
                cardroom._elsewhere.pop(table_id, None)  # type: ignore[arg-type]
                continue
            if not isinstance(table_id, int):
                continue
            if table_id in cardroom._tables:
                continue  # ours now: what the old node said is out of date
            cardroom._elsewhere[table_id] = HeardTable(
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
        lobby = cardroom.bus.subscribe(LOBBY_CHANNEL, size=COMMAND_QUEUE_SIZE)
