"""Showdown: order of showing, mucking, side pots, hi-lo splits, odd chips, razz lows."""

from __future__ import annotations

from dataclasses import replace

from decks import check_down, new_hand, of_kind, play

from engine.hand import Hand
from engine.variants import TableConfig
from engine.views import view

STUD = TableConfig()
HILO = STUD.with_variant("seven_card_stud_hi_lo")
RAZZ = STUD.with_variant("razz")

# Seat 0: kings and sixes; seat 1: trip queens; seat 2: deuces full of sixes.
# Seat 2 (2c) brings in; seat 2's open sixes make it first to act on sixth and seventh.
THREE = [
    "6d 6c Kc | 9h | 4s | 7d | Kd",
    "Qc Qd Qh | 3s | 8d | 5c | Js",
    "2d 2s 2c | 6h | Ts | 6s | 3d",
]


def to_seventh(hand: Hand) -> None:
    """Play to seventh street: everyone calls the bring-in, then checks."""
    while hand.street < 4:
        legal = hand.legal_actions()
        kind = next(k for k in ("bring_in", "check", "call") if k in legal.kinds)
        play(hand, f"{legal.seat} {kind}")


def shown(hand: Hand) -> list[tuple[str, int]]:
    return [(e.kind, e.data["seat"]) for e in hand.events if e.kind in ("showdown", "muck")]


def test_cardroom_step12_last_bettor_shows_first() -> None:
    """Cardroom step 12, RULES.md: the last aggressor of the final round shows first, then
    clockwise; each better hand is shown."""
    hand = new_hand(THREE)
    to_seventh(hand)
    assert hand.seat_to_act() == 2
    play(hand, "2 check", "0 bet 10", "1 call", "2 call")
    assert shown(hand) == [("showdown", 0), ("showdown", 1), ("showdown", 2)]
    assert hand.result().net == {0: -13, 1: -13, 2: 26}


def test_losing_hands_may_be_mucked() -> None:
    """RULES.md: after the winning hand is shown, beaten hands are mucked unshown."""
    hand = new_hand(THREE)
    to_seventh(hand)
    play(hand, "2 bet 10", "0 call", "1 call")
    assert shown(hand) == [("showdown", 2), ("muck", 0), ("muck", 1)]
    showdown = of_kind(hand.events, "showdown")[0]
    assert showdown["cards"] == ["2d", "2s", "2c", "6h", "Ts", "6s", "3d"]


def test_cardroom_step12_first_actor_shows_first_when_nobody_bet() -> None:
    """Cardroom step 12: with no bet on the last round the first player to act shows first."""
    hand = new_hand(THREE)
    check_down(hand)
    assert shown(hand) == [("showdown", 2), ("muck", 0), ("muck", 1)]


def test_all_in_hand_is_always_shown() -> None:
    """RULES.md: an all-in hand is shown even when it is beaten."""
    hand = new_hand(THREE, stacks=[100, 3, 100])
    play(hand, "2 bring_in", "0 call", "1 call")
    to_seventh(hand)
    play(hand, "2 bet 10", "0 call")
    assert shown(hand) == [("showdown", 2), ("muck", 0), ("showdown", 1)]
    assert hand.result().net == {0: -13, 1: -3, 2: 16}


def test_side_pots_with_a_player_all_in_on_the_ante() -> None:
    """RULES.md: side pots layer by all-in amounts; a player all in on the ante plays for
    the antes only (and the next player acted on the bring-in, SCS 11 alternate)."""
    hands = [THREE[0], THREE[2], THREE[1]]  # the deuces full, all in on the ante, in seat 1
    hand = new_hand(hands, stacks=[100, 1, 100])
    check_down(hand)
    result = hand.result()
    assert result.pots == [
        {"amount": 3, "eligible": [0, 1, 2]},
        {"amount": 4, "eligible": [0, 2]},
    ]
    assert result.net == {0: -3, 1: 2, 2: 1}
    assert ("showdown", 1) in shown(hand)


def test_side_pots_shown_only_where_a_player_is_all_in() -> None:
    """RULES.md: side pots are layered by all-in amounts. The pots a view shows while chips go
    in: bets not yet called make no side pot; an all-in starts one; at the hand's end they are
    the engine's pots."""
    hand = new_hand(THREE, stacks=[100, 4, 100])
    play(hand, "2 bring_in", "0 complete 5")
    assert view(hand.events, None)["pots"] == [{"amount": 10, "eligible": [0, 1, 2]}]
    play(hand, "1 call")  # all in for 3 more: 4 in, the ante included
    assert view(hand.events, 1)["pots"] == [
        {"amount": 11, "eligible": [0, 1, 2]},
        {"amount": 2, "eligible": [0, 2]},
    ]
    play(hand, "2 call")
    assert view(hand.events, None)["pots"] == [
        {"amount": 12, "eligible": [0, 1, 2]},
        {"amount": 4, "eligible": [0, 2]},
    ]
    play(hand, "0 bet 5")  # king high acts first on fourth street; seat 2 has not called
    assert view(hand.events, None)["pots"] == [
        {"amount": 12, "eligible": [0, 1, 2]},
        {"amount": 9, "eligible": [0, 2]},
    ]
    check_down(hand)
    assert (
        view(hand.events, None)["pots"]
        == hand.result().pots
        == [
            {"amount": 12, "eligible": [0, 1, 2]},
            {"amount": 14, "eligible": [0, 2]},
        ]
    )


