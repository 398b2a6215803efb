"""The level clock, folded from the director's journaled facts: levels follow the time of
play (wall time minus pauses) or the hands begun, breaks sit between them, the last level
goes on, and the same facts always give the same schedule."""

from __future__ import annotations

import doctest
import itertools
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.tournament import clock as clock_module
from engine.tournament.clock import (
    ClockError,
    Fact,
    HandBegun,
    LevelClock,
    Paused,
    Resumed,
    Started,
    TimeAdded,
)
from engine.tournament.structure import Break, Level, Structure

T0 = 1_700_000_000.0
TIMED = Structure(
    1500,
    (
        Level(5, 10, 30, 60, minutes=10),
        Level(10, 15, 50, 100, minutes=10),
        Break(minutes=5),
        Level(15, 25, 75, 150, minutes=10),
    ),
)
BY_HANDS = Structure(
    1500,
    (
        Level(5, 10, 30, 60, hands=3),
        Level(10, 15, 50, 100, hands=2),
        Level(15, 25, 75, 150, hands=2),
    ),
)


def test_the_module_examples_run() -> None:
    assert doctest.testmod(clock_module).failed == 0


def test_timed_levels_follow_the_wall_clock_with_a_break_between() -> None:
    clock = LevelClock.start(TIMED, at=T0)
    first = clock.read(T0 + 30)
    assert (first.entry_index, first.level_number, first.levels_ended) == (0, 1, 0)
    assert first.level == TIMED.entries[0] and first.next_level == TIMED.entries[1]
    assert (first.seconds_left, first.ends_at, first.hands_left) == (570, T0 + 600, None)
    second = clock.read(T0 + 600)  # a level ends on the second it is due
    assert (second.level_number, second.seconds_left, second.ends_at) == (2, 600, T0 + 1200)
    pause = clock.read(T0 + 1300)
    assert pause.on_break and pause.level is None
    assert (pause.level_number, pause.levels_ended, pause.seconds_left) == (2, 2, 200)
    assert pause.next_level == TIMED.entries[3]


def test_the_last_level_goes_on() -> None:
    reading = LevelClock.start(TIMED, at=T0).read(T0 + 86_400)
    assert reading.entry_index == 3 and reading.level_number == 3
    assert reading.next_level is None
    assert (reading.seconds_left, reading.ends_at, reading.hands_left) == (None, None, None)


def test_a_pause_stops_the_clock_and_its_end_moves_the_schedule() -> None:
    clock = LevelClock.start(TIMED, at=T0).pause(T0 + 100)
    for now in (T0 + 100, T0 + 700, T0 + 5000):  # while paused, nothing moves
        reading = clock.read(now)
        assert reading.paused and reading.entry_index == 0
        assert (reading.seconds_left, reading.ends_at) == (500, None)
    clock = clock.resume(T0 + 400)
    reading = clock.read(T0 + 450)
    assert not reading.paused
    assert (reading.seconds_left, reading.ends_at) == (450, T0 + 900)
    assert clock.read(T0 + 899).entry_index == 0
    assert clock.read(T0 + 900).entry_index == 1


def test_a_pause_during_a_break_holds_the_break() -> None:
    clock = LevelClock.start(TIMED, at=T0).pause(T0 + 1300).resume(T0 + 1900)
    reading = clock.read(T0 + 1900)
    assert reading.on_break and reading.seconds_left == 200
    assert clock.read(T0 + 2100).level_number == 3


def test_added_time_lengthens_the_entry_in_play() -> None:
    clock = LevelClock.start(TIMED, at=T0).add_time(T0 + 500, 120)
    assert clock.read(T0 + 650).entry_index == 0
    assert clock.read(T0 + 650).ends_at == T0 + 720
    assert clock.read(T0 + 720).entry_index == 1
    with pytest.raises(ClockError):
        clock.add_time(T0 + 10_000, 60)  # the last level has no end to move
    with pytest.raises(ClockError):
        clock.add_time(T0 + 700, 0)


def test_a_level_of_hands_on_one_table_lasts_exactly_its_hands() -> None:
    clock = LevelClock.start(BY_HANDS, at=T0)
    levels = []
    for hand in range(8):
        # The table reads the clock as it starts a hand and deals the hand at that level.
        reading = clock.read(T0 + 60 * hand)
        levels.append(reading.level_number)
        clock = clock.begin_hand(T0 + 60 * hand, tables=1)
    assert levels == [1, 1, 1, 2, 2, 3, 3, 3]
    first = LevelClock.start(BY_HANDS, at=T0).begin_hand(T0, 1).read(T0 + 5)
    assert (first.hands_left, first.seconds_left, first.ends_at) == (2, None, None)


def test_a_level_of_hands_counts_the_hands_of_every_table_it_started_with() -> None:
    clock = LevelClock.start(BY_HANDS, at=T0, tables=3)
    readings = []
    for hand in range(9):  # three tables, three hands each: 9 hands
        clock = clock.begin_hand(T0 + hand, tables=3)
        readings.append(clock.read(T0 + hand).level_number)
    assert readings == [1] * 8 + [2]
    # Level 2 started on 3 tables: one breaks meanwhile, and it still takes 2 x 3 hands.
    for hand in range(5):
        clock = clock.begin_hand(T0 + 20 + hand, tables=2)
        assert clock.read(T0 + 20 + hand).level_number == 2
    clock = clock.begin_hand(T0 + 30, tables=2)
    reading = clock.read(T0 + 30)
    assert reading.level_number == 3 and reading.hands_left is None  # the last level


