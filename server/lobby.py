"""The cardroom: one table actor per open table, started, supervised and listed.

At startup every open table's actor is built from the database: its seated players with the
chips their seat rows hold (a hand that was in progress when the process stopped was never
saved, so it is void and every chip of it is back), its hand numbers carried on. An operator's
new table gets its actor at once. If an actor's task dies, its hand in progress is recorded
as cancelled and the actor is built again from the database, the same way: the other tables
never notice. The lobby list (seats taken, waiting list, average pot, hands per hour) is read
from the actors, never from the database.
"""

from __future__ import annotations

import asyncio
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
from server.actor import FinishedHand, TableActor, TableSettings, TableStore
from server.bus import MemoryBus
from server.db.models import HandRecord, TableRecord, TableStatus
from server.settings import Settings

log = logging.getLogger(__name__)

STATS_WINDOW = 3600.0  # hands per hour counts the last hour
AVERAGE_OF = 50  # the average pot is over the last hands, this many at most
RESTART_BACKOFF_MAX = 30.0
RETRY_SECONDS = 2.0  # a database not ready at startup is tried again this often


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


@dataclass(slots=True)
class _Table:
    record: TableRecord
    stats: TableStats
    actor: TableActor
    restarts: int = 0
    crashes: deque[float] = field(default_factory=lambda: deque(maxlen=10))


class Cardroom:
    """Every open table's actor; what ``server.ws`` calls the cardroom."""

    def __init__(
        self,
        *,
        bus: MemoryBus,
        sessionmaker: async_sessionmaker[AsyncSession],
        settings: Settings,
        store: TableStore | None = None,
        deck_factory: Callable[[], Deck] | None = None,
    ) -> None:
        self.bus = bus
        self.settings = settings
        self.sessionmaker = sessionmaker
        self.store: TableStore = store or table_store.DatabaseTableStore(sessionmaker)
        self.deck_factory = deck_factory  # tests stack the deck; None: a fresh shuffle
        self._tables: dict[int, _Table] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._stopping = False

    # ------------------------------------------------------------------ ws.Cardroom

    def actor(self, table_id: int) -> TableActor | None:
        table = self._tables.get(table_id)
        return table.actor if table is not None else None

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Open an actor for every open table in the database. A database that does not
        answer yet (or is not migrated) is tried again in the background: the app still
        starts, and ``/readyz`` says why it is not ready."""
        try:
            await self._open_all()
        except Exception as exc:  # noqa: BLE001 - retried below
            log.warning("cardroom: tables not loaded yet (%s); retrying", exc)
            self._spawn(self._open_later())

    async def _open_all(self) -> None:
        async with self.sessionmaker() as session:
            records = await tables.list_tables(session, status=TableStatus.OPEN)
        for record in records:
            await self.open_table(record)

    async def _open_later(self) -> None:
        while True:
            await asyncio.sleep(RETRY_SECONDS)
            try:
                await self._open_all()
                return
            except Exception:  # noqa: BLE001 - keep trying until the database answers
                log.debug("cardroom: tables still not loaded", exc_info=True)

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def open_table(self, record: TableRecord) -> TableActor:
        """Build the table's actor from the database and start it (idempotent)."""
        existing = self._tables.get(record.id)
        if existing is not None:
            return existing.actor
        stats = TableStats()
        await self._seed_stats(record.id, stats)
        actor = await self._build(record, stats)
        self._tables[record.id] = _Table(record, stats, actor)
        self._run(record.id, actor)
        return actor

    async def stop(self) -> None:
        self._stopping = True
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        for table in self._tables.values():
            await table.actor.stop()

    async def _build(
        self,
        record: TableRecord,
        stats: TableStats,
        previous: TableActor | None = None,
    ) -> TableActor:
        async with self.sessionmaker() as session:
            seats = await table_store.seated_players(session, table_id=record.id)
            last = await table_store.last_hand_number(session, table_id=record.id)
        actor = TableActor(
            record.id,
            tables.table_config(record),
            bus=self.bus,
            store=_CountingStore(self.store, stats),
            settings=self.table_settings(record),
            deck_factory=self.deck_factory,
        )
        if previous is None:
            actor.restore(seats, hand_number=last)
        else:
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

    def _on_done(self, table_id: int, actor: TableActor, task: asyncio.Task[None]) -> None:
        if self._stopping or task.cancelled():
            return
        error = task.exception()
        log.error("table %s: the actor died (%r); restarting it", table_id, error)
        self._spawn(self._restart(table_id, actor))

    async def _restart(self, table_id: int, dead: TableActor) -> None:
        """Void the dead actor's hand (every chip back) and build the table again."""
        table = self._tables[table_id]
        dead.fail_pending("table_restarting", "the table is restarting; try again")
        record = dead.cancelled_record("table_restarted")
        if record is not None:
            try:
                await self.store.save_hand(record)
            except Exception:  # noqa: BLE001 - the stored stacks are still the hand's start
                log.exception("table %s: could not record the voided hand", table_id)
        now = time.monotonic()
        table.crashes.append(now)
        recent = sum(1 for at in table.crashes if at > now - 60.0)
        await asyncio.sleep(min(RESTART_BACKOFF_MAX, 0.05 * 2 ** (recent - 1)))
        while True:
            try:
                actor = await self._build(table.record, table.stats, previous=dead)
                break
            except Exception:  # noqa: BLE001 - the database may be back in a moment
                log.exception("table %s: could not rebuild the actor", table_id)
                await asyncio.sleep(RESTART_BACKOFF_MAX)
        actor.announce("table_restarted", {
            "cancelled_hand": record.number if record is not None else None,
            "stacks": {str(n): s.stack for n, s in enumerate(actor.table.seats) if s is not None},
        })
        table.actor = actor
        table.restarts += 1
        self._run(table_id, actor)

    # ------------------------------------------------------------------ the lobby

    def lobby(self) -> list[dict[str, Any]]:
        """Every open table, as the lobby lists it."""
        return [self.summary(table_id) for table_id in sorted(self._tables)]

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
        }

