"""Final-table deals: the prizes still to pay, shared now by the players left, in whole chips.

Two ways to share, the ones cardrooms offer:

- the chip chop: every player gets the smallest prize still to pay, and the rest is shared
  in proportion to the chips each holds;
- ICM (the Malmuth-Harville model): a player finishes first with the probability of their
  share of the chips, and, that place taken, each later place the same way among the players
  left; a player gets the prizes weighed by the probability of finishing in each place.
  Worked exactly, with fractions, over every set of players left: ``2**n * n`` steps for
  ``n`` players (10,240 for 10: under a tenth of a second); at most :data:`MAX_ICM_PLAYERS`.

A deal may keep an amount back, taken off first place's prize, which the players then play
on for: the winner takes it. The amounts dealt and the amount kept back sum to the prizes
exactly; rounding gives the chips left over one each to the largest fractions (ties: the
player given first), so a player with more chips never gets less.

>>> icm([5000, 3000, 2000], [500, 300, 200])
(384, 327, 289)
>>> chip_chop([5000, 3000, 2000], [500, 300, 200])
(400, 320, 280)
>>> chip_chop([5000, 3000, 2000], [500, 300, 200], played_for=100)
(350, 290, 260)
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from engine.tournament.fields import FieldError

MAX_ICM_PLAYERS = 10


class DealError(FieldError):
    """A deal that cannot be worked out, with the field at fault."""


def chip_chop(
    chips: Sequence[int], prizes: Sequence[int], *, played_for: int = 0
) -> tuple[int, ...]:
    """Each player's amount, in the order of ``chips``: the smallest prize left, and the rest
    in proportion to their chips."""
    dealt = _dealt_prizes(chips, prizes, played_for)
    floor = dealt[-1]
    rest = sum(dealt) - floor * len(chips)
    total = sum(chips)
    return _whole([floor + Fraction(rest * c, total) for c in chips], sum(dealt))


def icm(chips: Sequence[int], prizes: Sequence[int], *, played_for: int = 0) -> tuple[int, ...]:
    """Each player's ICM equity of the prizes dealt, in whole chips, in the order of ``chips``."""
    dealt = _dealt_prizes(chips, prizes, played_for)
    return _whole(list(icm_equities(chips, dealt)), sum(dealt))


def icm_equities(chips: Sequence[int], prizes: Sequence[int]) -> tuple[Fraction, ...]:
    """Each player's exact equity of ``prizes`` (one per place, first place first, the
    places past its end paying nothing) under the Malmuth-Harville model."""
    _check_chips(chips)
    count = len(chips)
    if count > MAX_ICM_PLAYERS:
        raise DealError("chips", f"ICM is worked out for at most {MAX_ICM_PLAYERS} players")
    full = (1 << count) - 1
    # reach[mask]: the probability that the players in ``mask`` are exactly those without a
    # place yet; the places from the top are taken one by one.
    reach: dict[int, Fraction] = {full: Fraction(1)}
    equities = [Fraction(0)] * count
    for mask in sorted(range(1, full + 1), key=lambda m: -m.bit_count()):
        probability = reach.pop(mask, None)
        if probability is None:
            continue
        place = count - mask.bit_count()
        prize = prizes[place] if place < len(prizes) else 0
        total = sum(chips[i] for i in range(count) if mask >> i & 1)
        for i in range(count):
            if mask >> i & 1:
                taken = probability * Fraction(chips[i], total)
                equities[i] += taken * prize
                rest = mask & ~(1 << i)
                if rest:
                    reach[rest] = reach.get(rest, Fraction(0)) + taken
    return tuple(equities)


def _dealt_prizes(chips: Sequence[int], prizes: Sequence[int], played_for: int) -> list[int]:
    """The prizes the deal shares: one per player left (zeros past the paid places), first
    place's less the amount kept back."""
    _check_chips(chips)
    if any(not isinstance(p, int) or isinstance(p, bool) or p < 0 for p in prizes):
        raise DealError("prizes", "must be whole numbers of chips, at least 0")
    if len(prizes) > len(chips):
        raise DealError("prizes", "one prize a player left at most")
    if list(prizes) != sorted(prizes, reverse=True):
        raise DealError("prizes", "first place first, never increasing")
    dealt = [*prizes, *[0] * (len(chips) - len(prizes))]
    gap = dealt[0] - dealt[1]
    if not isinstance(played_for, int) or isinstance(played_for, bool) or played_for < 0:
        raise DealError("played_for", "must be a whole number of chips, at least 0")
    if played_for > gap:
        raise DealError("played_for", f"at most {gap}: first place's lead over second")
    dealt[0] -= played_for
    return dealt


def _check_chips(chips: Sequence[int]) -> None:
    if len(chips) < 2:
        raise DealError("chips", "a deal needs at least 2 players")
    if any(not isinstance(c, int) or isinstance(c, bool) or c < 1 for c in chips):
        raise DealError("chips", "every player left holds a whole number of chips, at least 1")


def _whole(amounts: list[Fraction], total: int) -> tuple[int, ...]:
    """Exact amounts rounded to whole chips summing to ``total``: each rounded down, then
    one chip each to the largest fractions left, the player given first on a tie."""
    floors = [amount.numerator // amount.denominator for amount in amounts]
    left = total - sum(floors)
    by_fraction = sorted(range(len(amounts)), key=lambda i: (floors[i] - amounts[i], i))
    for i in by_fraction[:left]:
        floors[i] += 1
    return tuple(floors)
