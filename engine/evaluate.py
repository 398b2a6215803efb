"""Hand values as plain ints where higher is always better, so every caller just uses ``max``.

Every value encodes its category and ranks, so it can be described again later:

- a *key* is ``category << 20`` followed by five 4-bit rank slots, most significant first
  (a pair of queens with A-9-4 is ``PAIR, Q, A, 9, 4``; a full house is ``FULL_HOUSE, trips, pair``;
  a straight is ``STRAIGHT, top card``, the wheel's top card being the five);
- a high value *is* its key (standard ranks 0..12 for deuce..ace);
- a razz or eight-or-better value is ``_RAZZ_BASE - key``, the key built from ace-low ranks
  (0 for the ace .. 12 for the king) over the categories high card < pair < two pair < trips <
  full house < quads, so the lowest hand has the highest value; an eight-or-better low is simply
  a razz value that qualifies;
- a deuce-to-seven value is ``_D27_BASE - key``, the key being a high key where aces are high
  only (A-2-3-4-5 is no straight) and straights and flushes count.

The three families live in disjoint ranges, which lets :func:`engine.describe.describe_low` tell
them apart. Board values for the order of play are in :mod:`engine.boards`; words for values and
the five cards that make them, in :mod:`engine.describe`.

Speed: a card's weight is ``rank_weight << 8 | suit_weight``. The rank weights give every multiset
of 5, 6 or 7 ranks its own sum, and for 5, 6 or 7 cards the low byte of the total (the suit sum)
tells which suit, if any, holds five cards. The total stays below 2**30 for 99% of seven-card hands,
so CPython adds single-digit ints, and a hand costs one unpack, six adds, one table test and one
dict lookup. Those dicts are filled lazily, on the first sighting of each rank pattern, by an
exact computation from rank counts, which keeps importing this module cheap (each cache is
bounded by the number of rank patterns: 49,205 for seven cards). Flushes (3% of seven-card
hands) and eight-card hands take a slower exact path.

Cards must be distinct ints 0..51 (``rank * 4 + suit``, see :mod:`engine.cards`); the hot paths
do not check that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations

__all__ = [
    "HIGH_CARD",
    "PAIR",
    "TWO_PAIR",
    "TRIPS",
    "STRAIGHT",
    "FLUSH",
    "FULL_HOUSE",
    "QUADS",
    "STRAIGHT_FLUSH",
    "high_value",
    "razz_value",
    "low8_value",
    "deuce_seven_low_value",
    "high_category",
]

HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH = range(9)

_RAZZ_BASE = 1 << 25  # razz / eight-or-better values lie in (2**25 - 2**23, 2**25]
_D27_BASE = 1 << 26  # deuce-to-seven values lie in (2**26 - 9 * 2**20, 2**26]
_HIGH_LIMIT = (STRAIGHT_FLUSH + 1) << 20  # high values lie in [0, 9 * 2**20)

# Every multiset of 5, 6 or 7 ranks (no rank more than four times) has its own sum of these
# weights (found by a greedy search; they are the rank keys of SKPokerEval). tests check it.
_RANK_WEIGHT = (
    0,
    1,
    5,
    22,
    98,
    453,
    2031,
    8698,
    22854,
    83661,
    262349,
    636345,
    1479181,
)
# For 5, 6 or 7 cards, the sum of these suit weights (< 256) tells which suit, if any, has five
# or more of them (found by a search; tests check every suit composition).
_SUIT_WEIGHT = (0, 1, 25, 32)

_CARD_WEIGHT = [(_RANK_WEIGHT[c >> 2] << 8) + _SUIT_WEIGHT[c & 3] for c in range(52)]
_RANK_ONLY = [_RANK_WEIGHT[c >> 2] for c in range(52)]
# Eight cards (and the general path): a base-5 digit per rank is exact for any count, and a
# 4-bit counter per suit, started at 3, reaches 8 (bit 3) exactly when that suit has 5 cards.
_QUINARY = [5 ** (c >> 2) for c in range(52)]
_SUIT_NIBBLE = [1 << 4 * (c & 3) for c in range(52)]
_NIBBLE_START = 0x3333
_NIBBLE_FLUSH = 0x8888


# _SUIT_BITS[s][card] is the card's rank bit when it is of suit s, else 0: summing it over a
# hand gives the 13-bit rank mask of that suit.
_SUIT_BITS = [[1 << (c >> 2) if c & 3 == s else 0 for c in range(52)] for s in range(4)]
_SuitBits = Callable[[int], int]


def _flush_sums(n: int) -> list[_SuitBits | None]:
    """For each suit-weight sum of ``n`` cards: the suit holding five or more of them, if any.

    The entry is that suit's ``_SUIT_BITS`` getter, so the slow path goes straight to its mask.
    """
    table: list[_SuitBits | None] = [None] * 256
    w = _SUIT_WEIGHT
    for c0 in range(n + 1):
        for c1 in range(n + 1 - c0):
            for c2 in range(n + 1 - c0 - c1):
                c3 = n - c0 - c1 - c2
                for suit, count in enumerate((c0, c1, c2, c3)):
                    if count >= 5:
                        total = c0 * w[0] + c1 * w[1] + c2 * w[2] + c3 * w[3]
                        table[total] = _SUIT_BITS[suit].__getitem__
    return table


_FLUSH5, _FLUSH6, _FLUSH7 = _flush_sums(5), _flush_sums(6), _flush_sums(7)


def _nibble_flush(cards: Sequence[int]) -> _SuitBits | None:
    """Eight cards: the suit holding five or more (only one can), via 4-bit counters."""
    flags = sum(map(_SUIT_NIBBLE.__getitem__, cards), _NIBBLE_START) & _NIBBLE_FLUSH
    if not flags:
        return None
    return _SUIT_BITS[flags.bit_length() // 4 - 1].__getitem__


# Lazily filled: rank-pattern key -> value (5-7 cards: rank-weight sum; 8: base-5 key).
_HIGH5: dict[int, int] = {}
_HIGH6: dict[int, int] = {}
_HIGH7: dict[int, int] = {}
_HIGH8: dict[int, int] = {}
_RAZZ7: dict[int, int] = {}
_RAZZ: dict[int, dict[int, int]] = {5: {}, 6: {}, 7: _RAZZ7, 8: {}}
_D27_7: dict[int, int] = {}
_D27: dict[int, dict[int, int]] = {5: {}, 6: {}, 7: _D27_7, 8: {}}
_FLUSH_HIGH: dict[int, int] = {}  # 13-bit mask of one suit's ranks -> flush / straight flush

_Counts = list[int]


# ------------------------------------------------------------------ keys from rank counts


def _pack(category: int, ranks: Sequence[int]) -> int:
    key = category
    for i in range(5):
        key = key << 4 | (ranks[i] if i < len(ranks) else 0)
    return key


def _counts(cards: Sequence[int]) -> _Counts:
    counts = [0] * 13
    for card in cards:
        counts[card >> 2] += 1
    return counts


def _straight_top(mask: int) -> int:
    """Top rank of the highest straight in a 13-bit rank mask (the wheel tops at the five)."""
    for top in range(12, 3, -1):
        run = 0x1F << (top - 4)
        if mask & run == run:
            return top
    return 3 if mask & 0x100F == 0x100F else -1


def _high_of_counts(counts: _Counts) -> int:
    """Best five-card high hand from rank counts alone (no flush), straights included."""
    desc = [r for r in range(12, -1, -1) if counts[r]]
    quads = [r for r in desc if counts[r] == 4]
    if quads:
        q = quads[0]
        return _pack(QUADS, [q, next(r for r in desc if r != q)])
    trips = [r for r in desc if counts[r] == 3]
    pairs = [r for r in desc if counts[r] == 2]
    if trips and (len(trips) > 1 or pairs):
        mate = max(trips[1] if len(trips) > 1 else -1, pairs[0] if pairs else -1)
        return _pack(FULL_HOUSE, [trips[0], mate])
    top = _straight_top(sum(1 << r for r in desc))
    if top >= 0:
        return _pack(STRAIGHT, [top])
    if trips:
        t = trips[0]
        return _pack(TRIPS, [t, *[r for r in desc if r != t][:2]])
    if len(pairs) >= 2:
        hi, lo = pairs[0], pairs[1]
        return _pack(TWO_PAIR, [hi, lo, next(r for r in desc if r != hi and r != lo)])
    if pairs:
        p = pairs[0]
        return _pack(PAIR, [p, *[r for r in desc if r != p][:3]])
    return _pack(HIGH_CARD, desc[:5])


def _low_key(counts: _Counts, straights: bool) -> int:
    """Key (lower is better) of the best lowball five from counts ordered best rank first.

    Using more distinct ranks always gives a better category, so the first category that can
    be made is the answer; within it, the lowest ranks are taken. With ``straights`` (deuce to
    seven) five ranks in a row make a straight, which is worse than trips.
    """
    present = [r for r in range(13) if counts[r]]
    if len(present) >= 5:
        if not straights:
            return _pack(HIGH_CARD, present[4::-1])
        best: tuple[int, ...] | None = None
        for five in combinations(present, 5):
            if five[4] - five[0] != 4:
                desc = five[::-1]
                if best is None or desc < best:
                    best = desc
        if best is not None:
            return _pack(HIGH_CARD, best)
    paired = [r for r in present if counts[r] >= 2]
    if len(present) >= 4 and paired:
        p = paired[0]
        return _pack(PAIR, [p, *[r for r in present if r != p][2::-1]])
    if len(present) >= 3 and len(paired) >= 2:
        lo, hi = paired[0], paired[1]
        return _pack(TWO_PAIR, [hi, lo, next(r for r in present if r != lo and r != hi)])
    tripled = [r for r in present if counts[r] >= 3]
    if len(present) >= 3 and tripled:
        t = tripled[0]
        return _pack(TRIPS, [t, *[r for r in present if r != t][1::-1]])
    if len(present) >= 5:  # five ranks in a row and nothing to pair instead
        return _pack(STRAIGHT, [present[4]])
    if tripled:
        t = tripled[0]
        mates = [r for r in present if r != t and counts[r] >= 2]
        if mates:
            return _pack(FULL_HOUSE, [t, mates[0]])
    q = next(r for r in present if counts[r] == 4)
    return _pack(QUADS, [q, next(r for r in present if r != q)])


def _razz_of_counts(counts: _Counts) -> int:
    return _RAZZ_BASE - _low_key([counts[12], *counts[:12]], False)


def _d27_of_counts(counts: _Counts) -> int:
    return _D27_BASE - _low_key(counts, True)


def _learn(
    table: dict[int, int], key: int, cards: Sequence[int], compute: Callable[[_Counts], int]
) -> int:
    """Cache miss: compute a rank pattern's value exactly once, then it is a lookup."""
    n = len(cards)
    if not 5 <= n <= 8:
        raise ValueError(f"a hand is 5 to 8 cards, not {n}")
    value = table[key] = compute(_counts(cards))
    return value