def test_scs19_every_hand_at_showdown_has_seven_cards() -> None:
    """SCS 19, Robert's 18, cardroom rule 18: a hand needs exactly seven cards to win; the
    server deals every live hand all of them."""
    hand = new_hand(THREE)
    check_down(hand)
    assert all(len(s["cards"]) == 7 for s in of_kind(hand.events, "showdown"))


def test_scs20_no_refund_for_calling_a_beaten_board() -> None:
    """SCS 20, Robert's 19, cardroom rule 19: calling when beaten by the upcards gets no refund
    (Hoyle's "impossible call" refund is not the rule here)."""
    hand = new_hand(["2c 3d 9c | 9d | 9h | 9s | 4h", "Ac Ad Kh | Ks | Qc | Qd | Jc"])
    to_seventh(hand)
    play(hand, "0 bet 10", "1 call")
    assert not of_kind(hand.events, "uncalled_returned")
    assert hand.result().net == {0: 13, 1: -13}


# ----------------------------------------------------------------- hi-lo

HIGH_FULL = "Kc Kd Kh | Qs | Qd | 9c | Th"  # kings full, no low
NO_LOW = "Ts Td 9h | 9s | Js | Qh | As"


def test_scs_hl1_high_and_low_split_the_pot_odd_chip_to_high() -> None:
    """SCS/HL 1-2, RULES.md: the best high and the best qualifying low split the pot; the odd
    chip goes to the high half, and the events say so."""
    hand = new_hand([HIGH_FULL, "Ah 2d 3c | 4s | 7d | Jc | Jd", NO_LOW], HILO)
    check_down(hand)
    awards = of_kind(hand.events, "pot_awarded")
    assert awards == [
        {"seat": 0, "pot": 0, "amount": 5, "half": "high", "odd_chips": ["high_half"]},
        {"seat": 1, "pot": 0, "amount": 4, "half": "low"},
    ]
    assert hand.result().net == {0: 2, 1: 1, 2: -3}
    assert ("muck", 2) in shown(hand)


def test_scs_hl2_no_qualifying_low_high_takes_all() -> None:
    """SCS/HL 2: a low needs five cards 8 or lower; with none, the high hand wins the pot."""
    hand = new_hand([HIGH_FULL, "Ah 2d 3c | 4s | 9d | Jc | Jd", NO_LOW], HILO)
    check_down(hand)
    assert of_kind(hand.events, "pot_awarded") == [
        {"seat": 0, "pot": 0, "amount": 9, "half": "whole"}
    ]


def test_scs_hl2_qualifier_is_a_setting() -> None:
    """SCS/HL 2 ("unless a table sign advising otherwise"): `low_qualifier=None` plays any low."""
    config = replace(HILO, low_qualifier=None)
    hand = new_hand([HIGH_FULL, "Ah 2d 3c | 4s | 9d | Jc | Jd", NO_LOW], config)
    check_down(hand)
    assert [(a["seat"], a["half"]) for a in of_kind(hand.events, "pot_awarded")] == [
        (0, "high"),
        (1, "low"),
    ]


def test_scs_hl4_any_five_for_high_and_low_and_scoop() -> None:
    """SCS/HL 4-5: any five cards for high and any five for low; aces both high (flush) and
    low (wheel); one hand may win both halves (scoop)."""
    hand = new_hand(
        [
            "Ah 2h 3h | 4h | 5d | 9h | Kc",  # ace-high flush and a wheel
            "Kd Ks Qc | Qd | Jd | 8s | 7s",
            "Td Ts 6c | 6s | Jc | 8c | 7c",
        ],
        HILO,
    )
    check_down(hand)
    awards = of_kind(hand.events, "pot_awarded")
    assert [(a["seat"], a["half"], a["amount"]) for a in awards] == [(0, "high", 5), (0, "low", 4)]
    assert hand.result().net == {0: 6, 1: -3, 2: -3}
    showdown = of_kind(hand.events, "showdown", seat=0)[0]
    assert showdown["high"] and showdown["low"]


