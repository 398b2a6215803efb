"""The rake: a percentage of each pot, rounded down, capped per hand, taken only from a hand
that reaches the table's rake street, before the pots are split."""

from __future__ import annotations

from dataclasses import replace

import pytest
from decks import check_down, new_hand, of_kind, play

from engine.errors import ConfigError
from engine.events import RakeTaken, decode
from engine.hand import Hand
from engine.phh import loads
from engine.phh_export import export
from engine.phh_replay import replay
from engine.phh_rules import phh_config
from engine.pots import Pot, rake
from engine.variants import TableConfig

STUD = TableConfig()
HILO = STUD.with_variant("seven_card_stud_hi_lo")

# Seat 0: kings and sixes; seat 1: trip queens; seat 2: deuces full of sixes (wins).
THREE = [
    "6d 6c Kc | 9h | 4s | 7d | Kd",
    "Qc Qd Qh | 3s | 8d | 5c | Js",
    "2d 2s 2c | 6h | Ts | 6s | 3d",
]


def raked(config: TableConfig = STUD, **settings: object) -> TableConfig:
    return replace(config, **{"rake_percent": 10, **settings})  # type: ignore[arg-type]


def chips(hand: Hand) -> int:
    return sum(hand.stacks)


def test_rake_of_pots_rounds_down_main_pot_first_and_caps_the_hand() -> None:
    pots = [Pot(99, (0, 1, 2)), Pot(50, (1, 2)), Pot(19, (2,))]
    assert rake(pots, 500, None) == [4, 2, 0]  # 4.95, 2.5, 0.95: whole chips, down
    assert rake(pots, 1000, 12) == [9, 3, 0]  # the cap reached in the side pot
    assert rake(pots, 1000, 5) == [5, 0, 0]
    assert rake(pots, 250, None) == [2, 1, 0]  # 2.5%: hundredths of a percent are exact
    assert rake(pots, 0, None) == [0, 0, 0]
    assert rake(pots, 1000, 0) == [0, 0, 0]


def test_a_rake_under_one_chip_takes_nothing() -> None:
    hand = new_hand(THREE, raked())
    check_down(hand)  # antes 3, the bring-in called by all: 9 in the pot, 10% is 0.9
    assert hand.result().rake == 0
    assert not [e for e in hand.events if isinstance(e, RakeTaken)]
    assert chips(hand) == 300


def test_rake_percentage_goes_to_the_house_and_the_stacks_net_to_minus_it() -> None:
    hand = new_hand(THREE, raked())
    to_seventh_with_bets(hand)
    result = hand.result()
    assert result.rake == 11  # 10% of 114, rounded down
    assert [e.data for e in hand.events if isinstance(e, RakeTaken)] == [
        {"amount": 11, "pots": [11]}
    ]
    assert of_kind(hand.events, "pot_awarded") == [
        {"seat": 2, "pot": 0, "amount": 103, "half": "whole"}
    ]
    assert result.pots == [{"amount": 114, "eligible": [0, 1, 2], "rake": 11}]
    assert sum(result.net.values()) == -11
    assert chips(hand) == 300 - 11
    # The rake event comes before the awards, and decodes to itself.
    kinds = [e.kind for e in hand.events]
    assert kinds.index("rake") < kinds.index("pot_awarded")
    assert decode("rake", {"amount": 6, "pots": [6]}) == RakeTaken(6, (6,))


def to_seventh_with_bets(hand: Hand) -> None:
    """Bring-in called by all (9), then 5 each on fourth (24), 10 each from fifth on (114)."""
    play(hand, "2 bring_in", "0 call", "1 call")
    for size in (5, 10, 10, 10):
        legal = hand.legal_actions()
        first = legal.seat
        assert first is not None
        play(hand, f"{first} bet {size}")
        while (
            not hand.is_over()
            and hand.legal_actions().kinds
            and "call" in (hand.legal_actions().kinds)
        ):
            play(hand, f"{hand.legal_actions().seat} call")


def test_the_cap_limits_the_hand() -> None:
    hand = new_hand(THREE, raked(rake_cap=4))
    to_seventh_with_bets(hand)
    assert hand.result().rake == 4
    assert chips(hand) == 300 - 4


def test_no_flop_no_drop_a_hand_ending_on_the_first_street_is_not_raked() -> None:
    hand = new_hand(THREE, raked(rake_percent=50))
    play(hand, "2 bring_in", "0 complete 5", "1 fold", "2 fold")
    assert hand.is_over()
    assert hand.result().rake == 0
    assert not [e for e in hand.events if isinstance(e, RakeTaken)]
    assert chips(hand) == 300


