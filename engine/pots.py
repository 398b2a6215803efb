"""Pots from contributions, and splitting them among the best hands.

Contributions are per position index (the hand's seat order). Folded chips stay
in the pots; only seats still in the hand are eligible.

>>> build_pots([10, 50, 50], [True, True, True])
[Pot(amount=30, eligible=(0, 1, 2)), Pot(amount=80, eligible=(1, 2))]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple


class Pot(NamedTuple):
    amount: int
    eligible: tuple[int, ...]


class Share(NamedTuple):
    """Chips of one pot (or of its high or low half) going to one seat index.

    ``odd_chip_rules`` names, for each odd chip inside ``amount``, the rule that
    gave it: "high_half" (the odd chip of a hi-lo split) or the tie rule.
    """

    pot: int
    position: int  # the seat's index in the hand's position order
    amount: int
    half: str  # "whole", "high" or "low"
    odd_chip_rules: tuple[str, ...] = ()


def build_pots(contributions: Sequence[int], live: Sequence[bool], dead: int = 0) -> list[Pot]:
    """Layer the pot by the contribution levels of live seats; merge equal layers.

    ``dead`` chips (antes played as dead money) go to the main pot, open to every live seat.
    """
    found: set[int] = set()
    for c, alive in zip(contributions, live, strict=True):
        if alive and c > 0:
            found.add(c)
    levels = sorted(found)
    if len(levels) == 1 and not dead:
        # One level (the usual end of a hand): a single pot of every chip.
        level = levels[0]
        holders: list[int] = []
        for i, c in enumerate(contributions):
            if live[i] and c >= level:
                holders.append(i)
        return [Pot(sum(contributions), tuple(holders))]
    pots: list[Pot] = []
    if dead:
        pots.append(Pot(dead, tuple(i for i, alive in enumerate(live) if alive)))
    previous = 0
    for level in levels:
        amount = sum(min(c, level) - min(c, previous) for c in contributions)
        eligible = tuple(i for i, c in enumerate(contributions) if live[i] and c >= level)
        if pots and pots[-1].eligible == eligible:
            pots[-1] = Pot(pots[-1].amount + amount, eligible)
        else:
            pots.append(Pot(amount, eligible))
        previous = level
    leftover = sum(contributions) + dead - sum(p.amount for p in pots)
    if leftover and pots:
        pots[-1] = Pot(pots[-1].amount + leftover, pots[-1].eligible)
    return pots


def rake(pots: Sequence[Pot], basis_points: int, cap: int | None) -> list[int]:
    """The chips the house takes from each pot before it is split: ``basis_points``
    hundredths of a percent of it, rounded down to a whole chip, main pot first, the hand's
    total no more than ``cap`` (None: no cap).

    >>> rake([Pot(95, (0, 1, 2)), Pot(40, (1, 2))], 500, None)
    [4, 2]
    >>> rake([Pot(95, (0, 1, 2)), Pot(40, (1, 2))], 500, 5)
    [4, 1]
    """
    left = cap
    taken: list[int] = []
    for pot in pots:
        chips = pot.amount * basis_points // 10_000
        if left is not None:
            chips = min(chips, left)
            left -= chips
        taken.append(chips)
    return taken


def pots_in_play(
    contributions: Sequence[int], live: Sequence[bool], all_in: Sequence[bool]
) -> list[Pot]:
    """The pots as the chips stand during a hand: a side pot starts only at the level of a
    seat still in that is all in, and a seat still in with chips behind is eligible for every
    pot (it may yet call). Bets not yet called make no side pot; once the hand is over (every
    seat still in with chips has put in the same) these are :func:`build_pots`' pots.

    >>> pots_in_play([10, 50, 30], [True, True, True], [False, False, False])
    [Pot(amount=90, eligible=(0, 1, 2))]
    >>> pots_in_play([10, 50, 30], [True, True, True], [True, False, False])
    [Pot(amount=30, eligible=(0, 1, 2)), Pot(amount=60, eligible=(1, 2))]
    """
    found: set[int] = set()
    for c, alive, shoved in zip(contributions, live, all_in, strict=True):
        if alive and shoved and c > 0:
            found.add(c)
    pots: list[Pot] = []
    previous = 0
    for level in sorted(found):
        amount = sum(min(c, level) - min(c, previous) for c in contributions)
        eligible = tuple(
            i for i, c in enumerate(contributions) if live[i] and (c >= level or not all_in[i])
        )
        if pots and pots[-1].eligible == eligible:
            pots[-1] = Pot(pots[-1].amount + amount, eligible)
        else:
            pots.append(Pot(amount, eligible))
        previous = level
    rest = sum(c - previous for c in contributions if c > previous)
    if rest:
        open_to = tuple(i for i, alive in enumerate(live) if alive and not all_in[i])
        if not open_to and pots:
            pots[-1] = Pot(pots[-1].amount + rest, pots[-1].eligible)
        elif pots and pots[-1].eligible == open_to:
            pots[-1] = Pot(pots[-1].amount + rest, open_to)
        else:
            pots.append(Pot(rest, open_to))
    return pots


def split(
    pot_number: int,
    amount: int,
    winners: Sequence[int],
    half: str,
    odd_chip_order: Callable[[int], int],
    odd_chip_rule: str,
    lump_odd_chips: bool = False,
) -> list[Share]:
    """Share ``amount`` equally; odd chips go one each in ``odd_chip_order`` (highest first),
    or all to the first in that order when ``lump_odd_chips`` (PokerKit's way)."""
    each, odd = divmod(amount, len(winners))
    ranked = sorted(winners, key=odd_chip_order, reverse=True) if odd else list(winners)
    if lump_odd_chips and odd:
        return [
            Share(
                pot_number,
                index,
                each + (odd if n == 0 else 0),
                half,
                (odd_chip_rule,) * odd if n == 0 else (),
            )
            for n, index in enumerate(ranked)
        ]
    return [
        Share(pot_number, index, each + (n < odd), half, (odd_chip_rule,) if n < odd else ())
        for n, index in enumerate(ranked)
    ]


def best(indices: Sequence[int], values: Sequence[int | None]) -> list[int]:
    """The indices holding the highest non-None value (all of them on a tie)."""
    top: int | None = None
    winners: list[int] = []
    for i in indices:
        v = values[i]
        if v is None:
            continue
        if top is None or v > top:
            top, winners = v, [i]
        elif v == top:
            winners.append(i)
    return winners


def award(
    pots: Sequence[Pot],
    high: Sequence[int | None],
    low: Sequence[int | None] | None,
    odd_chip_order: Callable[[int], int],
    tie_rule: str = "highest_card_by_suit",
    lump_odd_chips: bool = False,
) -> list[Share]:
    """Divide every pot: to the best ``high`` value, or half high, half low when
    ``low`` is given and some eligible hand has a (qualifying, non-None) low.
    The odd chip of a split goes to the high half; between tied hands, by ``odd_chip_order``
    (all of them to the first in that order when ``lump_odd_chips``). A pot no eligible hand
    can take (only unknown cards, in a replayed record) is shared by its eligible seats.
    """
    shares: list[Share] = []
    for number, pot in enumerate(pots):
        high_winners = best(pot.eligible, high) or list(pot.eligible)
        low_winners = best(pot.eligible, low) if low is not None else []
        if not low_winners:
            shares += split(
                number,
                pot.amount,
                high_winners,
                "whole",
                odd_chip_order,
                tie_rule,
                lump_odd_chips,
            )
            continue
        low_amount = pot.amount // 2
        high_shares = split(
            number,
            pot.amount - low_amount,
            high_winners,
            "high",
            odd_chip_order,
            tie_rule,
            lump_odd_chips,
        )
        if pot.amount % 2:
            # The odd chip of the split goes to the high half (shared there like the rest).
            top = max(
                range(len(high_shares)), key=lambda n: odd_chip_order(high_shares[n].position)
            )
            first = high_shares[top]
            high_shares[top] = first._replace(odd_chip_rules=first.odd_chip_rules + ("high_half",))
        shares += high_shares
        shares += split(
            number, low_amount, low_winners, "low", odd_chip_order, tie_rule, lump_odd_chips
        )
    return shares
