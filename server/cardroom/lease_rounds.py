"""A node's lease rounds: every third of a lease the node renews the leases of the tables it
runs (one round trip for them all), stops running a table whose lease it lost (writing
nothing more), tells the other nodes its load and how its tables look for their lobbies,
takes its share of the tables nobody runs, and starts the moves it owes. Between rounds, a
table whose node went quiet is taken the moment its lease lapses, not at the next round.

The cardroom is reached through :class:`Room`: the tables it runs with their leases, those
it is taking, dropping one, taking those nobody runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, Protocol

from server.cardroom.cluster import Leases, renewal_failed
from server.cardroom.gossip import Gossip
from server.cardroom.handover import Handovers
from server.logs import named
from server.table.actor import TableActor
from server.table.lease import LeaseProof

log = logging.getLogger(__name__)

# A lapse is looked at this long after it is due: Redis expires a key on its own clock.
LAPSE_MARGIN = 0.05


class Leased(Protocol):
    """A table this node runs, as a round renews it."""

    @property
    def actor(self) -> TableActor: ...

    @property
    def lease(self) -> LeaseProof:
        """Until when this node may speak for the table: one proof per take of it."""
        ...


class Room(Protocol):
    """What the lease rounds ask of the node's cardroom."""

    @property
    def stopping(self) -> bool: ...

    def running_tables(self) -> Mapping[int, Leased]: ...

    def claiming(self) -> dict[int, LeaseProof]:
        """The leases held by takes not yet running."""
        ...

    async def drop(self, table_id: int, why: str) -> None:
        """Stop running the table here, writing nothing more (another node runs it)."""
        ...

    async def take_tables(self, *, shares_only: bool = False) -> None: ...

    def spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]: ...


