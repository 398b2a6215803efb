"""Hand evaluation: cross-checks against pokerkit, phevaluator and treys, and golden cases
(hand values in engine.evaluate, board values in engine.boards, words and fives in engine.describe).

The random cross-checks compare orderings, not numbers: over each sample, equal values of ours
must be equal values of the reference and vice versa, in the same order (an order isomorphism,
which implies sign(ours_a - ours_b) == sign(ref_a - ref_b) for every pair of hands).

The pokerkit reference is pokerkit's own lookup table, read through its public
``lookup.get_entry_or_none`` once per five-card class; the best five of a hand are then found by
trying every five. ``test_reference_matches_pokerkit_from_game`` checks that harness against
pokerkit's ``Hand.from_game`` itself.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from itertools import combinations, combinations_with_replacement, pairwise

import pytest
from phevaluator import evaluate_cards
from pokerkit import (
    EightOrBetterLowHand,
    Hand,
    RegularLowHand,
    StandardHighHand,
    StandardLowHand,
)
from treys import Card as TreysCard
from treys import Evaluator as TreysEvaluator

from engine import boards, describe
from engine import evaluate as ev
from engine.cards import format_cards, parse_cards

SAMPLE = 100_000
MISSING = -(10**9)  # reference value of "no qualifying hand"
PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)


def cards(text: str) -> list[int]:
    return parse_cards(text)


def deal(n: int, count: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    deck = list(range(52))
    return [rng.sample(deck, n) for _ in range(count)]


def assert_same_order(ours: Sequence[int | None], ref: Sequence[int | None]) -> None:
    """Ours and ref order the hands identically (None = no hand, on both sides at once)."""
    mapping: dict[int | None, int | None] = {}
    for i, (o, r) in enumerate(zip(ours, ref, strict=True)):
        if mapping.setdefault(o, r) != r:
            raise AssertionError(f"hand {i}: our value {o} is both ref {mapping[o]} and {r}")
    assert (None in mapping) == (None in mapping.values())
    if None in mapping:
        assert mapping[None] is None
    ranked = sorted((o, r) for o, r in mapping.items() if o is not None)
    for (o1, r1), (o2, r2) in pairwise(ranked):
        assert r1 is not None and r2 is not None
        assert r1 < r2, f"our {o1} < {o2} but reference {r1} >= {r2}"
    # the literal pairwise statement, on consecutive hands
    for i in range(len(ours) - 1):
        a, b, x, y = ours[i], ours[i + 1], ref[i], ref[i + 1]
        if a is not None and b is not None and x is not None and y is not None:
            assert (a > b) - (a < b) == (x > y) - (x < y)


# ------------------------------------------------------------------ the pokerkit reference


class Reference:
    """Best-five evaluation from pokerkit's table; values oriented so higher is better."""

    def __init__(self, hand_type: type[Hand]) -> None:
        self.hand_type = hand_type
        lookup = hand_type.lookup
        sign = -1 if hand_type.low else 1
        self.plain: dict[int, int] = {}  # prime product -> value, not all one suit
        self.suited: dict[int, int] = {}  # prime product -> value, all one suit
        for ranks in combinations_with_replacement(range(13), 5):
            if max(ranks.count(r) for r in ranks) > 4:
                continue
            key = math.prod(PRIMES[r] for r in ranks)
            seen: dict[int, int] = {}
            text = ""
            for r in ranks:
                seen[r] = seen.get(r, -1) + 1
                text += "23456789TJQKA"[r] + "cdhs"[seen[r]]
            texts = [text]
            distinct = len(set(ranks)) == 5
            if distinct:  # all clubs so far: make an unsuited version too
                texts = [text[:-1] + "d", text]
            for suited, hand_text in zip((False, True), texts, strict=False):
                entry = lookup.get_entry_or_none(hand_text)
                value = MISSING if entry is None else sign * entry.index
                (self.suited if suited else self.plain)[key] = value
            if not distinct:
                self.suited[key] = MISSING  # cannot happen; keeps lookups total

    def value(self, hand: Sequence[int]) -> int:
        """Best value over every five cards of the hand."""
        primes = [PRIMES[c >> 2] for c in hand]
        suits = [c & 3 for c in hand]
        if max(suits.count(s) for s in range(4)) < 5:
            return max(map(self.plain.__getitem__, map(math.prod, combinations(primes, 5))))
        best = MISSING
        for five in combinations(range(len(hand)), 5):
            key = math.prod(primes[i] for i in five)
            table = self.suited if len({suits[i] for i in five}) == 1 else self.plain
            best = max(best, table[key])
        return best

    def values(self, hands: Iterable[Sequence[int]]) -> list[int | None]:
        return [None if v == MISSING else v for v in map(self.value, hands)]


