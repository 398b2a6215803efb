"""What the lobby shows of a table: its line (name, game, stakes, seats, waiting list), and
its recent hands (hands per hour, the average pot), counted as its store saves them."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.rotation import DEFAULT_HANDS
from engine.variants import VARIANTS, TableConfig
from server.db.models import HandRecord, TableRecord
from server.store.records import AuditNote, FinishedHand, LiveHandState
from server.table.ports import TableStore

STATS_WINDOW = 3600.0  # hands per hour counts the last hour
AVERAGE_OF = 50  # the average pot is over the last hands, this many at most


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


class CountingStore:
    """The real store, telling the table's stats about every hand saved."""

    def __init__(self, inner: TableStore, stats: TableStats) -> None:
        self.inner = inner
        self.stats = stats

    async def buy_in(self, table_id: int, player: str, amount: int, *, seat: int) -> None:
        await self.inner.buy_in(table_id, player, amount, seat=seat)

    async def cash_out(self, table_id: int, player: str, amount: int) -> None:
        await self.inner.cash_out(table_id, player, amount)

    async def seat_entrant(self, table_id: int, player: str, chips: int, *, seat: int) -> None:
        await self.inner.seat_entrant(table_id, player, chips, seat=seat)

    async def give_up_seat(self, table_id: int, player: str, chips: int) -> None:
        await self.inner.give_up_seat(table_id, player, chips)

    async def add_entrant_chips(
        self, table_id: int, player: str, chips: int, *, stack: int
    ) -> None:
        await self.inner.add_entrant_chips(table_id, player, chips, stack=stack)

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

    async def save_table(
        self, table_id: int, values: dict[str, Any], note: AuditNote | None
    ) -> None:
        await self.inner.save_table(table_id, values, note)


def lobby_line(
    record: TableRecord,
    config: TableConfig,
    *,
    seats: int | None = None,
    buy_in: tuple[int, int] | None = None,
    paused: bool | None = None,
    seats_taken: int = 0,
    waiting: int = 0,
    average_pot: int = 0,
    hands_per_hour: int = 0,
    restarts: int = 0,
    node: str | None = None,
    rotation: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A table's line in the lobby (``GET /tables``); a table no node runs yet shows its
    record alone, empty. ``seats``, ``buy_in``, ``paused``: as its actor plays them (new
    settings wait for a hand in progress to end); None: as the record says. ``config``: the
    rules played now (a mixed table's game in play); ``rotation``: a mixed table's games in
    turn (``engine.rotation`` JSON; None: a table of one game)."""
    low, high = buy_in if buy_in is not None else (record.min_buy_in, record.max_buy_in)
    return {
        "id": record.id,
        "name": record.name,
        "variant": config.variant.name,
        "variant_title": config.variant.title,
        "structure": config.structure,
        "stakes": {
            "ante": config.ante,
            "bring_in": config.bring_in,
            "small_bet": config.small_bet,
            "big_bet": config.big_bet,
        },
        "seats": record.seats if seats is None else seats,
        "seats_taken": seats_taken,
        "waiting": waiting,
        "min_buy_in": low,
        "max_buy_in": high,
        "paused": record.paused_reason is not None if paused is None else paused,
        "average_pot": average_pot,
        "hands_per_hour": hands_per_hour,
        "restarts": restarts,
        "node": node,
        "tournament_id": record.tournament_id,  # a tournament's table: not in the cash lobby
        "rotation": lobby_rotation(rotation),
    }


def lobby_rotation(spec: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A mixed table's rotation as the lobby lists it: its games in turn (each its variant
    and title), how long each lasts (``unit``, ``hands``)."""
    if spec is None:
        return None
    unit = spec.get("unit", "hands")
    return {
        "games": [
            {"variant": game["variant"], "title": VARIANTS[game["variant"]].title}
            for game in spec["games"]
        ],
        "unit": unit,
        "hands": spec.get("hands", DEFAULT_HANDS) if unit == "hands" else None,
    }


async def seed_stats(
    sessionmaker: async_sessionmaker[AsyncSession], table_id: int, stats: TableStats
) -> None:
    """A table's stats from its recorded hands (a node taking the table after a restart or
    from another node): every hand of the last hour, the last ones for the average pot,
    and the table's age from when it was made, not from when this node took it (a rate
    over the minute since the restart of an hour's hands is sixty times too high)."""
    since = datetime.fromtimestamp(stats.clock() - STATS_WINDOW, UTC)
    latest = select(HandRecord.id, HandRecord.created_at, HandRecord.result).where(
        HandRecord.table_id == table_id
    )
    async with sessionmaker() as session:
        made = await session.scalar(
            select(TableRecord.created_at).where(TableRecord.id == table_id)
        )
        hour = (
            await session.execute(
                latest.where(HandRecord.created_at > since)
                .order_by(HandRecord.id.desc())
                .limit(stats.hands.maxlen)
            )
        ).all()
        last = hour
        if len(hour) < AVERAGE_OF:  # a quiet hour: the average pot is of earlier hands too
            last = (
                await session.execute(latest.order_by(HandRecord.id.desc()).limit(AVERAGE_OF))
            ).all()
    if made is not None:
        stats.opened = min(stats.opened, made.timestamp())
    hands = {id_: (created_at, result) for id_, created_at, result in (*hour, *last)}
    for id_ in sorted(hands):
        created_at, result = hands[id_]
        if not result.get("cancelled"):
            stats.record(pot_of(result), at=created_at.timestamp())
