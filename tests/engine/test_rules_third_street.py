"""Antes, who is dealt in, and the bring-in (the first betting round)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from decks import new_hand, of_kind, play

from engine.variants import TableConfig, find_variant

STUD = TableConfig()  # seven-card stud, ante 1, bring-in 2, limits 5/10, a bet and 3 raises
RAZZ = STUD.with_variant("razz")
HILO = STUD.with_variant("seven_card_stud_hi_lo")
FIVE = STUD.with_variant("five_card_stud")


def test_scs2_every_seat_antes_before_the_deal() -> None:
    """SCS 2, cardroom step 1: players ante before receiving a hand."""
    hand = new_hand(["Ac Ad 4c", "Kc Kd 5d", "Qc Qd 6h"], stacks=[50, 60, 70])
    kinds = [e.kind for e in hand.events]
    last_ante = max(i for i, k in enumerate(kinds) if k == "ante")
    assert last_ante < kinds.index("street_dealt")
    assert of_kind(hand.events, "ante") == [
        {"seat": s, "amount": 1, "all_in": False} for s in range(3)
    ]
    assert hand.pot_total() == 3
    assert hand.stacks == [49, 59, 69]


def test_cardroom_step2_two_down_one_up_each() -> None:
    """SCS 3, cardroom step 2: two downcards and an upcard (the door card) to each player."""
    hand = new_hand(["Ac Ad 4c", "Kc Kd 5d"], seats=[3, 6])
    dealt = of_kind(hand.events, "street_dealt")[0]
    assert dealt["street"] == "third"
    assert dealt["deals"] == [
        {"seat": 3, "up": ["4c"], "down": 2},
        {"seat": 6, "up": ["5d"], "down": 2},
    ]
    private = [(e.to, e.data["cards"]) for e in hand.events if e.kind == "down_cards"]
    assert private == [(3, ["Ac", "Ad"]), (6, ["Kc", "Kd"])]


def test_scs3_lowest_upcard_brings_in() -> None:
    """SCS 3, Robert's 2, cardroom rule 1: the lowest upcard makes the forced bring-in."""
    hand = new_hand(["As Ah Kd", "Ks Kh 3h", "Qs Qh 9c"])
    legal = hand.legal_actions()
    assert legal.seat == 1
    assert legal.kinds == ("bring_in", "complete")
    assert legal.bring_in == 2
    assert legal.to_choices == (5,)


def test_scs3_lowest_upcard_tie_broken_by_suit() -> None:
    """SCS 3, Robert's 2: with two lowest upcards of a rank, the lower suit (clubs) brings in."""
    hand = new_hand(["As Ah 3d", "Ks Kh 3c", "Qs Qh 3s"])
    assert hand.seat_to_act() == 1
    hand = new_hand(["As Ah 3d", "Ks Kh 3h", "Qs Qh 3s"])
    assert hand.seat_to_act() == 0


def test_scs3_bring_in_may_open_for_a_full_bet() -> None:
    """SCS 3, Robert's 3, cardroom rule 2: the forced player may open for the full small bet."""
    hand = new_hand(["As Ah Kd", "Ks Kh 3h", "Qs Qh 9c"])
    events = play(hand, "1 complete 5")
    assert of_kind(events, "action") == [
        {"seat": 1, "action": "complete", "amount": 5, "to": 5, "stack": 94}
    ]
    legal = hand.legal_actions()
    assert legal.seat == 2
    assert legal.kinds == ("fold", "call", "raise")
    assert (legal.call, legal.to_choices) == (5, (10,))


def test_scs3_action_moves_clockwise_back_to_the_opener() -> None:
    """SCS 3: after the bring-in, action goes clockwise around the table to the opener."""
    hand = new_hand(["As Ah Kd", "Ks Kh Jh", "Qs Qh 2c", "Js Jd 9c"])
    assert hand.seat_to_act() == 2
    play(hand, "2 bring_in")
    assert hand.seat_to_act() == 3
    play(hand, "3 call")
    assert hand.seat_to_act() == 0
    play(hand, "0 call")
    assert hand.seat_to_act() == 1
    play(hand, "1 complete 5")
    assert hand.seat_to_act() == 2  # back to the opener, now facing the completion
    assert hand.legal_actions().call == 3


