"""Cards as small ints, so evaluation and dealing stay table lookups.

A card is ``rank * 4 + suit``: rank 0..12 for deuce..ace, suit 0..3 for
clubs < diamonds < hearts < spades (the order of every "by suit" tie-break).
Comparing two card ints therefore compares rank first, then suit.

>>> parse_card("As"), format_card(51)
(51, 'As')
>>> format_cards(parse_cards("Td2c"))
'Td2c'

A provably fair deck (:mod:`engine.fair`, :mod:`engine.fair2`) carries its proof as its
``fair``: what the hand reads of it is :class:`DealProof`, and a card it opens an
:class:`Opening`, both here so the deck need not know the modules that make them.
"""

from __future__ import annotations

import random
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, cast

from engine.errors import InvalidAction
from engine.protocol import ErrorCode

RANKS = "23456789TJQKA"
SUITS = "cdhs"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
RANK_NAMES = (
    "deuce",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
    "ace",
)
RANK_PLURALS = (
    "deuces",
    "threes",
    "fours",
    "fives",
    "sixes",
    "sevens",
    "eights",
    "nines",
    "tens",
    "jacks",
    "queens",
    "kings",
    "aces",
)

Card = int
CARD_COUNT = 52
ACE = 12

_CARD_TEXT = tuple(r + s for r in RANKS for s in SUITS)
_TEXT_CARD = {text: index for index, text in enumerate(_CARD_TEXT)}
_TEXT_CARD.update({text.upper()[0] + text[1]: i for i, text in enumerate(_CARD_TEXT)})
_TEXT_CARD.update({"10" + text[1]: i for i, text in enumerate(_CARD_TEXT) if text[0] == "T"})

# random.Random's integer draw from getrandbits (CPython): Deck._settle inlines it when the
# deck's random source draws with it.
_DRAW_WITH_GETRANDBITS = getattr(random.Random, "_randbelow_with_getrandbits", None)
_BITS = tuple(left.bit_length() for left in range(2 * CARD_COUNT + 1))  # bits of each count


# A card nobody saw (PHH's ``??``): replayed records deal it to seats that never show.
# It prints as ``??`` but is never parsed, never ranked and never wins (see engine.hand).
UNKNOWN: Card = CARD_COUNT
_CARD_TEXT += ("??",)


def rank_of(card: Card) -> int:
    return card >> 2


def suit_of(card: Card) -> int:
    return card & 3


def parse_card(text: str) -> Card:
    """Parse ``As``, ``td`` or ``10h``; raise InvalidAction on anything else."""
    card = _TEXT_CARD.get(text) if isinstance(text, str) else None
    if card is None and isinstance(text, str) and len(text) == 2:
        card = _TEXT_CARD.get(text[0].upper() + text[1].lower())
    if card is None:
        raise InvalidAction(f"not a card: {text!r}", code=ErrorCode.BAD_CARD)
    return card


def parse_cards(text: str) -> list[Card]:
    """Parse cards written back to back (``Ts9s7d``) or separated by spaces."""
    compact = "".join(text.split())
    if len(compact) % 2:
        raise InvalidAction(f"not a list of cards: {text!r}", code=ErrorCode.BAD_CARD)
    return [parse_card(compact[i : i + 2]) for i in range(0, len(compact), 2)]


def format_card(card: Card) -> str:
    return _CARD_TEXT[card]


def format_cards(cards: Iterable[Card], sep: str = "") -> str:
    return sep.join(_CARD_TEXT[c] for c in cards)


class Scrambler(Protocol):
    """What scrambles the burn cards of a stacked deck: ``random.Random`` or a fair deal's
    stream (engine.fair)."""

    def shuffle(self, x: list[Any], /) -> None: ...


_HEX32 = re.compile(r"[0-9a-f]{64}")