class LeaseRounds:
    """The rounds of one node, and its looks between them for tables nobody runs."""

    def __init__(
        self,
        room: Room,
        *,
        lease_seconds: float,
        leases: Leases,
        gossip: Gossip,
        handovers: Handovers,
    ) -> None:
        self.room = room
        self.lease_seconds = lease_seconds
        self.leases = leases
        self.gossip = gossip
        self.handovers = handovers
        self.task: asyncio.Task[None] | None = None  # the rounds, once started
        self._opening: asyncio.Task[None] | None = None  # the tables nobody runs, being taken
        self._stop_asked = asyncio.Event()  # wakes the rounds to end
        # Every lapse up to this moment has been looked at (``_until_round``), across rounds.
        self._lapses_looked = time.monotonic()

    async def start(self) -> None:
        """Start the rounds, then take the tables nobody runs. The rounds renew from the
        start, beside the opening: a node taking a hundred tables must not let the first
        ones' leases lapse while it takes the last."""
        self.task = self.room.spawn(self._keep_leases())
        self._opening = self.room.spawn(self._open_first())
        await self._opening

    async def stop(self) -> None:
        """End the rounds. One in the middle of its database work finishes it (cancelled
        there, the connection's reset would be cut short)."""
        self._stop_asked.set()
        rounds = {t for t in (self.task, self._opening) if t is not None}
        if rounds:
            await asyncio.wait(rounds, timeout=self.lease_seconds)

    async def _open_first(self) -> None:
        try:
            await self.room.take_tables()
        except Exception as exc:  # noqa: BLE001 - retried by the lease rounds
            log.warning("cardroom: tables not loaded yet (%s); retrying", named(exc))

    async def _keep_leases(self) -> None:
        """Every third of a lease: renew ours, drop those lost, take those nobody runs,
        tell the other nodes what ours look like. Between rounds, a table whose node went
        quiet is taken the moment its lease lapses, not at the next round."""
        every = self.lease_seconds / 3
        while True:
            await self._until_round(time.monotonic() + every)
            if self.room.stopping:
                return
            renewed = await self._attempt(self.renew_leases)
            self.handovers.measure_busy()
            # Told before the database is asked for new tables: a slow database must not
            # make the other nodes' lobbies forget who runs these.
            _contained(self.gossip.tell)
            if renewed and (self._opening is None or self._opening.done()):
                # Beside the rounds, not in them: a database slow to answer must not hold
                # the next renewal back (the lease would lapse under a table that runs).
                self._opening = self.room.spawn(self._open_new())
                _contained(self.handovers.balance)
            self.gossip.forget_stale()

    async def _until_round(self, round_at: float) -> None:
        """Wait for the next round; meanwhile, at each lapse of the leases of a node that
        went quiet (``Gossip.next_lapse``), take this node's share of its tables."""
        while not self.room.stopping:
            # From the last look, not from this round: a lapse just past a round's start
            # (nodes whose rounds keep step) is looked at after it, not missed for good.
            lapse = self.gossip.next_lapse(after=self._lapses_looked)
            wake = round_at if lapse is None else min(round_at, lapse + LAPSE_MARGIN)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop_asked.wait(), max(0.0, wake - time.monotonic()))
            if wake >= round_at:
                return
            self._lapses_looked = wake  # every lapse up to now is covered by this look
            if self._opening is None or self._opening.done():
                self._opening = self.room.spawn(self._open_lapsed())

    async def _open_new(self) -> None:
        await self._attempt(self.room.take_tables)

    async def _open_lapsed(self) -> None:
        await self._attempt(self._take_shares)

    async def _take_shares(self) -> None:
        await self.room.take_tables(shares_only=True)

    @staticmethod
    async def _attempt(step: Callable[[], Awaitable[None]]) -> bool:
        """One step of a lease round; a failure is logged and tried again next round."""
        try:
            await step()
        except Exception as exc:  # noqa: BLE001 - Redis or the database away: next time
            log.warning("cardroom: lease round failed at %s (%s)", step.__name__, named(exc))
            return False
        return True

    async def renew_leases(self) -> None:
        """Renew the lease of every table this node runs or is taking, and stop running
        those whose lease another node holds now (or that Redis could not renew for most of
        a lease): what each lease round does first. One round trip for every table's lease
        (``Leases.renew_many``): a round that asked table by table would take long enough,
        with a hundred tables on a busy loop, for the last ones' leases to lapse before
        they are reached."""
        taken_over = {
            t: table for t, table in self.room.running_tables().items() if table.actor.taken_over
        }
        await self._drop_all(taken_over, "another node took the table over")
        running = dict(self.room.running_tables())
        # A take in progress holds its lease too: one slower than a lease (a cold database,
        # a long hand to load) must not let the lease lapse before its table runs.
        claiming = self.room.claiming()
        now = time.monotonic()  # before Redis is asked: a proof never outlasts the lease
        try:
            held = await self.leases.renew_many([*running, *claiming])
        except Exception as exc:  # noqa: BLE001 - Redis away: keep them while the lease lasts
            if not renewal_failed(exc):
                raise
            lapsing = {
                table_id: table
                for table_id, table in running.items()
                if now - table.lease.renewed > self.lease_seconds * 0.9
            }
            await self._drop_all(lapsing, f"the lease could not be renewed ({named(exc)})")
            return
        for table_id, proof in claiming.items():
            if held.get(table_id, False):
                proof.renew(now)
            else:
                proof.lose()
        lost: dict[int, Leased] = {}
        for table_id, table in running.items():
            if held.get(table_id, False):
                table.lease.renew(now)
            else:
                lost[table_id] = table
        await self._drop_all(lost, "another node holds the lease")

    async def _drop_all(self, dropping: Mapping[int, Leased], why: str) -> None:
        """Drop these tables side by side (one slow to stop, or whose lease Redis is slow
        to take back, holds no other up); each only if this node still runs it as it did
        when the round began (the same take, by its lease: not dropped and taken again
        meanwhile)."""
        now = self.room.running_tables()
        await asyncio.gather(
            *(
                self.room.drop(table_id, why)
                for table_id, table in dropping.items()
                if table_id in now and now[table_id].lease is table.lease
            )
        )


def _contained(step: Callable[[], None]) -> None:
    """A step of a lease round besides the renewal: a bug in it is logged, and the rounds
    (the leases of every table this node runs) go on."""
    try:
        step()
    except Exception:  # noqa: BLE001 - the leases must still be renewed next round
        log.exception("cardroom: lease round step %s failed", step.__name__)
