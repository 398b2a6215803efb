"""Order of play after third street, dead seats, absent players, dealer announcements."""

from __future__ import annotations

from dataclasses import replace

import pytest
from decks import check_down, new_hand, of_kind, play

from engine.errors import NotYourTurn
from engine.hand import Hand
from engine.variants import TableConfig
from engine.views import view

STUD = TableConfig()
HILO = STUD.with_variant("seven_card_stud_hi_lo")
RAZZ = STUD.with_variant("razz")

# Fourth street: seats 0 and 1 both show A-Q (ace of clubs, ace of hearts); 2c brings in.
TIED_AQ = ["2d 3d Ac | Qs", "2h 3h Ah | Qd", "4c 5c 2c | Kh"]


def fourth_street(hands: list[str], config: TableConfig = STUD) -> Hand:
    """Play third street with seat 2 bringing in (razz: whoever it is) and everyone calling."""
    hand = new_hand(hands, config)
    while hand.street == 0:
        legal = hand.legal_actions()
        play(hand, f"{legal.seat} {'bring_in' if 'bring_in' in legal.kinds else 'call'}")
    return hand


def first_actors(hand: Hand) -> list[int | None]:
    """Check the hand down, noting who acts first on each street after the first."""
    seen: list[int | None] = []
    while not hand.is_over():
        street = hand.street
        seen.append(hand.seat_to_act())
        while not hand.is_over() and hand.street == street:
            play(hand, f"{hand.seat_to_act()} check")
    return seen


# ----------------------------------------------------------------- high board, ties


def test_scs8_high_board_tie_broken_by_suit_of_the_high_card() -> None:
    """SCS 8: the high hand on board acts first; between two A-Q boards the ace of hearts
    acts before the ace of clubs."""
    hand = fourth_street(TIED_AQ)
    assert hand.seat_to_act() == 1
    announced = of_kind(hand.events, "announcement", kind="high_board")
    assert [a["seat"] for a in announced] == [1]


def test_scs8_alternate_tie_broken_by_position() -> None:
    """SCS 8 alternate, Robert's 2, cardroom rule 1 (`order_tie="position"`): on a tie the
    player closest to the dealer's left (who received cards first) acts first."""
    hand = fourth_street(TIED_AQ, replace(STUD, order_tie="position"))
    assert hand.seat_to_act() == 0


def test_scs8_board_ranks_pair_trips_two_pair() -> None:
    """SCS 8, RULES.md: boards rank by exposed cards only: trips > two pair > pair > high cards."""
    hand = fourth_street(
        [
            "2d 2h 5c | 5d | 5h | 3s",  # pair of fives, trips, trips
            "3d 3h Ac | Ad | Kc | Kd",  # pair of aces, aces and king, two pair
            "4c 4d 2c | 6s | 7s | 8s",  # high cards
        ]
    )
    assert first_actors(hand) == [1, 0, 0, 0]


def test_scs8_pair_beats_higher_cards() -> None:
    """SCS 8: a pair on board is a higher hand than ace-king."""
    hand = fourth_street(["Ac Ad 3c | 3d", "Kc Kd Ah | Kh", "Qc Qd 2c | 4s"])
    assert hand.seat_to_act() == 0


def test_scs_hl3_high_board_tie_goes_to_first_clockwise_from_the_dealer() -> None:
    """SCS/HL 3: in hi-lo a tied high board is broken by position (first clockwise from the
    dealer)."""
    hand = fourth_street(TIED_AQ, HILO)
    assert hand.seat_to_act() == 0


def test_scs_hl3_alternate_tie_by_highest_card_by_suit() -> None:
    """SCS/HL 3 alternate (`order_tie="suit"`): the highest card by suit breaks the tie."""
    hand = fourth_street(TIED_AQ, replace(HILO, order_tie="suit"))
    assert hand.seat_to_act() == 1


def test_razz4_low_board_acts_first() -> None:
    """Razz 4: on later rounds the lowest board acts first; a pair is a bad low."""
    hand = fourth_street(["Ac 4c 3c | 3d", "Ad 4d Kc | Qh", "2h 5s Jc | 9d"], RAZZ)
    assert hand.seat_to_act() == 2  # J-9 beats K-Q and a pair of threes
    announced = of_kind(hand.events, "announcement", kind="low_board")
    assert [a["seat"] for a in announced] == [2]


def test_razz4_tie_broken_by_suit_of_the_lowest_card() -> None:
    """Razz 4: between equal lows the lower suit of the lowest card acts first: the deuce of
    diamonds before the deuce of spades."""
    hand = fourth_street(["Ac 3c 2s | 5h", "Ad 3d 2d | 5c", "4c 4d Kc | Qh"], RAZZ)
    assert hand.seat_to_act() == 1