class Opening(NamedTuple):
    """A committed card opened (``stud-deck/2``, :mod:`engine.fair2`): its position in the
    committed deck, its salt and the Merkle path (sibling hashes, leaf first) that leads from
    it to the root. Here, with :class:`DealProof`, as a deck carries its proof."""

    card: Card
    position: int
    salt: bytes
    proof: tuple[bytes, ...]

    def encode(self) -> dict[str, Any]:
        return {
            "card": format_card(self.card),
            "position": self.position,
            "salt": self.salt.hex(),
            "proof": [node.hex() for node in self.proof],
        }

    @classmethod
    def decode(cls, data: Mapping[str, Any]) -> Opening:
        """An opening from its JSON; :class:`InvalidAction` (``bad_deck``) when malformed."""
        try:
            card = parse_card(data["card"])
            position = data["position"]
            salt = _hex32(data["salt"])
            proof = tuple(_hex32(node) for node in data["proof"])
        except (KeyError, TypeError) as error:
            raise InvalidAction(f"not a card's opening: {error}", code=ErrorCode.BAD_DECK) from None
        if type(position) is not int or not 0 <= position < CARD_COUNT:
            raise InvalidAction("an opening's position is 0 to 51", code=ErrorCode.BAD_DECK)
        return cls(card, position, salt, proof)


class DealProof(Protocol):
    """What a provably fair deck (its ``fair``) tells the hand: the method, the commitment and
    client seeds ``hand_started`` publishes, the seed ``hand_ended`` reveals (None: none is),
    and the opening of a card as it is shown (None: cards are not opened one by one)."""

    @property
    def method(self) -> str: ...

    @property
    def commitment(self) -> str: ...

    @property
    def client_seeds(self) -> tuple[tuple[int, str], ...]: ...

    def revealed(self) -> str | None: ...

    def opening(self, card: Card) -> Opening | None: ...


def _hex32(text: object) -> bytes:
    if not isinstance(text, str) or _HEX32.fullmatch(text) is None:
        raise InvalidAction(
            "a salt or a proof's hash is 64 lowercase hex digits", code=ErrorCode.BAD_DECK
        )
    return bytes.fromhex(text)


