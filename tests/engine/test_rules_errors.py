"""Illegal and malformed input raises a typed error and leaves the hand exactly as it was."""

from __future__ import annotations

from typing import Any

import pytest
from decks import new_hand, play

from engine.actions import Action
from engine.cards import Deck, parse_card
from engine.errors import ConfigError, EngineError, IllegalAction, InvalidAction, NotYourTurn
from engine.hand import Hand
from engine.variants import TableConfig, find_variant

HANDS = ["As Ah Kd", "Ks Kh 3h", "Qs Qh 9c"]  # seat 1 brings in


def snapshot(hand: Hand) -> tuple[Any, ...]:
    return (
        len(hand.events),
        len(hand.actions),
        list(hand.stacks),
        list(hand.bets),
        list(hand.total),
        list(hand.folded),
        hand.to_act,
        hand.street,
        hand.legal_actions(),
    )


@pytest.mark.parametrize(
    ("action", "error", "code"),
    [
        (Action(1, "shove"), InvalidAction, "unknown_action"),
        (Action(1, "complete", "5"), InvalidAction, "bad_amount"),  # type: ignore[arg-type]
        (Action(1, "complete", True), InvalidAction, "bad_amount"),
        (Action(1, "complete", 4), IllegalAction, "bad_amount"),
        (Action(1, "complete", -5), IllegalAction, "bad_amount"),
        (Action(1, "check"), IllegalAction, "action_not_allowed"),
        (Action(1, "fold"), IllegalAction, "action_not_allowed"),  # the bring-in is forced
        (Action(1, "bring_in", 1), IllegalAction, "bad_amount"),
        (Action(2, "call"), NotYourTurn, "not_your_turn"),
        (Action(7, "call"), IllegalAction, "not_in_hand"),
    ],
)
def test_bad_action_on_the_bring_in_changes_nothing(
    action: Action, error: type[EngineError], code: str
) -> None:
    """Engine contract: a typed error (with a stable code), and no change at all."""
    hand = new_hand(HANDS)
    before = snapshot(hand)
    with pytest.raises(error) as caught:
        hand.apply(action)
    assert caught.value.code == code
    assert snapshot(hand) == before


@pytest.mark.parametrize(
    ("action", "error", "code"),
    [
        (Action(2, "check"), IllegalAction, "action_not_allowed"),
        (Action(2, "bet", 5), IllegalAction, "action_not_allowed"),
        (Action(2, "raise", 10), IllegalAction, "action_not_allowed"),
        (Action(2, "complete", 10), IllegalAction, "bad_amount"),
        (Action(2, "call", 5), IllegalAction, "bad_amount"),
        (Action(2, "fold", 0), InvalidAction, "bad_amount"),
        (Action(2, "bring_in"), IllegalAction, "action_not_allowed"),
    ],
)
def test_bad_action_facing_the_bring_in_changes_nothing(
    action: Action, error: type[EngineError], code: str
) -> None:
    """Engine contract: the player facing the bring-in may only fold, call it or complete."""
    hand = new_hand(HANDS)
    play(hand, "1 bring_in")
    before = snapshot(hand)
    with pytest.raises(error) as caught:
        hand.apply(action)
    assert caught.value.code == code
    assert snapshot(hand) == before


def test_call_with_the_right_amount_is_accepted() -> None:
    """A call or bring-in may name its amount, if it is the right one."""
    hand = new_hand(HANDS)
    play(hand, "1 bring_in 2", "2 call 2")
    assert hand.total == [1, 3, 3]


def test_no_action_after_the_hand_is_over() -> None:
    """Engine contract: a finished hand takes no more actions, and has a result."""
    hand = new_hand(HANDS)
    with pytest.raises(IllegalAction) as caught:
        hand.result()
    assert caught.value.code == "hand_in_progress"
    play(hand, "1 bring_in", "2 fold", "0 fold")
    assert hand.is_over()
    with pytest.raises(IllegalAction) as caught:
        hand.apply(Action(1, "check"))
    assert caught.value.code == "hand_over"
    with pytest.raises(NotYourTurn):
        hand.timeout(1)


def test_malformed_hands_decks_and_configs_are_refused() -> None:
    """Engine contract: bad seats, decks, cards and settings raise typed errors."""
    deck = Deck(order=list(range(52)))
    with pytest.raises(IllegalAction):
        Hand(TableConfig(), [(0, 100)], deck)
    with pytest.raises(InvalidAction):
        Hand(TableConfig(), [(0, 100), (0, 100)], deck)
    with pytest.raises(InvalidAction):
        Hand(TableConfig(), [(0, 100), (1, 0)], deck)
    with pytest.raises(InvalidAction):
        Deck(order=[1, 1, 2])
    with pytest.raises(InvalidAction):
        parse_card("1x")
    with pytest.raises(ConfigError):
        find_variant("badugi")
    with pytest.raises(ConfigError):
        TableConfig(bring_in=6, small_bet=5)
    with pytest.raises(ConfigError):
        TableConfig(big_bet=4, small_bet=5)
    with pytest.raises(ConfigError):
        TableConfig(ante=-1)