def test_razz4_alternate_tie_by_position() -> None:
    """Razz 4 alternate (`order_tie="position"`): first clockwise from the dealer acts first."""
    config = replace(RAZZ, order_tie="position")
    hand = fourth_street(["Ac 3c 2s | 5h", "Ad 3d 2d | 5c", "4c 4d Kc | Qh"], config)
    assert hand.seat_to_act() == 0


def test_razz2_aces_are_low_on_board() -> None:
    """Razz 2, 4: an ace is the lowest card on board too."""
    hand = fourth_street(["2c 3c Ac | Kd", "2d 3d 2s | Kh", "4c 4d Qc | Qh"], RAZZ)
    assert hand.seat_to_act() == 0  # K-A beats K-2 (and a pair of queens)


# ----------------------------------------------------------------- dead seats


def test_scs12_folded_seat_not_facing_a_bet_keeps_receiving_cards_until_a_bet() -> None:
    """SCS 12, Robert's 9, cardroom rule 7: a hand folded when not facing a bet is still dealt
    to (same up or down) until a bet is made, so the cards others get do not change; it never
    initiates the action."""
    hand = new_hand(
        [
            "7h 7d 2c | 3d | 4d | 5d | 6d",
            "8h 8d Tc | Jd | As",  # folds on fourth street with nothing to call
            "9h 9d Th | Qs | 4c | 5c | 6c",
        ]
    )
    play(hand, "0 bring_in", "1 call", "2 call")
    events = play(hand, "2 check", "0 check", "1 fold")
    assert of_kind(events, "action", seat=1)[0]["dead_seat"] is True
    fifth = of_kind(hand.events, "street_dealt")[-1]
    assert fifth["street"] == "fifth"
    assert {"seat": 1, "up": ["As"], "down": 0, "dead": True} in fifth["deals"]
    assert hand.seat_to_act() == 2  # the dead seat's A-J-T is not asked to act
    play(hand, "2 bet 10", "0 call")
    sixth = of_kind(hand.events, "street_dealt")[-1]
    assert sixth["deals"] == [
        {"seat": 0, "up": ["5d"], "down": 0},
        {"seat": 2, "up": ["5c"], "down": 0},
    ]


def test_scs12_fold_facing_a_bet_stops_the_cards() -> None:
    """SCS 12: a hand folded facing a bet is dealt no more cards."""
    hand = new_hand(["7h 7d 2c | 3d | 4d", "8h 8d Tc", "9h 9d Th | Qs | 4c"])
    events = play(hand, "0 bring_in", "1 fold")
    assert "dead_seat" not in of_kind(events, "action", seat=1)[0]
    play(hand, "2 call")
    fourth = of_kind(hand.events, "street_dealt")[-1]["deals"]
    assert [d["seat"] for d in fourth] == [0, 2]
    assert [d["up"] for d in fourth] == [["3d"], ["Qs"]]


# ----------------------------------------------------------------- absent players


def test_scs10_absent_bring_in_is_posted_from_the_stack() -> None:
    """SCS 10, Robert's 8: an absent player who owes the bring-in has it taken from the stack."""
    hand = new_hand(["Ac Ad Kh", "2d 3d 8h", "4c 5c 2c"])
    events = hand.timeout(2)
    assert of_kind(events, "action") == [
        {"seat": 2, "action": "bring_in", "timeout": True, "amount": 2, "to": 2, "stack": 97}
    ]
    assert hand.seat_to_act() == 0


def test_scs10_absent_player_facing_action_is_killed_and_forfeits_ante_and_bring_in() -> None:
    """SCS 10, Robert's 8, cardroom rule 6: when the absent player faces action the hand is
    killed; the ante and the forced bet stay in the pot."""
    hand = new_hand(["Ac Ad Kh | Qs", "2d 3d 8h | 7s", "4c 5c 2c"])
    hand.timeout(2)
    play(hand, "0 complete 5", "1 call")
    events = hand.timeout(2)
    assert of_kind(events, "action")[0] == {
        "seat": 2,
        "action": "fold",
        "timeout": True,
        "to": 2,
        "stack": 97,
    }
    assert hand.total == [6, 6, 3]
    assert hand.street == 1


def test_scs10_absent_player_not_facing_a_bet_checks() -> None:
    """RULES.md on SCS 10: an absent player not facing a bet checks instead of folding."""
    hand = fourth_street(["Ac Ad Kh | Qs", "2d 3d 8h | 7s", "4c 5c 2c | 6d"])
    assert hand.seat_to_act() == 0
    events = hand.timeout(0)
    assert of_kind(events, "action")[0]["action"] == "check"
    with pytest.raises(NotYourTurn):
        hand.timeout(0)


def test_scs2_absent_player_who_anted_is_dealt_a_hand() -> None:
    """SCS 2: a player away from the table who has anted is dealt a hand (and plays on the
    clock: checks, then folds when facing a bet)."""
    hand = fourth_street(["Ac Ad Kh | Qs", "2d 3d 8h | 7s", "4c 5c 2c | 6d"])
    hand.timeout(0)
    play(hand, "1 bet 5", "2 call")
    hand.timeout(0)
    assert hand.folded == [True, False, False]


