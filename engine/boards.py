"""Board values for the order of play: who acts first on each street, by the upcards alone.

Like hand values (:mod:`engine.evaluate`), a board value is an int where higher acts first:
high stud (SCS 8) ranks boards by their groups, aces high; razz (Razz 4) the other way, aces
low. Suits break ties apart, with :func:`board_suit_tiebreak` and
:func:`razz_board_suit_tiebreak`. :func:`board_pairs` and :func:`describe_board` give the
dealer's announcements. Values and words are remembered by rank pattern.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from engine.cards import RANK_NAMES, RANK_PLURALS
from engine.evaluate import _RAZZ_BASE, _ace_low

__all__ = [
    "board_value",
    "board_suit_tiebreak",
    "razz_board_value",
    "razz_board_suit_tiebreak",
    "board_pairs",
    "describe_board",
]

_BOARD_HIGH, _BOARD_PAIR, _BOARD_TWO_PAIR, _BOARD_TRIPS, _BOARD_FULL, _BOARD_QUADS = range(6)


def _groups(ranks: Sequence[int]) -> list[tuple[int, int]]:
    """(count, rank) of each rank, the most significant first."""
    counts: dict[int, int] = {}
    for r in ranks:
        counts[r] = counts.get(r, 0) + 1
    return sorted(((count, r) for r, count in counts.items()), reverse=True)


def _group_key(ranks: Sequence[int]) -> int:
    """Rank-only key of up to five cards: quads > full > trips > two pair > pair > high."""
    groups = _groups(ranks)
    first = groups[0][0]
    second = groups[1][0] if len(groups) > 1 else 0
    if first == 4:
        category = _BOARD_QUADS
    elif first == 3:
        category = _BOARD_FULL if second >= 2 else _BOARD_TRIPS
    elif first == 2:
        category = _BOARD_TWO_PAIR if second == 2 else _BOARD_PAIR
    else:
        category = _BOARD_HIGH
    key = category
    for i in range(5):
        key = key << 4 | (groups[i][1] + 1 if i < len(groups) else 0)
    return key


def _check_board(upcards: Sequence[int]) -> None:
    if not 1 <= len(upcards) <= 6:
        raise ValueError(f"a board is 1 to 6 upcards, not {len(upcards)}")


_BOARD_WEIGHT = [1 << 3 * (c >> 2) for c in range(52)]  # 3 bits of count per rank
_board_values: dict[int, int] = {}
_razz_board_values: dict[int, int] = {}


def board_value(upcards: Sequence[int]) -> int:
    """Order of play in high stud (SCS 8): the highest board acts first.

    Quads > full house > trips > two pair > pair > high card, then the ranks of the groups;
    straights and flushes do not count, aces are high, suits are left to
    :func:`board_suit_tiebreak`. Six upcards count their best five. Values are remembered by
    rank pattern, so each pattern is worked out once.
    """
    weight = _BOARD_WEIGHT
    key = sum([weight[c] for c in upcards]) << 3 | len(upcards)
    value = _board_values.get(key)
    if value is None:
        _check_board(upcards)
        ranks = [c >> 2 for c in upcards]
        if len(ranks) <= 5:
            value = _group_key(ranks)
        else:
            value = max(map(_group_key, combinations(ranks, 5)))
        _board_values[key] = value
    return value


def board_suit_tiebreak(upcards: Sequence[int]) -> int:
    """Between equal boards, the higher suit of the highest card acts first (SCS 8).

    The highest card is the best-suited card of the most significant rank group: the king of a
    pair of kings, the ace of A-Q. Returns that suit, so higher acts first.
    """
    _check_board(upcards)
    top = _groups([c >> 2 for c in upcards])[0][1]
    return max(c & 3 for c in upcards if c >> 2 == top)


def razz_board_value(upcards: Sequence[int]) -> int:
    """Order of play in razz (Razz 4): the lowest board acts first, so lower boards score higher.

    Fewer pairs first (no pair, pair, two pair, trips, ...), then lower ranks, aces low;
    straights and flushes do not count.
    """
    weight = _BOARD_WEIGHT
    key = sum([weight[c] for c in upcards]) << 3 | len(upcards)
    value = _razz_board_values.get(key)
    if value is None:
        _check_board(upcards)
        ranks = [_ace_low(c) for c in upcards]
        if len(ranks) <= 5:
            value = _RAZZ_BASE - _group_key(ranks)
        else:
            value = _RAZZ_BASE - min(map(_group_key, combinations(ranks, 5)))
        _razz_board_values[key] = value
    return value


def razz_board_suit_tiebreak(upcards: Sequence[int]) -> int:
    """Between equal razz boards, the lower suit of the lowest card acts first (Razz 4).

    The deuce of diamonds acts before the deuce of spades. Returns ``3 - suit``, so higher
    acts first.
    """
    _check_board(upcards)
    lowest = min(upcards, key=lambda c: (_ace_low(c), c & 3))
    return 3 - (lowest & 3)


def board_pairs(upcards: Sequence[int]) -> list[int]:
    """Ranks showing two or more times, highest first (for pair announcements and SCS 5)."""
    return [r for count, r in _groups([c >> 2 for c in upcards]) if count >= 2]


_board_words: dict[tuple[int, bool], str] = {}


def describe_board(upcards: Sequence[int], *, low: bool = False) -> str:
    """Dealer's words for a board: "pair of kings", "ace-queen high" (``low``: "seven-four low").

    ``low=True`` describes a razz board: aces low, and unpaired boards by their top cards.
    The words depend on the ranks alone, so they are remembered by rank pattern.
    """
    weight = _BOARD_WEIGHT
    key = (sum([weight[c] for c in upcards]) << 3 | len(upcards), low)
    words = _board_words.get(key)
    if words is None:
        words = _board_words[key] = _describe_board(upcards, low)
    return words


def _describe_board(upcards: Sequence[int], low: bool) -> str:
    _check_board(upcards)
    if low:
        groups = [(count, (r + 12) % 13) for count, r in _groups([_ace_low(c) for c in upcards])]
        if groups[0][0] == 1:
            # ace-low order: the highest card is the largest ace-low rank
            names = [RANK_NAMES[r] for _, r in groups[:2]]
            return "-".join(names) + " low"
    else:
        groups = _groups([c >> 2 for c in upcards])
    count, top = groups[0]
    second = groups[1] if len(groups) > 1 else (0, -1)
    if count == 4:
        return f"four {RANK_PLURALS[top]}"
    if count == 3:
        if second[0] >= 2:
            return f"{RANK_PLURALS[top]} full of {RANK_PLURALS[second[1]]}"
        return f"three {RANK_PLURALS[top]}"
    if count == 2:
        if second[0] == 2:
            return f"two pair, {RANK_PLURALS[top]} and {RANK_PLURALS[second[1]]}"
        return f"pair of {RANK_PLURALS[top]}"
    return "-".join(RANK_NAMES[r] for _, r in groups[:2]) + " high"
