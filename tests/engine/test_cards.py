"""The deck: a shuffled deck written down deals the same cards again."""

from __future__ import annotations

import random

from engine.cards import Deck


def test_the_order_of_a_shuffled_deck_is_the_order_it_deals() -> None:
    written = Deck(rng=random.Random(11)).order()
    assert sorted(written) == list(range(52))
    dealt = Deck(rng=random.Random(11))
    again = Deck(order=written)
    for _ in range(3):
        assert dealt.deal_round(2, burn=True)[0] == again.deal_round(2, burn=True)[0]
