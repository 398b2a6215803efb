"""Bots: anything with ``decide(view, legal) -> Action``, and three ways of deciding.

A bot sees exactly what its seat sees (a ``stud_client.TableView``) and must answer one of
the turn's legal actions: the public client is its only way to the table, as for a person.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from stud_bots.equity import equity, streets_left
from stud_bots.starting import FOLD, GOOD, PLAYABLE, PREMIUM, starting_tier
from stud_client import Action, LegalActions, TableView

__all__ = [
    "MOST_BETS",
    "STRATEGIES",
    "Bot",
    "CallingStation",
    "RandomBot",
    "RuleBot",
    "bets_in",
    "make_bot",
    "passive",
    "raises_allowed",
]


@runtime_checkable
class Bot(Protocol):
    def decide(self, view: TableView, legal: LegalActions) -> Action:
        """The action for my turn: one of ``legal.kinds``, with a legal amount."""
        ...


def passive(legal: LegalActions) -> Action:
    """The cheapest legal action: check, call, post the bring-in, else fold."""
    for kind in ("check", "call", "bring_in", "fold"):
        if kind in legal.kinds:
            return Action(kind)
    return wager(legal, low=True)


def wager(legal: LegalActions, *, low: bool = True, target: int | None = None) -> Action:
    """The turn's aggressive action (bet, raise or complete) at a legal amount: the least,
    the most, or the legal amount nearest ``target``."""
    assert legal.wager is not None
    if legal.to_choices:
        choices = sorted(legal.to_choices)
        if target is not None:
            return Action(legal.wager, min(choices, key=lambda c: abs(c - target)))
        return Action(legal.wager, choices[0] if low else choices[-1])
    if target is not None:
        return Action(legal.wager, max(legal.min_to, min(legal.max_to, target)))
    return Action(legal.wager, legal.min_to if low else legal.max_to)


class RandomBot:
    """Legal actions at random (folds rarely, raises now and then): noise for load tests."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def decide(self, view: TableView, legal: LegalActions) -> Action:
        roll = self.rng.random()
        kinds = legal.kinds
        if legal.wager is not None and roll < 0.25:
            if legal.to_choices:
                return Action(legal.wager, self.rng.choice(legal.to_choices))
            return Action(legal.wager, self.rng.randint(legal.min_to, legal.max_to))
        if "fold" in kinds and roll > 0.93 and "check" not in kinds:
            return Action("fold")
        return passive(legal)