@cache
def reference(hand_type: type[Hand]) -> Reference:
    return Reference(hand_type)


def values_of(
    function: Callable[[Sequence[int]], int | None], hands: Iterable[Sequence[int]]
) -> list[int | None]:
    return list(map(function, hands))


# ------------------------------------------------------------------ the tables' soundness


def rank_multisets(n: int) -> list[tuple[int, ...]]:
    return [
        m
        for m in combinations_with_replacement(range(13), n)
        if max(m.count(r) for r in set(m)) <= 4
    ]


@pytest.mark.parametrize("n", [5, 6, 7])
def test_rank_weights_give_each_rank_multiset_its_own_sum(n: int) -> None:
    """Table soundness: the rank keys of 5, 6 and 7 cards never collide."""
    sums = {sum(ev._RANK_WEIGHT[r] for r in m) for m in rank_multisets(n)}
    assert len(sums) == len(rank_multisets(n))


@pytest.mark.parametrize("n", [5, 6, 7])
def test_suit_weights_tell_every_flush(n: int) -> None:
    """Table soundness: the suit sum of 5, 6 or 7 cards says exactly which suit has five."""
    for c0 in range(n + 1):
        for c1 in range(n + 1 - c0):
            for c2 in range(n + 1 - c0 - c1):
                counts = (c0, c1, c2, n - c0 - c1 - c2)
                total = sum(c * w for c, w in zip(counts, ev._SUIT_WEIGHT, strict=True))
                entry = ev._flush_sums(n)[total]
                flush_suits = [s for s in range(4) if counts[s] >= 5]
                if not flush_suits:
                    assert entry is None, counts
                else:
                    (suit,) = flush_suits
                    assert entry is not None
                    assert entry(4 * 12 + suit) == 1 << 12  # its ace counts in its mask
                    assert entry(4 * 12 + (suit + 1) % 4) == 0


def spread_suits(ranks: Sequence[int]) -> list[int]:
    """Cards of these ranks with no suit holding five of them (suits dealt in rotation)."""
    return [r * 4 + i % 4 for i, r in enumerate(sorted(ranks))]


@pytest.mark.parametrize("n", [5, 6, 7])
def test_every_rank_pattern_against_pokerkit(n: int) -> None:
    """Every rank pattern of 5, 6 or 7 cards (no flush possible), all four families at once."""
    hands = [spread_suits(m) for m in rank_multisets(n)]
    assert all(max([c & 3 for c in h].count(s) for s in range(4)) < 5 for h in hands)
    assert_same_order(values_of(ev.high_value, hands), reference(StandardHighHand).values(hands))
    assert_same_order(values_of(ev.razz_value, hands), reference(RegularLowHand).values(hands))
    assert_same_order(
        values_of(ev.low8_value, hands), reference(EightOrBetterLowHand).values(hands)
    )
    assert_same_order(
        values_of(lambda h: ev.deuce_seven_low_value(h, None), hands),
        reference(StandardLowHand).values(hands),
    )


def test_every_flush_mask_against_pokerkit() -> None:
    """Every set of 5 to 7 ranks of one suit, with and without off-suit cards."""
    hands = []
    for n in (5, 6, 7):
        for ranks in combinations(range(13), n):
            hands.append([r * 4 + 3 for r in ranks])
    for ranks in combinations(range(13), 5):  # five spades and two off-suit cards
        hands.append([r * 4 + 3 for r in ranks] + [ranks[0] * 4, ranks[-1] * 4 + 1])
    assert_same_order(values_of(ev.high_value, hands), reference(StandardHighHand).values(hands))
    assert_same_order(
        values_of(lambda h: ev.deuce_seven_low_value(h, None), hands),
        reference(StandardLowHand).values(hands),
    )


