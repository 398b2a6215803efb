"""Write-ahead of a table: nothing is shown before it is written.

The deck and players of a hand are stored before it is dealt, each action before its
events go out, and the finished hand with its stacks in one transaction; so another
node (or this one, restarted) can deal the hand again and replay it to where the
players last saw it. While the database does not answer, every write is tried again
and the table is paused: it finishes nothing it cannot persist. A refusal (a wallet
short of chips, the table taken over) is not retried.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from server.logs import named
from server.metrics import Metrics
from server.store.records import FinishedHand, LiveHandState, StoreUnavailable
from server.table.moves import Move
from server.table.ports import TableStore

log = logging.getLogger(__name__)

PAUSE_RETRY_MAX = 2.0  # seconds between tries of a write while the database does not answer


class Journal:
    """One table's writes, through its store, with the pause while the database is away."""

    def __init__(
        self,
        store: TableStore,
        table_id: int,
        *,
        clock: Callable[[], float],
        on_pause: Callable[[], None],
        on_resume: Callable[[float], None],
        metrics: Metrics | None = None,
    ) -> None:
        self.store = store
        self.table_id = table_id
        self.clock = clock
        self.on_pause = on_pause
        self.on_resume = on_resume  # with the seconds the pause lasted
        self.paused_since: float | None = None  # the database has not answered since
        self.recorded = 0  # actions of the hand in progress written so far
        self.metrics = metrics if metrics is not None else Metrics()

    async def persist(self, name: str, write: Callable[[], Awaitable[None]]) -> None:
        """Write, however long the database takes to come back; ``name`` labels the
        write's latency (of the try that succeeded)."""
        delay = 0.05
        while True:
            started, tried_at = time.perf_counter(), self.clock()
            try:
                await write()
            except StoreUnavailable as error:
                if self.paused_since is None:
                    # From the start of the try that waited in vain: the pause is told whole.
                    self.paused_since = tried_at
                    log.warning(
                        "table %s: paused, the database does not answer (%s)",
                        self.table_id,
                        named(error),
                    )
                    self.on_pause()
                await asyncio.sleep(delay)
                delay = min(PAUSE_RETRY_MAX, delay * 2)
                continue
            self.metrics.db_write(name, time.perf_counter() - started)
            break
        if self.paused_since is not None:
            paused = self.clock() - self.paused_since
            self.paused_since = None
            log.info("table %s: the database is back after %.1f s", self.table_id, paused)
            self.on_resume(paused)

    async def buy_in(self, player: str, chips: int, *, seat: int) -> None:
        """Chips from the wallet to the seat; not retried (the player is told and may)."""
        started = time.perf_counter()
        await self.store.buy_in(self.table_id, player, chips, seat=seat)
        self.metrics.db_write("buy_in", time.perf_counter() - started)

    async def cash_out(self, player: str, chips: int) -> None:
        await self.persist("cash_out", lambda: self.store.cash_out(self.table_id, player, chips))

    async def start_hand(self, live: LiveHandState) -> None:
        await self.persist("start_hand", lambda: self.store.start_hand(live))
        self.recorded = 0

    def resumed(self, live: LiveHandState) -> None:
        """A hand dealt again from its record: its actions are written already."""
        self.recorded = len(live.actions)

    async def record(self, number: int, move: Move) -> None:
        """The next move of hand ``number`` (in progress), before its events go out."""
        position, row = self.recorded, move.row()
        await self.persist(
            "record_action",
            lambda: self.store.record_action(self.table_id, number, position, row),
        )
        self.recorded = position + 1

    async def save_hand(self, record: FinishedHand) -> None:
        await self.persist("save_hand", lambda: self.store.save_hand(record))
