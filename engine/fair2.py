"""``stud-deck/2``: a deal proven card by card, with nothing opened that was not shown.

``stud-deck/1`` (:mod:`engine.fair`) reveals the server seed after the hand, and with it the
whole deck: every folded and mucked card. Here the server seed ``S`` is never revealed.
Before any client seed is known the server commits to a whole deck, position by position,
under one Merkle root; the client seeds then decide, through a public permutation, which
committed position each draw takes. Each card goes to whoever may see it with its
*opening*: its position, its salt and the Merkle path to the root. docs/fairness.md is the
method for players; this module is its one implementation.

* The committed deck ``D``: the ``stud-deck/1`` shuffle of the cards 0..51 with the stream
  keyed by ``S`` over the context ``"stud-deck/2 deck\\ntable=<id>\\nhand=<n>\\n"``.
* The salt of position ``j`` (0..51): ``HMAC-SHA256(S, "stud-deck/2 salt\\n" || j)``, ``j``
  one byte.
* The leaf of position ``j``: ``SHA-256(0x00 || j || D[j] || salt_j)`` (one byte, one byte,
  32 bytes). A node: ``SHA-256(0x01 || left || right)``. Each level pairs its nodes from the
  left; an odd last node goes up unchanged (52, 26, 13, 7, 4, 2, 1). The root, in hex, is
  the commitment.
* The deal order ``P``: the ``stud-deck/1`` shuffle of the positions 0..51 with the stream
  keyed by the root (32 bytes) over the ``stud-deck/1`` context with ``stud-deck/2`` as its
  first line (table, hand, the client seeds by seat). The ``k``-th card off the top is
  ``D[P[k]]``; a scramble of burn cards later in the hand carries on the same public stream.

>>> committed = CommittedDeck(bytes(32), table_id=1, number=1)
>>> deal = committed.deal(((0, "abc"),))
>>> opening = deal.opening(deal.order()[0])
>>> verify_opening(opening, committed.commitment)
True
>>> verify_opening(opening._replace(position=(opening.position + 1) % 52), committed.commitment)
False
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.cards import CARD_COUNT, Card, Deck, Opening
from engine.errors import InvalidAction
from engine.fair import SEED_BYTES, DeckStream, check_client_seed, client_seeds, parse_server_seed
from engine.protocol import ErrorCode

METHOD = "stud-deck/2"
_SALT = b"stud-deck/2 salt\n"


def leaf(position: int, card: Card, salt: bytes) -> bytes:
    return hashlib.sha256(bytes((0, position, card)) + salt).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def merkle_levels(leaves: Sequence[bytes]) -> list[list[bytes]]:
    """Every level of the tree, the leaves first, the root last (an odd node goes up)."""
    levels = [list(leaves)]
    while len(levels[-1]) > 1:
        below = levels[-1]
        above = [_node(below[i], below[i + 1]) for i in range(0, len(below) - 1, 2)]
        if len(below) % 2:
            above.append(below[-1])
        levels.append(above)
    return levels


def verify_opening(opening: Opening, commitment: str, size: int = CARD_COUNT) -> bool:
    """Whether ``opening`` leads to the root ``commitment`` (hex): the card was committed at
    that position before the deal."""
    card, index, salt, proof = opening
    if not 0 <= card < CARD_COUNT or not 0 <= index < size:
        return False
    node = leaf(index, card, salt)
    path = iter(proof)
    while size > 1:
        if index ^ 1 < size:
            sibling = next(path, None)
            if sibling is None:
                return False
            node = _node(node, sibling) if index % 2 == 0 else _node(sibling, node)
        index //= 2
        size = (size + 1) // 2
    return next(path, None) is None and hmac.compare_digest(node.hex(), commitment)


def deal_context(table_id: int, number: int, client_seeds: Sequence[tuple[int, str]]) -> bytes:
    lines = [METHOD, f"table={table_id}", f"hand={number}"]
    lines.extend(f"seat={seat} seed={seed}" for seat, seed in client_seeds)
    return ("\n".join(lines) + "\n").encode()


def deal_stream(
    commitment: str, table_id: int, number: int, client_seeds: Sequence[tuple[int, str]]
) -> DeckStream:
    """The public stream of the deal: keyed by the root, over the hand and its seeds."""
    return DeckStream(bytes.fromhex(commitment), deal_context(table_id, number, client_seeds))


def deal_order(
    commitment: str, table_id: int, number: int, client_seeds: Sequence[tuple[int, str]]
) -> tuple[list[int], DeckStream]:
    """``P``: the committed position of each draw, top first, and the stream carried on (for
    the scrambles of a short deck). Anyone can compute it once the seeds are published."""
    stream = deal_stream(commitment, table_id, number, client_seeds)
    positions = list(range(CARD_COUNT))
    stream.shuffle(positions)
    return positions, stream


class CommittedDeck:
    """The server's side: the deck fixed by the secret server seed, its salts and its tree.
    Made when the commitment is published, before any client seed of the hand is known."""

    __slots__ = ("server_seed", "table_id", "number", "cards", "salts", "levels", "commitment")

    def __init__(self, server_seed: bytes, *, table_id: int, number: int) -> None:
        if len(server_seed) != SEED_BYTES:
            raise InvalidAction(f"a server seed is {SEED_BYTES} bytes", code=ErrorCode.BAD_DECK)
        self.server_seed = server_seed
        self.table_id = table_id
        self.number = number
        context = f"stud-deck/2 deck\ntable={table_id}\nhand={number}\n".encode()
        cards = list(range(CARD_COUNT))
        DeckStream(server_seed, context).shuffle(cards)
        self.cards: list[Card] = cards
        self.salts = [
            hmac.digest(server_seed, _SALT + bytes((j,)), "sha256") for j in range(CARD_COUNT)
        ]
        self.levels = merkle_levels(
            [leaf(j, c, s) for j, (c, s) in enumerate(zip(cards, self.salts, strict=True))]
        )
        self.commitment: str = self.levels[-1][0].hex()

    def opening_at(self, position: int) -> Opening:
        proof: list[bytes] = []
        index = position
        for level in self.levels[:-1]:
            if index ^ 1 < len(level):
                proof.append(level[index ^ 1])
            index //= 2
        return Opening(self.cards[position], position, self.salts[position], tuple(proof))

    def openings(self) -> list[Opening]:
        """The whole deck opened: the operator's audit."""
        return [self.opening_at(j) for j in range(CARD_COUNT)]

    def deal(self, client_seeds: Sequence[tuple[int, str]] = ()) -> Deal2:
        return Deal2(self, tuple(client_seeds))