def _rank_only_value(
    cards: Sequence[int], tables: dict[int, dict[int, int]], compute: Callable[[_Counts], int]
) -> int:
    """Lookup for a family that ignores suits, for any hand size."""
    n = len(cards)
    if n == 8:
        key = sum(map(_QUINARY.__getitem__, cards))
    elif 5 <= n <= 7:
        key = sum(map(_RANK_ONLY.__getitem__, cards))
    else:
        raise ValueError(f"a hand is 5 to 8 cards, not {n}")
    table = tables[n]
    try:
        return table[key]
    except KeyError:
        return _learn(table, key, cards, compute)


def _ace_low(card: int) -> int:
    """A card's rank counted aces low: 0 for the ace .. 12 for the king."""
    return ((card >> 2) + 1) % 13


_SHAPES: dict[int, tuple[int, ...]] = {
    HIGH_CARD: (1, 1, 1, 1, 1),
    PAIR: (2, 1, 1, 1),
    TWO_PAIR: (2, 2, 1),
    TRIPS: (3, 1, 1),
    FLUSH: (1, 1, 1, 1, 1),
    FULL_HOUSE: (3, 2),
    QUADS: (4, 1),
}


def _decode(key: int) -> tuple[int, list[int], list[int]]:
    """(category, significant ranks, the five ranks) of a key."""
    category = key >> 20
    slots = [(key >> shift) & 15 for shift in (16, 12, 8, 4, 0)]
    if category in (STRAIGHT, STRAIGHT_FLUSH):
        top = slots[0]
        five = [top, top - 1, top - 2, top - 3, (top - 4) % 13]
        return category, slots[:1], five
    shape = _SHAPES[category]
    five = [r for count, r in zip(shape, slots, strict=False) for _ in range(count)]
    return category, slots[: len(shape)], five


