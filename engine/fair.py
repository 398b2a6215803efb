"""Provably fair decks: a hand's whole deal derived from seeds anyone can check afterwards.

The server draws a fresh 32-byte server seed for each hand and publishes its commitment,
``SHA-256(server seed)`` in hex, before it takes the players' client seeds; once the hand is
over it reveals the seed. The deck (and every later scramble of the hand's burn cards) is
then a pure function of the server seed, the client seeds in seat order and the hand's
identity, so a player can recompute it and check every card dealt. docs/fairness.md is the
method for players; this module is its one implementation (the server deals with it, the
verifier checks with it).

The method, ``stud-deck/1``:

* The context is UTF-8 text: ``"stud-deck/1\\n"``, ``"table=<id>\\n"``, ``"hand=<number>\\n"``,
  then ``"seat=<seat> seed=<client seed>\\n"`` for each seat that sent a seed, by seat
  number (seats count from 0).
* The byte stream is the concatenation of ``HMAC-SHA256(key=server seed, message=context ||
  counter)`` for counter = 0, 1, 2... written as 8 bytes big-endian.
* A uniform integer below ``n`` (1 <= n <= 256) takes the stream's next byte ``b``; when
  ``b < 256 - 256 % n`` it is ``b % n``, else the byte is dropped and the next one taken.
* A shuffle of a list (Fisher-Yates): for ``i`` from 0 to ``len - 2``, swap item ``i`` with
  item ``i + below(len - i)``.
* A wide draw, a uniform integer below ``n`` (1 <= n <= 2**32), for what a byte cannot count
  (a tournament's seat draw, engine.tournament.draw): the stream's next 4 bytes read
  big-endian as ``u``; when ``u < 2**32 - 2**32 % n`` it is ``u % n``, else the 4 bytes are
  dropped and the next 4 taken. Decks never use it.
* The deck is the shuffle of the cards 0..51 (card = rank * 4 + suit, ranks deuce..ace,
  suits clubs, diamonds, hearts, spades: 0 is ``2c``, 51 is ``As``), dealt top first. A
  scramble of burn cards later in the hand shuffles with the same stream, carried on.

>>> seed = bytes(32)
>>> commitment(seed)
'66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925'
>>> deal = FairDeal(seed, table_id=1, number=1, client_seeds=((0, "abc"),))
>>> deal.context()
b'stud-deck/1\\ntable=1\\nhand=1\\nseat=0 seed=abc\\n'
>>> len(set(deal.order())) == 52
True
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.cards import CARD_COUNT, Card, Deck
from engine.errors import InvalidAction
from engine.protocol import ErrorCode

METHOD = "stud-deck/1"
SEED_BYTES = 32
CLIENT_SEED_MAX = 64
_CLIENT_SEED = re.compile(rf"[A-Za-z0-9_-]{{1,{CLIENT_SEED_MAX}}}")
_SERVER_SEED = re.compile(rf"[0-9a-f]{{{2 * SEED_BYTES}}}")


def commitment(server_seed: bytes) -> str:
    """What is published before the deal: SHA-256 of the server seed, lowercase hex."""
    return hashlib.sha256(server_seed).hexdigest()


def check_client_seed(seed: object) -> str:
    """A client seed as accepted: 1 to 64 characters of ``A-Z a-z 0-9 _ -``."""
    if not isinstance(seed, str) or _CLIENT_SEED.fullmatch(seed) is None:
        raise InvalidAction(
            f"a client seed is 1 to {CLIENT_SEED_MAX} characters of A-Z, a-z, 0-9, _ and -",
            code=ErrorCode.BAD_CLIENT_SEED,
        )
    return seed


def parse_server_seed(text: object) -> bytes:
    """A revealed server seed from its hex (64 lowercase hex digits)."""
    if not isinstance(text, str) or _SERVER_SEED.fullmatch(text) is None:
        raise InvalidAction(
            f"a server seed is {2 * SEED_BYTES} lowercase hex digits", code=ErrorCode.BAD_DECK
        )
    return bytes.fromhex(text)


class DeckStream:
    """The hand's byte stream (HMAC-SHA256 in counter mode) and the draws made from it."""

    __slots__ = ("_key", "_context", "_counter", "_block", "_at")

    def __init__(self, server_seed: bytes, context: bytes) -> None:
        self._key = server_seed
        self._context = context
        self._counter = 0
        self._block = b""
        self._at = 0

    def _next_block(self) -> bytes:
        message = self._context + self._counter.to_bytes(8, "big")
        self._counter += 1
        return hmac.digest(self._key, message, "sha256")

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` by rejection sampling (no modulo bias)."""
        if not 1 <= n <= 256:
            raise ValueError(f"draws are below 1 to 256, not {n}")
        limit = _LIMITS[n]
        block, at = self._block, self._at
        while True:
            if at == len(block):
                block, at = self._next_block(), 0
            byte = block[at]
            at += 1
            if byte < limit:
                self._block, self._at = block, at
                return byte % n

    def below_wide(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` for ``n`` up to ``2**32`` (fields of a thousand
        players): four bytes big-endian, rejected at or above the largest multiple of ``n``."""
        if not 1 <= n <= _WIDE:
            raise ValueError(f"wide draws are below 1 to 2**32, not {n}")
        limit = _WIDE - _WIDE % n
        while True:
            value = int.from_bytes(self._take(4), "big")
            if value < limit:
                return value % n

    def _take(self, count: int) -> bytes:
        """The stream's next ``count`` bytes, across blocks."""
        taken = bytearray()
        block, at = self._block, self._at
        while len(taken) < count:
            if at == len(block):
                block, at = self._next_block(), 0
            end = min(len(block), at + count - len(taken))
            taken += block[at:end]
            at = end
        self._block, self._at = block, at
        return bytes(taken)

    def shuffle(self, items: list[Any]) -> None:
        """Fisher-Yates in place, front to back: ``below`` written out (a deck a hand)."""
        size = len(items)
        if size > 256:
            raise ValueError(f"a shuffle draws below 256 at most, not {size}")
        block, at, end = self._block, self._at, len(self._block)
        limits, digest = _LIMITS, self._next_block
        for i, n in enumerate(range(size, 1, -1)):
            if at == end:
                block, at, end = digest(), 0, 32
            byte = block[at]
            at += 1
            while byte >= limits[n]:
                if at == end:
                    block, at, end = digest(), 0, 32
                byte = block[at]
                at += 1
            j = i + byte % n
            items[i], items[j] = items[j], items[i]
        self._block, self._at = block, at


