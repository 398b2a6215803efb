"""The deal of a street: the deck's round, each seat's cards and board, and the events
that show them, each seat's down cards to that seat alone.

Like :mod:`engine.betting`, a function of the hand (its
:class:`~engine.hand_state.HandState`), which calls it once a street. As its upcards fall,
each seat's board is kept as a rank-pattern key (:data:`engine.plan.BOARD_STEP`) for the
order of play (:mod:`engine.order`); the keys hold while every upcard is known (a replayed
record may deal ``??``), which the deal reports to the hand.
"""

from __future__ import annotations

from itertools import compress

from engine.cards import UNKNOWN, Card, Opening, format_card
from engine.events import (
    CardsOpened,
    CommonCard,
    Deal,
    DeckProcedure,
    DownCards,
    StreetDealt,
    new_event,
)
from engine.fair import METHOD as STUD_DECK_1
from engine.hand_state import HandState
from engine.plan import BOARD_STEP

_new_tuple = tuple.__new__
_CARD_TEXT = tuple(format_card(c) for c in range(UNKNOWN + 1))  # a replay's "??" last


def deal_street(hand: HandState) -> tuple[Card | None, bool]:
    """Deal the hand's current street to every seat still receiving cards (or the common
    card when the deck runs short), with the events that show it. Returns the common card
    when one was turned, for the dealer's words about it, and whether every upcard this deal
    turned is a known card (if not, the board keys no longer hold)."""
    plan = hand.plan
    street = hand.street
    receiving = hand.receiving
    takers = list(compress(range(hand.n), receiving))
    faces = plan.faces[street]
    per_seat = len(faces)
    dealt, common, procedure = hand.deck.deal_round(
        per_seat * len(takers), hand.config.burn_cards and street > 0
    )
    name = plan.names[street]
    if procedure is not None:
        hand.events.append(new_event(DeckProcedure, (name, procedure)))
    fair = hand.deck.fair  # a stud-deck/2 deal opens each card to whoever sees it
    opening = fair.opening if fair is not None and fair.method != STUD_DECK_1 else None
    if common is not None:
        hand.common.append(common)
        hand.events.append(new_event(CommonCard, (name, format_card(common))))
        if opening is not None:
            hand.events.append(CardsOpened(name, (_opened(opening(common)),)))
        return common, True
    text = _CARD_TEXT
    step = BOARD_STEP
    seats, folded, cards, ups = hand.seats, hand.folded, hand.cards, hand.up
    keys = hand.board_keys
    events = hand.events
    public: list[Deal] = []
    known = True
    if per_seat == 1 and faces[0]:  # one upcard each (fourth to sixth street)
        for card, i in zip(dealt, takers, strict=True):
            cards[i].append(card)
            ups[i].append(card)
            if card == UNKNOWN:
                known = False
            else:
                keys[i] += step[card]
            public.append(_new_tuple(Deal, (seats[i], (text[card],), 0, folded[i])))
    elif per_seat == 1:  # one down card each (the river)
        for card, i in zip(dealt, takers, strict=True):
            seat = seats[i]
            cards[i].append(card)
            public.append(_new_tuple(Deal, (seat, (), 1, folded[i])))
            events.append(new_event(DownCards, (seat, name, (text[card],))))
            if opening is not None:
                events.append(CardsOpened(name, (_opened(opening(card)),), seat))
    else:
        count = len(takers)
        for n, i in enumerate(takers):
            seat = seats[i]
            mine = dealt[n::count]
            cards[i] += mine
            up = ups[i]
            shown: list[str] = []
            down: list[str] = []
            for card, face_up in zip(mine, faces, strict=True):
                if not face_up:
                    down.append(text[card])
                    continue
                up.append(card)
                shown.append(text[card])
                if card == UNKNOWN:
                    known = False
                else:
                    keys[i] += step[card]
            public.append(_new_tuple(Deal, (seat, tuple(shown), len(down), folded[i])))
            if down:
                events.append(new_event(DownCards, (seat, name, tuple(down))))
                if opening is not None:
                    hidden = [c for c, face_up in zip(mine, faces, strict=True) if not face_up]
                    events.append(
                        CardsOpened(name, tuple(_opened(opening(c)) for c in hidden), seat)
                    )
    events.append(new_event(StreetDealt, (name, tuple(public))))
    if opening is not None:
        up_cards = [c for n in range(len(takers)) for c in _ups(dealt, n, len(takers), faces)]
        if up_cards:
            events.append(CardsOpened(name, tuple(_opened(opening(c)) for c in up_cards)))
    return None, known


def _ups(dealt: list[Card], n: int, count: int, faces: tuple[bool, ...]) -> list[Card]:
    """The upcards the ``n``-th of ``count`` takers was dealt on this street."""
    return [c for c, face_up in zip(dealt[n::count], faces, strict=True) if face_up]


def _opened(opening: Opening | None) -> Opening:
    if opening is None:
        raise ValueError("a stud-deck/2 deal opens every card it deals")
    return opening


__all__ = ["deal_street"]
