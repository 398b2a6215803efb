"""Places and prizes of players out: one at a time they take the last place left; out in the
same hand they finish by the chips they started it with, and equal stacks share the prizes of
the places they cover, the odd chip to the player given first."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.tournament import payouts as payouts_module
from engine.tournament.payout_tables import PayoutError
from engine.tournament.payouts import Elimination, Finish, forfeit, payouts, places_of, winner

# A sit-and-go of 9 with a pool of 900: 450, 270, 180 to the first three places.
PRIZES = payouts(900, 9, "sit_and_go")


def test_a_player_out_alone_takes_the_last_place_left() -> None:
    assert places_of([Elimination("ann", 300)], players_left=9, prizes=PRIZES) == (
        Finish("ann", 9, 0),
    )
    assert places_of([Elimination("bob", 12)], players_left=3, prizes=PRIZES) == (
        Finish("bob", 3, 180),
    )


def test_out_in_the_same_hand_the_bigger_stack_finishes_higher() -> None:
    out = [Elimination("small", 100), Elimination("big", 900), Elimination("middle", 400)]
    assert places_of(out, players_left=5, prizes=PRIZES) == (
        Finish("big", 3, 180),
        Finish("middle", 4, 0),
        Finish("small", 5, 0),
    )


def test_equal_stacks_share_the_places_they_cover_and_the_odd_chip_goes_first() -> None:
    # Places 2 and 3 pay 270 + 180 = 450: 225 each.
    assert places_of(
        [Elimination("ann", 500), Elimination("bob", 500)], players_left=3, prizes=PRIZES
    ) == (Finish("ann", 2, 225, tied=2), Finish("bob", 2, 225, tied=2))
    # Three tie for places 2 to 4 of (500, 301, 200, 100): 601 chips, 200 each and one over,
    # to the first of them in the order given (the seat order).
    out = [Elimination("cy", 80), Elimination("ann", 80), Elimination("bob", 80)]
    assert places_of(out, players_left=4, prizes=(500, 301, 200, 100)) == (
        Finish("cy", 2, 201, tied=3),
        Finish("ann", 2, 200, tied=3),
        Finish("bob", 2, 200, tied=3),
    )


def test_a_tie_on_the_bubble_shares_the_last_prize() -> None:
    # 4 left, 3 paid: two out together with equal stacks share 3rd's 180 and 4th's nothing.
    out = [Elimination("ann", 250), Elimination("bob", 250)]
    assert places_of(out, players_left=4, prizes=PRIZES) == (
        Finish("ann", 3, 90, tied=2),
        Finish("bob", 3, 90, tied=2),
    )


def test_every_player_left_out_in_one_hand_takes_every_place() -> None:
    """The last chips left play with a disqualified player: the players out take the places
    left, the first included, by the chips they started the hand with."""
    out = [Elimination("ann", 10), Elimination("bob", 30)]
    assert places_of(out, players_left=2, prizes=PRIZES) == (
        Finish("bob", 1, PRIZES[0]),
        Finish("ann", 2, PRIZES[1]),
    )


def test_a_forfeited_place_shares_its_prize_among_the_places_above() -> None:
    assert forfeit((500, 300, 200), 3) == (600, 400, 0)
    assert forfeit((500, 300, 201), 3) == (601, 400, 0)
    assert forfeit((500, 300, 200), 4) == (500, 300, 200)  # it paid nothing
    prizes = payouts(123_457, 40, "scheduled")
    for place in range(2, len(prizes) + 1):
        after = forfeit(prizes, place)
        assert sum(after) == sum(prizes) and after[place - 1] == 0
        assert list(after[: place - 1]) == sorted(after[: place - 1], reverse=True)
        assert after[place:] == prizes[place:]
    with pytest.raises(PayoutError):
        forfeit(prizes, 1)


def test_the_modules_examples_hold() -> None:
    assert doctest.testmod(payouts_module).failed == 0


def test_the_last_player_in_wins_first_place() -> None:
    assert winner("dee", PRIZES) == Finish("dee", 1, 450)


@pytest.mark.parametrize(
    ("out", "players_left", "field"),
    [
        ([Elimination("ann", 10), Elimination("bob", 10), Elimination("cy", 9)], 2, "eliminated"),
        ([Elimination("ann", 10), Elimination("ann", 20)], 5, "eliminated"),
        ([Elimination("ann", 0)], 5, "eliminated[0].chips_at_start"),
        ([Elimination("ann", 10)], 1, "players_left"),
    ],
)
def test_impossible_eliminations_are_refused(
    out: list[Elimination], players_left: int, field: str
) -> None:
    with pytest.raises(PayoutError) as caught:
        places_of(out, players_left=players_left, prizes=PRIZES)
    assert caught.value.field == field


@st.composite
def hands_with_eliminations(draw: st.DrawFn) -> tuple[list[Elimination], int, tuple[int, ...]]:
    players_left = draw(st.integers(2, 60))
    out = draw(st.integers(1, min(players_left - 1, 8)))
    chips = draw(st.lists(st.integers(1, 6), min_size=out, max_size=out))  # ties are common
    entrants = draw(st.integers(players_left, 200))
    prizes = payouts(draw(st.integers(0, 10**7)), entrants, "scheduled")
    return [Elimination(f"p{i}", c) for i, c in enumerate(chips)], players_left, prizes


@given(hands_with_eliminations())
def test_the_places_of_a_hand_conserve_the_prizes_and_follow_the_stacks(
    case: tuple[list[Elimination], int, tuple[int, ...]],
) -> None:
    out, players_left, prizes = case
    finishes = places_of(out, players_left=players_left, prizes=prizes)
    assert sorted(f.player for f in finishes) == sorted(e.player for e in out)
    covered = range(players_left - len(out) + 1, players_left + 1)
    due = sum(prizes[place - 1] for place in covered if place <= len(prizes))
    assert sum(f.prize for f in finishes) == due
    chips = {e.player: e.chips_at_start for e in out}
    for a in finishes:
        for b in finishes:
            if chips[a.player] > chips[b.player]:
                assert a.place < b.place and a.prize >= b.prize
            elif chips[a.player] == chips[b.player]:
                assert a.place == b.place and abs(a.prize - b.prize) <= 1
                assert a.tied == b.tied == sum(c == chips[a.player] for c in chips.values())
    assert all(place in covered for place in (f.place for f in finishes))