# ------------------------------------------------------------------ high


def _flush_mask_value(mask: int) -> int:
    top = _straight_top(mask)
    if top >= 0:
        return _pack(STRAIGHT_FLUSH, [top])
    return _pack(FLUSH, [r for r in range(12, -1, -1) if mask >> r & 1][:5])


def _flush_high(cards: Sequence[int], suit_bits: _SuitBits) -> int:
    """Slow path for a hand holding five or more cards of one suit (only one suit can)."""
    mask = sum(map(suit_bits, cards))
    try:
        value = _FLUSH_HIGH[mask]
    except KeyError:
        value = _FLUSH_HIGH[mask] = _flush_mask_value(mask)
    if len(cards) > 7:  # with 8 cards a full house or quads can beat the flush
        return max(value, _high_eight_ranks(cards))
    return value


def _high_eight_ranks(cards: Sequence[int]) -> int:
    key = sum(map(_QUINARY.__getitem__, cards))
    try:
        return _HIGH8[key]
    except KeyError:
        return _learn(_HIGH8, key, cards, _high_of_counts)


def high_value(cards: Sequence[int]) -> int:
    """Best five-card high hand of 5 to 8 cards; comparable across hand sizes.

    Table driven (see the module docstring) because showdowns and simulations call it the most.
    """
    n = len(cards)
    w = _CARD_WEIGHT
    if n == 7:
        a, b, c, d, e, f, g = cards
        k = w[a] + w[b] + w[c] + w[d] + w[e] + w[f] + w[g]
        suit_bits = _FLUSH7[k & 255]
        if suit_bits is not None:
            return _flush_high(cards, suit_bits)
        try:
            return _HIGH7[k >> 8]
        except KeyError:
            return _learn(_HIGH7, k >> 8, cards, _high_of_counts)
    if n == 6:
        a, b, c, d, e, f = cards
        k = w[a] + w[b] + w[c] + w[d] + w[e] + w[f]
        suit_bits = _FLUSH6[k & 255]
        if suit_bits is not None:
            return _flush_high(cards, suit_bits)
        try:
            return _HIGH6[k >> 8]
        except KeyError:
            return _learn(_HIGH6, k >> 8, cards, _high_of_counts)
    if n == 5:
        a, b, c, d, e = cards
        k = w[a] + w[b] + w[c] + w[d] + w[e]
        suit_bits = _FLUSH5[k & 255]
        if suit_bits is not None:
            return _flush_high(cards, suit_bits)
        try:
            return _HIGH5[k >> 8]
        except KeyError:
            return _learn(_HIGH5, k >> 8, cards, _high_of_counts)
    if n != 8:
        raise ValueError(f"a hand is 5 to 8 cards, not {n}")
    suit_bits = _nibble_flush(cards)
    if suit_bits is not None:
        return _flush_high(cards, suit_bits)
    return _high_eight_ranks(cards)