# ------------------------------------------------------------------ random cross-checks


def test_reference_matches_pokerkit_from_game() -> None:
    """The reference harness agrees with pokerkit's own from_game on every family."""
    hands = deal(7, 150, seed=11) + deal(8, 50, seed=12) + deal(5, 50, seed=13)
    for hand_type in (StandardHighHand, RegularLowHand, EightOrBetterLowHand, StandardLowHand):
        ref = reference(hand_type)
        truth = [hand_type.from_game_or_none(format_cards(h)) for h in hands]
        mine = ref.values(hands)
        for h, t, m in zip(hands, truth, mine, strict=True):
            assert (t is None) == (m is None), (hand_type, format_cards(h))
        for (h1, t1, m1), (h2, t2, m2) in pairwise(zip(hands, truth, mine, strict=True)):
            if t1 is not None and t2 is not None and m1 is not None and m2 is not None:
                assert (t1 > t2) == (m1 > m2) and (t1 == t2) == (m1 == m2), (h1, h2)


def test_high_seven_cards_against_pokerkit_phevaluator_and_treys() -> None:
    """Best five of seven, 100,000 random hands, against three independent evaluators."""
    hands = deal(7, SAMPLE, seed=7)
    ours = values_of(ev.high_value, hands)
    assert_same_order(ours, reference(StandardHighHand).values(hands))
    # phevaluator uses the same card ints; smaller is stronger there
    assert_same_order(ours, [-evaluate_cards(*h) for h in hands])
    evaluator = TreysEvaluator()
    names = ["23456789TJQKA"[c >> 2] + "cdhs"[c & 3] for c in range(52)]
    treys_ids = [TreysCard.new(name) for name in names]
    treys_hands = [[treys_ids[c] for c in h] for h in hands]
    assert_same_order(ours, [-evaluator.evaluate(h[:2], h[2:]) for h in treys_hands])


@pytest.mark.parametrize("n", [5, 6, 8])
def test_high_five_six_and_eight_cards_against_pokerkit(n: int) -> None:
    """Best five of 5, 6 and 8 cards, 100,000 random hands each."""
    hands = deal(n, SAMPLE, seed=100 + n)
    assert_same_order(values_of(ev.high_value, hands), reference(StandardHighHand).values(hands))


def test_high_values_compare_across_hand_sizes() -> None:
    """A hand of 5, 6, 7 or 8 cards is worth exactly its best five."""
    for hand in deal(8, 3000, seed=5) + deal(6, 3000, seed=6):
        value = ev.high_value(hand)
        assert value == max(ev.high_value(five) for five in combinations(hand, 5))
        assert value == ev.high_value(describe.high_five(hand))


def test_razz_against_pokerkit() -> None:
    """Razz 2: ace-to-five low, 100,000 random seven-card hands and 30,000 of 5, 6 and 8."""
    hands = deal(7, SAMPLE, seed=21)
    for n in (5, 6, 8):
        hands += deal(n, 10_000, seed=21 + n)
    assert_same_order(values_of(ev.razz_value, hands), reference(RegularLowHand).values(hands))


def test_low8_against_pokerkit() -> None:
    """SCS/HL 2 and 5: eight-or-better, 100,000 random seven-card hands and 30,000 of 5, 6, 8."""
    hands = deal(7, SAMPLE, seed=31)
    for n in (5, 6, 8):
        hands += deal(n, 10_000, seed=31 + n)
    ours = values_of(ev.low8_value, hands)
    assert_same_order(ours, reference(EightOrBetterLowHand).values(hands))
    assert 0.1 < sum(v is not None for v in ours) / len(ours) < 0.4  # lows are not rare


