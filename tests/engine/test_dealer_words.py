"""The dealer's words in ``announcement`` events, and a refused wager naming what is allowed.

Robert's Rules (Dealer's duties, Stud 12) and SCS 9: the dealer announces the low card that
brings it in, the high hand on board each later round, and every pair as it appears, each
once. The words are the engine's, so every client shows the same; the events keep the seat
and the card for clients that say it their own way.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from decks import new_hand, of_kind, play

from engine.actions import Action
from engine.errors import IllegalAction
from engine.hand import Hand
from engine.variants import TableConfig

STUD = TableConfig()
RAZZ = STUD.with_variant("razz")


def through_third(hand: Hand) -> Hand:
    """Bring in and call around: fourth street is dealt."""
    while hand.street == 0:
        legal = hand.legal_actions()
        play(hand, f"{legal.seat} {'bring_in' if 'bring_in' in legal.kinds else 'call'}")
    return hand


def said(hand: Hand) -> list[tuple[str, int, str]]:
    return [(a["kind"], a["seat"], a["text"]) for a in of_kind(hand.events, "announcement")]


def test_the_bring_in_is_the_card_named_in_words() -> None:
    hand = new_hand(["Ac Ad Kh", "2d 3d 9h", "4c 5c 7d"])
    assert of_kind(hand.events, "announcement") == [
        {"kind": "bring_in", "seat": 2, "card": "7d", "text": "the seven of diamonds brings it in"}
    ]


def test_a_pair_that_opens_is_said_once_with_the_high_hand() -> None:
    """Not "pair of fours" and then "pair of fours is high" on one street."""
    hand = through_third(new_hand(["Ac Ad 4h | 4s", "2d 3d 9h | Kd", "5c 6c 7d | 8c"]))
    fourth = said(hand)[1:]
    assert fourth == [("high_board", 0, "pair of fours is high")]


def test_a_pair_that_does_not_open_is_said_on_its_own() -> None:
    hand = through_third(new_hand(["Ac Ad 4h | 4s", "2d 3d Kh | Ks", "5c 6c 7d | 8c"]))
    assert said(hand)[1:] == [
        ("pair", 0, "pair of fours"),
        ("high_board", 1, "pair of kings is high"),
    ]


def test_an_unpaired_high_board_is_not_high_twice() -> None:
    hand = through_third(new_hand(["2c 2d Ah | Ks", "3c 3d 9h | 8d", "5c 6c 7d | 8c"]))
    assert said(hand)[1:] == [("high_board", 0, "ace-king high")]


def test_a_razz_board_is_low_once() -> None:
    """ "seven-six low", not "seven-six low is low"; a paired razz board is "is low"."""
    hand = through_third(new_hand(["Ac 2c 7h | 6s", "Ad 2d Kh | Qd", "3h 4h Jc | 9d"], RAZZ))
    assert said(hand)[1:] == [("low_board", 0, "seven-six low")]


@pytest.mark.parametrize(
    ("config", "steps", "action", "message"),
    [
        (
            replace(STUD, structure="no_limit"),
            ["2 bring_in", "0 complete 20"],
            Action(1, "raise", 99999),
            "raise to 99999 is not allowed: between 40 and 99",
        ),
        (
            replace(STUD, structure="pot_limit"),
            ["2 bring_in"],
            Action(0, "complete", 99999),
            "complete to 99999 is not allowed: between 5 and 9",
        ),
        (STUD, ["2 bring_in"], Action(0, "complete", 7), "complete to 7 is not allowed: only 5"),
    ],
)
def test_a_wager_out_of_range_is_refused_naming_the_range(
    config: TableConfig, steps: list[str], action: Action, message: str
) -> None:
    hand = new_hand(["As Ah Kd", "Ks Kh Qd", "Qs Qc 2c"], config)
    play(hand, *steps)
    before = (len(hand.events), list(hand.stacks), hand.legal_actions())
    with pytest.raises(IllegalAction) as caught:
        hand.apply(action)
    assert caught.value.code == "bad_amount"
    assert str(caught.value) == message
    assert (len(hand.events), list(hand.stacks), hand.legal_actions()) == before


def test_an_open_pair_refusal_names_both_bets() -> None:
    hand = through_third(new_hand(["Ac Ad 9c | 9d", "Kc Kd Ah | 3d", "Qc Qd 2c | 4s"]))
    with pytest.raises(IllegalAction, match=r"^bet to 7 is not allowed: one of 5, 10$"):
        hand.apply(Action(0, "bet", 7))