def high_category(value: int) -> int:
    """Category of a high value (``HIGH_CARD`` .. ``STRAIGHT_FLUSH``)."""
    return value >> 20


# ------------------------------------------------------------------ lows


def razz_value(cards: Sequence[int]) -> int:
    """Ace-to-five low of 5 to 8 cards (razz): aces low, straights and flushes ignored.

    Higher is better, i.e. the lowest hand has the highest value; always defined.
    """
    if len(cards) == 7:
        w = _RANK_ONLY
        a, b, c, d, e, f, g = cards
        k = w[a] + w[b] + w[c] + w[d] + w[e] + w[f] + w[g]
        try:
            return _RAZZ7[k]
        except KeyError:
            return _learn(_RAZZ7, k, cards, _razz_of_counts)
    return _rank_only_value(cards, _RAZZ, _razz_of_counts)


def _low8_threshold(qualifier: int) -> int:
    """Worst qualifying razz value: the five ranks q, q-1, .. q-4 (ace = 1)."""
    if qualifier < 5:
        return _RAZZ_BASE + 1  # five different ranks cannot all be that low
    return _RAZZ_BASE - _pack(HIGH_CARD, range(qualifier - 1, qualifier - 6, -1))


_LOW8_QUALIFY: dict[int | None, int] = {q: _low8_threshold(q) for q in range(1, 14)}
_LOW8_QUALIFY[None] = _RAZZ_BASE - _pack(HIGH_CARD, [12, 11, 10, 9, 8])