@pytest.mark.parametrize("qualifier", [None, 5, 6, 7, 9, 10, 13])
def test_low8_qualifiers(qualifier: int | None) -> None:
    """SCS/HL 2: the qualifier is a setting (None = any five unpaired cards, aces low)."""
    hands = deal(7, 20_000, seed=41)
    top = 13 if qualifier is None else qualifier
    for hand in hands:
        value = ev.low8_value(hand, qualifier)
        ranks = sorted({(c >> 2) + 2 if c >> 2 != 12 else 1 for c in hand})
        assert (value is not None) == (len(ranks) >= 5 and ranks[4] <= top), format_cards(hand)
        if value is not None:
            assert value == ev.razz_value(hand)


def test_deuce_seven_against_pokerkit() -> None:
    """SCS/HL 5 (Kansas City): 100,000 random seven-card hands and 30,000 of 5, 6 and 8."""
    hands = deal(7, SAMPLE, seed=51)
    for n in (5, 6, 8):
        hands += deal(n, 10_000, seed=51 + n)
    ref = reference(StandardLowHand)
    assert_same_order(
        values_of(lambda h: ev.deuce_seven_low_value(h, None), hands), ref.values(hands)
    )
    # qualifier 8: our own check, from the reference's best five
    ours = values_of(ev.deuce_seven_low_value, hands)
    limit = ref.value(cards("8c7d6h5s3c"))  # the worst eight-high no-pair, no-straight hand
    for hand, value, best in zip(hands, ours, ref.values(hands), strict=True):
        assert best is not None
        assert (value is not None) == (best >= limit), format_cards(hand)


# ------------------------------------------------------------------ golden cases: high


def high(text: str) -> int:
    return ev.high_value(cards(text))


def test_high_category_order() -> None:
    """Standard high ranking: straight flush > quads > full house > flush > straight > trips >
    two pair > pair > high card."""
    ladder = [
        "Kd9s7c4h2c",
        "2c2d9s7c4h",
        "3c3d2c2dAh",
        "4c4d4hKsQs",
        "6c5d4h3s2c",
        "Ac9c7c4c2c",
        "5c5d5h2c2d",
        "7c7d7h7s2c",
        "7s6s5s4s3s",
        "AhKhQhJhTh",
    ]
    values = [high(t) for t in ladder]
    assert values == sorted(values) and len(set(values)) == len(values)
    assert [ev.high_category(v) for v in values] == list(range(9)) + [ev.STRAIGHT_FLUSH]


def test_wheel_is_the_lowest_straight() -> None:
    """Aces play high or low in a straight: A-2-3-4-5 is a five-high straight."""
    wheel = high("Ac2d3h4s5c")
    assert ev.high_category(wheel) == ev.STRAIGHT
    assert high("2c3d4h5s6c") > wheel > high("AcAdAhKsQc")
    assert describe.describe_high(wheel) == "straight, five high"
    assert high("AcKdQhJsTc") > high("KcQdJhTs9c")
    assert ev.high_category(high("QcKdAh2s3c")) == ev.HIGH_CARD  # no wrap-around


def test_steel_wheel() -> None:
    """A-2-3-4-5 suited is a straight flush, five high: over quads, under six-high."""
    steel = high("As2s3s4s5s9d9c")
    assert ev.high_category(steel) == ev.STRAIGHT_FLUSH
    assert high("2h3h4h5h6h") > steel > high("AcAdAhAsKc")
    assert describe.describe_high(steel) == "straight flush, five high"
    assert [c >> 2 for c in describe.high_five(cards("As2s3s4s5s9d9c"))] == [3, 2, 1, 0, 12]


def test_best_five_of_seven_and_eight() -> None:
    """Object / SCS/HL 4: the best five cards of the hand play."""
    assert high("AsKsQsJs9s2d2c") == high("AsKsQsJs9s")  # flush over a pair
    assert high("2c2d2h7s7d7cKc") == high("7s7d7c2c2d")  # sevens full of deuces
    # eight cards: a full house beats the flush it holds, quads beat it too
    assert describe.describe_high(high("AsKsQsJs9sAdAhKd")) == "full house, aces full of kings"
    assert ev.high_category(high("As9s7s5s3s3d3h3c")) == ev.QUADS
    assert ev.high_category(high("9s8s7s6s5s5d5h5c")) == ev.STRAIGHT_FLUSH
    # six cards, two straights
    assert describe.describe_high(high("5c6d7h8s9cTd")) == "straight, ten high"


