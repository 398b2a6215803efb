"""The level clock: which level (or break) it is, a pure fold of the director's journal.

The director journals facts, never timers: the tournament started at T on so many tables,
paused at T, resumed at T, had time added, a table began a hand at T. :class:`LevelClock`
folds those facts and answers, for any ``now``, the current entry, the time left in it, the
next level and when the entry ends if nothing pauses it. A director that takes over
after a crash replays the same facts and reads the same schedule.

Times are seconds (floats, any epoch). Time-based entries run on the clock of play: wall time
minus the pauses. A level of ``hands`` ends once the hands begun across the tournament
since the level started reach ``hands`` times the tables running when it started: on one
table exactly ``hands`` hands, on three tables about ``hands`` hands each; the hand that
reaches the count is the level's last, and the next entry starts as it begins. After the
last level, the last level goes on.

A new level takes effect at the next hand of each table: a table reads the clock as it
starts a hand and deals that hand at the level read; a hand in progress keeps its stakes.
During a break no hand starts.

A fact dated before the latest one counts as happening at the latest one, and so does a
reading: two nodes' clocks may disagree by a little, and the schedule never runs backwards.

>>> from engine.tournament.structure import Break, Level, Structure
>>> structure = Structure(1500, (
...     Level(5, 10, 30, 60, minutes=10), Break(minutes=5), Level(10, 15, 50, 100, minutes=10)))
>>> clock = LevelClock.start(structure, at=1000.0).pause(1100.0).resume(1400.0)
>>> reading = clock.read(1900.0)  # 600 s of play: the break has just begun
>>> reading.on_break, reading.seconds_left, reading.ends_at, reading.next_level.small_bet
(True, 300.0, 2200.0, 50)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from engine.tournament.fields import FieldError
from engine.tournament.structure import Break, Entry, Level, Structure


class ClockError(FieldError):
    """A fact the clock cannot take (a pause while paused, a resume while running)."""


@dataclass(frozen=True, slots=True)
class Started:
    at: float
    tables: int = 1


@dataclass(frozen=True, slots=True)
class Paused:
    at: float


@dataclass(frozen=True, slots=True)
class Resumed:
    at: float


@dataclass(frozen=True, slots=True)
class TimeAdded:
    """An operator's extra time for the entry in play (a time-based one)."""

    at: float
    seconds: float


@dataclass(frozen=True, slots=True)
class HandBegun:
    """A table began a hand; ``tables`` is how many tables are running then."""

    at: float
    tables: int


Fact = Paused | Resumed | TimeAdded | HandBegun


@dataclass(frozen=True, slots=True)
class ClockReading:
    """What the clock says at one instant."""

    entry_index: int
    entry: Entry
    # The level in play; during a break the level just played (levels count from 1).
    level_number: int
    levels_ended: int
    next_level: Level | None
    paused: bool
    # A time-based entry: seconds of play left. None for a level of hands or the last level.
    seconds_left: float | None
    # A level of hands: hands left to begin across the tournament. None otherwise.
    hands_left: int | None
    # When the entry ends if nothing pauses it (a time); None while paused, for the last
    # level and for a level of hands.
    ends_at: float | None

    @property
    def on_break(self) -> bool:
        return isinstance(self.entry, Break)

    @property
    def level(self) -> Level | None:
        """The level a hand starting now is dealt at; None during a break."""
        return self.entry if isinstance(self.entry, Level) else None


