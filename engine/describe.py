"""Hand values in words, and the five cards that make them.

Values come from :mod:`engine.evaluate`, which encodes each value's category and ranks so
they can be told again here: "full house, kings full of fives", "8-6-5-4-A". Finding the
five cards used tries every five, which is slow next to the values: it is for showdowns
and hand histories, not for simulations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations

from engine.cards import RANK_NAMES, RANK_PLURALS, RANKS
from engine.evaluate import (
    _D27_BASE,
    _HIGH_LIMIT,
    _RAZZ_BASE,
    FLUSH,
    FULL_HOUSE,
    HIGH_CARD,
    PAIR,
    QUADS,
    STRAIGHT,
    STRAIGHT_FLUSH,
    TRIPS,
    TWO_PAIR,
    _ace_low,
    _counts,
    _decode,
    deuce_seven_low_value,
    high_value,
    low8_value,
    razz_value,
)

__all__ = [
    "describe_high",
    "describe_low",
    "describe_razz",
    "describe_low8",
    "describe_deuce_seven",
    "high_five",
    "razz_five",
    "low8_five",
    "deuce_seven_five",
]


# ------------------------------------------------------------------ describing values

_ACE_LOW_CHARS = "A23456789TJQK"


def _phrase(category: int, ranks: list[int], names: Sequence[str], plurals: Sequence[str]) -> str:
    if category == HIGH_CARD:
        return f"high card {names[ranks[0]]}"
    if category == PAIR:
        return f"pair of {plurals[ranks[0]]}"
    if category == TWO_PAIR:
        return f"two pair, {plurals[ranks[0]]} and {plurals[ranks[1]]}"
    if category == TRIPS:
        return f"three of a kind, {plurals[ranks[0]]}"
    if category == STRAIGHT:
        return f"straight, {names[ranks[0]]} high"
    if category == FLUSH:
        return f"flush, {names[ranks[0]]} high"
    if category == FULL_HOUSE:
        return f"full house, {plurals[ranks[0]]} full of {plurals[ranks[1]]}"
    if category == QUADS:
        return f"four of a kind, {plurals[ranks[0]]}"
    if ranks[0] == 12:
        return "royal flush"
    return f"straight flush, {names[ranks[0]]} high"


def describe_high(value: int) -> str:
    """Words for a high value: "full house, kings full of fives", "straight, ten high"."""
    if not 0 <= value < _HIGH_LIMIT:
        raise ValueError(f"not a high value: {value}")
    category, ranks, _ = _decode(value)
    return _phrase(category, ranks, RANK_NAMES, RANK_PLURALS)


_ACE_LOW_NAMES = (RANK_NAMES[12], *RANK_NAMES[:12])
_ACE_LOW_PLURALS = (RANK_PLURALS[12], *RANK_PLURALS[:12])


def describe_razz(value: int) -> str:
    """Words for a razz or eight-or-better value: "8-6-5-4-A", "pair of fours, 7-4-4-2-A"."""
    key = _RAZZ_BASE - value
    if not 0 <= key < (QUADS + 1) << 20:
        raise ValueError(f"not a razz value: {value}")
    category, ranks, five = _decode(key)
    cards = "-".join(_ACE_LOW_CHARS[r] for r in sorted(five, reverse=True))
    if category == HIGH_CARD:
        return cards
    return f"{_phrase(category, ranks, _ACE_LOW_NAMES, _ACE_LOW_PLURALS)}, {cards}"


def describe_low8(value: int) -> str:
    """Words for an eight-or-better low value, e.g. "8-6-5-4-A" (same encoding as razz)."""
    return describe_razz(value)


def describe_deuce_seven(value: int) -> str:
    """Words for a deuce-to-seven value: "8-6-5-4-2", "straight, seven high, 7-6-5-4-3"."""
    key = _D27_BASE - value
    if not 0 <= key < _HIGH_LIMIT:
        raise ValueError(f"not a deuce-to-seven value: {value}")
    category, ranks, five = _decode(key)
    cards = "-".join(RANKS[r] for r in sorted(five, reverse=True))
    if category == HIGH_CARD:
        return cards
    return f"{_phrase(category, ranks, RANK_NAMES, RANK_PLURALS)}, {cards}"


def describe_low(value: int) -> str:
    """Words for any low value (razz, eight-or-better or deuce-to-seven), told by its range."""
    if _D27_BASE - _HIGH_LIMIT < value <= _D27_BASE:
        return describe_deuce_seven(value)
    return describe_razz(value)


# ------------------------------------------------------------------ the five cards used (slow)


def _best_five(
    cards: Sequence[int], value: Callable[[Sequence[int]], int | None]
) -> tuple[int, ...]:
    """The five cards with the best value; ties go to the highest cards, for determinism."""
    ordered = sorted(cards, reverse=True)
    if not 5 <= len(ordered) <= 8:
        raise ValueError(f"a hand is 5 to 8 cards, not {len(ordered)}")
    return max(combinations(ordered, 5), key=lambda five: value(five) or 0)


def high_five(cards: Sequence[int]) -> list[int]:
    """The five cards that make the high hand, in showing order (groups first, wheel ace last)."""
    five = _best_five(cards, high_value)
    category = high_value(five) >> 20
    if category in (STRAIGHT, STRAIGHT_FLUSH):
        ordered = sorted(five, reverse=True)
        if ordered[0] >> 2 == 12 and ordered[1] >> 2 == 3:  # the wheel: the ace plays low
            ordered = ordered[1:] + ordered[:1]
        return ordered
    counts = _counts(five)
    return sorted(five, key=lambda c: (counts[c >> 2], c), reverse=True)


def _low_order(five: Sequence[int]) -> list[int]:
    return sorted(five, key=lambda c: (_ace_low(c), c & 3), reverse=True)


def razz_five(cards: Sequence[int]) -> list[int]:
    """The five cards of the razz low, highest first (aces low)."""
    return _low_order(_best_five(cards, razz_value))


def low8_five(cards: Sequence[int], qualifier: int | None = 8) -> list[int] | None:
    """The five cards of the eight-or-better low, highest first; None when there is none."""
    if low8_value(cards, qualifier) is None:
        return None
    return razz_five(cards)


def deuce_seven_five(cards: Sequence[int], qualifier: int | None = None) -> list[int] | None:
    """The five cards of the deuce-to-seven low, highest first; None when none qualifies."""
    if deuce_seven_low_value(cards, qualifier) is None:
        return None
    five = _best_five(cards, lambda h: deuce_seven_low_value(h, None))
    return sorted(five, reverse=True)