def test_scs4_players_may_call_complete_or_fold() -> None:
    """SCS 4: after a bring-in, players call it, complete to the small bet, or fold."""
    hand = new_hand(["As Ah Kd", "Ks Kh 3h", "Qs Qh 9c"])
    play(hand, "1 bring_in")
    legal = hand.legal_actions()
    assert legal.seat == 2
    assert legal.kinds == ("fold", "call", "complete")
    assert legal.call == 2
    assert legal.wager == "complete" and legal.to_choices == (5,)
    play(hand, "2 complete 5")
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.call) == (0, ("fold", "call", "raise"), 5)
    assert legal.to_choices == (10,)


def test_scs4_opener_may_not_complete_later_by_default() -> None:
    """SCS 4 (standard rule): a bring-in that everyone calls ends the round; no option."""
    hand = new_hand(["As Ah Kd", "Ks Kh 3h", "Qs Qh 9c"])
    play(hand, "1 bring_in", "2 call", "0 call")
    assert hand.street == 1
    assert of_kind(hand.events, "street_dealt")[-1]["street"] == "fourth"


def test_scs4_alternate_opener_may_complete_when_action_returns() -> None:
    """SCS 4 alternate (`bring_in_may_complete_later`): uncompleted, the action returns to
    the bring-in, who may complete (a completion, not a raise) or check."""
    config = replace(STUD, bring_in_may_complete_later=True)
    hand = new_hand(["As Ah Kd", "Ks Kh 3h", "Qs Qh 9c"], config)
    play(hand, "1 bring_in", "2 call", "0 call")
    legal = hand.legal_actions()
    assert legal.seat == 1
    assert legal.kinds == ("fold", "check", "complete")
    assert legal.to_choices == (5,)
    play(hand, "1 complete 5")
    assert hand.legal_actions().call == 3
    play(hand, "2 call", "0 raise 10", "1 raise 15", "2 raise 20")
    assert hand.legal_actions().kinds == ("fold", "call")  # complete + 3 raises: capped


def test_scs4_alternate_option_is_a_check_to_close_the_round() -> None:
    """SCS 4 alternate: the bring-in may decline the option; the round then ends."""
    config = replace(STUD, bring_in_may_complete_later=True)
    hand = new_hand(["As Ah Kd", "Ks Kh 3h", "Qs Qh 9c"], config)
    play(hand, "1 bring_in", "2 call", "0 call", "1 check")
    assert hand.street == 1


def test_scs4_alternate_no_option_once_someone_completed() -> None:
    """SCS 4 alternate: the option exists only when nobody completed the bring-in."""
    config = replace(STUD, bring_in_may_complete_later=True)
    hand = new_hand(["As Ah Kd", "Ks Kh 3h", "Qs Qh 9c"], config)
    play(hand, "1 bring_in", "2 complete 5", "0 call")
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.call) == (1, ("fold", "call", "raise"), 3)
    play(hand, "1 call")
    assert hand.street == 1


def test_razz3_highest_upcard_brings_in_king_of_spades() -> None:
    """Razz 3: the high card brings it in; with two kings the higher suit (K of spades)."""
    hand = new_hand(["2c 3c Kh", "2d 3d Ks", "2h 3h Qd", "2s 3s Ac"], RAZZ)
    assert hand.seat_to_act() == 1
    assert of_kind(hand.events, "announcement", kind="bring_in")[0]["card"] == "Ks"


def test_razz3_ace_is_low_for_the_bring_in() -> None:
    """Razz 2-3: aces are low, so a deuce brings in rather than an ace."""
    hand = new_hand(["Kc Qc Ad", "Kd Qd 2c"], RAZZ)
    assert hand.seat_to_act() == 1


def test_scs_hl3_low_card_brings_in_by_suit() -> None:
    """SCS/HL 3: in stud eight-or-better the low card brings it in, ties by suit."""
    hand = new_hand(["Kc Qc As", "Kd Qd 2d", "Kh Qh 2c"], HILO)
    assert hand.seat_to_act() == 2


def test_scs_hl3_alternate_high_card_brings_in() -> None:
    """SCS/HL 3 alternate and SCS 3's aside (`bring_in_card="high"`): the high card brings in;
    aces are high there."""
    config = replace(HILO, bring_in_card="high")
    hand = new_hand(["Kc Qc As", "Kd Qd 2d", "Kh Qh Ks"], config)
    assert hand.seat_to_act() == 0
    hand = new_hand(["Kc Qc Ah", "Kd Qd As"], replace(STUD, bring_in_card="high"))
    assert hand.seat_to_act() == 1


