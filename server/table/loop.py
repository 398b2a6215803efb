"""The loop of a table actor: one command or clock at a time, and a life with explicit states.

A :class:`TableLoop` takes commands through a bounded inbox and carries them out one at
a time, between them waking when a clock falls due; what a command or a clock does is
its subclass's (:class:`server.table.actor.TableActor`). Its life is a :class:`Lifecycle`
state, and only the moves in ``_MOVES`` are allowed (any other is a bug, and raises). A
bug in carrying out a command is contained: the subclass voids what it was doing and
the loop goes on. A store that finds the table run by another node stops the loop at
once, writing nothing more.
"""

from __future__ import annotations

import asyncio
import logging
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from enum import Enum
from typing import Any

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.logs import table_context
from server.metrics import Metrics
from server.store.records import StoreUnavailable, TableTakenOver
from server.table.commands import TableCommand
from server.table.ports import CommandRefused

log = logging.getLogger(__name__)

INBOX_SIZE = 256
STOP_GRACE_SECONDS = 5.0  # how long a stopping table may take to finish what it is doing


class Lifecycle(Enum):
    NEW = "new"  # built (and maybe restored), not started
    IDLE = "idle"  # waiting for a command or a clock
    BUSY = "busy"  # carrying out a command or a clock
    STOPPING = "stopping"  # asked to stop: finishes what it is doing, takes nothing new
    STOPPED = "stopped"
    TAKEN_OVER = "taken_over"  # another node runs the table: stopped, writing nothing


_MOVES: dict[Lifecycle, frozenset[Lifecycle]] = {
    Lifecycle.NEW: frozenset({Lifecycle.BUSY, Lifecycle.STOPPED, Lifecycle.TAKEN_OVER}),
    Lifecycle.IDLE: frozenset(
        {Lifecycle.BUSY, Lifecycle.STOPPING, Lifecycle.STOPPED, Lifecycle.TAKEN_OVER}
    ),
    Lifecycle.BUSY: frozenset(
        {Lifecycle.IDLE, Lifecycle.STOPPING, Lifecycle.STOPPED, Lifecycle.TAKEN_OVER}
    ),
    Lifecycle.STOPPING: frozenset({Lifecycle.STOPPED, Lifecycle.TAKEN_OVER}),
    Lifecycle.STOPPED: frozenset({Lifecycle.TAKEN_OVER}),
    Lifecycle.TAKEN_OVER: frozenset(),
}


@dataclass(slots=True)
class _Queued:
    command: TableCommand
    reply: asyncio.Future[dict[str, Any]]
    at: float  # when it entered the inbox (time.perf_counter)


