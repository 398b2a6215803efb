"""Prizes in whole chips, and the place and prize of every player out.

A prize pool is paid by the published table (:mod:`engine.tournament.payout_tables`): each
place gets its share rounded down, and the chips the rounding leaves go one each to the
first places, so the prizes sum to the pool exactly and never increase down the places.

Players out in the same hand finish by the chips they started that hand with: more chips,
the better place. Players who started it with equal chips tie: they share the places they
cover, and the prizes of those places equally; a chip that does not divide goes to the
player ordered first (the order the eliminations are given in, which the caller makes its
seat order: tables in order, seats in order), one chip each down that order.

>>> payouts(1000, 9, "sit_and_go")
(500, 300, 200)
>>> out = [Elimination("ann", 40), Elimination("bob", 90), Elimination("cy", 40)]
>>> for finish in places_of(out, players_left=5, prizes=(500, 300, 101, 51)):
...     print(finish)
Finish(player='bob', place=3, prize=101, tied=1)
Finish(player='ann', place=4, prize=26, tied=2)
Finish(player='cy', place=4, prize=25, tied=2)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.tournament.payout_tables import (
    WHOLE,
    PayoutError,
    PayoutTable,
    find_payout_table,
)


def payouts(prize_pool: int, entrants: int, table: PayoutTable | str) -> tuple[int, ...]:
    """Each paid place's prize, first place first, summing to ``prize_pool`` exactly."""
    if not isinstance(prize_pool, int) or isinstance(prize_pool, bool) or prize_pool < 0:
        raise PayoutError("prize_pool", "must be a whole number of chips, at least 0")
    if isinstance(table, str):
        table = find_payout_table(table)
    shares = table.shares(entrants)
    prizes = [prize_pool * share // WHOLE for share in shares]
    for place in range(prize_pool - sum(prizes)):  # fewer chips than places
        prizes[place] += 1
    return tuple(prizes)


@dataclass(frozen=True, slots=True)
class Elimination:
    """A player out in a hand, with the chips they started that hand with."""

    player: str
    chips_at_start: int


@dataclass(frozen=True, slots=True)
class Finish:
    """A player's place (the best of the places a tie covers) and prize; ``tied`` is how
    many players share that place (1: nobody else)."""

    player: str
    place: int
    prize: int
    tied: int = 1


def places_of(
    eliminated: Sequence[Elimination], *, players_left: int, prizes: Sequence[int]
) -> tuple[Finish, ...]:
    """The finishes of the players out in one hand, best place first.

    ``players_left`` counts the players still in before this hand's eliminations (those
    out in it included); ``prizes`` are the prizes by place, first place first (places past
    its end pay nothing). The eliminated take the last places: ``players_left`` down. All
    of them out (the last chips left play with a disqualified player), they take every
    place, the first included.
    """
    _check(eliminated, players_left, prizes)
    order = sorted(range(len(eliminated)), key=lambda i: -eliminated[i].chips_at_start)
    finishes: list[Finish] = []
    place = players_left - len(eliminated) + 1
    start = 0
    while start < len(order):
        chips = eliminated[order[start]].chips_at_start
        end = start
        while end < len(order) and eliminated[order[end]].chips_at_start == chips:
            end += 1
        group = sorted(order[start:end])  # the given order decides the odd chips
        total = sum(_prize(prizes, p) for p in range(place, place + len(group)))
        share, odd = divmod(total, len(group))
        for rank, index in enumerate(group):
            prize = share + (1 if rank < odd else 0)
            finishes.append(Finish(eliminated[index].player, place, prize, len(group)))
        place += len(group)
        start = end
    return tuple(finishes)


def forfeit(prizes: Sequence[int], place: int) -> tuple[int, ...]:
    """The prizes once ``place`` is nobody's (a disqualified player's, who takes no place):
    its prize goes to the places above it, shared equally, the chips that do not divide one
    each to the first places. The prizes still sum to the pool, and never increase down the
    places still to finish.

    >>> forfeit((500, 300, 200), 3)
    (600, 400, 0)
    >>> forfeit((500, 300, 200, 101), 4)
    (534, 334, 233, 0)
    >>> forfeit((500, 300, 200), 7)  # a place that pays nothing
    (500, 300, 200)
    """
    if not isinstance(place, int) or isinstance(place, bool) or place < 2:
        raise PayoutError("place", "must be a whole number, at least 2")
    if place > len(prizes):
        return tuple(prizes)
    share, odd = divmod(prizes[place - 1], place - 1)
    above = [prize + share + (rank < odd) for rank, prize in enumerate(prizes[: place - 1])]
    return (*above, 0, *prizes[place:])


def winner(player: str, prizes: Sequence[int]) -> Finish:
    """The last player in: first place and its prize."""
    return Finish(player, 1, _prize(prizes, 1))


def _prize(prizes: Sequence[int], place: int) -> int:
    return prizes[place - 1] if place <= len(prizes) else 0


def _check(eliminated: Sequence[Elimination], players_left: int, prizes: Sequence[int]) -> None:
    if not isinstance(players_left, int) or isinstance(players_left, bool) or players_left < 2:
        raise PayoutError("players_left", "must be a whole number, at least 2")
    if len(eliminated) > players_left:
        raise PayoutError("eliminated", "more players out than were in")
    if len({e.player for e in eliminated}) != len(eliminated):
        raise PayoutError("eliminated", "a player is out only once")
    for index, elimination in enumerate(eliminated):
        chips = elimination.chips_at_start
        if not isinstance(chips, int) or isinstance(chips, bool) or chips < 1:
            raise PayoutError(
                f"eliminated[{index}].chips_at_start", "must be a whole number of chips, at least 1"
            )
    if any(not isinstance(p, int) or isinstance(p, bool) or p < 0 for p in prizes):
        raise PayoutError("prizes", "must be whole numbers of chips, at least 0")