# ----------------------------------------------------------------- announcements


def test_scs9_every_new_pair_is_announced_once() -> None:
    """SCS 9, Robert's 12: all pairs on board are announced, each when it appears."""
    hand = fourth_street(
        [
            "Ac Ad 9c | 9d | Kd | Kh | 4h",  # pairs nines on fourth, kings on sixth
            "2d 3d 8h | 7s | 5c | 4c | 3c",
            "4d 5d 2c | 6d | Jh | Qs | Ts",
        ]
    )
    check_down(hand)
    pairs = [a for a in of_kind(hand.events, "announcement") if "pair" in a["text"]]
    # The pair of nines opens fourth street: said once, with the high hand.
    assert [(p["kind"], p["seat"], p["text"]) for p in pairs] == [
        ("high_board", 0, "pair of nines is high"),
        ("high_board", 0, "pair of nines is high"),
        ("pair", 0, "pair of kings"),
        ("high_board", 0, "two pair, kings and nines is high"),
        ("high_board", 0, "two pair, kings and nines is high"),
    ]


def test_scs9_pair_made_on_sixth_street_is_not_announced_again_on_seventh() -> None:
    """SCS 9: a pair is announced when it appears, not again with the down card after it."""
    hand = fourth_street(
        [
            "Ac Ad 9c | Kd | 5h | 9d | 4h",
            "2d 3d 8h | 7s | 5c | 4c | 3c",
            "4d 5d 2c | 6d | Jh | Qs | Ts",
        ]
    )
    check_down(hand)
    said = [(a["kind"], a["text"]) for a in of_kind(hand.events, "announcement")]
    assert [text for _, text in said].count("pair of nines is high") == 2  # sixth, seventh
    assert not [text for kind, text in said if kind == "pair"]  # said with the high hand


def test_scs9_high_hand_announced_every_later_round() -> None:
    """SCS 9: the dealer announces the high hand on every betting round after the first."""
    hand = fourth_street(["Ac Ad Kh | Qs", "2d 3d 8h | 7s", "4c 5c 2c | 6d"])
    check_down(hand)
    announced = of_kind(hand.events, "announcement", kind="high_board")
    assert len(announced) == 4
    assert all(a["text"] for a in announced)


def test_razz5_face_card_pairs_are_never_announced() -> None:
    """Razz 5: pairs are announced the first time they occur, except pairs of face cards."""
    hand = fourth_street(
        [
            "Ac 2c Jc | Jd | 3c | 3d | 4h",  # jacks (not announced), then threes
            "2d 3h Kh | 7s | 5c | 4c | 6c",
            "4d 5d Qh | 6d | 8h | 9s | Ts",
        ],
        RAZZ,
    )
    check_down(hand)
    pairs = of_kind(hand.events, "announcement", kind="pair")
    assert [(p["seat"], p["text"]) for p in pairs] == [(0, "pair of threes")]


def test_scs9_possible_straights_and_flushes_only_when_set() -> None:
    """SCS 9 and its alternate (`announce_possibles`), Hoyle, Dealer's obligations: possible
    straights and flushes are not announced, unless the house says so, and then without
    naming the cards needed."""
    hands = [
        "Ac Ad 5h | 6h | 7h | Kc | 4d",
        "2d 3d 8c | Ts | 2s | 4c | 3c",
        "4s 5d 2c | Qd | Jc | 3s | Th",
    ]
    hand = fourth_street(hands)
    check_down(hand)
    assert not of_kind(hand.events, "announcement", kind="possible_flush")
    assert not of_kind(hand.events, "announcement", kind="possible_straight")
    hand = fourth_street(hands, replace(STUD, announce_possibles=True))
    check_down(hand)
    said = [
        (a["kind"], a["seat"], a["text"])
        for a in of_kind(hand.events, "announcement")
        if a["kind"].startswith("possible")
    ]
    assert said == [
        ("possible_flush", 0, "possible flush"),
        ("possible_straight", 0, "possible straight"),
    ]


def test_scs13_upcards_are_shown_in_dealt_order() -> None:
    """SCS 13 (changing the order of upcards): the server shows every board in dealt order."""
    hand = fourth_street(
        [
            "Ac Ad 9c | Kd | 5h | 9d | 4h",
            "2d 3d 8h | 7s | 5c | 4c | 3c",
            "4d 5d 2c | 6d | Jh | Qs | Ts",
        ]
    )
    check_down(hand)
    picture = view(hand.events, None)
    assert [picture["seats"][s]["up"] for s in range(3)] == [
        ["9c", "Kd", "5h", "9d"],
        ["8h", "7s", "5c", "4c"],
        ["2c", "6d", "Jh", "Qs"],
    ]