def low8_value(cards: Sequence[int], qualifier: int | None = 8) -> int | None:
    """Eight-or-better low (hi-lo): five different ranks all <= ``qualifier`` (ace = 1).

    Straights and flushes do not matter; None when no such five exist. ``qualifier=None``
    accepts any five unpaired cards. Values are razz values, so they compare with max().
    """
    try:
        threshold = _LOW8_QUALIFY[qualifier]
    except KeyError:
        raise ValueError(f"low qualifier must be 1..13 or None, not {qualifier!r}") from None
    value = razz_value(cards)
    return value if value >= threshold else None


def _d27_flush_key(mask: int) -> int:
    """Deuce-to-seven key of five suited cards (a 5-bit rank mask): aces high only."""
    low = (mask & -mask).bit_length() - 1
    if mask >> low == 0x1F:
        return _pack(STRAIGHT_FLUSH, [low + 4])
    return _pack(FLUSH, [r for r in range(12, -1, -1) if mask >> r & 1])


def _d27_ranks(cards: Sequence[int]) -> int:
    """Deuce-to-seven value of a hand from its ranks only, as if no five cards shared a suit."""
    return _rank_only_value(cards, _D27, _d27_of_counts)


def _d27_suited(cards: Sequence[int], suit_bits: _SuitBits) -> int:
    """Slow path when five cards share a suit.

    The best low by ranks alone stands unless it is five distinct ranks none of which is held
    in another suit (a pair never makes a flush); only then is every five tried.
    """
    value = _d27_ranks(cards)
    _, _, five = _decode(_D27_BASE - value)
    used = 0
    for r in five:
        used |= 1 << r
    off_suit = 0
    for card in cards:
        if not suit_bits(card):
            off_suit |= 1 << (card >> 2)
    if used & off_suit or len(five) != len(set(five)):
        return value
    w = _CARD_WEIGHT
    best = 0
    for a, b, c, d, e in combinations(cards, 5):
        k = w[a] + w[b] + w[c] + w[d] + w[e]
        flush = _FLUSH5[k & 255]
        if flush is None:
            option = _d27_ranks((a, b, c, d, e))
        else:
            option = _D27_BASE - _d27_flush_key(sum(map(flush, (a, b, c, d, e))))
        best = max(best, option)
    return best


def _d27_threshold(qualifier: int) -> int:
    """Worst qualifying deuce-to-seven value: q, q-1, q-2, q-3, q-5 (q-4 would be a straight)."""
    if qualifier < 7:
        return _D27_BASE + 1  # 7-5-4-3-2 is the best hand there is
    top = qualifier - 2
    return _D27_BASE - _pack(HIGH_CARD, [top, top - 1, top - 2, top - 3, top - 5])


_D27_QUALIFY: dict[int | None, int] = {q: _d27_threshold(q) for q in range(2, 15)}
_D27_QUALIFY[None] = 0


def deuce_seven_low_value(cards: Sequence[int], qualifier: int | None = 8) -> int | None:
    """Kansas City (deuce-to-seven) low of 5 to 8 cards: aces high, straights and flushes count.

    ``qualifier=8`` wants an eight-high or better no-pair, no-straight, no-flush hand (the
    qualifier is the face value of the top card, 14 for the ace); None when none qualifies.
    ``qualifier=None`` accepts any hand, so the result is then always an int.
    """
    if len(cards) == 7:
        w = _CARD_WEIGHT
        a, b, c, d, e, f, g = cards
        k = w[a] + w[b] + w[c] + w[d] + w[e] + w[f] + w[g]
        suit_bits = _FLUSH7[k & 255]
        if suit_bits is not None:
            value = _d27_suited(cards, suit_bits)
        else:
            try:
                value = _D27_7[k >> 8]
            except KeyError:
                value = _learn(_D27_7, k >> 8, cards, _d27_of_counts)
    else:
        n = len(cards)
        if n == 5 or n == 6:
            k = sum(map(_CARD_WEIGHT.__getitem__, cards))
            suit_bits = (_FLUSH6 if n == 6 else _FLUSH5)[k & 255]
        else:
            suit_bits = _nibble_flush(cards)
        value = _d27_ranks(cards) if suit_bits is None else _d27_suited(cards, suit_bits)
    try:
        threshold = _D27_QUALIFY[qualifier]
    except KeyError:
        raise ValueError(f"low qualifier must be 2..14 or None, not {qualifier!r}") from None
    return value if value >= threshold else None