class TableLoop(ABC):
    """Serves one table's commands and clocks until stopped."""

    def __init__(self, table_id: int, *, metrics: Metrics | None = None) -> None:
        self.table_id = table_id
        self.hand_number = 0  # the hand in progress, or the last dealt (0: none yet)
        self.metrics = metrics if metrics is not None else Metrics()
        self.inbox: asyncio.Queue[_Queued] = asyncio.Queue(INBOX_SIZE)
        self.state = Lifecycle.NEW
        self.stopped = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.shut = False  # an operator closed the table: it stops, and refuses for good

    # ------------------------------------------------------------------ what the table does

    @abstractmethod
    async def _carry_on(self) -> None:
        """First thing when the loop starts: what a resumed table still owes."""

    @abstractmethod
    async def _dispatch(self, command: TableCommand) -> dict[str, Any]:
        """Carry out one command; its reply, or a :class:`Refusal` that changed nothing."""

    @abstractmethod
    async def _on_clock(self) -> None:
        """Do whatever fell due (after every command, and when woken by the clock)."""

    @abstractmethod
    def _wake_at(self) -> float | None:
        """The loop's time when the next clock falls due (None: nothing is timed)."""

    @abstractmethod
    def _now(self) -> float:
        """The loop's time (the same clock as ``_wake_at``)."""

    @abstractmethod
    async def _contain(self, error: Exception) -> None:
        """A bug hit while carrying something out: void what it was doing, keep the table."""

    # ------------------------------------------------------------------ the life of the loop

    @property
    def taken_over(self) -> bool:
        return self.state is Lifecycle.TAKEN_OVER

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

    @property
    def paused(self) -> bool:
        """Waiting for something outside the table (the database) before it plays on."""
        return False

    def _asked_to_stop(self) -> bool:
        return self.state in (Lifecycle.STOPPING, Lifecycle.TAKEN_OVER)

    def _move(self, to: Lifecycle) -> None:
        if to not in _MOVES[self.state]:
            raise RuntimeError(
                f"table {self.table_id}: no move from {self.state.name} to {to.name}"
            )
        self.state = to

    def close_for_good(self) -> None:
        """From within a command or clock: the table is closed; the loop ends after it."""
        self.shut = True
        if self.state is Lifecycle.BUSY:
            self._move(Lifecycle.STOPPING)

    def _gone(self) -> ErrorCode:
        """The code of a command that finds the loop over."""
        if self.taken_over:
            return ErrorCode.TABLE_MOVED
        return ErrorCode.TABLE_SHUT if self.shut else ErrorCode.TABLE_CLOSED

    def start(self) -> asyncio.Task[None]:
        self._task = asyncio.create_task(self.run(), name=f"table-{self.table_id}")
        return self._task

    def fail_pending(self, code: ErrorCode, message: str) -> None:
        """Refuse every command still in the inbox (the actor is gone or going)."""
        while not self.inbox.empty():
            queued = self.inbox.get_nowait()
            if not queued.reply.done():
                queued.reply.set_exception(CommandRefused(message, code=code))
                self.metrics.refused(code, "table")

    async def stop(self, *, taken_over: bool = False) -> None:
        """Stop serving. A command (or clock) being carried out is finished first, within
        STOP_GRACE_SECONDS: cut short, its database write would be too. ``taken_over``:
        another node runs the table now, so nothing more is written."""
        busy = self.state is Lifecycle.BUSY
        if taken_over and not self.taken_over:
            self._move(Lifecycle.TAKEN_OVER)
        elif self.state in (Lifecycle.IDLE, Lifecycle.BUSY):
            self._move(Lifecycle.STOPPING)
        task = self._task
        if task is not None:
            if busy:
                await asyncio.wait({task}, timeout=STOP_GRACE_SECONDS)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # whoever stops the table is being cancelled too
        if self.state is Lifecycle.NEW:  # never ran
            self._move(Lifecycle.STOPPED)
            self.stopped.set()

    async def submit(self, command: TableCommand) -> dict[str, Any]:
        """Hand a command to the table and wait for its reply; raise CommandRefused."""
        if self._task is not None and self._task.done():
            # Nobody would ever answer: the caller learns at once (and retries elsewhere).
            code = self._gone()
            self.metrics.refused(code, "table")
            raise CommandRefused("the table stopped", code=code)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        try:
            self.inbox.put_nowait(_Queued(command, future, time.perf_counter()))
        except asyncio.QueueFull:
            self.metrics.refused(ErrorCode.TABLE_BUSY, "table")
            raise CommandRefused(
                "the table is busy; try again", code=ErrorCode.TABLE_BUSY
            ) from None
        return await future

    async def run(self) -> None:
        """Serve commands and clocks until stopped; a failing command is contained."""
        table_context(self)  # every line this task logs names the table and its hand
        try:
            self._move(Lifecycle.BUSY)
            await self._carry_on()
            while not self._asked_to_stop():
                self._move(Lifecycle.IDLE)
                queued = await self._next_command()
                if self._asked_to_stop():
                    break
                self._move(Lifecycle.BUSY)
                try:
                    if queued is not None:
                        await self._handle(queued)
                    await self._on_clock()
                except TableTakenOver:
                    raise
                except Exception as error:  # noqa: BLE001 - contain any bug to this hand
                    log.exception("table %s: hand cancelled after an error", self.table_id)
                    if queued is not None and not queued.reply.done():
                        queued.reply.set_exception(
                            CommandRefused("the table hit an error", code=ErrorCode.INTERNAL_ERROR)
                        )
                        self._answered(queued, ErrorCode.INTERNAL_ERROR)
                    await self._contain(error)
        except TableTakenOver as error:
            if not self.taken_over:
                self._move(Lifecycle.TAKEN_OVER)
            log.warning("table %s: %s; this node stops running it", self.table_id, error)
        finally:
            if self.state is not Lifecycle.TAKEN_OVER:
                self._move(Lifecycle.STOPPED)
            self.stopped.set()
            self.fail_pending(self._gone(), "the table stopped here")

    async def _next_command(self) -> _Queued | None:
        wake = self._wake_at()
        if wake is None:
            return await self.inbox.get()
        try:
            # A timer, not a task a wait (as wait_for would make): a table with a clock
            # running waits this way for every command.
            async with asyncio.timeout(max(0.0, wake - self._now())):
                return await self.inbox.get()
        except TimeoutError:
            return None

    def _answered(self, queued: _Queued, refused: ErrorCode | None = None) -> None:
        """Count a reply: its latency from the inbox, and its refusal if it is one."""
        self.metrics.command_answered(queued.command.name, time.perf_counter() - queued.at)
        if refused is not None:
            self.metrics.refused(refused, "table")

    async def _handle(self, queued: _Queued) -> None:
        reply = queued.reply
        try:
            result = await self._dispatch(queued.command)
        except Refusal as refusal:  # the table's, the engine's, the store's: all one kind
            self._answer(reply, error=refusal)
            self._answered(queued, refusal.code)
        except StoreUnavailable:  # a buy-in while the database is away: nothing happened
            self._answer(
                reply,
                error=CommandRefused(
                    "the cardroom's database does not answer; try again",
                    code=ErrorCode.DATABASE_UNAVAILABLE,
                ),
            )
            self._answered(queued, ErrorCode.DATABASE_UNAVAILABLE)
        except TableTakenOver:
            self._answer(
                reply,
                error=CommandRefused(
                    "the table moved to another node; try again", code=ErrorCode.TABLE_MOVED
                ),
            )
            self._answered(queued, ErrorCode.TABLE_MOVED)
            raise
        else:
            self._answer(reply, result=result)
            self._answered(queued)

    @staticmethod
    def _answer(
        reply: asyncio.Future[dict[str, Any]],
        *,
        result: dict[str, Any] | None = None,
        error: Exception | None = None,
    ) -> None:
        """Answer a command, unless its caller stopped waiting (cancelled: a connection gone,
        a node's router giving up, a node stopping): what it did is done all the same, and
        nothing else of the table is disturbed."""
        if reply.done():
            return
        if error is not None:
            reply.set_exception(error)
        else:
            assert result is not None
            reply.set_result(result)
