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

The three families live in disjoint ranges, which lets :func:`describe_low` tell them apart.

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

from engine.cards import RANK_NAMES, RANK_PLURALS, RANKS

__all__ = [
    "HIGH_CARD", "PAIR", "TWO_PAIR", "TRIPS", "STRAIGHT", "FLUSH", "FULL_HOUSE", "QUADS",
    "STRAIGHT_FLUSH", "RANK_NAMES", "RANK_PLURALS",
    "high_value", "razz_value", "low8_value", "deuce_seven_low_value",
    "board_value", "board_suit_tiebreak", "razz_board_value", "razz_board_suit_tiebreak",
    "board_pairs", "describe_high", "describe_low", "describe_razz", "describe_low8",
    "describe_deuce_seven", "describe_board", "high_category",
    "high_five", "razz_five", "low8_five", "deuce_seven_five",
]

HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH = range(9)

_RAZZ_BASE = 1 << 25  # razz / eight-or-better values lie in (2**25 - 2**23, 2**25]
_D27_BASE = 1 << 26  # deuce-to-seven values lie in (2**26 - 9 * 2**20, 2**26]
_HIGH_LIMIT = (STRAIGHT_FLUSH + 1) << 20  # high values lie in [0, 9 * 2**20)

# Every multiset of 5, 6 or 7 ranks (no rank more than four times) has its own sum of these
# weights (found by a greedy search; they are the rank keys of SKPokerEval). tests check it.
_RANK_WEIGHT = (
    0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181,
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


def _learn(table: dict[int, int], key: int, cards: Sequence[int],
           compute: Callable[[_Counts], int]) -> int:
    """Cache miss: compute a rank pattern's value exactly once, then it is a lookup."""
    n = len(cards)
    if not 5 <= n <= 8:
        raise ValueError(f"a hand is 5 to 8 cards, not {n}")
    value = table[key] = compute(_counts(cards))
    return value


def _rank_only_value(cards: Sequence[int], tables: dict[int, dict[int, int]],
                     compute: Callable[[_Counts], int]) -> int:
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


# ------------------------------------------------------------------ boards (order of play)

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


def _ace_low(card: int) -> int:
    return ((card >> 2) + 1) % 13


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
        groups = [(count, (r + 12) % 13) for count, r in
                  _groups([_ace_low(c) for c in upcards])]
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


# ------------------------------------------------------------------ describing values

_SHAPES: dict[int, tuple[int, ...]] = {
    HIGH_CARD: (1, 1, 1, 1, 1), PAIR: (2, 1, 1, 1), TWO_PAIR: (2, 2, 1), TRIPS: (3, 1, 1),
    FLUSH: (1, 1, 1, 1, 1), FULL_HOUSE: (3, 2), QUADS: (4, 1),
}
_ACE_LOW_CHARS = "A23456789TJQK"


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


def _phrase(category: int, ranks: list[int], names: Sequence[str],
            plurals: Sequence[str]) -> str:
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


def _best_five(cards: Sequence[int], value: Callable[[Sequence[int]], int | None]
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