def test_kickers_decide() -> None:
    """Ties are broken by the next ranks; suits never break a tie between hands."""
    assert high("AcAd9h7s3c") > high("AhAs9c7d2c")
    assert high("AcAd9h7s3c") == high("AhAs9c7d3d")
    assert high("KcKd5h5s9c") > high("KhKs5c5d8c")
    assert high("KcKd5h5s9c") < high("KhKs6c6d2c")
    assert high("4c4d4hAs2c") > high("4c4d4hKs2c")


def test_describe_high() -> None:
    """Showdown words for each category."""
    said = {
        "KcKdKh5s5d": "full house, kings full of fives",
        "AcAd8h8s3c": "two pair, aces and eights",
        "Tc9d8h7s6c": "straight, ten high",
        "QcQd9h7s3c": "pair of queens",
        "AcJd9h7s3c": "high card ace",
        "7c7d7hKs2c": "three of a kind, sevens",
        "9c9d9h9s2c": "four of a kind, nines",
        "Ac9c7c4c2c": "flush, ace high",
        "9h8h7h6h5h": "straight flush, nine high",
        "AhKhQhJhTh": "royal flush",
    }
    for text, words in said.items():
        assert describe.describe_high(high(text)) == words
    with pytest.raises(ValueError):
        describe.describe_high(ev.razz_value(cards("Ac2d3h4s5c")))


def test_high_five_shows_the_cards_used() -> None:
    """The five shown at showdown, groups first."""
    assert format_cards(describe.high_five(cards("2c2d2h7s7d9cKc"))) == "2h2d2c7s7d"
    assert format_cards(describe.high_five(cards("AsKsQsJs9s2d2c"))) == "AsKsQsJs9s"
    assert format_cards(describe.high_five(cards("Ac3d9hTsJcQdKh"))) == "AcKhQdJcTs"


def test_hand_size_is_checked() -> None:
    """Errors: a hand is five to eight cards."""
    for function in (ev.high_value, ev.razz_value, ev.low8_value, ev.deuce_seven_low_value):
        with pytest.raises(ValueError):
            function(cards("AcKdQh9s"))
        with pytest.raises(ValueError):
            function(list(range(9)))


# ------------------------------------------------------------------ golden cases: razz


def razz(text: str) -> int:
    return ev.razz_value(cards(text))


def test_razz_wheel_is_the_best_low() -> None:
    """Razz 2: aces are low only; straights and flushes do not count."""
    assert razz("As2s3s4s5s") == razz("As2s3s4s5sKdKc") == razz("Ac2d3h4s5c")
    assert razz("As2s3s4s5s") > razz("Ac2d3h4s6c") > razz("2c3d4h5s6c")
    assert describe.describe_razz(razz("As2s3s4s5s")) == "5-4-3-2-A"


def test_razz_ace_low_beats_a_pair() -> None:
    """Razz 2: any five unpaired cards beat any pair; K-Q-J-T-9 beats a pair of aces."""
    assert razz("KcQdJhTs9c") > razz("AcAd2h3s4c")
    assert razz("AcAd2h3s4c") > razz("2c2dAh3s4c")  # pair of aces is lower than deuces
    assert razz("AcAdKhKsQc") > razz("AcAdAhKsQc")  # two pair beats trips
    assert razz("AcAdAhKsKc") > razz("2c2d2h2sAc")  # full house beats quads


def test_razz_pair_of_aces_is_lower_than_pair_of_deuces() -> None:
    """Razz 2: a pair of aces is lower than a pair of deuces."""
    assert razz("AcAd7h5s3c9dKh") > razz("2c2d7h5s3c9dKh")
    assert describe.describe_razz(razz("AcAd7h5s3c")) == "pair of aces, 7-5-3-A-A"


