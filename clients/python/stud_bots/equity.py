"""What my hand is worth now: its expected share of the pot at a showdown, by sampling.

Only what the view shows is used: my own cards, every upcard on the table and the common
cards. Upcards of folded hands stay on the table as dead cards: a card I need that shows
anywhere cannot come to me, so a three-flush whose suit shows four times elsewhere is worth
less than a live one. The unseen cards (the deck less everything visible) are dealt at
random to finish my hand and every live opponent's, and the finished hands are judged by the
variant's showdown rule with ``engine.evaluate``: high, razz (ace-to-five low) or hi-lo
(eight or better, the high hand scooping when no low qualifies).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from engine.cards import parse_card
from engine.evaluate import high_value, low8_value, razz_value
from engine.variants import find_variant
from stud_client import TableView

__all__ = ["equity", "streets_left"]


def _cards(texts: Sequence[str]) -> list[int]:
    return [parse_card(t) for t in texts]


def streets_left(view: TableView) -> int:
    """Betting rounds still to come after this one."""
    names = [s.name for s in find_variant(view.variant).streets]
    if view.street not in names:
        return len(names) - 1
    return len(names) - 1 - names.index(view.street)


def equity(
    view: TableView,
    *,
    samples: int = 200,
    rng: random.Random | None = None,
    low_qualifier: int | None = 8,
) -> float:
    """My expected share of the pot (0..1) against the live hands, if all went to showdown.

    1.0 when nobody is left against me; 0.0 when I hold no cards in this hand.
    """
    me = view.me
    if me is None or not me.live:
        return 0.0
    opponents = view.opponents
    if not opponents:
        return 1.0
    rng = rng or random.Random()
    variant = find_variant(view.variant)
    common = _cards(view.common)
    mine = _cards(me.down + me.up)
    theirs = [_cards(s.up + s.down if s.shown else s.up) for s in opponents]
    seen = set(mine) | set(common)
    for seat in view.seats:
        seen.update(_cards(seat.up))
        if seat.shown:
            seen.update(_cards(seat.down))
    unseen = [c for c in range(52) if c not in seen]
    each = variant.card_count - len(common)
    missing = [max(0, each - len(mine))] + [max(0, each - len(t)) for t in theirs]
    extra_common = 0
    # Too few cards for everyone (many players): the last card is one common card for all.
    while sum(missing) + extra_common > len(unseen) and any(missing):
        missing = [max(0, m - 1) for m in missing]
        extra_common += 1
    need = sum(missing) + extra_common
    if need > len(unseen):
        return 1.0 / (len(opponents) + 1)
    known = [mine, *theirs]
    judge = _judge(variant.showdown, low_qualifier)
    total = 0.0
    for _ in range(samples):
        draw = rng.sample(unseen, need)
        board = common + draw[:extra_common]
        at = extra_common
        hands = []
        for cards, count in zip(known, missing, strict=True):
            hands.append(cards + board + draw[at : at + count])
            at += count
        total += judge(hands)
    return total / samples


def _judge(showdown: str, qualifier: int | None) -> Callable[[list[list[int]]], float]:
    """My share (hand 0) of a pot among finished hands, by the showdown rule."""

    def best(values: list[int]) -> float:
        top = max(values)
        return 1.0 / values.count(top) if values[0] == top else 0.0

    if showdown == "razz":
        return lambda hands: best([razz_value(h) for h in hands])
    if showdown == "high":
        return lambda hands: best([high_value(h) for h in hands])

    def high_low(hands: list[list[int]]) -> float:
        high = best([high_value(h) for h in hands])
        lows = [low8_value(h, qualifier) for h in hands]
        qualified = [v for v in lows if v is not None]
        if not qualified:
            return high
        low = 0.0
        if lows[0] is not None:
            top = max(qualified)
            low = 1.0 / qualified.count(top) if lows[0] == top else 0.0
        return 0.5 * high + 0.5 * low

    return high_low