class CallingStation:
    """Never folds while it can call or check, never raises: the classic weak player."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng

    def decide(self, view: TableView, legal: LegalActions) -> Action:
        return passive(legal)


#: The most bets a bot puts in on one street, however strong: bet and three raises, the usual
#: cap (fixed limit heads-up may have none: ``uncapped_heads_up``).
MOST_BETS = 4
# Third street by tier (stud_bots.starting): raise while the street has fewer bets than the
# first number; call while it has at most the second (None: any).
_START_PLAY: dict[int, tuple[int, int | None]] = {
    PREMIUM: (MOST_BETS, None),
    GOOD: (2, None),
    PLAYABLE: (0, 1),
    FOLD: (0, -1),
}


def bets_in(view: TableView, legal: LegalActions) -> int:
    """Bets (and raises) in on this street so far: in fixed limit the level to call over one
    bet's size (0 while only the bring-in is in; ``MOST_BETS`` when no raise is on offer);
    in pot and no limit, one more each time the level doubled past the pot before it."""
    level = max((s.bet for s in view.seats), default=0)
    if level == 0 or legal.wager == "complete":
        return 0
    if legal.wager is None or legal.wager not in legal.kinds:
        return MOST_BETS  # capped: no raise on offer
    step = (min(legal.to_choices) if legal.to_choices else legal.min_to) - level
    if view.stakes.structure == "fixed_limit" and step > 0:
        return max(1, level // step)
    # Pot and no limit: one bet, and one more for each time the level passed the pot before.
    before = max(1, view.pot - sum(s.bet for s in view.seats))  # the pot before this street
    return 1 + sum(1 for n in range(1, MOST_BETS) if level > before * 2**n)


def raises_allowed(strength: float, aggression: float) -> int:
    """How many bets a hand of this strength puts in on a street: ``strength`` is its share
    of the pot above its fair share, scaled 0..1 (1: the nuts against the live hands)."""
    if strength >= 0.7:
        return MOST_BETS
    if strength >= 0.5:
        return 3
    if strength >= aggression:
        return 2
    return 0


class RuleBot:
    """Plays third street of the seven-card games by the variant's starting-hand book
    (:mod:`stud_bots.starting`: stud high, razz by its low cards, hi-lo by both halves) and
    every later street by its equity: a Monte Carlo share of the pot from its own cards and
    every visible upcard (dead cards count), judged by the variant's showdown rule (high, razz,
    hi-lo).

    Raises with a share well above its fair share of the live hands, but only while the
    street holds fewer bets than its strength is worth (:func:`raises_allowed`, at most
    :data:`MOST_BETS`): two bots that each like their hand heads-up, where fixed limit has no
    cap on raises, stop at four bets instead of raising to the felt. Calls when the pot pays
    for the price (with some credit for streets to come), checks or folds otherwise, and
    bluffs rarely.
    """

    def __init__(
        self,
        rng: random.Random | None = None,
        *,
        samples: int = 150,
        aggression: float = 0.3,
        bluff: float = 0.03,
    ) -> None:
        self.rng = rng or random.Random()
        self.samples = samples
        self.aggression = aggression
        self.bluff = bluff

    def decide(self, view: TableView, legal: LegalActions) -> Action:
        tier = starting_tier(view)
        if tier is not None:
            return self._start(view, legal, tier)
        share = equity(view, samples=self.samples, rng=self.rng)
        live = len(view.opponents) + 1
        fair = 1.0 / live
        strength = (share - fair) / (1.0 - fair)
        strong = fair + (1.0 - fair) * self.aggression
        good = fair + (1.0 - fair) * self.aggression / 2.5
        kinds = legal.kinds
        can_wager = legal.wager is not None and legal.wager in kinds
        room = bets_in(view, legal) < raises_allowed(strength, self.aggression)
        if can_wager and share >= strong and room:
            return self._wager(view, legal, share >= fair + (1.0 - fair) * 0.6)
        if "bring_in" in kinds:
            return Action("bring_in")
        if "check" in kinds:
            if can_wager and (share >= good or self.rng.random() < self.bluff):
                return self._wager(view, legal, False)
            return Action("check")
        if "call" in kinds:
            if share >= strong:
                return Action("call")  # strong, at its own cap of bets
            price = legal.call / (view.pot + legal.call)
            credit = 0.75 if streets_left(view) >= 2 else 0.9 if streets_left(view) == 1 else 1.0
            if share >= price * credit:
                return Action("call")
            return Action("fold") if "fold" in kinds else passive(legal)
        return passive(legal)

    def _start(self, view: TableView, legal: LegalActions, tier: int) -> Action:
        """Third street by the book: raise, call or fold by tier and the bets already in."""
        kinds = legal.kinds
        raise_below, call_up_to = _START_PLAY[tier]
        if len(view.opponents) == 1 and call_up_to is not None:
            call_up_to += 1  # heads-up: a hand is worth more against one
        bets = bets_in(view, legal)
        can_wager = legal.wager is not None and legal.wager in kinds
        if can_wager and bets < raise_below:
            return self._wager(view, legal, False)
        if "bring_in" in kinds:
            return Action("bring_in")
        if "check" in kinds:
            return Action("check")
        if "call" in kinds and (call_up_to is None or bets <= call_up_to):
            return Action("call")
        return Action("fold") if "fold" in kinds else passive(legal)

    def _wager(self, view: TableView, legal: LegalActions, big: bool) -> Action:
        if legal.to_choices:
            return wager(legal, low=not big)
        high = max((s.bet for s in view.seats), default=0)
        return wager(legal, target=high + (view.pot if big else (2 * view.pot) // 3))


BotFactory = Callable[[random.Random], Bot]
STRATEGIES: dict[str, BotFactory] = {
    "random": RandomBot,
    "station": CallingStation,
    "rules": RuleBot,
}


def make_bot(strategy: str, rng: random.Random | None = None) -> Bot:
    """A bot by strategy name (``STRATEGIES``)."""
    try:
        factory = STRATEGIES[strategy]
    except KeyError:
        raise ValueError(f"no strategy {strategy!r}; one of {', '.join(STRATEGIES)}") from None
    return factory(rng or random.Random())
