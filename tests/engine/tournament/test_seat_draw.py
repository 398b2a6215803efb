"""A tournament's seat draw (engine.tournament.draw): the method as its docstring writes it,
the wide draw added to the deck's stream, even tables, uniform seats, and its verification."""

from __future__ import annotations

import doctest
import hashlib
import hmac
import math
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine.tournament.draw
from engine.fair import DeckStream, commitment
from engine.protocol import ErrorCode
from engine.tournament.draw import (
    Draw,
    Seating,
    SeatingError,
    TableQuota,
    draw_seats,
    run_draw,
    start_quotas,
    verify,
)

SEED = hashlib.sha256(b"tournament seed").digest()
# Chi-square critical values at significance 0.001; the seeds are fixed, so a test that
# passes once passes always.
CHI2_0_001 = {2: 13.816, 5: 20.515, 23: 49.728}


def _seed(i: int) -> bytes:
    return hashlib.sha256(f"seat-draw seed {i}".encode()).digest()


def _doc_bytes(seed: bytes, context: bytes) -> Iterator[int]:
    counter = 0
    while True:
        yield from hmac.new(seed, context + counter.to_bytes(8, "big"), hashlib.sha256).digest()
        counter += 1


def _doc_wide(source: Iterator[int], n: int) -> int:
    while True:
        u = int.from_bytes(bytes(next(source) for _ in range(4)), "big")
        if u < 2**32 - 2**32 % n:
            return u % n


def _doc_draw(
    seed: bytes,
    tournament: int,
    round_: int,
    players: list[str],
    tables: list[tuple[int, int, list[int]]],
) -> dict[str, tuple[int, int]]:
    """The draw as the module's docstring tells a player to compute it, from the text alone."""
    context = f"stud-seat-draw/1\ntournament={tournament}\nround={round_}\n"
    context += "".join(f"player={player}\n" for player in sorted(players))
    context += "".join(
        f"table={table} count={count} seats={','.join(map(str, seats))}\n"
        for table, count, seats in tables
    )
    source = _doc_bytes(seed, context.encode())

    def shuffle(items: list[int]) -> None:
        for i in range(len(items) - 1):
            j = i + _doc_wide(source, len(items) - i)
            items[i], items[j] = items[j], items[i]

    cards = [table for table, count, _ in tables for _ in range(count)]
    shuffle(cards)
    at_table: dict[int, list[str]] = {}
    for player, table in zip(sorted(players), cards, strict=False):  # places left over
        at_table.setdefault(table, []).append(player)
    places = {}
    for table, _, seats in tables:
        shuffled = list(seats)
        shuffle(shuffled)
        for player, seat in zip(at_table.get(table, []), shuffled, strict=False):
            places[player] = (table, seat)
    return places


def _places(seating: Seating) -> dict[str, tuple[int, int]]:
    return {player: (table, seat) for player, table, seat in seating.placements}


@pytest.mark.parametrize("n", [2**31 + 1, 3, 1000, 2**32 - 1, 1, 2**32])
def test_the_wide_draw_is_the_documented_one(n: int) -> None:
    context = b"stud-seat-draw/1\ntournament=1\nround=1\n"
    stream, source = DeckStream(SEED, context), _doc_bytes(SEED, context)
    for _ in range(200):
        assert stream.below_wide(n) == _doc_wide(source, n)


def test_the_wide_draw_carries_on_the_byte_draws_stream() -> None:
    context = b"mixed"
    stream, source = DeckStream(SEED, context), _doc_bytes(SEED, context)
    for _ in range(40):  # a byte draw then a wide one, across block boundaries
        assert stream.below(256) == next(source)
        assert stream.below_wide(2**32) == _doc_wide(source, 2**32)


def test_the_wide_draw_refuses_what_it_cannot_draw() -> None:
    stream = DeckStream(SEED, b"x")
    for n in (0, -1, 2**32 + 1):
        with pytest.raises(ValueError):
            stream.below_wide(n)


def test_the_wide_draw_is_uniform() -> None:
    stream = DeckStream(SEED, b"uniformity")
    counts = Counter(stream.below_wide(3) for _ in range(30_000))
    chi2 = sum((counts[value] - 10_000) ** 2 / 10_000 for value in range(3))
    assert chi2 < CHI2_0_001[2]


