"""Engine hands as PHH: the record of a finished hand, and a record as one player saw it.

A hand played under the ``phh`` rules profile (:mod:`engine.phh_rules`) replays in PokerKit
to the same stacks; one played by the rule books is still a faithful record, marked so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from engine.cards import format_cards
from engine.errors import PhhError
from engine.events import ActionTaken, CommonCard, StreetDealt
from engine.hand import Hand
from engine.phh import HandHistory, dumps
from engine.phh_rules import RULE_BOOKS_MARK, is_phh_config, rake_fields


def history_of(hand: Hand, /, **fields: Any) -> HandHistory:
    """The PHH record of a finished engine hand of a variant PHH has a code for.

    A hand played under the ``phh`` profile replays in PokerKit to the same stacks, save
    where PokerKit is wrong (docs/phh.md: hi-lo pots without an eligible low, chips above
    every live total, heads-up antes that differ). A hand played by the rule books is still
    a faithful record of its deals and actions, with its true ``finishing_stacks``; the
    user field ``_rules = "rule_books"`` says that a replay under PokerKit's conventions may
    pay it differently (docs/phh.md lists where). A raked table's rake is written in user
    fields (``engine.phh_rules.rake_fields``), ``finishing_stacks`` after it. Deals are
    written one action per seat and street, in seat order; every live hand is shown at the
    end. Extra ``fields`` (players, event...) are added.
    """
    config = hand.config
    if not hand.over:
        raise PhhError("the hand is not over")
    code = config.variant.phh_code
    if code is None or config.structure != "fixed_limit" or config.last_card_down:
        raise PhhError(f"PHH has no code for {config.variant.title} ({config.structure})")
    if not is_phh_config(config):
        fields = {RULE_BOOKS_MARK[0]: RULE_BOOKS_MARK[1], **fields}
    fields = {**rake_fields(config, hand.result().rake), **fields}
    streets = config.streets
    dealt = [0] * hand.n
    actions: list[str] = []
    index = hand.index_of
    for event in hand.events:
        if isinstance(event, StreetDealt):
            size = len(next(s for s in streets if s.name == event.street).cards)
            for deal in event.deals:
                i = index[deal.seat]
                cards = hand.cards[i][dealt[i] : dealt[i] + size]
                dealt[i] += size
                actions.append(f"d dh p{i + 1} {format_cards(cards)}")
        elif isinstance(event, CommonCard):
            actions.append(f"d db {event.card}")
        elif isinstance(event, ActionTaken):
            actions.append(f"p{index[event.seat] + 1} {_verb(event.data)}")
    if hand.result().showdown:
        for i in range(hand.n):
            if not hand.folded[i]:
                actions.append(f"p{i + 1} sm {format_cards(hand.cards[i])}")
    antes = config.ante_by_position or (config.ante,) * hand.n
    return HandHistory(
        variant=code,
        antes=tuple(antes),
        bring_in=config.bring_in,
        small_bet=config.small_bet,
        big_bet=config.big_bet,
        starting_stacks=tuple(hand.starting),
        actions=tuple(actions),
        ante_trimming_status=config.trim_antes,
        finishing_stacks=tuple(hand.stacks),
        fields={"seats": [s + 1 for s in hand.seats], **fields},
    )


def export(hand: Hand, /, **fields: Any) -> str:
    """The PHH text of a finished engine hand (see :func:`history_of`)."""
    return dumps(history_of(hand, **fields))


_DEAL = re.compile(r"^d dh p(\d+) (\S+)(.*)$")


def as_seen_by(
    history: HandHistory, player: int, shown: Iterable[int] | None = None
) -> HandHistory:
    """The record as one player (0-based index) saw it: the down cards of every other
    player who never showed them become ``??``, as PHH writes unknown cards.

    ``shown`` names the players (0-based) whose hands were tabled at the showdown; a hand
    the record shows but its player mucked is written as a muck (``pN sm``). By default
    every ``sm`` with cards counts as shown. Which cards were down follows from where each
    falls in its player's deal sequence (the variant's streets), as a reader works it out.
    """
    faces = [up for street in history.config().streets for up in street.cards]
    showing: set[int] = set()
    for text in history.actions:
        words = text.split("#", 1)[0].split()
        if len(words) >= 3 and words[1] == "sm" and words[2] != "-":
            showing.add(int(words[0][1:]) - 1)
    tabled = showing if shown is None else set(shown)
    dealt = [0] * len(history.starting_stacks)
    actions = []
    for text in history.actions:
        match = _DEAL.match(text)
        if match is None:
            words = text.split("#", 1)[0].split()
            is_show = len(words) >= 3 and words[1] == "sm" and words[2] != "-"
            if is_show and int(words[0][1:]) - 1 not in tabled:
                text = f"{words[0]} sm"  # mucked at the table: its cards stay unknown
            actions.append(text)
            continue
        who = int(match.group(1)) - 1
        cards = [match.group(2)[k : k + 2] for k in range(0, len(match.group(2)), 2)]
        first = dealt[who] if 0 <= who < len(dealt) else 0
        if 0 <= who < len(dealt):
            dealt[who] += len(cards)
        if who == player or who in tabled:
            actions.append(text)
            continue
        masked = [
            card if first + k < len(faces) and faces[first + k] else "??"
            for k, card in enumerate(cards)
        ]
        actions.append(f"d dh p{who + 1} {''.join(masked)}{match.group(3)}")
    return replace(history, actions=tuple(actions))


def _verb(data: Mapping[str, Any]) -> str:
    kind = data["action"]
    if kind == "fold":
        return "f"
    if kind in ("check", "call"):
        return "cc"
    if kind == "bring_in":
        return "pb"
    return f"cbr {data['to']}"


__all__ = [
    "as_seen_by",
    "export",
    "history_of",
]
