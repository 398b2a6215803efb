"""Fixed-limit sizes, the raise cap, open pairs, short all-ins, pot limit and no limit."""

from __future__ import annotations

from dataclasses import replace

import pytest
from decks import new_hand, of_kind, play

from engine.hand import Hand
from engine.variants import TableConfig

STUD = TableConfig()  # seven-card stud, ante 1, bring-in 2, limits 5/10, a bet and 3 raises
FIVE_SEATS = ["As Ah Kd", "Ks Kh 2c", "Qs Qh 9c", "Js Jh Td", "Ts 9s Jc"]

# Fourth street: seat 0 pairs its door card (9c 9d); seat 2 brings in with 2c.
OPEN_PAIR = ["Ac Ad 9c | 9d", "Kc Kd Ah | 3d", "Qc Qd 2c | 4s"]
# Fourth street without a pair; seat 0 (K-Q) is high, seat 2 (2c) brings in.
NO_PAIR = ["Ac Ad Kh | Qs", "2d 3d 8h | 7s", "4c 5c 2c | 6d"]


def to_fourth(hands: list[str], config: TableConfig = STUD, **options: object) -> Hand:
    """Deal ``hands`` and play third street: seat 2 brings in, the others call."""
    hand = new_hand(hands, config, **options)  # type: ignore[arg-type]
    play(hand, "2 bring_in", "0 call", "1 call")
    assert hand.street == 1
    return hand


# ----------------------------------------------------------------- completion and the cap


def test_scs4_completion_is_not_a_raise_and_the_cap_counts_from_it() -> None:
    """SCS 4, Robert's 6, cardroom rule 3: completing the bring-in is the bet; three raises
    remain after it (a bet and three raises)."""
    hand = new_hand(FIVE_SEATS)
    play(hand, "1 bring_in", "2 complete 5", "3 raise 10", "4 raise 15", "0 raise 20")
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.call) == (1, ("fold", "call"), 18)


def test_scs4_one_bet_and_four_raises_house_rule() -> None:
    """SCS 4 (`max_raises=4`): where the house allows a bet and four raises, four raises remain
    open after the completion."""
    hand = new_hand(FIVE_SEATS, replace(STUD, max_raises=4))
    play(hand, "1 bring_in", "2 complete 5", "3 raise 10", "4 raise 15", "0 raise 20")
    assert hand.legal_actions().to_choices == (25,)
    play(hand, "1 raise 25")
    assert hand.legal_actions().kinds == ("fold", "call")


def test_raise_cap_does_not_apply_heads_up() -> None:
    """RULES.md (`uncapped_heads_up`): no cap on raises once only two players are live."""
    hand = new_hand(["Ks Kh 2c", "As Ah Kd"])
    play(
        hand,
        "0 bring_in",
        "1 complete 5",
        "0 raise 10",
        "1 raise 15",
        "0 raise 20",
        "1 raise 25",
        "0 raise 30",
    )
    assert hand.legal_actions().to_choices == (35,)


def test_raise_cap_heads_up_setting_off() -> None:
    """RULES.md: with `uncapped_heads_up=False` the cap holds heads-up too."""
    hand = new_hand(["Ks Kh 2c", "As Ah Kd"], replace(STUD, uncapped_heads_up=False))
    play(hand, "0 bring_in", "1 complete 5", "0 raise 10", "1 raise 15", "0 raise 20")
    assert hand.legal_actions().kinds == ("fold", "call")


def test_raise_cap_lifted_when_a_fold_leaves_two_players() -> None:
    """RULES.md: a three-way pot that becomes heads-up is no longer capped."""
    hand = new_hand(["As Ah Kd", "Ks Kh Qd", "Qs Qh 2c"])
    play(hand, "2 bring_in", "0 complete 5", "1 fold", "2 raise 10", "0 raise 15", "2 raise 20")
    assert hand.legal_actions().to_choices == (25,)


# ----------------------------------------------------------------- fourth street and later


