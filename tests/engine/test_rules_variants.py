"""Street shapes and limits of five-, six- and eight-card stud (SCS five-card stud, Hoyle)."""

from __future__ import annotations

from dataclasses import replace

from decks import check_down, new_hand, of_kind, play

from engine.hand import Hand
from engine.variants import TableConfig, find_variant
from engine.views import visible_events

STUD = TableConfig()
FIVE = STUD.with_variant("five_card_stud")
FIVE_HILO = STUD.with_variant("five_card_stud_hi_lo")
SIX = STUD.with_variant("six_card_stud")
EIGHT = STUD.with_variant("eight_card_stud")

FIVE_HANDS = ["Ac 9d | Kh | 4s | 7d", "Qc 4h | 8c | Js | 3d", "2d 3c | 6h | Ts | 5c"]


def shapes(hand: Hand) -> list[tuple[str, int, int]]:
    """(street, upcards, downcards) dealt to the first seat on each street."""
    return [
        (d["street"], len(d["deals"][0]["up"]), d["deals"][0]["down"])
        for d in of_kind(hand.events, "street_dealt")
    ]


def betting_rounds(hand: Hand) -> list[tuple[int, ...]]:
    """Check the hand down, noting the bet sizes offered on each street (fixed limit)."""
    offered: list[tuple[int, ...]] = []
    while not hand.is_over():
        legal = hand.legal_actions()
        if "bring_in" in legal.kinds:
            offered.append(legal.to_choices)
            play(hand, f"{legal.seat} bring_in")
        elif "call" in legal.kinds:
            play(hand, f"{legal.seat} call")
        else:
            if len(offered) <= hand.street:
                offered.append(legal.to_choices)
            play(hand, f"{legal.seat} check")
    return offered


def test_five_card_stud_streets_and_limits() -> None:
    """SCS five-card stud, Hoyle (Dealing): one card down and one up, a betting round, then
    three upcards with a round after each; the bet doubles on the third upcard."""
    hand = new_hand(FIVE_HANDS, FIVE)
    assert betting_rounds(hand) == [(5,), (5,), (10,), (10,)]
    assert shapes(hand) == [("second", 1, 1), ("third", 1, 0), ("fourth", 1, 0), ("fifth", 1, 0)]
    assert all(len(c) == 5 for c in hand.cards)


def test_five_card_stud_open_pair_on_the_second_upcard() -> None:
    """SCS five-card stud, Hoyle (Betting limit): an open pair on the second upcard allows the
    big bet, as on fourth street in seven-card stud."""
    hand = new_hand(["Ac 9d | 9h | 4s | 7d", *FIVE_HANDS[1:]], FIVE)
    play(hand, "2 bring_in", "0 call", "1 call")
    assert hand.legal_actions().to_choices == (5, 10)


def test_five_card_stud_last_card_down_setting() -> None:
    """SCS five-card stud (`last_card_down`): the game is sometimes spread with the last card
    dealt down."""
    hand = new_hand(FIVE_HANDS, replace(FIVE, last_card_down=True))
    check_down(hand)
    assert shapes(hand)[-1] == ("fifth", 0, 1)
    private = [e for e in hand.events if e.kind == "down_cards" and e.data["street"] == "fifth"]
    assert [(e.to, e.data["cards"]) for e in private] == [(0, ["7d"]), (1, ["3d"]), (2, ["5c"])]


def test_five_card_stud_hi_lo_aces_both_ways() -> None:
    """SCS five-card stud: played high-low split with aces both high and low."""
    hand = new_hand(
        ["Ah 2d | 3c | 4s | 6h", "Kc Kd | Qh | 9s | 9d", "Tc 2c | Jh | Js | 8d"], FIVE_HILO
    )
    check_down(hand)
    assert [(a["seat"], a["half"], a["amount"]) for a in of_kind(hand.events, "pot_awarded")] == [
        (1, "high", 5),
        (0, "low", 4),
    ]


def test_hoyle_six_card_stud() -> None:
    """Hoyle, Six-card stud: one down, four up, one down; a betting round after each card from
    the second; best five of six."""
    hand = new_hand(["Ac 7d | Ad | 2c | 9h | As", "Kc Kd | Ks | 3c | 4h | 5s"], SIX)
    assert betting_rounds(hand) == [(5,), (5,), (10,), (10,), (10,)]
    assert shapes(hand) == [
        ("second", 1, 1),
        ("third", 1, 0),
        ("fourth", 1, 0),
        ("fifth", 1, 0),
        ("sixth", 0, 1),
    ]
    assert all(len(c) == 6 for c in hand.cards)
    assert hand.result().net == {0: 3, 1: -3}  # trip aces, the last one down


def test_hoyle_eight_card_stud() -> None:
    """Hoyle, Eight-card stud: two down, four up, two down; a betting round after each card
    from the third; best five of eight."""
    hand = new_hand(
        ["2c 3c Ac | Kd | 9h | 7s | 4c | 5c", "Kh Ks Kc | Qd | Qh | 9d | 8d | 7d"], EIGHT
    )
    assert betting_rounds(hand) == [(5,), (5,), (10,), (10,), (10,), (10,)]
    assert [s[0] for s in shapes(hand)] == [
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
    ]
    assert [s[1:] for s in shapes(hand)] == [(1, 2), (1, 0), (1, 0), (1, 0), (0, 1), (0, 1)]
    assert all(len(c) == 8 for c in hand.cards)
    assert hand.result().net == {0: 3, 1: -3}  # the eighth card makes a straight flush


def test_hoyle_seven_card_stud_shape() -> None:
    """Hoyle, Seven-card stud; cardroom steps 2-11: two down and one up, three up, one down."""
    variant = find_variant("seven_card_stud")
    assert [s.cards for s in variant.streets] == [
        (False, False, True),
        (True,),
        (True,),
        (True,),
        (False,),
    ]
    assert [s.big_bet for s in variant.streets] == [False, False, True, True, True]


def test_hoyle_dropping_does_not_show_the_hole_card() -> None:
    """Hoyle, Dropping: a player who drops does not expose the hole card."""
    hand = new_hand(FIVE_HANDS, FIVE)
    play(hand, "2 bring_in", "0 fold")
    others = visible_events(hand.events, 1)
    assert "Ac" not in repr([e.data for e in others])
    assert "Ac" in repr([e.data for e in visible_events(hand.events, 0)])