def test_scs11_alternate_all_in_for_the_ante_next_player_acts_on_the_bring_in() -> None:
    """SCS 11 alternate, Robert's 4, cardroom rule 8: a low card all in for the ante does not
    bring in; the player to the left may fold, come in for the bring-in, or complete."""
    config = replace(STUD, eligibility="ante")
    # Seat 2 is to the left of the all-in low card; seat 3 holds the next-lowest card.
    hand = new_hand(
        ["As Ah Kd", "Ks Kh 2c", "Qs Qh Qc", "Js Jh 9c"], config, stacks=[100, 1, 100, 100]
    )
    assert of_kind(hand.events, "ante", seat=1) == [{"seat": 1, "amount": 1, "all_in": True}]
    assert of_kind(hand.events, "announcement", kind="bring_in_all_in")[0]["seat"] == 1
    legal = hand.legal_actions()
    assert legal.seat == 2
    assert legal.kinds == ("fold", "call", "complete")
    assert (legal.call, legal.to_choices) == (2, (5,))
    play(hand, "2 call", "3 call", "0 call")
    assert hand.street == 1  # the all-in seat is never asked to act
    fourth = of_kind(hand.events, "street_dealt")[-1]["deals"]
    assert [d["seat"] for d in fourth] == [0, 1, 2, 3]


def test_scs11_alternate_next_player_may_fold_or_complete() -> None:
    """SCS 11 alternate: the next player's choices are those of a bring-in: fold passes them
    on, completing makes the full bet."""
    config = replace(STUD, eligibility="ante")
    hand = new_hand(
        ["As Ah Kd", "Ks Kh 2c", "Qs Qh Qc", "Js Jh 9c"], config, stacks=[100, 1, 100, 100]
    )
    play(hand, "2 fold")
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.call) == (3, ("fold", "call", "complete"), 2)
    play(hand, "3 complete 5")
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.call, legal.to_choices) == (
        0,
        ("fold", "call", "raise"),
        5,
        (10,),
    )


def test_roberts4_short_bring_in_others_enter_for_the_full_amount() -> None:
    """Robert's 4: a low card with chips for only part of the bring-in posts it all in;
    everyone else must enter for at least the normal bring-in."""
    hand = new_hand(["As Ah Kd", "Ks Kh 2c", "Qs Qh 9c"], stacks=[100, 2, 100])
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.bring_in) == (1, ("bring_in",), 1)
    events = play(hand, "1 bring_in")
    assert of_kind(events, "action")[0] == {
        "seat": 1,
        "action": "bring_in",
        "amount": 1,
        "to": 1,
        "stack": 0,
        "all_in": True,
    }
    legal = hand.legal_actions()
    assert (legal.seat, legal.call, legal.to_choices) == (2, 2, (5,))
    play(hand, "2 call", "0 call")
    assert hand.street == 1
    assert hand.total == [3, 2, 3]


def test_five_card_stud_bring_in_on_the_first_upcard() -> None:
    """Five-card stud (SCS): one down, one up; the lowest upcard brings in as in seven-card."""
    hand = new_hand(["2c 9d", "3c 4h", "2d Ks"], FIVE)
    dealt = of_kind(hand.events, "street_dealt")[0]["deals"]
    assert [(d["up"], d["down"]) for d in dealt] == [(["9d"], 1), (["4h"], 1), (["Ks"], 1)]
    assert hand.seat_to_act() == 1


def test_hoyle_betting_highest_card_must_bet_with_no_ante() -> None:
    """Hoyle, Betting: no ante; the highest card showing must make a bet (a forced full bet:
    `ante=0`, `bring_in=small_bet`, `bring_in_card="high"`); later the first bettor may check."""
    config = TableConfig(
        variant=find_variant("five_card_stud"),
        ante=0,
        bring_in=5,
        small_bet=5,
        big_bet=10,
        bring_in_card="high",
    )
    hand = new_hand(["2c 9d", "3c Ah", "2d Ks"], config)
    assert not of_kind(hand.events, "ante")
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.bring_in) == (1, ("bring_in",), 5)
    play(hand, "1 bring_in")
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.call, legal.to_choices) == (
        2,
        ("fold", "call", "raise"),
        5,
        (10,),
    )
    play(hand, "2 call", "0 call")
    assert "check" in hand.legal_actions().kinds


