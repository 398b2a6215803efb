"""One ``stud-bots`` table run's state: its bots' seats, the hands its tables ended, what
the ending did (tables closed, chips handed back), the JSON report made of them, and the
progress bar on stderr."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from stud_bots.common import percentile, play_counts
from stud_bots.strategies import Bot
from stud_client import StudClient, Table, TableInfo

if TYPE_CHECKING:
    from stud_bots.runner import Options

__all__ = ["Ending", "Progress", "Run", "Seat", "make_report"]


@dataclass(slots=True)
class Seat:
    name: str
    strategy: str
    bot: Bot
    client: StudClient
    info: TableInfo
    buy_in: int
    rng: random.Random
    table: Table | None = None
    leaving: bool = False
    done: bool = False
    errors: Counter[str] = field(default_factory=Counter)  # failures that are no error frame


class Run:
    def __init__(self, options: Options) -> None:
        self.options = options
        self.ended: dict[int, set[int]] = {}
        self.enough = asyncio.Event()
        self.started = time.monotonic()

    def hand_ended(self, table_id: int, hand: int) -> None:
        self.ended.setdefault(table_id, set()).add(hand)
        if self.hands >= self.options.hands:
            self.enough.set()

    @property
    def hands(self) -> int:
        return sum(len(hands) for hands in self.ended.values())


@dataclass(slots=True)
class Ending:
    """What the run did once play stopped: the tables it closed, the chips it handed back."""

    closed: list[int] = field(default_factory=list)
    returned: int = 0
    timed_out: bool = False
    errors: Counter[str] = field(default_factory=Counter)  # refusals met winding up


def make_report(run: Run, seats: list[Seat], ending: Ending) -> dict[str, Any]:
    errors: Counter[str] = Counter(ending.errors)
    latencies: list[float] = []
    for seat in seats:
        errors.update(seat.client.stats.errors)
        errors.update(seat.errors)
        latencies.extend(seat.client.stats.latencies)
    return {
        "hands": run.hands,
        "hands_by_table": {str(t): len(h) for t, h in sorted(run.ended.items())},
        "actions": sum(s.client.stats.actions for s in seats),
        "errors": dict(sorted(errors.items())),
        "reconnects": sum(s.client.stats.reconnects for s in seats),
        "resyncs": sum(s.client.stats.resyncs for s in seats),
        "retries": sum(s.client.stats.retries for s in seats),
        "latency_ms": {
            "p50": percentile(latencies, 0.50),
            "p95": percentile(latencies, 0.95),
            "p99": percentile(latencies, 0.99),
            "count": len(latencies),
        },
        "seconds": round(time.monotonic() - run.started, 2),
        "tables": sorted({s.info.id for s in seats}),
        "bots": len(seats),
        "strategies": dict(Counter(s.strategy for s in seats)),
        "timed_out": ending.timed_out,
        "closed_tables": ending.closed,
        "chips_returned": ending.returned,
    }


class Progress:
    """A one-line bar on stderr (a line per tenth when stderr is not a terminal)."""

    def __init__(self, run: Run, seats: list[Seat], out: TextIO) -> None:
        self.run, self.seats, self.out = run, seats, out
        self.tty = out.isatty()
        self.shown_tenth = -1

    def line(self) -> str:
        run, total = self.run, self.run.options.hands
        done = min(run.hands, total)
        filled = done * 30 // total
        return (
            f"[{'#' * filled}{'.' * (30 - filled)}] {run.hands}/{total} hands  "
            f"{play_counts(self.seats)}  {time.monotonic() - run.started:.1f}s"
        )

    def show(self, final: bool = False) -> None:
        if self.tty:
            self.out.write("\r" + self.line() + ("\n" if final else ""))
            self.out.flush()
            return
        tenth = min(self.run.hands, self.run.options.hands) * 10 // self.run.options.hands
        if tenth != self.shown_tenth or final:
            self.shown_tenth = tenth
            self.out.write(self.line() + "\n")
            self.out.flush()

    async def keep_showing(self) -> None:
        while True:
            self.show()
            await asyncio.sleep(0.25)
