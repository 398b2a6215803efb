"""One watched table: its state kept in step with the server's sequence, and its commands.

The state is a snapshot plus the events after it, applied only in ``seq`` order: an event
older than the state is dropped, a gap asks for a resync and nothing is applied until the
fresh snapshot comes. The table and its hand are folded by the engine's one reducer,
``engine.table_view.TablePicture`` (the hand's part is ``engine.views.view``), the one the
server's snapshots come from; this module adds only what a connection knows (timing).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from engine.events import ActionTaken, HandStarted, Turn, decode
from engine.table_events import Clock as ClockEvent
from engine.table_events import DeckCommitted, SeatTaken, TableRestarted
from engine.table_view import TablePicture
from stud_client.errors import ConnectionLost, ErrorCode, ServerError
from stud_client.view import (
    Action,
    Clock,
    SeatView,
    Stakes,
    TableView,
    legal_from,
)

if TYPE_CHECKING:
    from stud_client.client import StudClient

__all__ = ["ActResult", "EventStream", "Table", "TableEvent"]

log = logging.getLogger(__name__)

# Refusals worth the same command again a moment later (docs/protocol.md).
TRY_AGAIN = frozenset(
    {
        ErrorCode.TABLE_BUSY,
        ErrorCode.TABLE_RESTARTING,
        ErrorCode.TABLE_CLOSED,
        ErrorCode.TABLE_MOVED,
        ErrorCode.TABLE_UNAVAILABLE,
        ErrorCode.DATABASE_UNAVAILABLE,
    }
)
# A seed's refusals that are races the client loses now and then, not errors (``_give_seed``).
SEED_RACES = frozenset({ErrorCode.NOT_SEATED, ErrorCode.SEED_WINDOW_CLOSED})
LISTENER_QUEUE = 4096
MAX_RETRY_AFTER = 5.0  # the longest a command waits, as the server asked, to be tried again
_action_ids = itertools.count(1)
# A seat not dealt in: SeatView's hand fields, from ``in_hand`` to ``shown``, as they default.
_NOT_IN_HAND = (False, 0, 0, (), (), 0, False, False, False)
T = TypeVar("T")


async def wait_until(
    changed: Callable[[], asyncio.Event],
    current: Callable[[], T],
    predicate: Callable[[T], bool],
    timeout: float | None,
) -> T:
    """The first ``current()`` (the one now included) for which ``predicate`` holds, looked
    at again each time the ``changed()`` event of the moment is set (a table's view, a
    tournament follow). The event is taken before ``current``: a change in between is not
    missed."""
    async with asyncio.timeout(timeout):
        while True:
            event = changed()
            now = current()
            if predicate(now):
                return now
            await event.wait()


@dataclass(frozen=True, slots=True)
class TableEvent:
    """An event as this connection applied it. After every (re)sync comes one of kind
    ``"snapshot"`` whose data is the snapshot: whatever came before it may be stale."""

    table: int
    seq: int
    kind: str
    data: Mapping[str, Any]
    private: bool = False
    hand: int | None = None  # the hand number it belongs to, if any


class EventStream:
    """An async iterator of a table's events, listening from the moment it is made."""

    def __init__(self, listeners: list[asyncio.Queue[TableEvent]]) -> None:
        self._queue: asyncio.Queue[TableEvent] = asyncio.Queue(LISTENER_QUEUE)
        self._listeners = listeners
        listeners.append(self._queue)

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> TableEvent:
        if self._queue not in self._listeners:
            raise StopAsyncIteration
        return await self._queue.get()

    async def aclose(self) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(self._queue)


@dataclass(frozen=True, slots=True)
class ActResult:
    action_id: str
    seq: int  # the seq of the action's last event
    latency: float  # seconds from sending to seeing the action's event (else the reply)
    retries: int  # times it was sent again after a drop or a busy table


