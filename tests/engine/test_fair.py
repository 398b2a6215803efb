"""Provably fair decks (engine.fair, engine.fair2): the methods as docs/fairness.md writes them,
and the uniformity of the decks stud-deck/1 derives."""

from __future__ import annotations

import hashlib
import hmac
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from engine.actions import Action
from engine.cards import format_card, parse_card
from engine.errors import InvalidAction
from engine.events import CardsOpened, DeckProcedure, DownCards, HandEnded, HandStarted
from engine.fair import FairDeal, check_client_seed, commitment, parse_server_seed
from engine.fair2 import CommittedDeck, deal_order, verify_opening
from engine.hand import Hand
from engine.variants import TableConfig, find_variant

DECKS = 100_000  # the chi-square test's derived decks
SIGNIFICANCE = 0.001


def _doc_order(
    server_seed: bytes, table_id: int, number: int, seeds: list[tuple[int, str]]
) -> list[str]:
    """The deck as docs/fairness.md tells a player to compute it, written from the text alone
    (hmac.new, not the module's code)."""
    context = f"stud-deck/1\ntable={table_id}\nhand={number}\n"
    context += "".join(f"seat={seat} seed={seed}\n" for seat, seed in seeds)

    def stream() -> Iterable[int]:
        counter = 0
        while True:
            message = context.encode() + counter.to_bytes(8, "big")
            yield from hmac.new(server_seed, message, hashlib.sha256).digest()
            counter += 1

    source = iter(stream())

    def below(n: int) -> int:
        while True:
            byte = next(source)
            if byte < 256 - 256 % n:
                return byte % n

    cards = [rank + suit for rank in "23456789TJQKA" for suit in "cdhs"]
    for i in range(len(cards) - 1):
        j = i + below(len(cards) - i)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


@pytest.mark.parametrize(
    ("table_id", "number", "seeds"),
    [(1, 1, []), (42, 7, [(0, "abc")]), (3, 1000, [(1, "x-Y_9"), (4, "0" * 64), (7, "z")])],
)
def test_the_deck_is_the_one_the_documentation_describes(
    table_id: int, number: int, seeds: list[tuple[int, str]]
) -> None:
    server_seed = hashlib.sha256(f"{table_id}/{number}".encode()).digest()
    deal = FairDeal(server_seed, table_id, number, tuple(seeds))
    assert [format_card(c) for c in deal.order()] == _doc_order(
        server_seed, table_id, number, seeds
    )
    assert deal.commitment == hashlib.sha256(server_seed).hexdigest() == commitment(server_seed)


def test_every_input_changes_the_deck_and_the_same_inputs_give_the_same_deck() -> None:
    seed = bytes(range(32))
    base = FairDeal(seed, 1, 1, ((0, "a"), (2, "b")))
    assert base.order() == FairDeal(seed, 1, 1, ((0, "a"), (2, "b"))).order()
    others = [
        FairDeal(bytes(range(1, 33)), 1, 1, ((0, "a"), (2, "b"))),
        FairDeal(seed, 2, 1, ((0, "a"), (2, "b"))),
        FairDeal(seed, 1, 2, ((0, "a"), (2, "b"))),
        FairDeal(seed, 1, 1, ((0, "a"), (2, "c"))),
        FairDeal(seed, 1, 1, ((0, "a"),)),
        FairDeal(seed, 1, 1, ((1, "a"), (2, "b"))),
    ]
    assert all(other.order() != base.order() for other in others)


def test_the_burn_scramble_carries_on_the_hands_stream() -> None:
    deal = FairDeal(bytes(32), 5, 9)
    first, second = deal.deck(), deal.deck()
    pool_a, pool_b = list(range(10)), list(range(10))
    first.rng.shuffle(pool_a)
    second.rng.shuffle(pool_b)
    assert pool_a == pool_b and sorted(pool_a) == list(range(10))
    assert first.fair is deal and first.order() == deal.order()


