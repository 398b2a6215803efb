"""The directors a node runs: each tournament that is due is started by one node, and run by
one node at a time.

Each round (``every`` seconds) a node looks at the tournaments: a sit-and-go whose seats are
all taken starts; a scheduled tournament whose time has come starts with its field, or is
cancelled with every entry refunded when fewer than its least entrants came; a running one
goes on. Which node directs a tournament is a lease in its row (``director_node``,
``director_until``): a node claims a tournament whose lease is free or lapsed, renews the
leases of the ones it directs each round, and stops a director whose lease it lost. Two
directors of one tournament cannot both write: the journal numbers its facts, and the second
to write a number is refused (it stops, and the node looks again).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Generator
from datetime import timedelta
from types import TracebackType
from typing import Any, cast

from sqlalchemy import CursorResult, and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.bus.memory import Bus
from server.cardroom.supervisor import Cardroom
from server.db.models import TableRecord, TableStatus, TournamentRecord, TournamentStatus
from server.db.types import utcnow
from server.table import commands as cmd
from server.tournaments import registry
from server.tournaments.director import Director

log = logging.getLogger(__name__)

# What a table answers while it changes hands (its node died, it is handed over, restarted):
# nothing is wrong with the tournament, the table is back within a lease.
CHANGING_HANDS = frozenset(
    {
        ErrorCode.TABLE_UNAVAILABLE,
        ErrorCode.TABLE_MOVED,
        ErrorCode.TABLE_RESTARTING,
        ErrorCode.TABLE_CLOSED,
        ErrorCode.NODE_UNAVAILABLE,
        ErrorCode.DATABASE_UNAVAILABLE,
    }
)


class CpuTimed(Coroutine[Any, Any, Any]):
    """A coroutine whose every step, as its task runs it, is timed in the CPU time of the
    event loop's thread (``time.thread_time``): the task's own CPU, whatever other tasks run
    between its steps. A director is run so (``stud_tournament_director_cpu_seconds``)."""

    def __init__(self, inner: Coroutine[Any, Any, Any], count: Callable[[float], None]) -> None:
        self.inner = inner
        self.count = count

    def send(self, value: Any) -> Any:
        started = time.thread_time()
        try:
            return self.inner.send(value)
        finally:
            self.count(time.thread_time() - started)

    def throw(
        self,
        kind: type[BaseException] | BaseException,
        value: object = None,
        traceback: TracebackType | None = None,
    ) -> Any:
        started = time.thread_time()
        try:
            if value is None and traceback is None:
                return self.inner.throw(kind)
            return self.inner.throw(kind, value, traceback)  # type: ignore[arg-type]
        finally:
            self.count(time.thread_time() - started)

    def close(self) -> None:
        self.inner.close()

    def __await__(self) -> Generator[Any, None, Any]:
        return self.inner.__await__()


class CardroomTables:
    """A director's tables through the cardroom: opened where the cardroom places them, and
    their commands carried to whichever node runs each."""

    def __init__(self, cardroom: Cardroom) -> None:
        self.cardroom = cardroom
        self.bus: Bus = cardroom.bus

    async def open_table(self, record: Any) -> Any:
        return await self.cardroom.open_table(record)

    async def submit(self, table_id: int, command: cmd.TableCommand) -> dict[str, Any]:
        handle = await self.cardroom.table(table_id)
        if handle is None:
            raise LookupError(f"no table {table_id}")
        return await handle.submit(command)


class TournamentDirectors:
    """This node's part in running the cardroom's tournaments (see the module)."""

    def __init__(
        self,
        *,
        cardroom: Cardroom,
        sessionmaker: async_sessionmaker[AsyncSession],
        node_id: str,
        lease_seconds: float,
        every: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.cardroom = cardroom
        self.sessionmaker = sessionmaker
        self.node_id = node_id
        self.lease = timedelta(seconds=lease_seconds)
        self.every = every
        self.clock = clock
        self.running: dict[int, asyncio.Task[None]] = {}
        self.directors: dict[int, Director] = {}  # the running ones, read by the metrics
        self._rounds: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._rounds = asyncio.get_running_loop().create_task(self._keep())

    async def stop(self) -> None:
        tasks = [t for t in (self._rounds, *self.running.values()) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.running.clear()
        with contextlib.suppress(Exception):
            await self._release_all()

    async def _keep(self) -> None:
        while True:
            try:
                await self.round()
            except Exception:  # noqa: BLE001 - a round that failed is tried again
                log.exception("tournaments: a round failed")
            await asyncio.sleep(self.every)

    async def round(self) -> None:
        """One look at the tournaments: start what is due, direct what is ours (a finished
        one too while a table of it is open: its director's last orders, the tables closed,
        were cut short)."""
        tables_open = (
            select(TableRecord.id)
            .where(
                TableRecord.tournament_id == TournamentRecord.id,
                TableRecord.status == TableStatus.OPEN.value,
            )
            .exists()
        )
        async with self.sessionmaker() as session:
            records = list(
                (
                    await session.scalars(
                        select(TournamentRecord).where(
                            or_(
                                TournamentRecord.status.in_(
                                    [
                                        TournamentStatus.REGISTERING.value,
                                        TournamentStatus.RUNNING.value,
                                    ]
                                ),
                                and_(
                                    TournamentRecord.status == TournamentStatus.FINISHED.value,
                                    tables_open,
                                ),
                            )
                        )
                    )
                ).all()
            )
            await session.commit()
        for record in records:
            if record.status == TournamentStatus.REGISTERING and not await self._due(record):
                continue
            await self._direct(record.id)
        for tournament_id, task in list(self.running.items()):
            if task.done():
                del self.running[tournament_id]

    async def _due(self, record: TournamentRecord) -> bool:
        """Whether a tournament taking entries starts now (a scheduled one short of its
        field is cancelled here, every entry refunded)."""
        spec = registry.spec_of(record)
        async with self.sessionmaker() as session:
            entrants = await registry.entrants(session, tournament_id=record.id)
            await session.commit()
        if spec.kind == "sit_and_go":
            return entrants >= spec.max_entrants
        if record.starts_at is None or record.starts_at > utcnow():
            return False
        if entrants >= spec.min_entrants:
            return True
        async with self.sessionmaker() as session:
            try:
                await registry.cancel(
                    session,
                    tournament_id=record.id,
                    reason=f"{entrants} of the {spec.min_entrants} entrants it needed came",
                )
            except Refusal:
                return False  # another node cancelled it, or it started meanwhile
            await session.commit()
        return False

    async def _direct(self, tournament_id: int) -> None:
        """Claim (or keep) the tournament's lease; run its director if it is ours."""
        if not await self._claim(tournament_id):
            task = self.running.pop(tournament_id, None)
            if task is not None:
                task.cancel()
            return
        task = self.running.get(tournament_id)
        if task is None or task.done():
            self.running[tournament_id] = asyncio.get_running_loop().create_task(
                CpuTimed(self._play(tournament_id), self.cardroom.metrics.director_ran)
            )

    async def _play(self, tournament_id: int) -> None:
        director = Director(
            tournament_id=tournament_id,
            tables=CardroomTables(self.cardroom),
            sessionmaker=self.sessionmaker,
            seal=self.cardroom.seal,
            clock=self.clock,
            metrics=self.cardroom.metrics,
        )
        self.directors[tournament_id] = director
        try:
            await director.play()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - the next round takes it over from its journal
            if isinstance(error, Refusal) and error.code in CHANGING_HANDS:
                # A table between nodes (its node died, or it moves): the next round's
                # director takes the tournament over from its journal and tells it again.
                log.warning(
                    "tournament %s: its director stopped (%s: %s); taken over next round",
                    tournament_id,
                    error.code,
                    error.message,
                )
            else:
                log.exception(
                    "tournament %s: its director stopped; taken over next round", tournament_id
                )
        finally:
            if self.directors.get(tournament_id) is director:
                del self.directors[tournament_id]

    async def _claim(self, tournament_id: int) -> bool:
        now = utcnow()
        async with self.sessionmaker() as session:
            claimed = cast(
                CursorResult[Any],
                await session.execute(
                    update(TournamentRecord)
                    .where(
                        TournamentRecord.id == tournament_id,
                        or_(
                            TournamentRecord.director_node.is_(None),
                            TournamentRecord.director_node == self.node_id,
                            TournamentRecord.director_until < now,
                        ),
                    )
                    .values(director_node=self.node_id, director_until=now + self.lease)
                ),
            )
            await session.commit()
        return claimed.rowcount == 1

    async def _release_all(self) -> None:
        async with self.sessionmaker() as session:
            await session.execute(
                update(TournamentRecord)
                .where(TournamentRecord.director_node == self.node_id)
                .values(director_node=None, director_until=None)
            )
            await session.commit()
