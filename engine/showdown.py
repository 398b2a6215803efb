"""The end of a hand: the showdown (who must show, in what order, and what each hand is
called), the pots and their shares, the chips paid, and :class:`HandResult`.

Like :mod:`engine.betting`, these are functions of the hand (its
:class:`~engine.hand_state.HandState`): it calls :func:`showdown` when the last round ends
with two or more hands live, :func:`finish` when one is left, each returning what was paid
(:data:`Paid`), and :func:`build_result` when its result is first asked for.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from engine import evaluate as ev
from engine.cards import UNKNOWN, Card, format_card
from engine.describe import (
    describe_deuce_seven,
    describe_high,
    describe_low8,
    describe_razz,
)
from engine.events import (
    CardsOpened,
    HandEnded,
    Muck,
    PotAwarded,
    RakeTaken,
    SeatStack,
    Showdown,
    new_event,
)
from engine.fair import METHOD as STUD_DECK_1
from engine.hand_state import HandState
from engine.pots import Pot, Share, award, build_pots, rake

_new_tuple = tuple.__new__

Paid = tuple[list[Pot], list[Share], list[int], bool]
"""What a hand paid, its result built from: its pots, their shares, the rake of each pot,
and whether it went to a showdown."""


class HandResult:
    """How the hand ended: final stacks, net chips and every pot share, by seat, and the
    chips the house raked (the nets add up to minus the rake)."""

    __slots__ = ("stacks", "net", "shares", "pots", "showdown", "rake")

    def __init__(
        self,
        stacks: dict[int, int],
        net: dict[int, int],
        shares: list[dict[str, Any]],
        pots: list[dict[str, Any]],
        showdown: bool,
        rake: int = 0,
    ) -> None:
        self.stacks = stacks
        self.net = net
        self.shares = shares
        self.pots = pots
        self.showdown = showdown
        self.rake = rake


def showdown(hand: HandState, live: list[int]) -> Paid:
    """The last round is over with the seats ``live`` still in: value their hands, show or
    muck them in turn, then split and pay the pots."""
    config = hand.config
    judged_by = config.variant.showdown
    hands = {j: showdown_cards(hand, j) for j in live}
    # A hand holding an unknown card, or too few cards (a record that shows only some),
    # cannot be valued: it never wins.
    valued = {
        j: c for j, c in hands.items() if len(c) >= 5 and UNKNOWN not in c and len(set(c)) == len(c)
    }
    high: list[int | None] = [None] * hand.n
    low: list[int | None] | None = None
    if judged_by == "razz":
        for j, cards in valued.items():
            high[j] = ev.razz_value(cards)
    else:
        for j, cards in valued.items():
            high[j] = ev.high_value(cards)
        if judged_by == "high_low":
            low = [None] * hand.n
            for j, cards in valued.items():
                if config.kansas_city_low:
                    low[j] = ev.deuce_seven_low_value(cards, config.low_qualifier)
                else:
                    low[j] = ev.low8_value(cards, config.low_qualifier)
    pots = _pots(hand, [not f for f in hand.folded])
    if config.pots_by_contenders:
        contenders = [False] * hand.n
        for pot in pots:
            for values in (high, low):
                if values is None:
                    continue
                known = [v for j in pot.eligible if (v := values[j]) is not None]
                for j in pot.eligible:
                    if known and values[j] == max(known):
                        contenders[j] = True
        if any(contenders):
            pots = _pots(hand, contenders)
    # Showdown order: the last aggressor of the final round, else who acted first.
    start = hand.last_aggressor if hand.last_aggressor >= 0 else hand.first_actor
    if start < 0 or hand.folded[start]:
        start = live[0]
    order = [(start + k) % hand.n for k in range(hand.n)]
    order = [j for j in order if j in hands]
    shown: list[int] = []
    for j in order:
        must_show = not shown or hand.stacks[j] == 0 or _can_win(j, shown, pots, high, low)
        if must_show:
            shown.append(j)
            held = tuple([format_card(c) for c in hand.cards[j]])
            said_high: str | None = None
            said_low: str | None = None
            if high[j] is None:
                judged: tuple[str, ...] = ("high",) if judged_by != "razz" else ("low",)
            elif judged_by == "razz":
                said_low, judged = describe_razz(high[j]), ("low",)  # type: ignore[arg-type]
            else:
                said_high, judged = describe_high(high[j]), ("high",)  # type: ignore[arg-type]
                if low is not None:
                    judged = ("high", "low")
                    lv = low[j]
                    if lv is not None:
                        said_low = (
                            describe_deuce_seven(lv)
                            if config.kansas_city_low
                            else describe_low8(lv)
                        )
            hand.events.append(Showdown(hand.seats[j], held, said_high, said_low, judged))
            _open_shown(hand, j)
        else:
            hand.events.append(Muck(hand.seats[j]))
    winners_high = [v if j in shown else None for j, v in enumerate(high)]
    winners_low = None if low is None else [v if j in shown else None for j, v in enumerate(low)]
    tie_rule = config.odd_chip_tie
    raked = _raked(hand, pots)
    shares = award(
        [Pot(pot.amount - chips, pot.eligible) for pot, chips in zip(pots, raked, strict=True)]
        if any(raked)
        else pots,
        winners_high,
        winners_low,
        partial(_odd_chip_order, hand),
        tie_rule,
        lump_odd_chips=tie_rule == "lowest_position",
    )
    return _pay(hand, pots, shares, raked, showdown=True)


def _raked(hand: HandState, pots: list[Pot]) -> list[int]:
    """The rake of each pot (engine.pots.rake), none when the hand ended before the street
    the table rakes from ("no flop, no drop")."""
    config = hand.config
    if not config.rake_percent or hand.street + 1 < config.rake_from_street:
        return [0] * len(pots)
    return rake(pots, config.rake_basis_points, config.rake_cap)


def _pots(hand: HandState, eligible: list[bool]) -> list[Pot]:
    """Side pots among the ``eligible`` seats; dead antes (a setting) go to the main pot."""
    if not hand.config.antes_dead:
        return build_pots(hand.total, eligible)
    chips = [t - a for t, a in zip(hand.total, hand.antes, strict=True)]
    return build_pots(chips, eligible, dead=sum(hand.antes))


def showdown_cards(hand: HandState, i: int) -> list[Card]:
    """The cards that play for seat index ``i``: dealt ones, or those a record shows."""
    shown = hand.shown
    if shown is None:
        return hand.cards[i] + hand.common
    return list(shown.get(hand.seats[i], ())) + hand.common


def _can_win(
    j: int,
    shown: list[int],
    pots: list[Pot],
    high: list[int | None],
    low: list[int | None] | None,
) -> bool:
    """Seat index ``j`` could still take a pot or a half of one from the hands ``shown``
    before it: if not, it may muck."""
    for pot in pots:
        if j not in pot.eligible:
            continue
        rivals = [k for k in shown if k in pot.eligible]
        mine = high[j]
        if mine is not None and all((high[k] or 0) <= mine for k in rivals):
            return True
        if low is not None and low[j] is not None:
            lj = low[j]
            assert lj is not None
            if all(low[k] is None or low[k] <= lj for k in rivals):  # type: ignore[operator]
                return True
    return False


def _odd_chip_order(hand: HandState, i: int) -> int:
    """Between tied hands the odd chip goes to the highest card by suit (a setting:
    to the seat nearest the dealer's left)."""
    if hand.config.odd_chip_tie == "lowest_position":
        return -i
    return max(hand.cards[i])


def finish(hand: HandState, live: list[int]) -> Paid:
    """Every seat but one folded: the one left in takes the whole pot, unshown."""
    winner = live[0]
    pot = sum(hand.total)
    pots = [_new_tuple(Pot, (pot, (winner,)))]
    raked = _raked(hand, pots)
    share = _new_tuple(Share, (0, winner, pot - raked[0], "whole", ()))
    return _pay(hand, pots, [share], raked, showdown=False)


def _open_shown(hand: HandState, j: int) -> None:
    """A stud-deck/2 deal opens a shown hand's down cards to everyone (its upcards were
    opened as they fell)."""
    fair = hand.deck.fair
    if fair is None or fair.method == STUD_DECK_1:
        return
    up = set(hand.up[j])
    opened = []
    for card in hand.cards[j]:
        if card not in up and (opening := fair.opening(card)) is not None:
            opened.append(opening)
    if opened:
        hand.events.append(CardsOpened("showdown", tuple(opened)))


def _pay(
    hand: HandState, pots: list[Pot], shares: list[Share], raked: list[int], showdown: bool
) -> Paid:
    """Take the rake, pay each share and end the hand; returns what its result is built from."""
    seats, stacks, events = hand.seats, hand.stacks, hand.events
    total = sum(raked)
    if total:
        events.append(RakeTaken(total, tuple(raked)))
    for pot_number, position, amount, half, odd_chip_rules in shares:
        stacks[position] += amount
        events.append(
            new_event(PotAwarded, (seats[position], pot_number, amount, half, odd_chip_rules))
        )
    ended: list[SeatStack] = []
    for seat, stack in zip(seats, stacks, strict=True):
        ended.append(_new_tuple(SeatStack, (seat, stack)))
    fair = hand.deck.fair  # a stud-deck/1 deck's server seed is revealed now (engine.fair)
    revealed = fair.revealed() if fair is not None else None
    events.append(new_event(HandEnded, (tuple(ended), revealed)))
    return (pots, shares, raked, showdown)


def build_result(
    hand: HandState, pots: list[Pot], shares: list[Share], raked: list[int], showdown: bool
) -> HandResult:
    """The :class:`HandResult` of a hand paid by :func:`showdown` or :func:`finish`: each
    pot as it was built, with its rake when it had one."""
    seats = hand.seats
    share_data = [
        {
            "seat": seats[position],
            "pot": pot_number,
            "amount": amount,
            "half": half,
            "odd_chips": list(odd_chip_rules),
        }
        for pot_number, position, amount, half, odd_chip_rules in shares
    ]
    final: dict[int, int] = {}
    net: dict[int, int] = {}
    for seat, stack, start in zip(seats, hand.stacks, hand.starting, strict=True):
        final[seat] = stack
        net[seat] = stack - start
    pot_data: list[dict[str, Any]] = []
    for pot, chips in zip(pots, raked, strict=True):
        entry: dict[str, Any] = {"amount": pot.amount, "eligible": [seats[j] for j in pot.eligible]}
        if chips:
            entry["rake"] = chips
        pot_data.append(entry)
    return HandResult(final, net, share_data, pot_data, showdown, sum(raked))


__all__ = ["HandResult", "Paid", "build_result", "finish", "showdown", "showdown_cards"]