@pytest.mark.parametrize("seed", ["", "a" * 65, "has space", "é", "a\n", 7, None])
def test_a_bad_client_seed_is_refused(seed: object) -> None:
    with pytest.raises(InvalidAction) as refused:
        check_client_seed(seed)
    assert refused.value.code == "bad_client_seed"


def test_client_seeds_go_one_a_seat_by_seat_and_server_seeds_are_32_bytes() -> None:
    with pytest.raises(InvalidAction):
        FairDeal(bytes(32), 1, 1, ((2, "a"), (1, "b")))
    with pytest.raises(InvalidAction):
        FairDeal(bytes(32), 1, 1, ((1, "a"), (1, "b")))
    with pytest.raises(InvalidAction):
        FairDeal(bytes(31), 1, 1)
    with pytest.raises(InvalidAction):
        parse_server_seed("AB" * 32)  # hex, but not lowercase
    assert parse_server_seed("ab" * 32) == bytes([0xAB]) * 32


def _upper_tail(statistic: float, freedom: int) -> float:
    """P(chi-square with ``freedom`` degrees > statistic), by Wilson and Hilferty's cube root
    (close for the degrees used here)."""
    z = ((statistic / freedom) ** (1 / 3) - (1 - 2 / (9 * freedom))) / math.sqrt(2 / (9 * freedom))
    return 0.5 * math.erfc(z / math.sqrt(2))


def _positions(decks: int, order: Callable[[int], list[int]]) -> list[Counter[int]]:
    """How often each card lands at each position, over ``decks`` decks."""
    data = bytearray()
    for number in range(decks):
        data += bytes(order(number))
    return [Counter(data[position::52]) for position in range(52)]


def _chi_square(counts: list[Counter[int]], decks: int) -> tuple[float, float]:
    """The whole table's p-value (51 x 51 degrees of freedom: each deck is a permutation),
    and the smallest p-value of one position (51 degrees)."""
    expected = decks / 52
    per_position = [
        sum((column.get(card, 0) - expected) ** 2 / expected for card in range(52))
        for column in counts
    ]
    whole = _upper_tail(sum(per_position), 51 * 51)
    worst = min(_upper_tail(statistic, 51) for statistic in per_position)
    return whole, worst


def test_card_positions_are_uniform_over_a_hundred_thousand_derived_decks() -> None:
    seed = hashlib.sha256(b"chi-square").digest()  # fixed: the test gives one answer
    counts = _positions(DECKS, lambda number: FairDeal(seed, 7, number).order())
    whole, worst = _chi_square(counts, DECKS)
    assert whole > SIGNIFICANCE, f"card positions are not uniform (p = {whole:.2e})"
    assert worst > SIGNIFICANCE / 52, f"a position is not uniform (p = {worst:.2e})"


def test_the_chi_square_test_catches_a_modulo_bias() -> None:
    """The same stream drawn with ``byte % n`` and no rejection: the test must see it."""
    seed = hashlib.sha256(b"biased").digest()

    def biased(number: int) -> list[int]:
        digest = b"".join(
            hmac.new(seed, f"{number}/{k}".encode(), hashlib.sha256).digest() for k in range(2)
        )
        cards = list(range(52))
        for i in range(51):
            j = i + digest[i] % (52 - i)
            cards[i], cards[j] = cards[j], cards[i]
        return cards

    decks = 20_000
    whole, _ = _chi_square(_positions(decks, biased), decks)
    assert whole < 1e-6


def test_cards_are_numbered_as_the_documentation_says() -> None:
    assert (parse_card("2c"), parse_card("2d"), parse_card("3c"), parse_card("As")) == (0, 1, 4, 51)


def _passive(hand: Hand) -> Action:
    legal = hand.legal_actions()
    assert legal.seat is not None
    for kind in ("check", "call", "bring_in"):
        if kind in legal.kinds:
            return Action(legal.seat, kind)
    raise AssertionError(legal)