def test_a_level_of_hands_after_a_timed_one_counts_from_its_own_start() -> None:
    structure = Structure(
        1500,
        (
            Level(5, 10, 30, 60, minutes=1),
            Level(10, 15, 50, 100, hands=2),
            Level(15, 25, 75, 150, hands=1),
        ),
    )
    clock = LevelClock.start(structure, at=T0)
    for second in (10, 20, 30):  # hands of the timed level do not count toward the next
        clock = clock.begin_hand(T0 + second, tables=1)
    assert clock.read(T0 + 60).hands_left == 2
    clock = clock.begin_hand(T0 + 61, tables=1)
    assert clock.read(T0 + 62).level_number == 2
    clock = clock.begin_hand(T0 + 70, tables=1)
    assert clock.read(T0 + 71).level_number == 3


def test_the_journal_replayed_gives_the_same_clock() -> None:
    facts: list[Fact] = [
        HandBegun(T0 + 5, 2),
        Paused(T0 + 100),
        Resumed(T0 + 160),
        TimeAdded(T0 + 200, 30),
        HandBegun(T0 + 250, 2),
    ]
    built = LevelClock.start(TIMED, T0, tables=2)
    built = built.begin_hand(T0 + 5, 2).pause(T0 + 100).resume(T0 + 160)
    built = built.add_time(T0 + 200, 30).begin_hand(T0 + 250, 2)
    replayed = LevelClock.replay(TIMED, Started(T0, 2), facts)
    assert replayed == built
    assert replayed.read(T0 + 689).entry_index == 0
    assert replayed.read(T0 + 690).entry_index == 1  # 600 s + 60 paused + 30 added


def test_facts_and_readings_dated_before_the_latest_never_run_the_schedule_back() -> None:
    assert LevelClock.start(TIMED, at=T0).read(T0 - 50).seconds_left == 600
    paused = LevelClock.start(TIMED, at=T0).pause(T0 + 700)
    assert paused.read(T0 + 10).entry_index == 1  # read at the pause: level 2 had begun
    resumed = paused.resume(T0 + 650)  # another node's clock, a little behind: no pause time
    assert resumed.read(T0 + 1200).entry_index == 2


@pytest.mark.parametrize(
    ("act", "field"),
    [
        (lambda c: c.pause(T0 + 1).pause(T0 + 2), "pause"),
        (lambda c: c.resume(T0 + 1), "resume"),
        (lambda c: c.begin_hand(T0 + 1, 0), "tables"),
        (lambda c: c.begin_hand(T0 + 1, True), "tables"),
    ],
)
def test_a_fact_the_clock_cannot_take_is_refused(
    act: Callable[[LevelClock], object], field: str
) -> None:
    clock = LevelClock.start(TIMED, at=T0)
    with pytest.raises(ClockError) as caught:
        act(clock)
    assert caught.value.field == field
    with pytest.raises(ClockError):
        LevelClock.start(TIMED, at=T0, tables=0)


# Pauses as (seconds of play before it, its length), drawn for the property below: whole
# seconds, and quarters, so that the oracle's sums are exact.
seconds = st.integers(0, 12_000).map(lambda quarters: quarters / 4)
pauses = st.lists(st.tuples(seconds, seconds), max_size=6)


@given(pauses, seconds)
def test_a_timed_schedule_is_the_time_of_play_laid_along_the_entries(
    drawn: list[tuple[float, float]], played: float
) -> None:
    """Oracle: with the pauses taken out, the entry in play is the one whose span of play
    holds the seconds played, whatever the pauses."""
    clock = LevelClock.start(TIMED, at=T0)
    wall = T0
    for before, length in drawn:
        wall += before
        clock = clock.pause(wall)
        wall += length
        clock = clock.resume(wall)
    played_so_far = wall - T0 - sum(length for _, length in drawn)
    now = wall + played
    reading = clock.read(now)
    total = played_so_far + played
    ends = list(itertools.accumulate(entry.seconds or 0 for entry in TIMED.entries))
    expected = next((i for i, end in enumerate(ends[:-1]) if total < end), len(ends) - 1)
    assert reading.entry_index == expected
    if reading.seconds_left is not None:
        assert reading.seconds_left == pytest.approx(ends[expected] - total)
        assert reading.ends_at == pytest.approx(now + ends[expected] - total)


@given(st.lists(st.tuples(st.floats(0, 400), st.integers(1, 4)), max_size=40))
def test_the_entry_never_goes_back_as_time_and_hands_go_on(
    steps: list[tuple[float, int]],
) -> None:
    structure = Structure(
        1500,
        (
            Level(5, 10, 30, 60, hands=4),
            Break(minutes=5),
            Level(10, 15, 50, 100, minutes=10),
            Level(15, 25, 75, 150, hands=3),
            Level(20, 30, 100, 200, minutes=10),
        ),
    )
    clock = LevelClock.start(structure, at=T0, tables=2)
    now, last = T0, 0
    for wait, tables in steps:
        now += wait
        clock = clock.begin_hand(now, tables)
        index = clock.read(now).entry_index
        assert index >= last
        last = index