_LIMITS = (0, *(256 - 256 % n for n in range(1, 257)))  # below(n) keeps bytes under these
_WIDE = 2**32


@dataclass(frozen=True, slots=True)
class FairDeal:
    """Everything that decides a hand's cards: the server seed, the hand's identity and the
    client seeds that came in before the deal (seat, seed), by seat."""

    server_seed: bytes
    table_id: int
    number: int
    client_seeds: tuple[tuple[int, str], ...] = ()

    method = METHOD

    def __post_init__(self) -> None:
        if len(self.server_seed) != SEED_BYTES:
            raise InvalidAction(f"a server seed is {SEED_BYTES} bytes", code=ErrorCode.BAD_DECK)
        seats = [seat for seat, _ in self.client_seeds]
        if seats != sorted(set(seats)):
            raise InvalidAction("client seeds go one a seat, by seat", code=ErrorCode.BAD_DECK)
        for _, seed in self.client_seeds:
            check_client_seed(seed)

    @property
    def commitment(self) -> str:
        return commitment(self.server_seed)

    def revealed(self) -> str | None:
        """The server seed, revealed when the hand is over (hex)."""
        return self.server_seed.hex()

    def opening(self, card: Card) -> None:
        """No card is opened one by one: the revealed seed opens them all."""
        return None

    def context(self) -> bytes:
        lines = [METHOD, f"table={self.table_id}", f"hand={self.number}"]
        lines.extend(f"seat={seat} seed={seed}" for seat, seed in self.client_seeds)
        return ("\n".join(lines) + "\n").encode()

    def stream(self) -> DeckStream:
        return DeckStream(self.server_seed, self.context())

    def order(self) -> list[Card]:
        """The deck, top card first."""
        cards = list(range(CARD_COUNT))
        self.stream().shuffle(cards)
        return cards

    def deck(self) -> Deck:
        """The hand's deck: its order, and the rest of the stream for scrambling its burns."""
        stream = self.stream()
        cards = list(range(CARD_COUNT))
        stream.shuffle(cards)
        deck = Deck(order=cards, rng=stream)
        deck.fair = self
        return deck

    def record(self) -> dict[str, Any]:
        """JSON-ready: what a resumed hand deals again from (sealed at rest)."""
        return {
            "server_seed": self.server_seed.hex(),
            "client_seeds": [[seat, seed] for seat, seed in self.client_seeds],
        }

    @classmethod
    def from_record(cls, record: dict[str, Any], *, table_id: int, number: int) -> FairDeal:
        return cls(
            parse_server_seed(record.get("server_seed")),
            table_id,
            number,
            client_seeds(record.get("client_seeds", ())),
        )


def client_seeds(entries: Sequence[Any]) -> tuple[tuple[int, str], ...]:
    """Client seeds from JSON: ``[[seat, seed], ...]`` or ``[{"seat", "seed"}, ...]``."""
    seeds: list[tuple[int, str]] = []
    for entry in entries:
        seat, seed = (entry.get("seat"), entry.get("seed")) if isinstance(entry, dict) else entry
        if not isinstance(seat, int) or isinstance(seat, bool):
            raise InvalidAction("a client seed's seat is a number", code=ErrorCode.BAD_DECK)
        seeds.append((seat, check_client_seed(seed)))
    return tuple(seeds)


__all__ = [
    "CLIENT_SEED_MAX",
    "METHOD",
    "SEED_BYTES",
    "DeckStream",
    "FairDeal",
    "check_client_seed",
    "client_seeds",
    "commitment",
    "parse_server_seed",
]