def test_razz_best_five_of_seven() -> None:
    """Razz: any five of the seven; the pair is avoided when five ranks are there."""
    assert razz("2c2d3h4s5c8d8h") == razz("8c5d4h3s2c")
    assert razz("KcKdKh5s5d2c3c") == razz("Kc5d5h3s2c")
    assert describe.describe_razz(razz("KcKdKh5s5d2c3c")) == "pair of fives, K-5-5-3-2"
    assert format_cards(describe.razz_five(cards("2c2d3h4s5c8d8h"))) == "8h5c4s3h2d"
    assert describe.describe_low(razz("Ac2d3h4s6cKdKh")) == "6-4-3-2-A"


# ------------------------------------------------------------------ golden cases: eight or better


def low8(text: str, qualifier: int | None = 8) -> int | None:
    return ev.low8_value(cards(text), qualifier)


def test_low8_needs_five_different_ranks() -> None:
    """SCS/HL 2: five different ranks of eight or lower; duplicates do not count twice."""
    assert low8("AcAd2h2s3c3d4h") is None  # only four ranks
    assert low8("AcAd2h2s3c3d4h8s") is not None  # eight cards, the eight makes five
    assert low8("8c7d6h5s4c") is not None  # a straight does not matter
    assert low8("8c7c6c5c4c") == low8("8d7h6s5c4d")  # nor a flush
    assert low8("9c7d6h5s4c") is None
    assert low8("Kc9dQh3s4cJd2h") is None


def test_low8_qualifying_exactly_eight() -> None:
    """SCS/HL 2: an 8-7-6-5-4 qualifies; nothing with a nine in it does."""
    worst = low8("8c7d6h5s4c")
    assert worst is not None
    assert low8("8c7d6h5s3c") is not None and low8("8c7d6h5s3c") > worst  # type: ignore[operator]
    assert low8("8c7d6h5s4c9d9h") == worst
    assert low8("9c7d6h5s4c", qualifier=9) is not None
    assert low8("8c7d6h5s4c", qualifier=7) is None


def test_low8_aces_are_low_and_straights_do_not_hurt() -> None:
    """SCS/HL 5: aces high or low; straights and flushes do not affect the low."""
    assert low8("As2s3s4s5s") == razz("Ac2d3h4s5c")
    assert low8("Ac2d3h4s5c") > low8("Ac2d3h4s6c")  # type: ignore[operator]
    assert describe.describe_low8(low8("8c6d5h4sAc") or 0) == "8-6-5-4-A"
    assert low8("AcKdQhJsTc", qualifier=None) is not None  # any low: K-Q-J-T-A
    assert low8("AcAdQhJsTc", qualifier=None) is None
    assert format_cards(describe.low8_five(cards("AcAd2h3s5c8dKh")) or []) == "8d5c3s2hAd"
    assert describe.low8_five(cards("AcAd2h3s9c9dKh")) is None


def test_low8_qualifier_is_checked() -> None:
    """SCS/HL 2: the qualifier is a rank 1..13 (ace counts as one) or None."""
    with pytest.raises(ValueError):
        low8("Ac2d3h4s5c", qualifier=14)


# ------------------------------------------------------------------ golden cases: deuce to seven


def d27(text: str, qualifier: int | None = None) -> int | None:
    return ev.deuce_seven_low_value(cards(text), qualifier)


def test_deuce_seven_aces_high_straights_and_flushes_count() -> None:
    """SCS/HL 5, Kansas City: aces high only; straights and flushes count against the low."""
    best = d27("7c5d4h3s2c")
    assert best is not None
    assert best > d27("7c6d4h3s2c") > d27("8c5d4h3s2c")  # type: ignore[operator]
    wheel = d27("Ac2d3h4s5c")
    assert wheel is not None and describe.describe_deuce_seven(wheel) == "A-5-4-3-2"
    assert d27("Kc5d4h3s2c") > wheel  # type: ignore[operator]
    assert d27("AcAd3h4s5c") < wheel  # type: ignore[operator]
    assert d27("6c5d4h3s2c") < d27("2c2d4h3s5c")  # type: ignore[operator]  # a straight
    assert d27("7c5c4c3c2c") < d27("AcKdQhJs9c")  # type: ignore[operator]  # a flush
    assert describe.describe_low(d27("6c5d4h3s2c") or 0) == "straight, six high, 6-5-4-3-2"


