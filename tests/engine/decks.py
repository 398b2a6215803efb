"""Stacked decks for rule tests: say which cards each seat gets, street by street.

Each seat (in the hand's position order, dealer's left first) is given its cards
in the order it receives them, e.g. ``"Ah Kd 2c | 5s | 9h"`` (the bars are only
for the reader). The builder lays them out the way :class:`engine.hand.Hand`
deals: round by round, one card at a time clockwise, with a burn card before
every street after the first; the rest of the deck is filled with unused cards.
A seat whose list runs out stops receiving cards from that street on (it folded
facing a bet), so a test can stack any hand exactly.

>>> deck = stud_deck(["As Kd 2c", "3c 4d 5h"])
>>> [format_card(c) for c in deck.cards[:6]]
['As', '3c', 'Kd', '4d', '2c', '5h']
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from engine.actions import Action
from engine.cards import CARD_COUNT, Card, Deck, format_card, parse_cards
from engine.events import Event
from engine.hand import Hand
from engine.variants import Street, TableConfig

SEVEN_CARD = (3, 1, 1, 1, 1)


def cards(text: str) -> list[Card]:
    """``"Ah Kd | 2c"`` -> card ints (bars and spaces are ignored)."""
    return parse_cards(text.replace("|", " "))


def street_sizes(shape: TableConfig | Sequence[Street] | Sequence[int]) -> tuple[int, ...]:
    """Cards per seat on each street, from a config, its streets or plain numbers."""
    if isinstance(shape, TableConfig):
        shape = shape.streets
    return tuple(s if isinstance(s, int) else len(s.cards) for s in shape)


def stud_deck(
    hands: Sequence[str],
    streets: TableConfig | Sequence[Street] | Sequence[int] = SEVEN_CARD,
    *,
    burn: bool = True,
    burns: str = "",
    then: str = "",
    rng: random.Random | None = None,
) -> Deck:
    """A deck that deals ``hands[k]`` to the k-th seat of the hand.

    ``burns`` fixes the burn cards (in order, for the streets that have one);
    ``then`` fixes the cards right after the last dealt card (what a short deck
    deals next); every other place is filled with the unused cards, lowest first.
    The deck's random source (used when the burn cards are scrambled back in,
    SCS 18) defaults to a seeded one so tests replay exactly.
    """
    sizes = street_sizes(streets)
    seats = [cards(h) for h in hands]
    fixed_burns = cards(burns)
    used = [c for seat in seats for c in seat] + fixed_burns + cards(then)
    if len(set(used)) != len(used):
        raise ValueError("a card is stacked twice")
    spare = iter(sorted(set(range(CARD_COUNT)) - set(used)))
    order: list[Card] = []
    dealt = [0] * len(seats)
    receiving = [True] * len(seats)
    burn_cards = iter(fixed_burns)
    for number, size in enumerate(sizes):
        for k, seat in enumerate(seats):
            if receiving[k] and len(seat) < dealt[k] + size:
                receiving[k] = False
        takers = [k for k in range(len(seats)) if receiving[k]]
        if not takers:
            break
        if burn and number > 0:
            fixed = next(burn_cards, None)
            order.append(fixed if fixed is not None else next(spare))
        for card in range(size):
            for k in takers:
                order.append(seats[k][dealt[k] + card])
        for k in takers:
            dealt[k] += size
    for k, seat in enumerate(seats):
        if dealt[k] != len(seat):
            raise ValueError(f"seat {k}: {len(seat) - dealt[k]} card(s) would never be dealt")
    if next(burn_cards, None) is not None:
        raise ValueError("more burn cards than streets with a burn")
    order += cards(then)
    order += list(spare)
    return Deck(order=order, rng=rng if rng is not None else random.Random(7))


def new_hand(
    hands: Sequence[str],
    config: TableConfig | None = None,
    stacks: Sequence[int] | int = 100,
    *,
    seats: Sequence[int] | None = None,
    **deck_options: object,
) -> Hand:
    """Deal a hand of ``config`` (default: seven-card stud, ante 1, bring-in 2, 5/10)
    to seats 0..n-1 (or ``seats``) with the stacked ``hands``."""
    config = config or TableConfig()
    numbers = list(seats) if seats is not None else list(range(len(hands)))
    chips = [stacks] * len(hands) if isinstance(stacks, int) else list(stacks)
    deck_options.setdefault("burn", config.burn_cards)
    deck = stud_deck(hands, config, **deck_options)  # type: ignore[arg-type]
    return Hand(config, list(zip(numbers, chips, strict=True)), deck)


def play(hand: Hand, *steps: str) -> list[Event]:
    """Apply actions written ``"<seat> <kind> [<amount>]"``.

    ``play(hand, "0 bring_in", "1 complete 5")``
    """
    out: list[Event] = []
    for step in steps:
        seat, kind, *amount = step.split()
        out += hand.apply(Action(int(seat), kind, int(amount[0]) if amount else None))
    return out


def of_kind(events: Sequence[Event], kind: str, /, **match: object) -> list[dict[str, Any]]:
    """The data of the events of ``kind`` whose data has every ``match`` item."""
    return [
        e.data
        for e in events
        if e.kind == kind and all(e.data.get(k) == v for k, v in match.items())
    ]


def check_down(hand: Hand) -> None:
    """Play the hand out by checking or calling (no bets): for showdown tests."""
    while not hand.is_over():
        legal = hand.legal_actions()
        assert legal.seat is not None
        kind = next(k for k in ("bring_in", "check", "call") if k in legal.kinds)
        hand.apply(Action(legal.seat, kind))


__all__ = [
    "SEVEN_CARD",
    "cards",
    "check_down",
    "format_card",
    "new_hand",
    "of_kind",
    "play",
    "street_sizes",
    "stud_deck",
]