class Table:
    """A table this client watches (``StudClient.watch``): the view and the commands."""

    def __init__(self, client: StudClient, table_id: int) -> None:
        self.id = table_id
        self._client = client
        self._seq: int | None = None  # None: no snapshot yet, or waiting for a fresh one
        self._resyncing = False
        self._variant = ""
        self._stakes = Stakes(0, 0, 1, 1)
        self._buy_in = (0, 0)
        self._picture = TablePicture(0, client.player)  # the table, folded by the engine
        self._turn_seq: int | None = None
        self._clock: Clock | None = None  # the picture's clock, as a monotonic deadline
        self._view: TableView | None = None
        # seat -> (its fields, its SeatView) as the last view built it
        self._seat_views: dict[int, tuple[tuple[Any, ...], SeatView]] = {}
        # Set at the next change; made only when something waits for one (``wait_for``).
        self._changed: asyncio.Event | None = None
        self._listeners: list[asyncio.Queue[TableEvent]] = []
        self._synced = asyncio.Event()
        self._acting: list[float] = []  # [sent at, seen at]: the act in flight
        # hand -> (its commitment, the seed this client gave it): what a player checks the
        # hand's record against once it is over (docs/fairness.md). The last few hands.
        self.seeds: dict[int, tuple[str, str]] = {}
        self._seeding: set[int] = set()  # hands a seed was sent for (or is on its way)
        # Asked to leave: no more seeds (the table may free the seat before one would come).
        self._leaving = False

    # ------------------------------------------------------------------ reading

    @property
    def seq(self) -> int | None:
        return self._seq

    @property
    def seat(self) -> int | None:
        """My seat here (cheap: no view is built)."""
        return self._picture.you

    @property
    def view(self) -> TableView:
        """The table now, as this player may see it (built once per change)."""
        if self._view is None:
            self._view = self._build()
        return self._view

    @property
    def committed(self) -> tuple[int, str] | None:
        """The next hand's commitment, published and not yet dealt: (hand, commitment), as
        ``deck_committed`` or a snapshot told it (docs/fairness.md); None: none is out."""
        return self._picture.committed

    def events(self) -> EventStream:
        """Every event from this call on, in order (a ``snapshot`` one after each resync);
        ``aclose`` it when done. A consumer thousands of events behind loses the oldest."""
        return EventStream(self._listeners)

    async def wait_for(
        self, predicate: Callable[[TableView], bool], timeout: float | None = None
    ) -> TableView:
        """The first view (the current one included) for which ``predicate`` holds."""
        return await wait_until(self._next_change, lambda: self.view, predicate, timeout)

    def _next_change(self) -> asyncio.Event:
        """The event the next change sets (the view or a listener's event)."""
        changed = self._changed
        if changed is None:
            changed = self._changed = asyncio.Event()
        return changed

    # ------------------------------------------------------------------ commands

    async def sit(self, buy_in: int, seat: int | None = None) -> int:
        """Take a seat (any free one by default) with chips from the wallet; returns it.
        Safe to retry after a drop: a seat already mine is the answer."""
        fields: dict[str, Any] = {"buy_in": buy_in}
        self._leaving = False
        if seat is not None:
            fields["seat"] = seat
        try:
            result = await self._command("sit", retry=False, **fields)
        except ConnectionLost:
            await self._client._ready_or_lost()
            try:
                result = await self._command("sit", retry=False, **fields)
            except ServerError as refusal:
                if refusal.code != ErrorCode.ALREADY_SEATED:
                    raise
                await self.resync()
                you = self._picture.you
                assert you is not None
                return you
        return int(result["seat"])

    async def add_chips(self, amount: int) -> dict[str, Any]:
        return await self._command("add_chips", amount=amount)

    async def sit_out(
        self, next_hand: bool = True, check_when_free: bool = False
    ) -> dict[str, Any]:
        """``next_hand`` false during my hand: the table plays the rest of it for me at once
        (a forced bring-in, else a fold, or a free check with ``check_when_free``)."""
        return await self._command("sit_out", next_hand=next_hand, check_when_free=check_when_free)

    async def sit_in(self) -> dict[str, Any]:
        return await self._command("sit_in")

    async def leave(self) -> dict[str, Any]:
        """Leave now, or when my hand ends; my chips go back to my wallet. Safe to retry:
        after a drop, ``not_seated`` means I already left."""
        self._leaving = True
        try:
            return await self._command("leave", retry=False)
        except ConnectionLost:
            await self._client._ready_or_lost()
            try:
                return await self._command("leave", retry=False)
            except ServerError as refusal:
                if refusal.code != ErrorCode.NOT_SEATED:
                    raise
                return {"left": True}

    async def chat(self, text: str) -> None:
        await self._command("chat", text=text)

    async def act(
        self, action: Action, *, action_id: str | None = None, retries: int = 3
    ) -> ActResult:
        """Act on my turn. The same ``action_id`` is sent again after a drop or a busy table,
        and the server acts on it once, whatever the number of tries."""
        if action_id is None:
            name = (self._client.player or "p")[:40]
            action_id = f"{name}-{next(_action_ids)}-{secrets.token_hex(4)}"
        fields: dict[str, Any] = {"action_id": action_id, "kind": action.kind}
        if action.amount is not None:
            fields["amount"] = action.amount
        stats = self._client.stats
        sent = time.monotonic()
        self._acting = [sent]
        tries = 0
        try:
            while True:
                try:
                    result = await self._client._request("act", table=self.id, **fields)
                    break
                except ConnectionLost:
                    if tries >= retries:
                        raise
                    await self._client._ready_or_lost()
                except ServerError as refusal:
                    if refusal.code not in TRY_AGAIN or tries >= retries:
                        raise
                    await asyncio.sleep(0.05 * 2**tries)
                tries += 1
                stats.retries += 1
            seen = self._acting[1] if len(self._acting) > 1 else time.monotonic()
        finally:
            self._acting = []
        latency = seen - sent
        stats.actions += 1
        stats.latencies.append(latency)
        return ActResult(action_id, int(result.get("seq", 0)), latency, tries)

    async def resync(self) -> TableView:
        """Ask for a fresh snapshot now and wait for it."""
        self._synced.clear()
        self._resyncing = True
        await self._client._request("resync", table=self.id)
        await self._synced.wait()
        return self.view

    async def unwatch(self) -> None:
        await self._client._unwatch(self)

    async def _command(self, kind: str, *, retry: bool = True, **fields: Any) -> dict[str, Any]:
        tries = 0
        while True:
            try:
                result: dict[str, Any] = await self._client._request(kind, table=self.id, **fields)
                return result
            except ServerError as refusal:
                if not retry or refusal.code not in TRY_AGAIN or tries >= 3:
                    raise
                wait = max(0.05 * 2**tries, min(refusal.retry_after or 0.0, MAX_RETRY_AFTER))
            await asyncio.sleep(wait)
            tries += 1

    # ------------------------------------------------------------------ applying

    def _apply_snapshot(self, snapshot: Mapping[str, Any]) -> None:
        self._seq = int(snapshot["seq"])
        self._resyncing = False
        self._variant = snapshot["variant"]
        stakes = snapshot["stakes"]
        self._stakes = Stakes(
            stakes["ante"],
            stakes["bring_in"],
            stakes["small_bet"],
            stakes["big_bet"],
            stakes.get("structure", "fixed_limit"),
        )
        self._buy_in = (snapshot["buy_in"]["min"], snapshot["buy_in"]["max"])
        before = self._picture
        picture = self._picture = TablePicture.of_snapshot(snapshot, self._client.player)
        self._turn_seq = self._turn_after(before, picture)
        clock = snapshot.get("clock")
        self._clock = None
        if clock is not None and isinstance(clock.get("remaining"), int | float):
            # The seconds left, as the clock of the seat to act: an action stops it.
            picture.clock = ClockEvent(clock["seat"], clock["remaining"], 0.0)
            self._clock = Clock(clock["seat"], time.monotonic() + clock["remaining"])
        self._synced.set()
        self._seed_committed()  # a hand committed to before this snapshot gets a seed too
        self._changed_now(
            TableEvent(self.id, self._seq, "snapshot", snapshot, hand=picture.hand_number)
        )

    def _turn_after(self, before: TablePicture, after: TablePicture) -> int | None:
        """The seq that names the turn a snapshot shows (None: no turn). A snapshot of the
        turn already known (a resync while the seat thinks on it) keeps that turn's seq: the
        snapshot's own seq is a later event's (its clock's at least), and a new name would
        read as a new turn. Any other turn is named by the snapshot's seq.

        A turn is known by the hand as it stands when it is told: within a hand, a seat is
        never to act twice on the same picture (between its turns some seat bets, calls,
        folds, or a street is dealt), so an equal picture of the same hand is the same turn."""
        hand = after.hand_view()
        if hand is None or hand["legal"] is None:
            return None
        if (
            self._turn_seq is not None
            and before.hand_number == after.hand_number
            and _same_picture(before.hand_view(), hand)
        ):
            return self._turn_seq
        return self._seq

    def _on_drop(self) -> None:
        """The connection dropped: hold every event until the next snapshot."""
        self._resyncing = True
        self._synced.clear()

    def _on_event(self, frame: Mapping[str, Any]) -> None:
        seq = frame["seq"]
        if self._seq is None or self._resyncing or seq <= self._seq:
            return  # before the snapshot that covers it, or old
        if seq != self._seq + 1:
            self._client.stats.gaps += 1
            log.info("table %s: seq %s after %s; resyncing", self.id, seq, self._seq)
            self._resyncing = True
            self._synced.clear()
            self._client._resync_soon(self.id)
            return
        private = bool(frame.get("private"))
        if not private:
            self._seq = seq
        kind, data = frame["kind"], frame["data"]
        self._apply(kind, data, seq, private)
        self._changed_now(TableEvent(self.id, seq, kind, data, private, self._picture.hand_number))

    def _apply(self, kind: str, data: Mapping[str, Any], seq: int, private: bool) -> None:
        """Fold the event into the picture (the engine's reducer), then what only this
        connection knows: when the clock runs out, which turn this is, how long an act took."""
        event = decode(kind, data, data.get("seat") if private else None)
        picture = self._picture
        picture.me = self._client.player
        running = picture.clock
        picture.apply(event)
        if picture.clock is not running:
            clock = picture.clock
            self._clock = (
                None
                if clock is None
                else Clock(clock.seat, time.monotonic() + clock.action_clock + clock.time_bank)
            )
        if isinstance(event, Turn):
            self._turn_seq = seq
        elif isinstance(event, ActionTaken):
            if self._acting and event.seat == picture.you and len(self._acting) == 1:
                self._acting.append(time.monotonic())
        elif isinstance(event, TableRestarted):
            self._resyncing = True
            self._synced.clear()
            self._client._resync_soon(self.id)
        elif isinstance(event, DeckCommitted | SeatTaken):
            self._seed_committed()
        elif isinstance(event, HandStarted) and picture.game is not None:
            # A mixed table: each hand has its game, and its stakes (engine.rotation).
            self._variant = event.variant
            self._stakes = Stakes(
                event.ante, event.bring_in, event.small_bet, event.big_bet, event.structure
            )

    def _seed_committed(self) -> None:
        """Give the committed next hand a seed, once, while seated: on its commitment, on a
        snapshot that carries it (a reconnect), on sitting down after it was published."""
        committed = self._picture.committed
        if (
            committed is None
            or self._picture.you is None
            or not self._client.client_seeds
            or self._leaving
            or committed[0] in self._seeding
        ):
            return
        self._seeding.add(committed[0])
        while len(self._seeding) > 32:
            self._seeding.discard(min(self._seeding))
        self._client._spawn(self._give_seed(*committed))

    async def _give_seed(self, hand: int, commitment: str) -> None:
        """A fresh random seed for the committed next hand. Refused (the hand was dealt
        already, the seat is gone) or lost, the hand is dealt without it: nothing to retry."""
        seed = secrets.token_hex(16)  # a seed never reads as cards in a log
        try:
            reply = await self._client._request("client_seed", table=self.id, hand=hand, seed=seed)
        except ServerError as refusal:
            self._seeding.discard(hand)
            if refusal.code in SEED_RACES:
                # The seat was given up meanwhile (a leave; a tournament's move between two
                # hands) or the hand dealt: a race no caller can avoid, no error of theirs.
                errors = self._client.stats.errors
                errors[refusal.code] -= 1
                if errors[refusal.code] <= 0:
                    del errors[refusal.code]
            return
        except (ConnectionLost, TimeoutError):
            self._seeding.discard(hand)  # lost with the line: a snapshot after it tries again
            return
        if reply.get("hand") != hand:
            return  # came after that hand's deal: it goes to the next, under another commitment
        self.seeds[hand] = (commitment, seed)
        while len(self.seeds) > 32:
            del self.seeds[min(self.seeds)]

    def _changed_now(self, event: TableEvent) -> None:
        self._view = None
        changed = self._changed
        if changed is not None:  # a waiter's: the next one waits for the change after
            self._changed = None
            changed.set()
        for queue in self._listeners:
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(event)

    def _build(self) -> TableView:
        table = self._picture
        picture = table.hand_view(pots=False, detached=False)  # read here, kept as tuples
        hand_seats: dict[int, dict[str, Any]] = picture["seats"] if picture else {}
        over = bool(picture and picture["over"])
        seats = []
        kept = self._seat_views
        for number, seat in enumerate(table.seats):
            h = hand_seats.get(number)
            if h is None:
                key: tuple[Any, ...] = (
                    seat.player,
                    seat.stack,
                    seat.pending_chips,
                    seat.sitting_out,
                    seat.leaving,
                    seat.connected,
                    *_NOT_IN_HAND,
                    seat.sit_out_next_hand,
                )
            else:
                key = (
                    seat.player,
                    seat.stack if over else h["stack"],
                    seat.pending_chips,
                    seat.sitting_out,
                    seat.leaving,
                    seat.connected,
                    True,
                    h["bet"],
                    h["in_pot"],
                    tuple(h["up"]),
                    tuple(h["down"]),
                    h["down_count"],
                    h["folded"],
                    h["all_in"],
                    h["shown"],
                    seat.sit_out_next_hand,
                )
            # A seat alike since the last view is the same (frozen) SeatView: most events
            # change one seat or none.
            last = kept.get(number)
            if last is not None and last[0] == key:
                seats.append(last[1])
            else:
                made = SeatView(number, *key)
                kept[number] = (key, made)
                seats.append(made)
        legal = picture["legal"] if picture else None
        return TableView(
            table=self.id,
            seq=self._seq or 0,
            variant=self._variant,
            stakes=self._stakes,
            min_buy_in=self._buy_in[0],
            max_buy_in=self._buy_in[1],
            seats=tuple(seats),
            you=table.you,
            hand_number=table.hand_number,
            street=picture["street"] if picture else None,
            pot=picture["pot"] if picture else 0,
            common=tuple(picture["common"]) if picture else (),
            to_act=picture["to_act"] if picture else None,
            legal=legal_from(legal) if legal else None,
            turn_seq=self._turn_seq if legal else None,
            clock=self._clock,
            announcements=tuple(picture["announcements"]) if picture else (),
            awards=tuple(picture["awards"]) if picture else (),
            hand_over=over,
            waiting=tuple(table.waiting),
        )


def _same_picture(one: Mapping[str, Any] | None, other: Mapping[str, Any]) -> bool:
    """Two pictures of a hand alike, as they travel (a tuple and a list of the same cards
    are the same)."""
    if one is None:
        return False
    dump = orjson.OPT_NON_STR_KEYS | orjson.OPT_SORT_KEYS
    return orjson.dumps(one, option=dump) == orjson.dumps(other, option=dump)