def test_deuce_seven_best_five_avoids_straights_and_flushes() -> None:
    """SCS/HL 4-5 (Kansas City): the best five of the seven."""
    assert d27("2c3d4h5s6c8d") == d27("8d5s4h3d2c")
    assert d27("2c3c4c5c7c8dKh") == d27("8d5c4c3c2c")  # 7-5-4-3-2 would be a flush
    assert d27("2c3c4c5c7c") == d27("7c5c4c3c2c")
    assert d27("2c3c4c5c7c9cTc") == d27("7c5c4c3c2c")  # seven clubs: the lowest flush
    assert (
        describe.describe_deuce_seven(d27("2c3c4c5c7c9cTc") or 0) == "flush, seven high, 7-5-4-3-2"
    )
    assert d27("2c3c4c5c7c9cTd") == d27("Td5c4c3c2c")  # ten-high beats any flush
    assert format_cards(describe.deuce_seven_five(cards("2c3d4h5s6c8dKh")) or []) == "8d5s4h3d2c"


def test_deuce_seven_qualifier() -> None:
    """SCS/HL 2 + 5: with Kansas City lows the eight qualifier means an eight-high low with no
    pair, straight or flush; None accepts anything."""
    assert d27("8c6d5h4s2c", 8) is not None
    assert d27("8c7d6h5s3c", 8) is not None
    assert d27("8c7d6h5s4c", 8) is None  # eight-high straight
    assert d27("8c6c5c4c2c", 8) is None  # flush
    assert d27("9c6d5h4s2c", 8) is None
    assert d27("9c6d5h4s2c", 9) is not None
    assert d27("7c5d4h3s2c", 6) is None
    assert d27("KcKdKhKsQc", None) is not None
    assert describe.deuce_seven_five(cards("9c6d5h4s2cKdKh"), 8) is None
    with pytest.raises(ValueError):
        d27("8c6d5h4s2c", 15)


# ------------------------------------------------------------------ golden cases: boards


def board(text: str) -> int:
    return boards.board_value(cards(text))


def test_board_values_one_to_five_cards() -> None:
    """SCS 8: the high board acts first: quads > trips > two pair > pair > high card."""
    assert board("Ac") > board("Kd")
    assert board("2c2d") > board("AcKd")
    assert board("AcKd") > board("AcQd")
    assert board("3c3d2h") > board("2c2dAh") > board("AcKdQh")
    assert board("2c2d3h3s") > board("AcAdKhQs")  # two pair over one pair
    assert board("2c2d2h3s") > board("AcAdKhKs")  # trips over two pair
    assert board("2c2d2h2s") > board("AcAdAhKs")  # quads over trips
    assert board("2c2d2h2sAc") > board("AcAdAhKsKd") > board("AcAdAhKsQd")  # full house
    assert board("7c8d9hTsJc") < board("2c2d3h4s5c")  # no straights on board
    assert board("2s5s7s9sJs") < board("2c2d3h4s5c")  # nor flushes


def test_board_pair_beats_higher_cards() -> None:
    """SCS 8: a pair on board beats higher unpaired cards."""
    assert board("5c5d") > board("AcKd")
    assert board("5c5dKh") > board("AcKdQh")
    assert board("5c5dKh") > board("5h5s7c")


def test_board_suit_tiebreak_ace_queen() -> None:
    """SCS 8: two players with A-Q showing: the ace of hearts acts before the ace of clubs."""
    hearts, clubs = cards("AhQc"), cards("AcQd")
    assert boards.board_value(hearts) == boards.board_value(clubs)
    assert boards.board_suit_tiebreak(hearts) > boards.board_suit_tiebreak(clubs)