def test_a_hand_won_uncontested_on_a_later_street_is_raked() -> None:
    hand = new_hand(THREE, raked(rake_percent=50))
    play(hand, "2 bring_in", "0 call", "1 call")  # 9 in; fourth street is dealt
    first = hand.legal_actions().seat
    play(hand, f"{first} bet 5")
    for _ in range(2):
        play(hand, f"{hand.legal_actions().seat} fold")
    assert hand.is_over()
    # The bet of 5 went back uncalled: only the 9 called is raked (half, rounded down).
    assert hand.result().rake == 4
    assert chips(hand) == 300 - 4


def test_rake_from_the_first_street_rakes_every_hand() -> None:
    hand = new_hand(THREE, raked(rake_percent=50, rake_from_street=1))
    play(hand, "2 bring_in", "0 complete 5", "1 fold", "2 fold")
    assert hand.result().rake == 3  # half of 1 + 1 + 1 + 2 (the bring-in), the 5 back
    hand = new_hand(THREE, raked(rake_percent=50, rake_from_street=5))
    play(hand, "2 bring_in", "0 call", "1 call")
    first = hand.legal_actions().seat
    play(hand, f"{first} bet 5", *(f"{s} fold" for s in (0, 1, 2) if s != first))
    assert hand.result().rake == 0  # ended on fourth street, the rake starts on seventh


def test_side_pots_are_each_raked_main_pot_first_under_the_cap() -> None:
    """Seat 1 (trip queens) is all in for 8: a main pot of 24 and a side pot."""
    stacks = [100, 8, 100]
    hand = new_hand(THREE, raked(), stacks=stacks)
    to_seventh_with_bets(hand)
    result = hand.result()
    main, side = result.pots
    assert main["amount"] == 24 and main["rake"] == 2
    assert side["amount"] > 0 and side["rake"] == side["amount"] // 10
    assert result.rake == main["rake"] + side["rake"]
    assert sum(result.net.values()) == -result.rake
    capped = new_hand(THREE, raked(rake_cap=3), stacks=stacks)
    to_seventh_with_bets(capped)
    assert [p.get("rake", 0) for p in capped.result().pots] == [2, 1]


def test_a_split_pot_is_raked_first_and_the_odd_chip_falls_on_what_is_left() -> None:
    """Hi-lo: the high and the low split the pot after the rake; its odd chip to high."""
    hands = ["Kc Kd Kh | Qs | Qd | 9c | Th", "Ah 2d 3c | 4s | 7d | Jc | Jd"]
    hand = new_hand(hands, raked(HILO, rake_percent=7))
    play(hand, "1 bring_in", "0 complete 5", "1 call")
    for size in (5, 10, 10, 10):
        first = hand.legal_actions().seat
        assert first is not None
        play(hand, f"{first} bet {size}", f"{1 - first} call")
    result = hand.result()
    assert result.rake == 5  # 7% of 2 + 10 + 10 + 60 = 82 is 5.74
    awards = of_kind(hand.events, "pot_awarded")
    assert awards == [
        {"seat": 0, "pot": 0, "amount": 39, "half": "high", "odd_chips": ["high_half"]},
        {"seat": 1, "pot": 0, "amount": 38, "half": "low"},
    ]


def test_rake_settings_are_checked() -> None:
    for bad in (
        {"rake_percent": -1},
        {"rake_percent": 100.5},
        {"rake_percent": 2.555},
        {"rake_percent": True},
        {"rake_cap": -1},
        {"rake_cap": 2.5},
        {"rake_from_street": 0},
        {"rake_from_street": 6},
    ):
        with pytest.raises(ConfigError):
            replace(STUD, **bad)  # type: ignore[arg-type]
    assert replace(STUD, rake_percent=4.75).rake_basis_points == 475
    assert STUD.rake_percent == 0 and STUD.rake_cap is None and STUD.rake_from_street == 2


def test_no_rake_by_default() -> None:
    hand = new_hand(THREE)
    to_seventh_with_bets(hand)
    assert hand.result().rake == 0
    assert "rake" not in [e.kind for e in hand.events]
    assert chips(hand) == 300


@pytest.mark.parametrize("profile", ["phh", "rule_books"])
def test_the_phh_record_shows_the_rake_and_replays_to_its_stacks(profile: str) -> None:
    base = phh_config("F7S", 1, 2, 5, 10) if profile == "phh" else STUD
    hand = new_hand(THREE, raked(base, rake_percent=2.5, rake_cap=5))
    to_seventh_with_bets(hand)
    assert hand.result().rake == 2  # 2.5% of 114
    text = export(hand)
    assert "_rake = 2\n" in text
    assert "_rake_percent = 2.5\n" in text
    assert "_rake_cap = 5\n" in text
    assert "_rake_from_street = 2\n" in text
    history = loads(text)
    assert history.config().rake_basis_points == 250
    assert replay(history) == list(hand.stacks)
    assert history.finishing_stacks == tuple(hand.stacks)


def test_a_table_without_rake_writes_no_rake_fields() -> None:
    hand = new_hand(THREE)
    check_down(hand)
    assert "_rake" not in export(hand)