def test_a_short_deck_scrambles_its_burns_from_the_stream_and_deals_the_same_again() -> None:
    """Eight players to the seventh street: the deck runs short, the burn cards are scrambled
    back in (by the hand's stream), and the same seeds deal the same hand again."""
    config = TableConfig(variant=find_variant("seven_card_stud"), ante=1, bring_in=2)
    deal = FairDeal(hashlib.sha256(b"short").digest(), 1, 3, ((0, "a"), (5, "b")))
    hand = Hand(config, [(seat, 500) for seat in range(8)], deal.deck())
    while not hand.is_over():
        hand.apply(_passive(hand))
    assert any(isinstance(event, DeckProcedure) for event in hand.events)
    again = Hand(config, [(seat, 500) for seat in range(8)], deal.deck())
    for action in hand.actions:
        again.apply(action)
    assert again.events == hand.events
    started = hand.events[0]
    assert isinstance(started, HandStarted)
    assert started.commitment == deal.commitment and started.client_seeds == deal.client_seeds
    ended = hand.events[-1]
    assert isinstance(ended, HandEnded) and ended.server_seed == deal.server_seed.hex()


# ---------------------------------------------------------------------- stud-deck/2


def _doc_stream(key: bytes, context: bytes) -> Callable[[int], int]:
    """``below(n)`` over ``HMAC-SHA256(key, context || counter)``, from the text alone."""

    def blocks() -> Iterable[int]:
        counter = 0
        while True:
            yield from hmac.new(key, context + counter.to_bytes(8, "big"), hashlib.sha256).digest()
            counter += 1

    source = iter(blocks())

    def below(n: int) -> int:
        while True:
            byte = next(source)
            if byte < 256 - 256 % n:
                return byte % n

    return below


def _doc_shuffle(items: list[int], below: Callable[[int], int]) -> list[int]:
    for i in range(len(items) - 1):
        j = i + below(len(items) - i)
        items[i], items[j] = items[j], items[i]
    return items


def _doc_root(server_seed: bytes, table_id: int, number: int) -> tuple[list[int], str]:
    """The committed deck and its Merkle root as docs/fairness.md describes them."""
    context = f"stud-deck/2 deck\ntable={table_id}\nhand={number}\n".encode()
    deck = _doc_shuffle(list(range(52)), _doc_stream(server_seed, context))
    salts = [
        hmac.new(server_seed, b"stud-deck/2 salt\n" + bytes([j]), hashlib.sha256).digest()
        for j in range(52)
    ]
    level = [hashlib.sha256(bytes([0, j, deck[j]]) + salts[j]).digest() for j in range(52)]
    while len(level) > 1:
        up = [
            hashlib.sha256(b"\x01" + level[i] + level[i + 1]).digest()
            for i in range(0, len(level) - 1, 2)
        ]
        level = up + ([level[-1]] if len(level) % 2 else [])
    return deck, level[0].hex()


@pytest.mark.parametrize(
    ("table_id", "number", "seeds"), [(1, 1, []), (3, 1000, [(1, "x-Y_9"), (7, "z")])]
)
def test_stud_deck_2_is_the_method_the_documentation_describes(
    table_id: int, number: int, seeds: list[tuple[int, str]]
) -> None:
    server_seed = hashlib.sha256(b"doc").digest()
    deck, root = _doc_root(server_seed, table_id, number)
    committed = CommittedDeck(server_seed, table_id=table_id, number=number)
    assert committed.cards == deck and committed.commitment == root
    context = f"stud-deck/2\ntable={table_id}\nhand={number}\n"
    context += "".join(f"seat={seat} seed={seed}\n" for seat, seed in seeds)
    order = _doc_shuffle(list(range(52)), _doc_stream(bytes.fromhex(root), context.encode()))
    deal = committed.deal(tuple(seeds))
    assert deal.order() == [deck[j] for j in order]
    assert deal_order(root, table_id, number, seeds)[0] == order
    for opening in committed.openings():
        assert verify_opening(opening, root)
        assert deal.opening(opening.card) == opening


