"""PokerKit as the reference for PHH: random hands it plays, and its replay of our files.

Test-only: the engine never imports PokerKit. Three helpers matter:

- :func:`pokerkit_hand` plays a random hand in PokerKit (2 to 8 players, short or deep
  stacks, passive or wild play) and returns its PHH text, PokerKit's finishing stacks
  and what happened in it (all-ins, side pots, splits, capped streets, common card);
- :func:`pokerkit_stacks` replays a PHH text in PokerKit;
- :func:`pokerkit_expected` turns an engine hand's stacks into the stacks PokerKit pays,
  where PokerKit is wrong (a hi-lo side pot with no eligible low, PHH_NOTES §6), and says
  whether that happened.

PokerKit values a hand by trying every five-card combination through objects, about a
millisecond each, and values the same hands many times per showdown. :func:`speed_up`
memoizes those pure functions (same results, several times faster) so a thousand hands
per variant fit in the test budget.
"""

from __future__ import annotations

import random
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import pokerkit.hands as pk_hands
from pokerkit import (
    Automation,
    BoardDealing,
    Card,
    ChipsPushing,
    CompletionBettingOrRaisingTo,
    FixedLimitRazz,
    FixedLimitSevenCardStud,
    FixedLimitSevenCardStudHighLowSplitEightOrBetter,
    HandHistory,
    Mode,
)

from engine import evaluate as ev
from engine.cards import UNKNOWN, format_cards
from engine.hand import Hand
from engine.showdown import showdown_cards

GAMES: dict[str, Any] = {
    "F7S": FixedLimitSevenCardStud,
    "F7S/8": FixedLimitSevenCardStudHighLowSplitEightOrBetter,
    "FR": FixedLimitRazz,
}
_AUTOMATIONS = (  # hole cards are dealt by hand, from a deck the test may stack
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.CARD_BURNING,
    Automation.BOARD_DEALING,
    Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    Automation.HAND_KILLING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)
_sped_up = False


def speed_up() -> None:
    """Memoize PokerKit's hand values (pure functions of the cards) and hand entries."""
    global _sped_up
    if _sped_up:
        return
    _sped_up = True
    entry = pk_hands.Hand.entry.fget
    assert entry is not None

    def cached_entry(self: Any) -> Any:
        memo = self.__dict__
        value = memo.get("_test_entry")
        if value is None:
            value = memo["_test_entry"] = entry(self)
        return value

    pk_hands.Hand.entry = property(cached_entry)  # type: ignore[assignment]
    for cls in (pk_hands.StandardHighHand, pk_hands.EightOrBetterLowHand, pk_hands.RegularLowHand):
        cls.from_game = classmethod(_memoized(cls.from_game.__func__))  # type: ignore[method-assign]


def _memoized(function: Callable[..., Any]) -> Callable[..., Any]:
    cache: dict[Any, tuple[Any, Exception | None]] = {}

    def from_game(cls: Any, hole_cards: Any, board_cards: Any = ()) -> Any:
        key = (cls, tuple(hole_cards), tuple(board_cards))
        hit = cache.get(key)
        if hit is None:
            try:
                hit = (function(cls, key[1], key[2]), None)
            except ValueError as exc:
                hit = (None, exc)
            if len(cache) > 200_000:
                cache.clear()
            cache[key] = hit
        if hit[1] is not None:
            raise hit[1]
        return hit[0]

    return from_game


