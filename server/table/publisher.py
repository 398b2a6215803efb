"""A table's events onto the bus, numbered, each in one envelope.

Every message is ``{"type": "event", "table", "run", "seq", "kind", "data"}``.
``run`` is the run of the table that sent it: the fencing token of the node that
took it, so a gateway knows which run of a table a message comes from by reading
it. Public events count ``seq`` up by one with no gaps; each run numbers from its
own block (:func:`first_seq`), so a client sees the jump at a change of node and
resyncs. Events for one player's eyes ride on that player's channel with
``"private": true`` and the ``seq`` of the public event they precede.

A node publishes for a table only while it can prove the table's lease is its own
(:class:`~server.table.lease.LeaseProof`): once the lease may have passed to another node,
whatever it would say is dropped, never sent beside the new run's events.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from engine.events import Event
from server.bus.memory import Bus, player_channel, table_channel
from server.table.lease import LeaseProof

log = logging.getLogger(__name__)

# Each run of a table numbers its events from (run - 1) * SEQ_PER_RUN: far past anything an
# earlier run can have sent.
SEQ_PER_RUN = 1_000_000_000


def first_seq(run: int) -> int:
    """The ``seq`` a run of the table starts counting from."""
    return (run - 1) * SEQ_PER_RUN


class Publisher:
    """One table's outgoing events: the only place that numbers them."""

    def __init__(
        self,
        bus: Bus,
        table_id: int,
        *,
        run: int = 1,
        seq: int | None = None,
        lease: LeaseProof | None = None,
    ):
        self.bus = bus
        self.table_id = table_id
        self.run = run
        self.seq = first_seq(run) if seq is None else seq
        self.lease = lease  # None: nobody else may run the table
        self.silenced = 0  # messages dropped for want of the lease
        self._public = table_channel(table_id)

    def _may_speak(self) -> bool:
        if self.lease is None or self.lease.holds():
            return True
        if not self.silenced:
            log.warning(
                "table %s: this node cannot prove its lease; it publishes nothing more",
                self.table_id,
                extra={"table": self.table_id},
            )
        self.silenced += 1
        return False

    def publish(self, event: Event) -> None:
        """One public event, numbered next, encoded once. (Numbered even when dropped: should
        this node prove its lease again, its clients see the gap and resync.)"""
        self.seq += 1
        if not self._may_speak():
            return
        self.bus.publish_now(
            self._public,
            {
                "type": "event",
                "table": self.table_id,
                "run": self.run,
                "seq": self.seq,
                "kind": event.kind,
                "data": event.data,
            },
        )

    def publish_all(self, events: Iterable[Event]) -> None:
        """Table events (no audience but everyone)."""
        for event in events:
            self.publish(event)

    def publish_hand(self, events: Iterable[Event], player_at: Callable[[int], str | None]) -> None:
        """A hand's events: public ones numbered, a seat's own on its player's channel."""
        for event in events:
            if event.to is None:
                self.publish(event)
                continue
            player = player_at(event.to)
            if player is not None and self._may_speak():
                self.bus.publish_now(
                    player_channel(self.table_id, player),
                    {
                        "type": "event",
                        "table": self.table_id,
                        "run": self.run,
                        "seq": self.seq + 1,
                        "kind": event.kind,
                        "data": event.data,
                        "private": True,
                    },
                )

    def reply(self, channel: str, reply_id: Any, result: dict[str, Any]) -> None:
        """An answer on a connection's channel, in line with the events published so far."""
        if not self._may_speak():
            return
        self.bus.publish_now(channel, {"type": "reply", "id": reply_id, "result": result})