@dataclass(frozen=True, slots=True)
class Deal2:
    """A hand dealt by ``stud-deck/2``: the committed deck and the client seeds by seat. As a
    deck's ``fair``: what ``hand_started`` publishes and each dealt card's opening."""

    committed: CommittedDeck
    client_seeds: tuple[tuple[int, str], ...] = ()
    _position_of: list[int] = field(default_factory=list, compare=False, repr=False)

    method = METHOD

    def __post_init__(self) -> None:
        seats = [seat for seat, _ in self.client_seeds]
        if seats != sorted(set(seats)):
            raise InvalidAction("client seeds go one a seat, by seat", code=ErrorCode.BAD_DECK)
        for _, seed in self.client_seeds:
            check_client_seed(seed)
        where = [0] * CARD_COUNT
        for position, card in enumerate(self.committed.cards):
            where[card] = position
        self._position_of.extend(where)

    @property
    def commitment(self) -> str:
        return self.committed.commitment

    @property
    def number(self) -> int:
        return self.committed.number

    @property
    def server_seed(self) -> bytes:
        """The secret: the server's alone (sealed at rest while the hand is played)."""
        return self.committed.server_seed

    @property
    def table_id(self) -> int:
        return self.committed.table_id

    def revealed(self) -> str | None:
        """Nothing is revealed at the end of a ``stud-deck/2`` hand."""
        return None

    def opening(self, card: Card) -> Opening:
        return self.committed.opening_at(self._position_of[card])

    def order(self) -> list[Card]:
        positions, _ = deal_order(self.commitment, self.table_id, self.number, self.client_seeds)
        cards = self.committed.cards
        return [cards[j] for j in positions]

    def deck(self) -> Deck:
        positions, stream = deal_order(
            self.commitment, self.table_id, self.number, self.client_seeds
        )
        cards = self.committed.cards
        deck = Deck(order=[cards[j] for j in positions], rng=stream)
        deck.fair = self
        return deck

    def record(self) -> dict[str, Any]:
        """JSON-ready: what a resumed hand deals again from (sealed at rest)."""
        return {
            "method": METHOD,
            "server_seed": self.committed.server_seed.hex(),
            "client_seeds": [[seat, seed] for seat, seed in self.client_seeds],
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any], *, table_id: int, number: int) -> Deal2:
        committed = CommittedDeck(
            parse_server_seed(record.get("server_seed")), table_id=table_id, number=number
        )
        return cls(committed, client_seeds(record.get("client_seeds", ())))


class KnownDeal:
    """The verifier's side: a ``stud-deck/2`` deal rebuilt from what one player saw. Positions
    whose cards were opened to the player hold them; the other positions hold the cards the
    player never saw, in card order (placeholders: nothing is known of them). As a deck's
    ``fair``, its openings carry positions only (no salt, no path: the verifier has none)."""

    __slots__ = ("commitment", "table_id", "number", "client_seeds", "cards", "_position_of")

    method = METHOD

    def __init__(
        self,
        commitment: str,
        table_id: int,
        number: int,
        client_seeds: tuple[tuple[int, str], ...],
        known: Mapping[int, Card],
    ) -> None:
        self.commitment = commitment
        self.table_id = table_id
        self.number = number
        self.client_seeds = client_seeds
        if len(set(known.values())) != len(known):
            raise InvalidAction(
                "two committed positions were opened to the same card", code=ErrorCode.BAD_DECK
            )
        unseen = iter(sorted(set(range(CARD_COUNT)) - set(known.values())))
        self.cards = [known[j] if j in known else next(unseen) for j in range(CARD_COUNT)]
        where = [0] * CARD_COUNT
        for position, card in enumerate(self.cards):
            where[card] = position
        self._position_of = where

    def revealed(self) -> str | None:
        return None

    def opening(self, card: Card) -> Opening:
        return Opening(card, self._position_of[card], b"", ())

    def deck(self) -> Deck:
        positions, stream = deal_order(
            self.commitment, self.table_id, self.number, self.client_seeds
        )
        deck = Deck(order=[self.cards[j] for j in positions], rng=stream)
        deck.fair = self
        return deck


__all__ = [
    "METHOD",
    "CommittedDeck",
    "Deal2",
    "KnownDeal",
    "Opening",
    "deal_context",
    "deal_order",
    "leaf",
    "merkle_levels",
    "verify_opening",
]
