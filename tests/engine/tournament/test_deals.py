"""Final-table deals: ICM against figures worked by hand, the chip chop, an amount kept back to
play on for, and for any table the amounts summing exactly with more chips never getting less."""

from __future__ import annotations

import doctest
from collections.abc import Callable
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.tournament import deals as deals_module
from engine.tournament.deals import MAX_ICM_PLAYERS, DealError, chip_chop, icm, icm_equities


def test_the_module_examples_run() -> None:
    assert doctest.testmod(deals_module).failed == 0


def test_icm_of_three_players_as_worked_by_hand() -> None:
    """Stacks 5,000 / 3,000 / 2,000 of 10,000; prizes 500 / 300 / 200.

    A first: 5/10. A second: B first then A (3/10 * 5/7 = 3/14), or C first then A
    (2/10 * 5/8 = 1/8): 19/56. A third: 1 - 1/2 - 19/56 = 9/56.
    A: 500/2 + 300 * 19/56 + 200 * 9/56 = 250 + 7500/56 = 5375/14 (383.93, the 38.39% of the
    usual tables).
    B first: 3/10; second: A first then B (1/2 * 3/5) or C first then B (1/5 * 3/8): 3/8;
    third: 13/40. B: 150 + 112.5 + 65 = 655/2 (327.50).
    C: the rest, 1000 - 5375/14 - 655/2 = 2020/7 (288.57).
    """
    equities = icm_equities([5000, 3000, 2000], [500, 300, 200])
    assert equities == (Fraction(5375, 14), Fraction(655, 2), Fraction(2020, 7))
    # Rounded down, 383 + 327 + 288 = 998: the two chips left go to the largest fractions,
    # A's .93 and C's .57.
    assert icm([5000, 3000, 2000], [500, 300, 200]) == (384, 327, 289)


def test_icm_heads_up_is_second_prize_plus_the_chip_share_of_the_difference() -> None:
    # 7,000 against 3,000 for 600 and 400: 400 + 200 * 7/10 and 400 + 200 * 3/10.
    assert icm_equities([7000, 3000], [600, 400]) == (Fraction(540), Fraction(460))
    assert icm([7000, 3000], [600, 400]) == (540, 460)


def test_icm_on_the_bubble_gives_the_short_stack_a_share_of_the_prizes() -> None:
    # Four left, three paid: even the shortest stack has a chance at every place.
    amounts = icm([6000, 2000, 1500, 500], [500, 300, 200])
    assert sum(amounts) == 1000 and amounts[3] > 0
    assert list(amounts) == sorted(amounts, reverse=True)


def test_the_chip_chop_gives_each_the_last_prize_and_the_rest_by_chips() -> None:
    # Each gets 200; the 400 over is shared 5:3:2.
    assert chip_chop([5000, 3000, 2000], [500, 300, 200]) == (400, 320, 280)
    # A bubble deal: the fourth place pays nothing, so all is shared by chips.
    assert chip_chop([6000, 2000, 1500, 500], [500, 300, 200]) == (600, 200, 150, 50)


@pytest.mark.parametrize("deal", [chip_chop, icm])
def test_an_amount_kept_back_is_taken_off_first_place_and_played_for(
    deal: Callable[..., tuple[int, ...]],
) -> None:
    prizes = [500, 300, 200]
    amounts = deal([5000, 3000, 2000], prizes, played_for=150)
    assert sum(amounts) + 150 == sum(prizes)
    assert amounts == deal([5000, 3000, 2000], [350, 300, 200])
    with pytest.raises(DealError) as caught:
        deal([5000, 3000, 2000], prizes, played_for=201)
    assert caught.value.field == "played_for"


@pytest.mark.parametrize(
    ("chips", "prizes", "field"),
    [
        ([5000], [500], "chips"),
        ([5000, 0], [500, 300], "chips"),
        ([5000, 2.5], [500, 300], "chips"),
        ([5000, 3000], [500, 300, 200], "prizes"),
        ([5000, 3000], [300, 500], "prizes"),
        ([5000, 3000], [500, -1], "prizes"),
    ],
)
def test_a_deal_that_cannot_be_made_is_refused(
    chips: list[int], prizes: list[int], field: str
) -> None:
    for deal in (chip_chop, icm):
        with pytest.raises(DealError) as caught:
            deal(chips, prizes)
        assert caught.value.field == field


def test_icm_is_worked_for_a_final_table_and_no_more() -> None:
    chips = [1000 * (i + 1) for i in range(MAX_ICM_PLAYERS)]
    prizes = [100 * (MAX_ICM_PLAYERS - i) for i in range(MAX_ICM_PLAYERS)]
    assert sum(icm(chips, prizes)) == sum(prizes)
    with pytest.raises(DealError):
        icm([*chips, 500], prizes)


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[int], list[int], int]:
    players = draw(st.integers(2, 7))
    chips = draw(st.lists(st.integers(1, 100_000), min_size=players, max_size=players))
    paid = draw(st.integers(1, players))
    prizes = sorted(
        draw(st.lists(st.integers(0, 10**6), min_size=paid, max_size=paid)), reverse=True
    )
    gap = prizes[0] - (prizes[1] if paid > 1 else 0)
    return chips, prizes, draw(st.integers(0, gap))


@given(tables())
def test_any_deal_sums_exactly_and_more_chips_never_gets_less(
    table: tuple[list[int], list[int], int],
) -> None:
    chips, prizes, played_for = table
    for deal in (chip_chop, icm):
        amounts = deal(chips, prizes, played_for=played_for)
        assert sum(amounts) + played_for == sum(prizes)
        dealt_floor = prizes[-1] if len(prizes) == len(chips) else 0
        assert min(amounts) >= dealt_floor
        for a, b in zip(chips, amounts, strict=True):
            for c, d in zip(chips, amounts, strict=True):
                if a > c:
                    assert b >= d
                elif a == c:
                    assert abs(b - d) <= 1


@given(tables())
def test_icm_equities_are_exact_shares_of_the_prizes(
    table: tuple[list[int], list[int], int],
) -> None:
    chips, prizes, _ = table
    equities = icm_equities(chips, prizes)
    assert sum(equities) == sum(prizes)
    assert all(0 <= e <= prizes[0] for e in equities)