def test_scs5_open_pair_allows_the_small_or_the_big_bet() -> None:
    """SCS 5, Robert's 7, cardroom rule 4: with an open pair on fourth street the player may
    check, bet the small or the big bet."""
    hand = to_fourth(OPEN_PAIR)
    said = [(a["kind"], a["seat"], a["text"]) for a in of_kind(hand.events, "announcement")]
    assert said[-1] == ("high_board", 0, "pair of nines is high")
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.to_choices) == (0, ("fold", "check", "bet"), (5, 10))


def test_scs5_after_a_small_bet_call_raise_small_or_raise_big() -> None:
    """SCS 5, Robert's 7: after a small bet others may call, raise the small or the big bet;
    once the big bet is made, increments stay big."""
    hand = to_fourth(OPEN_PAIR)
    play(hand, "0 bet 5")
    legal = hand.legal_actions()
    assert (legal.seat, legal.call, legal.to_choices) == (1, 5, (10, 15))
    play(hand, "1 raise 15")
    assert hand.legal_actions().to_choices == (25,)
    play(hand, "2 call")
    assert hand.legal_actions().to_choices == (25,)


def test_scs5_small_raises_keep_both_options_until_the_big_bet() -> None:
    """SCS 5: small increments leave both sizes open; the first big one fixes the big bet."""
    hand = to_fourth(OPEN_PAIR)
    play(hand, "0 bet 5", "1 raise 10")
    assert hand.legal_actions().to_choices == (15, 20)
    play(hand, "2 raise 20")
    assert hand.legal_actions().to_choices == (30,)


def test_scs5_big_bet_at_once() -> None:
    """SCS 5: a big bet straight away makes every raise big."""
    hand = to_fourth(OPEN_PAIR)
    play(hand, "0 bet 10")
    assert hand.legal_actions().to_choices == (20,)


def test_roberts7_after_a_check_the_next_player_has_the_same_options() -> None:
    """Robert's 7, cardroom rule 4: if the high hand with the open pair checks, later players
    have the same choice of the small or the big bet (any player may exercise it, SCS 5)."""
    hand = to_fourth(OPEN_PAIR)
    play(hand, "0 check")
    assert hand.legal_actions().to_choices == (5, 10)
    play(hand, "1 check")
    assert hand.legal_actions().to_choices == (5, 10)


def test_scs5_setting_off() -> None:
    """SCS 5 as a setting: `open_pair_big_bet=False` keeps fourth street at the small bet."""
    hand = to_fourth(OPEN_PAIR, replace(STUD, open_pair_big_bet=False))
    assert hand.legal_actions().to_choices == (5,)


def test_scs_hl6_open_pair_does_not_affect_the_limit_in_hi_lo() -> None:
    """SCS/HL 6: in stud eight-or-better an open pair on fourth street does not change the limit."""
    hand = to_fourth(OPEN_PAIR, STUD.with_variant("seven_card_stud_hi_lo"))
    assert hand.legal_actions().to_choices == (5,)


def test_razz5_open_pair_does_not_affect_the_limit() -> None:
    """Razz 5: in limit razz an open pair does not affect the limit."""
    hand = new_hand(OPEN_PAIR, STUD.with_variant("razz"))
    play(hand, "0 bring_in", "1 call", "2 call")  # 9c is the razz bring-in
    assert hand.legal_actions().to_choices == (5,)


def test_scs6_small_bet_on_fourth_without_a_pair() -> None:
    """SCS 5-6, cardroom: the small bet on the first two rounds when no open pair shows."""
    hand = to_fourth(NO_PAIR)
    legal = hand.legal_actions()
    assert (legal.seat, legal.to_choices) == (0, (5,))