def table_shape(rng: random.Random) -> dict[str, Any]:
    """Stakes, stacks and a style of play: short stacks make all-ins and side pots, eight
    passive players reach seventh street for the common card, deep wild ones hit the cap."""
    players = rng.choice([2, 3, 4, 5, 6, 7, 8, 8, 8])
    small = rng.choice([4, 5, 6])
    shape = {
        "players": players,
        "ante": rng.choice([0, 1, 1, 2, 5]),
        "bring_in": rng.choice([0, 1, 2, 2, 3, 3]),
        "small_bet": small,
        "big_bet": 2 * small,
        "trimming": rng.random() < 0.5,
        "fold": rng.choice([0.0, 0.0, 0.05, 0.2]),
        "raise": rng.choice([0.1, 0.3, 0.6]),
        "complete": rng.choice([0.1, 0.4]),
    }
    depth = rng.choice(["short", "mixed", "deep"])
    stacks = []
    for _ in range(players):
        if depth == "short" or (depth == "mixed" and rng.random() < 0.5):
            stacks.append(rng.randint(1, 40))
        else:
            stacks.append(rng.randint(40, 400))
    shape["stacks"] = stacks
    shape["mirror"] = rng.random() < 0.3
    if players > 2 and rng.random() < 0.1:  # antes differ by seat (heads-up PokerKit swaps them)
        shape["ante"] = [rng.randint(0, 5) for _ in range(players)]
    if not shape["bring_in"] and not any(
        shape["ante"] if isinstance(shape["ante"], list) else [shape["ante"]]
    ):
        shape["bring_in"] = 1  # PokerKit wants antes or a bring-in
    return shape


def mirrored_deck(players: int, rng: random.Random) -> list[int]:
    """A deck order (engine cards, top first) that gives p1 and p2 the same seven ranks in
    other suits, so that they tie unless someone folds: split pots in every variant.

    Cards fall round the table one at a time, with a burn before each street after the
    third (the engine and PokerKit deal alike); folds shift the later streets.
    """
    ranks = rng.sample(range(13), 7)
    mine = [rank * 4 + (0, 1, 2, 3, 0, 1, 2)[k] for k, rank in enumerate(ranks)]
    theirs = [rank * 4 + (1, 0, 3, 2, 1, 0, 3)[k] for k, rank in enumerate(ranks)]
    rest = [c for c in range(52) if c not in mine and c not in theirs]
    rng.shuffle(rest)
    order: list[int | None] = [None] * 52
    for k in range(7):
        # third street: round k of the table; later: after the earlier rounds and a burn
        start = k * players if k < 3 else 3 * players + (k - 3) * (players + 1) + 1
        if start + 1 < 52:
            order[start], order[start + 1] = mine[k], theirs[k]
    spare = iter(rest + [c for c in mine + theirs if c not in order])
    return [c if c is not None else next(spare) for c in order]


def pokerkit_hand(code: str, rng: random.Random) -> tuple[str, list[int], Counter[str]]:
    """Play one random hand in PokerKit: its PHH text, finishing stacks and what happened."""
    speed_up()
    shape = table_shape(rng)
    random.seed(rng.getrandbits(64))  # PokerKit shuffles with the global random
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        game = GAMES[code](
            _AUTOMATIONS,
            shape["trimming"],
            shape["ante"],
            shape["bring_in"],
            shape["small_bet"],
            shape["big_bet"],
            mode=Mode.CASH_GAME,
        )
        state = game(shape["stacks"], shape["players"])
        if shape["mirror"]:
            order = mirrored_deck(shape["players"], rng)
            state.deck_cards.clear()
            state.deck_cards.extend(Card.parse(format_cards(order)))
        all_in = False
        while state.status:
            if state.can_deal_hole():
                state.deal_hole()
                continue
            if state.actor_index is None:
                raise AssertionError("PokerKit waits for something other than a player")
            roll = rng.random()
            if state.can_post_bring_in():
                if roll < shape["complete"] and state.can_complete_bet_or_raise_to():
                    state.complete_bet_or_raise_to()
                else:
                    state.post_bring_in()
            elif roll < shape["raise"] and state.can_complete_bet_or_raise_to():
                state.complete_bet_or_raise_to()
            elif state.checking_or_calling_amount and rng.random() < shape["fold"]:
                state.fold()
            else:
                state.check_or_call()
            all_in = all_in or not all(state.stacks[i] for i in range(shape["players"]))
        history = HandHistory.from_game_state(game, state, ante_trimming_status=shape["trimming"])
        text = history.dumps()
    seen: Counter[str] = Counter()
    seen["all_in"] += all_in
    streets: Counter[int] = Counter()
    street = 0
    for operation in state.operations:
        if type(operation).__name__ == "CardBurning":
            street += 1
        if isinstance(operation, CompletionBettingOrRaisingTo):
            streets[street] += 1
        if isinstance(operation, BoardDealing):
            seen["common_card"] = 1
        if isinstance(operation, ChipsPushing):
            if operation.pot_index > 0:
                seen["side_pot"] = 1
            if sum(1 for amount in operation.amounts if amount) > 1:
                seen["split_pot"] = 1
            if operation.hand_type_index == 1:
                seen["low_half"] = seen["split_pot"] = 1
    seen["capped_street"] = int(any(count >= 4 for count in streets.values()))
    return text, list(state.stacks), seen


