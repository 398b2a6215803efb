"""The shipped tournament formats, each a full :class:`TournamentSpec` an operator may create
as it is or start from.

- ``stud-sng-9``: seven-card stud, fixed limit, a sit-and-go of 9 on tables of 8 (seven-card
  stud deals at most 8: the 9 start on two tables and meet at one when 8 are left), 10-minute
  levels, pays 3;
- ``razz-sng-8``: razz, fixed limit, a one-table sit-and-go of 8, 10-minute levels, pays 2;
- ``stud-mtt-turbo``: seven-card stud, scheduled, tables of 8, 6-minute levels, late
  registration to the end of level 6 with one re-entry;
- ``stud-mtt-regular``: seven-card stud, scheduled, tables of 8, 20-minute levels and a
  5-minute break every hour, late registration to the end of level 6, a freezeout;
- ``stud-mix-turbo``: a stud mix, fixed limit, each level the next game of seven-card stud,
  razz and stud hi-lo, a sit-and-go of 16 on two tables of 8, 5-minute levels, pays 4.

The stakes rise about a third a level; a player starts with a few hundred antes.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from engine.tournament.games import rotated
from engine.tournament.spec import TournamentSpec
from engine.tournament.structure import Break, Entry, Level, Structure

STUD_MIX = ("seven_card_stud", "razz", "seven_card_stud_hi_lo")

# Ante, bring-in, small bet, big bet: fixed-limit stud's usual ladder.
LADDER: tuple[tuple[int, int, int, int], ...] = (
    (5, 10, 30, 60),
    (10, 15, 50, 100),
    (15, 25, 75, 150),
    (20, 30, 100, 200),
    (25, 50, 150, 300),
    (40, 75, 200, 400),
    (50, 100, 300, 600),
    (75, 125, 400, 800),
    (100, 150, 500, 1000),
    (150, 250, 800, 1600),
    (200, 300, 1000, 2000),
    (300, 500, 1500, 3000),
    (400, 600, 2000, 4000),
    (500, 1000, 3000, 6000),
    (1000, 1500, 5000, 10000),
    (1500, 2500, 8000, 16000),
    (2000, 3000, 10000, 20000),
    (3000, 5000, 15000, 30000),
    (4000, 6000, 20000, 40000),
    (5000, 10000, 30000, 60000),
    (8000, 15000, 40000, 80000),
    (10000, 20000, 50000, 100000),
    (15000, 25000, 80000, 160000),
    (20000, 30000, 100000, 200000),
    (30000, 50000, 150000, 300000),
)


def _structure(
    starting_chips: int,
    *,
    levels: int,
    minutes: float,
    scale: int = 1,
    break_every: int | None = None,
    break_minutes: float = 5,
) -> Structure:
    """``levels`` levels of the ladder times ``scale``, a break after every ``break_every``."""
    entries: list[Entry] = []
    for number, (ante, bring_in, small_bet, big_bet) in enumerate(LADDER[:levels], 1):
        stakes = (ante * scale, bring_in * scale, small_bet * scale, big_bet * scale)
        entries.append(Level(*stakes, minutes=minutes))
        if break_every and number % break_every == 0 and number < levels:
            entries.append(Break(minutes=break_minutes))
    return Structure(starting_chips, tuple(entries))


TEMPLATES: Mapping[str, TournamentSpec] = MappingProxyType(
    {
        "stud-sng-9": TournamentSpec(
            kind="sit_and_go",
            variant="seven_card_stud",
            betting="fixed_limit",
            seats_per_table=8,
            structure=_structure(1500, levels=15, minutes=10),
            buy_in=100,
            fee=10,
            min_entrants=9,
            max_entrants=9,
            payout_table="sit_and_go",
        ),
        "razz-sng-8": TournamentSpec(
            kind="sit_and_go",
            variant="razz",
            betting="fixed_limit",
            seats_per_table=8,
            structure=_structure(1500, levels=15, minutes=10),
            buy_in=50,
            fee=5,
            min_entrants=8,
            max_entrants=8,
            payout_table="sit_and_go",
        ),
        "stud-mtt-turbo": TournamentSpec(
            kind="scheduled",
            variant="seven_card_stud",
            betting="fixed_limit",
            seats_per_table=8,
            structure=_structure(3000, levels=25, minutes=6, scale=2),
            buy_in=20,
            fee=2,
            min_entrants=10,
            max_entrants=1000,
            payout_table="scheduled",
            late_registration_levels=6,
            re_entries=1,
        ),
        "stud-mtt-regular": TournamentSpec(
            kind="scheduled",
            variant="seven_card_stud",
            betting="fixed_limit",
            seats_per_table=8,
            structure=_structure(5000, levels=25, minutes=20, scale=2, break_every=3),
            buy_in=100,
            fee=9,
            min_entrants=20,
            max_entrants=2000,
            payout_table="scheduled",
            late_registration_levels=6,
        ),
        "stud-mix-turbo": TournamentSpec(
            kind="sit_and_go",
            variant="seven_card_stud",
            betting="fixed_limit",
            seats_per_table=8,
            structure=rotated(_structure(1500, levels=18, minutes=5), STUD_MIX),
            buy_in=30,
            fee=3,
            min_entrants=16,
            max_entrants=16,
            payout_table="sit_and_go",
        ),
    }
)