@pytest.mark.parametrize(
    ("players", "seats"), [(2, 2), (9, 9), (10, 9), (23, 8), (300, 10), (1234, 9)]
)
def test_the_draw_is_the_one_the_documentation_describes(players: int, seats: int) -> None:
    field = [f"player-{i:04d}" for i in range(players)]
    seating = draw_seats(SEED, 42, reversed(field), seats)
    tables = [(q.table, q.count, list(q.seats)) for q in seating.draw.quotas]
    assert _places(seating) == _doc_draw(SEED, 42, 1, field, tables)
    assert seating.commitment == commitment(SEED)


def test_a_redraw_into_free_seats_is_the_documented_one() -> None:
    draw = Draw(9, 4, ("ann", "bo", "cy"), (TableQuota(2, 1, (3, 7)), TableQuota(5, 2, (0, 1, 6))))
    seating = run_draw(SEED, draw)
    assert _places(seating) == _doc_draw(
        SEED, 9, 4, ["ann", "bo", "cy"], [(2, 1, [3, 7]), (5, 2, [0, 1, 6])]
    )
    assert seating.draw.context() == (
        b"stud-seat-draw/1\ntournament=9\nround=4\nplayer=ann\nplayer=bo\nplayer=cy\n"
        b"table=2 count=1 seats=3,7\ntable=5 count=2 seats=0,1,6\n"
    )


@given(
    players=st.integers(1, 400),
    seats=st.integers(2, 10),
    seed=st.binary(min_size=32, max_size=32),
)
@settings(max_examples=60, deadline=None)
def test_the_field_sits_at_the_fewest_tables_within_one_player(
    players: int, seats: int, seed: bytes
) -> None:
    field = [f"p{i}" for i in range(players)]
    seating = draw_seats(seed, 1, field, seats)
    tables = seating.tables()
    assert sorted(tables) == list(range(1, math.ceil(players / seats) + 1))
    counts = [len(at_table) for at_table in tables.values()]
    assert max(counts) - min(counts) <= 1 and max(counts) <= seats
    seated = [player for at_table in tables.values() for player in at_table.values()]
    assert sorted(seated) == sorted(field)
    assert all(0 <= seat < seats for at_table in tables.values() for seat in at_table)
    assert draw_seats(seed, 1, reversed(field), seats) == seating
    assert verify(seed, seating)


def test_every_input_changes_the_draw() -> None:
    field = [f"p{i}" for i in range(30)]
    base = _places(draw_seats(SEED, 1, field, 9))
    others = [
        draw_seats(_seed(1), 1, field, 9),
        draw_seats(SEED, 2, field, 9),
        draw_seats(SEED, 1, [*field[:-1], "q"], 9),
        run_draw(SEED, Draw(1, 2, tuple(sorted(field)), start_quotas(30, 9))),
    ]
    for other in others:
        assert _places(other) != base


def test_a_small_fields_draws_are_uniform_over_every_seating() -> None:
    """Four players at two tables of two seats: 6 ways to fill table 1, 2 x 2 seat orders, 24
    seatings, each as likely as any other."""
    runs = 12_000
    counts = Counter(
        tuple(sorted(_places(draw_seats(_seed(i), 5, "abcd", 2)).items())) for i in range(runs)
    )
    assert len(counts) == 24
    expected = runs / 24
    chi2 = sum((count - expected) ** 2 / expected for count in counts.values())
    assert chi2 < CHI2_0_001[23]


def test_a_players_table_and_seat_are_uniform() -> None:
    """Five players, three seats: tables of 3 and 2; a player sits at each of table 1's seats
    with chance 1/5 and at each of table 2's with 2/15."""
    runs = 9_000
    counts = Counter(_places(draw_seats(_seed(i), 6, "abcde", 3))["c"] for i in range(runs))
    expected = {(1, seat): runs / 5 for seat in range(3)} | {
        (2, seat): runs * 2 / 15 for seat in range(3)
    }
    assert set(counts) == set(expected)
    chi2 = sum((counts[cell] - mean) ** 2 / mean for cell, mean in expected.items())
    assert chi2 < CHI2_0_001[5]