def test_a_changed_card_salt_position_or_path_does_not_open_and_seeds_move_every_draw() -> None:
    committed = CommittedDeck(hashlib.sha256(b"tamper").digest(), table_id=2, number=5)
    root = committed.commitment
    opening = committed.opening_at(17)
    flip = bytes([opening.salt[0] ^ 1]) + opening.salt[1:]
    changed = [
        opening._replace(card=(opening.card + 1) % 52),
        opening._replace(salt=flip),
        opening._replace(position=16),
        opening._replace(proof=opening.proof[:-1]),
        opening._replace(proof=(*opening.proof, opening.proof[0])),
        opening._replace(proof=(flip, *opening.proof[1:])),
    ]
    assert verify_opening(opening, root)
    assert not any(verify_opening(o, root) for o in changed)
    assert not verify_opening(opening, CommittedDeck(bytes(32), table_id=2, number=5).commitment)
    # A client seed changes the deal order, not the committed deck: nobody steers a card.
    one, other = committed.deal(((0, "a"),)), committed.deal(((0, "b"),))
    assert one.commitment == other.commitment and one.order() != other.order()
    assert sorted(one.order()) == list(range(52))


def test_a_stud_deck_2_hand_opens_each_card_once_to_whoever_sees_it() -> None:
    """Eight players to the seventh street (the burns scrambled back in by the public stream):
    each dealt card is opened, down cards to their seat only, no seed is revealed, and the
    same seeds deal the same hand again."""
    config = TableConfig(variant=find_variant("seven_card_stud"), ante=1, bring_in=2)
    deal = CommittedDeck(hashlib.sha256(b"short2").digest(), table_id=1, number=3).deal(
        ((0, "a"), (5, "b"))
    )
    hand = Hand(config, [(seat, 500) for seat in range(8)], deal.deck())
    while not hand.is_over():
        hand.apply(_passive(hand))
    assert any(isinstance(event, DeckProcedure) for event in hand.events)
    again = Hand(config, [(seat, 500) for seat in range(8)], deal.deck())
    for action in hand.actions:
        again.apply(action)
    assert again.events == hand.events
    started, ended = hand.events[0], hand.events[-1]
    assert isinstance(started, HandStarted) and started.method == "stud-deck/2"
    assert isinstance(ended, HandEnded) and ended.server_seed is None
    opened = [e for e in hand.events if isinstance(e, CardsOpened)]
    for event in opened:
        for opening in event.cards:
            assert verify_opening(opening, deal.commitment)
    private = {(e.seat, o.card) for e in opened if e.seat is not None for o in e.cards}
    downs = {
        (e.seat, parse_card(c)) for e in hand.events if isinstance(e, DownCards) for c in e.cards
    }
    assert private == downs
    dealt = [c for cards in hand.cards for c in cards] + list(hand.common)
    assert {o.card for e in opened for o in e.cards} == set(dealt)


def test_the_checkers_docs_fairness_md_prints_agree_with_the_engine() -> None:
    """The Python of docs/fairness.md, run as written: stud-deck/2's opening check and deal
    order, stud-deck/1's deck."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "fairness.md").read_text()
    deck2, deck1 = (_run(block) for block in re.findall(r"```python\n(.*?)```", text, re.S)[:2])
    committed = CommittedDeck(hashlib.sha256(b"docs").digest(), table_id=3, number=5)
    seeds = [(0, "a"), (4, "zz")]
    assert (
        deck2["deal_order"](committed.commitment, 3, 5, seeds)
        == deal_order(committed.commitment, 3, 5, seeds)[0]
    )
    for o in committed.openings():
        assert deck2["opens"](o.card, o.position, o.salt, list(o.proof), committed.commitment)
        other = (o.position + 1) % 52
        assert not deck2["opens"](o.card, other, o.salt, list(o.proof), committed.commitment)
    deal = FairDeal(bytes(32), 1, 1, ((0, "abc"),))
    assert deck1["deck"](bytes(32), 1, 1, [(0, "abc")]) == [format_card(c) for c in deal.order()]


def _run(source: str) -> dict[str, Any]:
    names: dict[str, Any] = {}
    exec(source, names)  # noqa: S102 - the documentation's own example
    return names
