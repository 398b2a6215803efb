"""The published payout tables and the prizes they make: for every field size, the prizes sum
to the pool exactly, never increase down the places, and pay the places the table says."""

from __future__ import annotations

import doctest
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.tournament import payout_tables
from engine.tournament import payouts as payouts_module
from engine.tournament.payout_tables import (
    PAYOUT_TABLES,
    SCHEDULED,
    SIT_AND_GO,
    PayoutError,
    PayoutRow,
    PayoutTable,
)
from engine.tournament.payouts import payouts


def test_the_module_examples_run() -> None:
    assert doctest.testmod(payouts_module).failed == 0
    assert doctest.testmod(payout_tables).failed == 0


def test_a_sit_and_go_pays_one_place_heads_up_two_up_to_six_three_up_to_ten() -> None:
    assert payouts(200, 2, "sit_and_go") == (200,)
    assert [SIT_AND_GO.places_paid(n) for n in range(2, 11)] == [1, 2, 2, 2, 2, 3, 3, 3, 3]
    assert payouts(600, 6, "sit_and_go") == (390, 210)
    assert payouts(900, 9, "sit_and_go") == (450, 270, 180)
    assert payouts(1000, 9, SIT_AND_GO) == (500, 300, 200)


def test_the_rounding_chips_go_to_the_first_places() -> None:
    # 50/30/20 of 1003: 501.5, 300.9, 200.6 -> 501, 300, 200, and 2 chips left: 1st and 2nd
    assert payouts(1003, 9, "sit_and_go") == (502, 301, 200)
    assert payouts(1, 9, "sit_and_go") == (1, 0, 0)
    assert payouts(0, 100, "scheduled") == (0,) * 15


def test_a_scheduled_tournament_pays_about_fifteen_percent_of_its_field() -> None:
    for entrants in range(27, SCHEDULED.max_entrants + 1):
        paid = SCHEDULED.places_paid(entrants)
        assert 0.10 <= paid / entrants <= 0.15, entrants
    assert [SCHEDULED.places_paid(n) for n in (2, 6, 11, 60, 100, 1000)] == [1, 2, 3, 9, 15, 144]


@pytest.mark.parametrize("table", list(PAYOUT_TABLES.values()), ids=list(PAYOUT_TABLES))
def test_every_place_paid_gets_back_more_than_its_buy_in(table: PayoutTable) -> None:
    for entrants in range(2, table.max_entrants + 1):
        prizes = payouts(100 * entrants, entrants, table)
        assert prizes[-1] > 100, entrants


@pytest.mark.parametrize("table", list(PAYOUT_TABLES.values()), ids=list(PAYOUT_TABLES))
def test_for_every_field_size_the_prizes_sum_to_the_pool_and_never_increase(
    table: PayoutTable,
) -> None:
    for entrants in range(2, min(table.max_entrants, 2000) + 1):
        pool = 109 * entrants + 7  # an odd pool: every row's rounding is exercised
        prizes = payouts(pool, entrants, table)
        assert sum(prizes) == pool
        assert len(prizes) == table.places_paid(entrants) <= entrants
        assert all(a >= b for a, b in zip(prizes, prizes[1:], strict=False))
        assert min(prizes) > 0


@given(
    st.sampled_from(list(PAYOUT_TABLES.values())),
    st.integers(2, 2000),
    st.integers(0, 10**12),
)
def test_any_pool_is_paid_exactly(table: PayoutTable, entrants: int, pool: int) -> None:
    entrants = min(entrants, table.max_entrants)
    prizes = payouts(pool, entrants, table)
    assert sum(prizes) == pool
    assert len(prizes) == table.places_paid(entrants)
    assert all(a >= b for a, b in zip(prizes, prizes[1:], strict=False))
    assert max(prizes) - min(prizes) <= pool  # no place is paid below zero
    assert min(prizes) >= 0


def test_the_tables_are_published_as_data() -> None:
    published = json.loads(json.dumps(SIT_AND_GO.to_dict()))
    assert published["name"] == "sit_and_go"
    assert published["rows"][2] == {
        "entrants": [7, 10],
        "bands": [[1, 5000], [2, 3000], [3, 2000]],
    }
    row = SCHEDULED.row_for(100)
    assert row.bands[-1] == (15, row.shares()[-1]) and len(row.shares()) == 15
    assert sum(row.shares()) == 10_000


@pytest.mark.parametrize(
    ("bands", "low", "reason"),
    [
        (((1, 6000), (2, 3999)), 3, "sum to exactly"),
        (((1, 4000), (2, 6000)), 3, "never increasing"),
        (((1, 5000), (3, 2500)), 2, "more places than"),
        (((2, 5000), (1, 5000)), 3, "never increasing"),
    ],
)
def test_a_bad_row_is_refused(bands: tuple[tuple[int, int], ...], low: int, reason: str) -> None:
    with pytest.raises(PayoutError, match=reason):
        PayoutRow(low, 10, bands)


def test_a_table_with_a_gap_in_its_fields_is_refused() -> None:
    one = PayoutRow(2, 5, ((1, 10_000),))
    with pytest.raises(PayoutError, match="no row for 6 entrants"):
        PayoutTable("gappy", (one, PayoutRow(7, 9, ((1, 10_000),))))
    with pytest.raises(PayoutError, match="no row for 2"):
        PayoutTable("late", (PayoutRow(3, 9, ((1, 10_000),)),))


@pytest.mark.parametrize(
    ("pool", "entrants", "table", "field"),
    [
        (-1, 9, "sit_and_go", "prize_pool"),
        (1.5, 9, "sit_and_go", "prize_pool"),
        (100, 1, "sit_and_go", "entrants"),
        (100, 46, "sit_and_go", "entrants"),
        (100, 5001, "scheduled", "entrants"),
        (100, 9, "satellite", "payout_table"),
    ],
)
def test_a_bad_request_is_refused_with_the_field_at_fault(
    pool: int, entrants: int, table: str, field: str
) -> None:
    with pytest.raises(PayoutError) as caught:
        payouts(pool, entrants, table)
    assert caught.value.field == field