def test_scs6_big_bet_from_fifth_street_on() -> None:
    """SCS 6-7, cardroom steps 6-11: the big bet on fifth, sixth and seventh street,
    whatever happened on fourth."""
    hand = to_fourth(NO_PAIR)
    play(hand, "0 check", "1 check", "2 check")
    for street in ("fifth", "sixth", "seventh"):
        assert of_kind(hand.events, "street_dealt")[-1]["street"] == street
        first = hand.seat_to_act()
        assert hand.legal_actions().to_choices == (10,)
        play(hand, f"{first} bet 10")
        assert hand.legal_actions().to_choices == (20,)
        for _ in range(2):
            play(hand, f"{hand.seat_to_act()} call")
    assert hand.is_over()


def test_scs7_five_betting_rounds() -> None:
    """SCS 7, cardroom steps 3-11: five betting rounds; seven cards, the last one down."""
    hand = to_fourth(NO_PAIR)
    betting = {0}
    while not hand.is_over():
        betting.add(hand.street)
        play(hand, f"{hand.seat_to_act()} check")
    assert betting == {0, 1, 2, 3, 4}
    dealt = of_kind(hand.events, "street_dealt")
    assert [d["street"] for d in dealt] == ["third", "fourth", "fifth", "sixth", "seventh"]
    assert [d["deals"][0]["down"] for d in dealt] == [2, 0, 0, 0, 1]
    assert all(len(cards) == 7 for cards in hand.cards)


# ----------------------------------------------------------------- short all-ins


def test_short_all_in_of_less_than_half_a_bet_does_not_reopen_betting() -> None:
    """RULES.md: an all-in raise of less than half a bet does not reopen the betting for
    players who already acted; players yet to act may complete the raise."""
    hand = to_fourth(NO_PAIR, stacks=[100, 10, 100])
    play(hand, "0 bet 5")
    legal = hand.legal_actions()
    assert (legal.seat, legal.call, legal.to_choices) == (1, 5, (7,))
    play(hand, "1 raise 7")
    legal = hand.legal_actions()
    assert (legal.seat, legal.call, legal.to_choices) == (2, 7, (10,))
    play(hand, "2 call")
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.call) == (0, ("fold", "call"), 2)
    play(hand, "0 call")
    assert hand.street == 2


def test_short_all_in_of_half_a_bet_or_more_counts_as_a_full_raise() -> None:
    """RULES.md (`all_in_full_fraction`): an all-in raise of half a bet or more is a full raise:
    it reopens the betting."""
    hand = to_fourth(NO_PAIR, stacks=[100, 11, 100])
    play(hand, "0 bet 5", "1 raise 8", "2 call")
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.call, legal.to_choices) == (
        0,
        ("fold", "call", "raise"),
        3,
        (13,),
    )


def test_uncalled_bet_is_returned() -> None:
    """RULES.md: chips nobody called go back to their owner."""
    hand = to_fourth(NO_PAIR)
    events = play(hand, "0 bet 5", "1 fold", "2 fold")
    assert of_kind(events, "uncalled_returned") == [{"seat": 0, "amount": 5}]
    assert hand.result().net == {0: 6, 1: -3, 2: -3}


def test_uncalled_part_of_a_bet_returned_to_the_bettor_after_a_short_call() -> None:
    """RULES.md: when the only caller is all in for less, the excess comes back."""
    hand = to_fourth(NO_PAIR, stacks=[100, 100, 7])
    play(hand, "0 bet 5", "1 fold")
    events = play(hand, "2 call")
    assert of_kind(events, "action")[0]["amount"] == 4
    assert of_kind(events, "uncalled_returned") == [{"seat": 0, "amount": 1}]
    assert hand.total == [7, 3, 7]


# ----------------------------------------------------------------- pot limit and no limit

POT_LIMIT = replace(STUD, structure="pot_limit")
NO_LIMIT = replace(STUD, structure="no_limit")
THREE = ["As Ah Kd", "Ks Kh Qd", "Qs Qc 2c"]


