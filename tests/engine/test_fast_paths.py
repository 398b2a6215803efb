"""The engine's fast paths agree with its general ones, turn by turn, over random play.

The legal actions are worked out once per turn and kept (Hand._set_turn), with the ``turn``
event showing them; each board is kept as a rank-pattern key (which also says whether a pair
shows). Working them out afresh (engine.betting.legal_actions, engine.boards's board values)
must give the same answers at every step.
"""

from __future__ import annotations

import random

import pytest

from engine import boards
from engine.betting import legal_actions
from engine.cards import UNKNOWN, Deck
from engine.hand import Hand
from engine.order import pair_showing
from engine.plan import BOARD_STEP
from engine.play import random_action
from engine.variants import VARIANTS, TableConfig


def _config(rng: random.Random) -> TableConfig:
    variant = VARIANTS[rng.choice(sorted(VARIANTS))]
    small = rng.randint(1, 10)
    return TableConfig(
        variant=variant,
        structure=rng.choice(["fixed_limit", "fixed_limit", "fixed_limit", "no_limit"]),
        ante=rng.randint(0, 2),
        bring_in=rng.randint(0, small),
        small_bet=small,
        big_bet=small * rng.randint(1, 2),
        max_raises=rng.choice([None, 0, 1, 3]),
        uncapped_heads_up=rng.random() < 0.7,
        cap_counts_short_all_ins=rng.random() < 0.3,
        short_all_in=rng.choice(["half_bet", "half_bet", "largest_increase"]),
        open_pair_big_bet=rng.random() < 0.7,
        all_in_full_fraction=rng.choice([0.5, 1.0]),
    )


@pytest.mark.parametrize("seed", range(6))
def test_turns_and_boards_agree_with_the_general_paths(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        config = _config(rng)
        players = rng.randint(2, config.variant.max_players)
        stacks = [rng.choice([3, 8, 25, 200]) for _ in range(players)]
        hand = Hand(config, list(enumerate(stacks)), Deck(rng=rng))
        while not hand.over:
            legal = hand.legal_actions()
            assert legal == legal_actions(hand)
            turn = hand.events[-1]
            assert turn.kind == "turn" and turn.data == legal.as_dict()
            assert list(turn.data) == list(legal.as_dict())  # the same keys in the same order
            for i, up in enumerate(hand.up):
                if UNKNOWN not in up:
                    assert hand.board_keys[i] == sum(BOARD_STEP[c] for c in up)
                    if up and hand.plan.high_board:
                        facts = hand.plan.board_facts(up)
                        assert facts[0] == boards.board_value(up)
            live = [i for i in range(hand.n) if not hand.folded[i]]
            assert pair_showing(hand, live) == any(
                len({c >> 2 for c in hand.up[i]}) < len(hand.up[i]) for i in live
            )
            hand.apply(random_action(hand, rng))