@dataclass(frozen=True, slots=True)
class LevelClock:
    """The clock's state after the facts so far; each fact gives a new clock."""

    structure: Structure
    started_at: float
    latest: float  # the latest fact's time
    paused_since: float | None
    paused_seconds: float  # pauses ended so far
    entry_index: int
    entry_started: float  # seconds of play when the entry in play began
    hands_begun: int
    hands_at_entry: int  # hands begun when the entry in play began
    tables_at_entry: int
    tables: int

    @classmethod
    def start(cls, structure: Structure, at: float, tables: int = 1) -> LevelClock:
        _check_tables(tables)
        return cls(structure, at, at, None, 0.0, 0, 0.0, 0, 0, tables, tables)

    @classmethod
    def replay(cls, structure: Structure, started: Started, facts: Iterable[Fact]) -> LevelClock:
        """The clock after a journal's facts, in the order they were journaled."""
        clock = cls.start(structure, started.at, started.tables)
        for fact in facts:
            clock = clock.apply(fact)
        return clock

    def apply(self, fact: Fact) -> LevelClock:
        if isinstance(fact, Paused):
            return self.pause(fact.at)
        if isinstance(fact, Resumed):
            return self.resume(fact.at)
        if isinstance(fact, TimeAdded):
            return self.add_time(fact.at, fact.seconds)
        return self.begin_hand(fact.at, fact.tables)

    @property
    def paused(self) -> bool:
        return self.paused_since is not None

    def pause(self, at: float) -> LevelClock:
        if self.paused:
            raise ClockError("pause", "the clock is already paused")
        at = max(at, self.latest)
        return replace(self.settled(at), paused_since=at)

    def resume(self, at: float) -> LevelClock:
        if self.paused_since is None:
            raise ClockError("resume", "the clock is not paused")
        at = max(at, self.latest)
        pause = at - self.paused_since
        return replace(
            self, latest=at, paused_since=None, paused_seconds=self.paused_seconds + pause
        )

    def add_time(self, at: float, seconds: float) -> LevelClock:
        """The entry in play lasts ``seconds`` longer (a time-based entry, not the last)."""
        if not seconds > 0:
            raise ClockError("seconds", "must be above 0")
        clock = self.settled(at)
        if clock.entry_seconds is None:
            raise ClockError("seconds", "the entry in play has no timed end to move")
        return replace(clock, entry_started=clock.entry_started + seconds)

    def begin_hand(self, at: float, tables: int) -> LevelClock:
        _check_tables(tables)
        clock = self.settled(at)
        clock = replace(clock, tables=tables, hands_begun=clock.hands_begun + 1)
        entry = clock.entry
        if (
            isinstance(entry, Level)
            and entry.hands is not None
            and not clock.is_last
            and clock.hands_begun - clock.hands_at_entry >= entry.hands * clock.tables_at_entry
        ):
            clock = clock.entering(clock.entry_index + 1, clock.played(clock.latest))
        return clock

    def read(self, now: float) -> ClockReading:
        clock = self.settled(now)
        now = clock.latest
        index, entry = clock.entry_index, clock.entry
        seconds_left = hands_left = ends_at = None
        if not clock.is_last:
            if isinstance(entry, Level) and entry.hands is not None:
                done = clock.hands_begun - clock.hands_at_entry
                hands_left = entry.hands * clock.tables_at_entry - done
            elif clock.entry_seconds is not None:
                seconds_left = clock.entry_started + clock.entry_seconds - clock.played(now)
                ends_at = None if clock.paused else now + seconds_left
        number = self.structure.level_number(index)
        return ClockReading(
            entry_index=index,
            entry=entry,
            level_number=number,
            levels_ended=number if isinstance(entry, Break) else number - 1,
            next_level=self.structure.next_level(index),
            paused=clock.paused,
            seconds_left=seconds_left,
            hands_left=hands_left,
            ends_at=ends_at,
        )

    @property
    def entry(self) -> Entry:
        return self.structure.entries[self.entry_index]

    @property
    def is_last(self) -> bool:
        return self.entry_index == len(self.structure.entries) - 1

    @property
    def entry_seconds(self) -> float | None:
        """The entry in play's length in seconds of play, when timed and not the last."""
        return None if self.is_last else self.entry.seconds

    def played(self, at: float) -> float:
        """Seconds of play from the start to ``at``: wall time minus the pauses."""
        paused = self.paused_seconds
        if self.paused_since is not None:
            paused += at - self.paused_since
        return at - self.started_at - paused

    def settled(self, at: float) -> LevelClock:
        """The clock at ``at``, every timed entry that ended by then over."""
        at = max(at, self.latest)
        clock = replace(self, latest=at)
        played = clock.played(at)
        while (seconds := clock.entry_seconds) is not None:
            ends = clock.entry_started + seconds
            if played < ends:
                break
            clock = clock.entering(clock.entry_index + 1, ends)
        return clock

    def entering(self, index: int, at_played: float) -> LevelClock:
        return replace(
            self,
            entry_index=index,
            entry_started=at_played,
            hands_at_entry=self.hands_begun,
            tables_at_entry=self.tables,
        )


def _check_tables(tables: int) -> None:
    if not isinstance(tables, int) or isinstance(tables, bool) or tables < 1:
        raise ClockError("tables", "must be a whole number of tables, at least 1")