def test_pot_limit_amounts() -> None:
    """RULES.md, Razz 1: pot limit: the minimum bet is the small bet, the minimum raise the last
    full raise, the maximum the pot after calling."""
    hand = new_hand(THREE, POT_LIMIT, stacks=200)
    legal = hand.legal_actions()  # the bring-in may open for a full bet (antes: 3)
    assert (legal.kinds, legal.min_to, legal.max_to) == (("bring_in", "complete"), 5, 5)
    play(hand, "2 bring_in")
    legal = hand.legal_actions()  # pot 5, call 2: up to 2 + 7
    assert (legal.wager, legal.min_to, legal.max_to, legal.to_choices) == ("complete", 5, 9, ())
    play(hand, "0 complete 9")
    legal = hand.legal_actions()  # pot 14, call 9: up to 9 + 23
    assert (legal.wager, legal.min_to, legal.max_to) == ("raise", 18, 32)
    play(hand, "1 raise 32")
    legal = hand.legal_actions()  # last raise 23; pot 46, call 30: up to 32 + 76
    assert (legal.min_to, legal.max_to) == (55, 108)


def test_pot_limit_bet_on_a_later_street() -> None:
    """RULES.md: pot limit on fourth street: from the small bet up to the pot."""
    hand = new_hand(THREE, POT_LIMIT, stacks=200)
    play(hand, "2 bring_in", "0 call", "1 call")
    legal = hand.legal_actions()
    assert (legal.wager, legal.min_to, legal.max_to) == ("bet", 5, 9)
    play(hand, f"{legal.seat} bet 9")
    legal = hand.legal_actions()  # pot 18, call 9: up to 9 + 27
    assert (legal.min_to, legal.max_to) == (18, 36)


def test_pot_limit_maximum_is_capped_by_the_stack() -> None:
    """Table stakes: no wager may exceed the chips in front of the player."""
    hand = new_hand(THREE, POT_LIMIT, stacks=[100, 20, 200])
    play(hand, "2 bring_in", "0 complete 9")
    legal = hand.legal_actions()
    assert (legal.min_to, legal.max_to) == (18, 19)


def test_no_limit_amounts() -> None:
    """RULES.md, Razz 1: no limit: from the small bet (or the last full raise) up to all in."""
    hand = new_hand(THREE, NO_LIMIT)
    legal = hand.legal_actions()
    assert (legal.min_to, legal.max_to) == (5, 99)
    play(hand, "2 bring_in")
    assert (hand.legal_actions().min_to, hand.legal_actions().max_to) == (5, 99)
    play(hand, "0 complete 20")
    assert (hand.legal_actions().min_to, hand.legal_actions().max_to) == (40, 99)
    play(hand, "1 raise 50")
    assert (hand.legal_actions().min_to, hand.legal_actions().max_to) == (80, 99)


def test_no_limit_short_all_in_raise_does_not_reopen() -> None:
    """RULES.md: an all-in raise smaller than a full raise does not reopen the betting."""
    hand = to_fourth(NO_PAIR, NO_LIMIT, stacks=[100, 33, 100])
    play(hand, "0 bet 20")
    legal = hand.legal_actions()
    assert (legal.seat, legal.min_to, legal.max_to) == (1, 30, 30)  # all in: 30 < 20 + 20
    play(hand, "1 raise 30")
    legal = hand.legal_actions()
    assert (legal.seat, legal.min_to, legal.max_to) == (2, 50, 97)  # the last full raise: 20
    play(hand, "2 call")
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.call) == (0, ("fold", "call"), 10)


@pytest.mark.parametrize("structure", ["pot_limit", "no_limit"])
def test_razz1_razz_is_played_pot_limit_and_no_limit(structure: str) -> None:
    """Razz 1: razz is sometimes played pot limit and no limit (a setting, `structure`)."""
    config = replace(STUD.with_variant("razz"), structure=structure)
    hand = new_hand(THREE, config)
    assert hand.seat_to_act() == 0  # Kd is the highest razz card
    play(hand, "0 bring_in")
    legal = hand.legal_actions()
    assert legal.to_choices == () and legal.min_to == 5
    assert legal.max_to == (9 if structure == "pot_limit" else 99)