def test_quartering_two_equal_lows_share_the_low_half() -> None:
    """SCS/HL 1, RULES.md: tied lows split the low half (the high hand "quarters" the other)."""
    hand = new_hand(
        [
            "Ah 2h 3h | 4h | 5d | 9h | Kc",  # flush, wheel
            "Ac 2d 3c | 4d | 5s | Kd | Ks",  # straight, wheel
            "Td Ts 6c | 6s | Jc | 8c | 7c",
            "Qc Qd Jd | Js | 9d | 9s | Tc",
        ],
        HILO,
    )
    check_down(hand)
    awards = of_kind(hand.events, "pot_awarded")
    assert sorted((a["seat"], a["half"], a["amount"]) for a in awards) == [
        (0, "high", 6),
        (0, "low", 3),
        (1, "low", 3),
    ]
    assert hand.result().net == {0: 6, 1: 0, 2: -3, 3: -3}


KC_HANDS = [
    "Ah 2h 3h | 4h | 5d | 9h | Kc",  # flush; a wheel (aces low) or nothing (Kansas City)
    "6c 5c 4c | 3d | 2s | Kd | Ks",  # 6-5-4-3-2: a low, or a straight (Kansas City)
    "8c 7d 4d | 3s | 2d | Td | Ts",  # 8-7-4-3-2 either way
]


def test_scs_hl5_aces_low_and_straights_do_not_hurt_the_low() -> None:
    """SCS/HL 5: aces play low and straights and flushes do not affect the low."""
    hand = new_hand(KC_HANDS, HILO)
    check_down(hand)
    assert [(a["seat"], a["half"]) for a in of_kind(hand.events, "pot_awarded")] == [
        (0, "high"),
        (0, "low"),
    ]


def test_scs_hl5_kansas_city_rules() -> None:
    """SCS/HL 5, Kansas City (`kansas_city_low`): aces are high only and straights and flushes
    count against the low."""
    hand = new_hand(KC_HANDS, replace(HILO, kansas_city_low=True))
    check_down(hand)
    assert [(a["seat"], a["half"]) for a in of_kind(hand.events, "pot_awarded")] == [
        (0, "high"),
        (2, "low"),
    ]


def test_odd_chip_between_tied_hands_goes_to_the_highest_card_by_suit() -> None:
    """RULES.md: between tied hands the odd chip goes to the highest card by suit (K of
    spades over K of diamonds), and the event names the rule."""
    hand = new_hand(
        [
            "9c Tc Jd | Qd | Ks | 2h | 3h",
            "9d Td Js | Qs | Kd | 2s | 4c",
            "5c 5d 2d | 6c | 7h | 8h | Ah",
        ]
    )
    check_down(hand)
    awards = of_kind(hand.events, "pot_awarded")
    assert awards == [
        {"seat": 0, "pot": 0, "amount": 5, "half": "whole", "odd_chips": ["highest_card_by_suit"]},
        {"seat": 1, "pot": 0, "amount": 4, "half": "whole"},
    ]


# ----------------------------------------------------------------- razz


def test_razz2_pair_of_aces_is_lower_than_pair_of_deuces() -> None:
    """Razz 2: the lowest hand wins; aces are low: a pair of aces beats a pair of deuces."""
    hand = new_hand(["Ac Ad Kc | Kd | Qc | Qd | Jc", "2c 2d Kh | Ks | Qh | Qs | Jd"], RAZZ)
    check_down(hand)
    assert hand.result().net == {0: 3, 1: -3}


def test_razz_straights_and_flushes_do_not_count() -> None:
    """Razz (stud low, ace to five): a wheel in one suit is the best low."""
    hand = new_hand(["Ah 2h 3h | 4h | 5h | Kc | Kd", "Ac 2c 3d | 4c | 6d | Qs | Js"], RAZZ)
    check_down(hand)
    assert hand.result().net == {0: 3, 1: -3}
    assert of_kind(hand.events, "showdown", seat=0)[0]["low"]


def test_roberts16_all_in_player_gets_the_last_card_face_down() -> None:
    """Robert's 16, cardroom rule 16: an all-in player receives the last hole card face down,
    seen by that player only."""
    hand = new_hand(THREE, stacks=[100, 3, 100])
    play(hand, "2 bring_in", "0 call", "1 call")
    to_seventh(hand)
    seventh = of_kind(hand.events, "street_dealt")[-1]
    assert {"seat": 1, "up": [], "down": 1} in seventh["deals"]
    private = [e for e in hand.events if e.kind == "down_cards" and e.data["street"] == "seventh"]
    assert [(e.to, e.data["cards"]) for e in private if e.data["seat"] == 1] == [(1, ["Js"])]