def test_board_suit_tiebreak_uses_the_top_group() -> None:
    """SCS 8: with paired boards the higher-suited card of the pair decides, not a kicker."""
    spade_king, heart_king = cards("KsKc2c"), cards("KhKd2s")
    assert boards.board_value(spade_king) == boards.board_value(heart_king)
    assert boards.board_suit_tiebreak(spade_king) > boards.board_suit_tiebreak(heart_king)
    assert boards.board_suit_tiebreak(cards("Qs")) == 3


def razz_board(text: str) -> int:
    return boards.razz_board_value(cards(text))


def test_razz_board_low_acts_first() -> None:
    """Razz 4: the lowest board acts first (highest value); aces low (Razz 2); pairs are bad."""
    assert razz_board("Ac") > razz_board("2c") > razz_board("Kc")
    assert razz_board("Ac4d") > razz_board("2c5d")
    assert razz_board("7c4d2h") > razz_board("7d5c2s")
    assert razz_board("KcQdJhTs") > razz_board("AcAd2h3s")  # no pair beats a pair
    assert razz_board("AcAd2h3s") > razz_board("2c2dAh3s")
    assert razz_board("2c2d3h3s") < razz_board("KcKdQhJs")  # two pair is worse than one pair
    assert razz_board("2c3d4h5s") > razz_board("Ac2d3h6s")  # straights do not count


def test_razz_board_suit_tiebreak_deuces() -> None:
    """Razz 4: the deuce of diamonds acts before the deuce of spades."""
    diamonds, spades = cards("2d"), cards("2s")
    assert boards.razz_board_value(diamonds) == boards.razz_board_value(spades)
    assert boards.razz_board_suit_tiebreak(diamonds) > boards.razz_board_suit_tiebreak(spades)
    a, b = cards("7c4h2d"), cards("7h4c2s")
    assert boards.razz_board_value(a) == boards.razz_board_value(b)
    assert boards.razz_board_suit_tiebreak(a) > boards.razz_board_suit_tiebreak(b)


def test_boards_are_one_to_six_cards() -> None:
    """Errors: order of play looks at one to six exposed cards."""
    for function in (
        boards.board_value,
        boards.board_suit_tiebreak,
        boards.razz_board_value,
        boards.razz_board_suit_tiebreak,
        boards.describe_board,
    ):
        with pytest.raises(ValueError):
            function([])
        with pytest.raises(ValueError):
            function(list(range(7)))
    assert board("AcAdKhKsQc2d") == board("AcAdKhKsQc")


def test_describe_board_and_pairs() -> None:
    """SCS 9: the dealer announces the high hand and every pair."""
    said = {
        "KcKd": "pair of kings",
        "AhQc": "ace-queen high",
        "Ac": "ace high",
        "7c7d7h": "three sevens",
        "KcKd5h5s": "two pair, kings and fives",
        "9c9d9h9s": "four nines",
        "KcKdKh5s5d": "kings full of fives",
        "Tc7d2h": "ten-seven high",
    }
    for text, words in said.items():
        assert boards.describe_board(cards(text)) == words
    assert boards.describe_board(cards("7c4d2h"), low=True) == "seven-four low"
    assert boards.describe_board(cards("Ac4d"), low=True) == "four-ace low"
    assert boards.describe_board(cards("2c2dAh"), low=True) == "pair of deuces"
    assert boards.board_pairs(cards("KcKd5h5s")) == [11, 3]
    assert boards.board_pairs(cards("KcQd5h")) == []
    assert boards.board_pairs(cards("9c9d9h")) == [7]


def test_describe_low_tells_the_families_apart() -> None:
    """describe_low decodes razz, eight-or-better and deuce-to-seven values."""
    assert describe.describe_low(razz("8c6d5h4sAc")) == "8-6-5-4-A"
    assert describe.describe_low(low8("8c6d5h4sAc") or 0) == "8-6-5-4-A"
    assert describe.describe_low(d27("8c6d5h4s2c") or 0) == "8-6-5-4-2"
    assert describe.describe_low(razz("AcAd2h3s4c")) == "pair of aces, 4-3-2-A-A"
    with pytest.raises(ValueError):
        describe.describe_low(high("AcAd2h3s4c"))