def pokerkit_stacks(text: str) -> list[int]:
    """PokerKit's finishing stacks for a PHH text (its own replay, as for any file)."""
    speed_up()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        *_, state = HandHistory.loads(text)
        assert not state.status, "PokerKit did not finish the hand"
        return list(state.stacks)


def pokerkit_expected(hand: Hand) -> tuple[list[int], set[str]]:
    """The stacks PokerKit pays for an engine hand, and which of its bugs the hand meets
    (``"low_half"``, ``"burned"``).

    The engine's pots and hand values are paid again by PokerKit's rules, bugs included:

    - hi-lo: a pot is split in halves whenever any hand still in contention holds a qualifying
      low, even when nobody eligible for that pot has one; the low half then goes to every
      contender of that pot (PHH_NOTES §6). The rules give the high hand the whole pot.
    - chips a folded player put in above every live player's total (possible only with antes
      that differ by seat) are burned; the rules add them to the last pot.

    Everything else (halves, ties, odd chips to the lowest position) is PokerKit's way, which
    the ``phh`` profile follows, so hands without either condition must come out unchanged.
    """
    stacks = list(hand.stacks)
    result = hand.result()
    if not result.showdown:
        return stacks, set()
    paid = hand.antes if hand.config.antes_dead else [0] * hand.n
    chips = [t - a for t, a in zip(hand.total, paid, strict=True)]
    live = [j for j in range(hand.n) if not hand.folded[j]]
    burned = max(0, max(chips) - max(chips[j] for j in live))
    hands = {j: showdown_cards(hand, j) for j in live}
    valued = {j: c for j, c in hands.items() if len(c) >= 5 and UNKNOWN not in c}
    hi_lo = hand.config.variant.showdown == "high_low"
    if hand.config.variant.showdown == "razz":
        high = {j: ev.razz_value(c) for j, c in valued.items()}
    else:
        high = {j: ev.high_value(c) for j, c in valued.items()}
    low = {j: ev.low8_value(c) for j, c in valued.items()} if hi_lo else {}
    contenders = {s for pot in result.pots for s in pot["eligible"]}
    any_low = any(low.get(j) is not None for j in contenders)
    bugs = {"burned"} if burned else set()
    for share in result.shares:
        stacks[share["seat"]] -= share["amount"]
    for number, pot in enumerate(result.pots):
        eligible = sorted(pot["eligible"])
        amount = pot["amount"] - (burned if number == len(result.pots) - 1 else 0)
        halves = [(high, amount)]
        if any_low:
            lows = [low[j] for j in eligible if low.get(j) is not None]
            if not lows:
                bugs.add("low_half")
            halves = [(high, amount - amount // 2), (low, amount // 2)]
        for values, chips_here in halves:
            known = [values[j] for j in eligible if values.get(j) is not None]
            top = max(known, default=None)
            winners = [j for j in eligible if values.get(j) == top]  # all, when none is known
            each, odd = divmod(chips_here, len(winners))
            for k, j in enumerate(winners):
                stacks[j] += each + (odd if k == 0 else 0)
    return stacks, bugs