HOYLE_NO_ANTE = TableConfig(
    variant=find_variant("five_card_stud"),
    ante=0,
    bring_in=5,
    small_bet=5,
    big_bet=10,
    bring_in_card="high",
)


def test_hoyle_betting_tie_for_highest_card_broken_by_suit_by_default() -> None:
    """Hoyle, Betting, read with SCS 3's suit order (the default `bring_in_tie="suit"`): of two
    kings showing, the king of spades must bet."""
    hand = new_hand(["2c Kd", "3c Ks", "2d 9h"], HOYLE_NO_ANTE)
    assert hand.seat_to_act() == 1
    bring_in = of_kind(hand.events, "announcement", kind="bring_in")
    assert [(a["seat"], a["card"]) for a in bring_in] == [(1, "Ks")]


def test_hoyle_betting_tie_for_highest_card_nearest_the_dealers_left_bets_first() -> None:
    """Hoyle, Betting (`bring_in_tie="position"`): "if two or more players tie for
    highest-showing card, the player nearest the dealer's left bets first", whatever the suits.
    Online the dealer sits before the lowest seat number, so that is the lowest seat dealt in."""
    config = replace(HOYLE_NO_ANTE, bring_in_tie="position")
    hand = new_hand(["2c 9h", "3c Kd", "2d Ks", "3d Kh"], config, seats=[1, 3, 4, 6])
    assert hand.seat_to_act() == 3
    bring_in = of_kind(hand.events, "announcement", kind="bring_in")
    assert [(a["seat"], a["card"], a["text"]) for a in bring_in] == [
        (3, "Kd", "the king of diamonds brings it in")
    ]
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.bring_in) == (3, ("bring_in",), 5)
    # A higher card anywhere still bets first: position only breaks ties.
    hand = new_hand(["2c Kd", "3c As", "2d Kh"], config)
    assert hand.seat_to_act() == 1


@pytest.mark.parametrize(
    ("config", "hands", "expected"),
    [
        (STUD, ["As Ah 3h", "Ks Kh 3c", "Qs Qh 3d"], 0),  # three of hearts, three of clubs
        (RAZZ, ["As Ah Kc", "2s 2h Ks", "3s 3h 9d"], 0),  # razz: two kings, the high card
    ],
)
def test_bring_in_tie_by_position_goes_to_the_dealers_left(
    config: TableConfig, hands: list[str], expected: int
) -> None:
    """SCS 3 and Razz 3 read by position (`bring_in_tie="position"`): equal bring-in cards are
    decided by the seat nearest the dealer's left, not the suit."""
    by_suit = new_hand(hands, config)
    assert by_suit.seat_to_act() != expected
    hand = new_hand(hands, replace(config, bring_in_tie="position"))
    assert hand.seat_to_act() == expected
    assert hand.legal_actions().kinds == ("bring_in", "complete")


@pytest.mark.parametrize("name", ["seven_card_stud", "razz", "seven_card_stud_hi_lo"])
def test_scs3_bring_in_is_announced(name: str) -> None:
    """SCS 9, Robert's 12: the dealer announces the low card (razz: high card) on third street."""
    hand = new_hand(["As Ah 8d", "Ks Kh 7h", "Qs Qh 9c"], STUD.with_variant(name))
    announced = of_kind(hand.events, "announcement", kind="bring_in")
    expected = {"razz": ("9c", 2)}.get(name, ("7h", 1))
    assert [(a["card"], a["seat"]) for a in announced] == [expected]


def test_no_forced_bet_the_low_card_opens_or_the_next_player_if_all_in() -> None:
    """Hoyle, Betting; SCS 11 alternate (`bring_in=0`): with no forced bet the designated card
    opens (it may check); if it is all in for the ante, the next player opens instead."""
    config = replace(STUD, bring_in=0, eligibility="ante")
    hand = new_hand(["As Ah Kd", "Ks Kh 2c", "Qs Qh 9c"], config)
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.to_choices) == (1, ("fold", "check", "bet"), (5,))
    hand = new_hand(["As Ah Kd", "Ks Kh 2c", "Qs Qh 9c"], config, stacks=[100, 1, 100])
    assert hand.seat_to_act() == 2
