"""Spectators' snapshots, served by the gateway from the table's published events.

A snapshot asked for by a connection that sits at no table (``watch``, ``resync``) never
becomes a command in the table's inbox: however many sockets watch, and however often they
ask, a seated player's action waits behind none of them. Each node keeps, per table that
somebody watches from it, a :class:`TableMirror`: one subscription to the table's public
channel whose events are folded by the one fold, ``engine.table_view.TablePicture``, as a
spectator (no down cards: those never travel on the public channel). The mirror is based on
one spectator snapshot from the table's actor, and based again only when its events stop
following on (a ``seq`` gap: the table moved to another node, or the mirror fell behind;
a restart of the table): one command per table per node, shared by every watcher asking
meanwhile.

A mirror follows its table only while it is asked: one that no snapshot was asked of for
:data:`MIRROR_IDLE_SECONDS` lets its subscription go, and with it the events queued since
its last answer (a watch is asked once, then the watcher has the table's events on its own
subscription). Kept, every table watched once from this node queued its events for good:
at the start of a tournament of 1,000, every player's first ``watch`` made a mirror of
every table, each queuing up to :data:`MIRROR_QUEUE_SIZE` events nobody would fold, nine
tenths of the node's heap growing in its first minute (and the collector's full pass over
it). The next question bases it again: one snapshot of the table.

Order is kept as the actor's own snapshots keep it: the mirror folds every event this node
delivered up to the moment it answers, and the answer is queued into the connection's
subscription in that same moment, so the next event after a snapshot of ``seq`` S is S + 1.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from engine.events import ActionTaken, HandEnded, HandStarted, decode
from engine.table_events import Clock, HandCancelled
from engine.table_view import TablePicture
from server.bus.memory import Bus, Subscription, table_channel
from server.cardroom.cluster import TableHandle
from server.table import commands as cmd
from server.table.snapshot import deck_committed

MIRROR_QUEUE_SIZE = 4096  # events waiting to be folded; more and the mirror is based again
MIRROR_IDLE_SECONDS = 20.0  # unasked this long, a mirror stops following its table
REBASE_TRIES = 3

# The snapshot fields a mirror keeps from its base (the table's, not its events'); a cash
# table's snapshot has no ``tournament_id``.
_FIXED = ("type", "table", "variant", "stakes", "buy_in", "tournament_id")


class TableMirror:
    """One table as a spectator sees it, kept current by its public events."""

    def __init__(self, bus: Bus, table_id: int) -> None:
        self.bus = bus
        self.table_id = table_id
        self.subscription: Subscription | None = None
        self.picture: TablePicture | None = None
        self.seq = 0
        self.bases = 0  # snapshots asked of the table (for the tests and the curious)
        self._fixed: dict[str, Any] = {}
        self._deadline: tuple[int, float] | None = None  # the clock's seat and its end
        self._cached: tuple[int, dict[str, Any]] | None = None
        self._lock = asyncio.Lock()
        self._idle: asyncio.TimerHandle | None = None

    def _fold_queued(self) -> bool:
        """Fold every event delivered so far; False when they no longer follow on."""
        subscription, picture = self.subscription, self.picture
        if subscription is None or picture is None:
            return False
        while True:
            try:
                message = subscription.queue.get_nowait()
            except asyncio.QueueEmpty:
                return not subscription.closed
            if message is None:  # dropped: the mirror fell behind
                return False
            if message.get("type") != "event" or message.get("private"):
                continue
            seq = message.get("seq")
            if not isinstance(seq, int) or seq <= self.seq:
                continue  # already in the base
            if seq != self.seq + 1:
                return False
            event = decode(str(message.get("kind")), message.get("data") or {})
            picture.apply(event)
            self.seq = seq
            if isinstance(event, Clock):
                self._deadline = (
                    event.seat,
                    time.monotonic() + event.action_clock + event.time_bank,
                )
            elif isinstance(event, ActionTaken | HandEnded | HandStarted | HandCancelled):
                self._deadline = None
            if picture.restarted:
                return False  # only a fresh snapshot tells the table now

    async def current(self, table: TableHandle) -> None:
        """Fold what came; base the mirror again if it no longer follows on."""
        self._asked()
        if self._fold_queued():
            return
        async with self._lock:
            for _ in range(REBASE_TRIES):
                if self._fold_queued():
                    return
                await self._rebase(table)
            self._fold_queued()

    async def _rebase(self, table: TableHandle) -> None:
        # Subscribed before the snapshot is taken: every event after it is queued.
        if self.subscription is not None:
            self.subscription.close()
        self.subscription = self.bus.subscribe(table_channel(self.table_id), size=MIRROR_QUEUE_SIZE)
        self.bases += 1
        snapshot = await table.submit(cmd.Snapshot(player=""))
        self.picture = TablePicture.of_snapshot(snapshot)
        self.seq = int(snapshot["seq"])
        self._fixed = {key: snapshot[key] for key in _FIXED if key in snapshot}
        clock = snapshot.get("clock")
        self._deadline = (
            (clock["seat"], time.monotonic() + float(clock["remaining"]))
            if isinstance(clock, dict)
            else None
        )
        self._cached = None

    def seated(self, player: str) -> bool:
        picture = self.picture
        return picture is not None and any(s.player == player for s in picture.seats)

    def snapshot(self) -> dict[str, Any]:
        """The spectator's snapshot of the events folded so far (as the actor makes it)."""
        assert self.picture is not None
        if self._cached is None or self._cached[0] != self.seq:
            part = self.picture.snapshot()
            hand = part["hand"]
            if hand is not None and hand["over"]:
                hand = None  # the table has settled it, as the actor's snapshot shows
            # The rules as the last ``table_settings`` (or a mixed table's hand) told them,
            # else as the base showed.
            rules = self.picture.rules or {}
            rotation = self.picture.rotation
            self._cached = (
                self.seq,
                {
                    **self._fixed,
                    **rules,
                    "seq": self.seq,
                    "seats": part["seats"],
                    "you": None,
                    "hand_number": part["hand_number"] if hand is not None else None,
                    "hand": hand,
                    "waiting": part["waiting"],
                    "operator_pause": self.picture.operator_pause,
                    "deck_committed": deck_committed(self.picture.committed),
                },
            )
            if rotation is not None:  # a mixed table: its games in turn and the game now
                self._cached[1]["rotation"] = {**rotation, "game": self.picture.game}
        snapshot = dict(self._cached[1])
        clock = None
        if self._deadline is not None and snapshot["hand"] is not None:
            seat, deadline = self._deadline
            clock = {"seat": seat, "remaining": round(max(0.0, deadline - time.monotonic()), 2)}
        snapshot["clock"] = clock
        return snapshot

    def _asked(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
        self._idle = asyncio.get_running_loop().call_later(MIRROR_IDLE_SECONDS, self._go_idle)

    def _go_idle(self) -> None:
        """Unasked for a while: the subscription let go, the events it queued with it."""
        if self._lock.locked():  # being based: asked just now
            self._asked()
            return
        self._idle = None
        self.close()
        self.subscription = self.picture = self._cached = None

    def close(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        if self.subscription is not None:
            self.subscription.close()


class Spectators:
    """This node's mirrors, one per table watched from it."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self.mirrors: dict[int, TableMirror] = {}

    def mirror(self, table_id: int) -> TableMirror:
        mirror = self.mirrors.get(table_id)
        if mirror is None:
            mirror = self.mirrors[table_id] = TableMirror(self.bus, table_id)
        return mirror

    async def seated(self, table_id: int, table: TableHandle, player: str) -> bool:
        """Whether ``player`` sits at the table, as its events say."""
        mirror = self.mirror(table_id)
        await mirror.current(table)
        return mirror.seated(player)

    async def answer(
        self, table_id: int, table: TableHandle, subscription: Subscription, reply_id: Any
    ) -> None:
        """Queue the spectator's snapshot of the table into ``subscription`` as the reply
        to ``reply_id``, in line with the events the subscription has had."""
        mirror = self.mirror(table_id)
        await mirror.current(table)  # ends folded up to now, with no await after
        subscription.put_now({"type": "reply", "id": reply_id, "result": mirror.snapshot()})

    def close(self) -> None:
        for mirror in self.mirrors.values():
            mirror.close()
        self.mirrors.clear()