class Deck:
    """A shuffled deck dealt from the top; the bottom card is never dealt.

    The random source is injected: a seeded ``random.Random`` for tests and
    replays, ``secrets.SystemRandom()`` (the default) in play. A stacked order
    may be given instead, top card first. The same source scrambles the burn
    cards when the deck runs short (SCS 18, Robert's 15): for a stacked order it may be
    any :class:`Scrambler`. ``fair``: the seeds a provably fair deck was derived from
    (engine.fair), None for any other deck.
    """

    __slots__ = (
        "cards",
        "position",
        "burns",
        "rng",
        "bottom_dealable",
        "set_aside_cards",
        "settled",
        "fair",
        "_getrandbits",
    )

    def __init__(
        self, order: Sequence[Card] | None = None, rng: random.Random | Scrambler | None = None
    ):
        if order is None and rng is not None and not isinstance(rng, random.Random):
            raise TypeError("a deck shuffled as it is dealt needs a random.Random")
        self.rng: random.Random | Scrambler = rng if rng is not None else secrets.SystemRandom()
        self.fair: DealProof | None = None
        # Random's unbiased integer draw (what its own shuffle uses) draws from getrandbits:
        # when the source draws that way, _settle writes the same draw out (a call less per
        # card); None: the source's own draw.
        draw = getattr(getattr(self.rng, "_randbelow", None), "__func__", None)
        inlinable = draw is not None and draw is _DRAW_WITH_GETRANDBITS
        self._getrandbits = cast(random.Random, self.rng).getrandbits if inlinable else None
        # Cards before ``settled`` are in their final order. A random deck is shuffled as it
        # is dealt (Fisher-Yates, one step per card): the same uniform order as shuffling it
        # all first, without drawing for the cards a short hand never reaches.
        self.settled = CARD_COUNT
        if order is None:
            cards = list(range(CARD_COUNT))
            self.settled = 0
        else:
            cards = list(order)
            if len(set(cards)) != len(cards) or any(not 0 <= c < CARD_COUNT for c in cards):
                raise InvalidAction("a deck holds each card at most once", code=ErrorCode.BAD_DECK)
        self.cards: list[Card] = cards
        self.position = 0
        self.burns: list[Card] = []
        # After the burn cards are scrambled back in, every card of that stack may be dealt.
        self.bottom_dealable = False
        # Folded hands kept for the not-enough-cards rule (TableConfig.reuse_folded_cards).
        self.set_aside_cards: list[Card] = []

    def set_aside(self, cards: Sequence[Card]) -> None:
        """Keep a folded hand aside: when the deck runs short it is scrambled in with the burns."""
        self.set_aside_cards.extend(cards)

    def _settle(self, upto: int) -> None:
        cards = self.cards
        size = len(cards)
        if upto > size:
            upto = size
        if upto <= self.settled:
            return  # in order already (a stacked or derived deck always is)
        getrandbits = self._getrandbits
        if getrandbits is not None and size < len(_BITS):
            for i in range(self.settled, upto):
                left = size - i
                bits = _BITS[left]
                j = getrandbits(bits)
                while j >= left:
                    j = getrandbits(bits)
                j += i
                card = cards[j]
                cards[j] = cards[i]
                cards[i] = card
        else:
            rng = cast(random.Random, self.rng)  # only an unshuffled deck settles
            draw = getattr(rng, "_randbelow", rng.randrange)
            for i in range(self.settled, upto):
                j = i + draw(size - i)
                cards[i], cards[j] = cards[j], cards[i]
        if upto > self.settled:
            self.settled = upto

    def order(self) -> list[Card]:
        """The whole deck in the order it will be dealt, top card first (shuffling what is
        not yet): what a server writes down to deal the same hand again."""
        self._settle(len(self.cards))
        return list(self.cards)

    def dealable(self) -> int:
        """Cards that may still be dealt straight from the deck."""
        left = len(self.cards) - self.position
        return left if self.bottom_dealable else max(0, left - 1)

    def deal_round(self, count: int, burn: bool) -> tuple[list[Card], Card | None, str | None]:
        """Deal one card to each of ``count`` seats, burning first when ``burn``.

        Returns ``(cards, common_card, procedure)``. When the deck is short it
        follows the not-enough-cards rule: deal all but the last card, scramble
        the last card with the burn cards, burn again and deal on; if still short
        skip that burn; if still short, burn and turn one common card instead
        (then ``cards`` is empty). ``procedure`` names what was done, or is None.
        """
        position = self.position
        end = position + count + burn
        # Enough cards left straight from the deck (never the bottom card unless the burns
        # were scrambled in): the usual street.
        size = len(self.cards)
        if end < size or (end == size and (self.bottom_dealable or end == position)):
            if self.settled < end:
                self._settle(end)
            cards = self.cards
            if burn:
                self.burns.append(cards[position])
                position += 1
            self.position = end
            return cards[position:end], None, None
        self._settle(len(self.cards))
        left = len(self.cards) - position
        if left + len(self.burns) + len(self.set_aside_cards) < count:
            return [], self._common_card(), "common_card"
        dealt: list[Card] = []
        if burn and left >= 2:
            self.burns.append(self.cards[position])
            position += 1
            left -= 1
        keep_last = 0 if self.bottom_dealable else 1
        direct = left - keep_last
        dealt.extend(self.cards[position : position + direct])
        pool = self.burns + self.set_aside_cards + self.cards[position + direct :]
        self.set_aside_cards = []
        self.rng.shuffle(pool)
        needed = count - len(dealt)
        procedure = "reshuffled_burns"
        start = 0
        if burn and len(pool) >= needed + 1:
            start = 1
        elif burn:
            procedure = "reshuffled_no_burn"
        self.burns = pool[:start]
        dealt.extend(pool[start : start + needed])
        self.cards = pool
        self.position = start + needed
        self.bottom_dealable = True
        return dealt, None, procedure

    def _common_card(self) -> Card:
        """Burn one card and turn one up for everyone, scrambling the burns in if needed."""
        self._settle(len(self.cards))
        if self.dealable() >= 2:
            self.burns.append(self.cards[self.position])
            card = self.cards[self.position + 1]
            self.position += 2
            return card
        pool = self.burns + self.set_aside_cards + self.cards[self.position :]
        self.set_aside_cards = []
        self.rng.shuffle(pool)
        start = 1 if len(pool) >= 2 else 0
        self.burns = pool[:start]
        self.cards = pool
        self.position = start + 1
        self.bottom_dealable = True
        return pool[start]
