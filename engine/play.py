"""Random legal play: the driver of property tests, benchmarks and demos.

Pure like the rest of the engine; the random source is passed in.
"""

from __future__ import annotations

import random

from engine.actions import Action
from engine.cards import Deck
from engine.hand import Hand
from engine.variants import TableConfig


def random_action(hand: Hand, rng: random.Random) -> Action:
    """A legal action for the seat to act, with amounts drawn from the legal range."""
    legal = hand.legal_actions()
    assert legal.seat is not None
    kinds = legal.kinds
    roll = rng.random()
    if "bring_in" in kinds and (roll < 0.6 or legal.wager is None):
        return Action(legal.seat, "bring_in")
    if legal.wager is not None and roll < 0.3:
        if legal.to_choices:
            amount = rng.choice(legal.to_choices)
        else:
            amount = rng.randint(legal.min_to, legal.max_to)
        return Action(legal.seat, legal.wager, amount)
    if "call" in kinds and roll < 0.85:
        return Action(legal.seat, "call")
    if "check" in kinds and roll < 0.97:
        return Action(legal.seat, "check")
    if "fold" in kinds:
        return Action(legal.seat, "fold")
    return Action(legal.seat, kinds[0])


def play_random_hand(
    config: TableConfig,
    stacks: list[int],
    rng: random.Random,
    deck: Deck | None = None,
    timeout_rate: float = 0.0,
    absent_rate: float = 0.0,
) -> Hand:
    """Deal a hand to seats 0..n-1 and play it out with random legal actions; now and then
    (``timeout_rate``) a turn out of time, or (``absent_rate``) one the table plays at once
    for a player gone from the hand, as a table does (a due bring-in posted, else a fold)."""
    hand = Hand(config, list(enumerate(stacks)), deck or Deck(rng=rng))
    while not hand.over:
        if absent_rate and rng.random() < absent_rate:
            seat = hand.seat_to_act()
            assert seat is not None
            kind = "bring_in" if "bring_in" in hand.legal_actions().kinds else "fold"
            hand.apply(Action(seat, kind, None), absent=True)
        elif timeout_rate and rng.random() < timeout_rate:
            seat = hand.seat_to_act()
            assert seat is not None
            hand.timeout(seat)
        else:
            hand.apply(random_action(hand, rng))
    return hand