def test_a_late_entrant_is_drawn_to_one_of_the_tables_offering_a_place() -> None:
    """Tables 2, 4 and 7 tie for the fewest players, each offering one place: the entrant
    sits at each with chance 1/3, at any of its free seats alike; the draw is the documented
    one (the cards left over unused)."""
    quotas = (TableQuota(2, 1, (0, 5)), TableQuota(4, 1, (3,)), TableQuota(7, 1, (1, 2, 6)))
    draw = Draw(9, 5, ("late",), quotas)
    tables = [(q.table, q.count, list(q.seats)) for q in quotas]
    assert _places(run_draw(SEED, draw)) == _doc_draw(SEED, 9, 5, ["late"], tables)
    runs = 9_000
    counts = Counter(_places(run_draw(_seed(i), draw))["late"] for i in range(runs))
    expected = {(2, 0): runs / 6, (2, 5): runs / 6, (4, 3): runs / 3} | {
        (7, seat): runs / 9 for seat in (1, 2, 6)
    }
    assert set(counts) == set(expected)
    chi2 = sum((counts[cell] - mean) ** 2 / mean for cell, mean in expected.items())
    assert chi2 < CHI2_0_001[5]


def test_verify_recomputes_the_draw_and_refuses_anything_else() -> None:
    seating = draw_seats(SEED, 3, [f"p{i}" for i in range(12)], 6)
    assert verify(SEED, seating)
    assert not verify(_seed(2), seating)  # another seed: not the one committed
    first, second, *rest = seating.placements
    swapped = (first._replace(seat=second.seat), second._replace(seat=first.seat), *rest)
    assert not verify(SEED, Seating(seating.draw, seating.commitment, swapped))
    forged = run_draw(_seed(3), seating.draw)  # a seed other than the committed one
    assert not verify(_seed(3), Seating(seating.draw, seating.commitment, forged.placements))
    assert not verify(SEED[:31], seating)


def test_a_draw_travels_as_its_record() -> None:
    seating = draw_seats(SEED, 3, ["x", "y", "z"], 2)
    record = seating.record()
    assert "seed" not in record and record["commitment"] == commitment(SEED)
    again = Seating.from_record(record)
    assert again == seating and verify(SEED, again)
    with pytest.raises(SeatingError) as refused:
        Seating.from_record({**record, "tables": [{"table": 1, "count": 3}]})
    assert refused.value.field == "record"
    with pytest.raises(SeatingError):
        Seating.from_record({**record, "method": "stud-seat-draw/0"})


@pytest.mark.parametrize(
    ("call", "field", "code"),
    [
        (lambda: draw_seats(SEED, 1, ["a", "a"], 9), "players", ErrorCode.ALREADY_SEATED),
        (lambda: draw_seats(SEED, 1, ["a b"], 9), "players", ErrorCode.INVALID_ACTION),
        (lambda: draw_seats(SEED, 1, [""], 9), "players", ErrorCode.INVALID_ACTION),
        (lambda: draw_seats(SEED, 1, [7], 9), "players", ErrorCode.INVALID_ACTION),
        (lambda: draw_seats(SEED, 1, [], 9), "players", ErrorCode.NOT_ENOUGH_PLAYERS),
        (lambda: draw_seats(SEED, 1, ["a"], 1), "seats_per_table", ErrorCode.BAD_SEAT_COUNT),
        (lambda: draw_seats(SEED, 1, ["a"], 257), "seats_per_table", ErrorCode.BAD_SEAT_COUNT),
        (lambda: draw_seats(SEED[:16], 1, ["a"], 9), "seed", ErrorCode.BAD_DECK),
        (lambda: draw_seats(SEED, -1, ["a"], 9), "tournament_id", ErrorCode.INVALID_ACTION),
        (lambda: Draw(1, 0, ("a",), (TableQuota(1, 1, (0,)),)), "round", ErrorCode.INVALID_ACTION),
        (lambda: Draw(1, 1, ("b", "a"), (TableQuota(1, 2, (0, 1)),)), "players", None),
        (lambda: Draw(1, 1, ("a", "b"), (TableQuota(1, 1, (0, 1)),)), "quotas", None),
        (lambda: Draw(1, 1, ("a", "b"), (TableQuota(1, 2, (0,)),)), "quotas", ErrorCode.TABLE_FULL),
        (lambda: Draw(1, 1, ("a",), (TableQuota(1, 1, (1, 0)),)), "quotas", ErrorCode.BAD_SEAT),
        (lambda: Draw(1, 1, ("a",), (TableQuota(0, 1, (0,)),)), "quotas", None),
    ],
)
def test_bad_input_is_refused_with_the_field_at_fault(
    call: object, field: str, code: ErrorCode | None
) -> None:
    with pytest.raises(SeatingError) as refused:
        call()  # type: ignore[operator]
    assert refused.value.field == field
    assert refused.value.code == (code or ErrorCode.INVALID_ACTION)


def test_the_modules_example_runs() -> None:
    assert doctest.testmod(engine.tournament.draw).failed == 0
