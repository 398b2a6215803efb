"""The shipped formats: each a valid format an operator can post back as it is, dealing the game
it names, at stakes a player can sit through."""

from __future__ import annotations

import json
import random

import pytest

from engine.events import Ante
from engine.play import play_random_hand
from engine.tournament.payouts import payouts
from engine.tournament.spec import TournamentSpec
from engine.tournament.structure import Break, Level
from engine.tournament.templates import TEMPLATES


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_a_template_posted_back_as_json_is_the_same_format(name: str) -> None:
    spec = TEMPLATES[name]
    assert TournamentSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_a_template_deals_its_game_at_every_level(name: str) -> None:
    spec = TEMPLATES[name]
    stacks = [spec.structure.starting_chips] * spec.seats_per_table
    rng = random.Random(name)
    for level in spec.structure.levels:
        hand = play_random_hand(spec.table_config(level), stacks, rng)
        antes = {event.amount for event in hand.events if isinstance(event, Ante)}
        assert antes == {min(level.ante, spec.structure.starting_chips)}
        assert sum(hand.result().stacks.values()) == sum(stacks)  # no chip made or lost
    first = spec.structure.levels[0]
    # A player starts with a few hundred antes and a few dozen small bets.
    assert 100 <= spec.structure.starting_chips // first.ante <= 1000
    assert 20 <= spec.structure.starting_chips // first.small_bet <= 100


def test_the_sit_and_gos() -> None:
    stud, razz = TEMPLATES["stud-sng-9"], TEMPLATES["razz-sng-8"]
    assert (stud.kind, stud.variant, stud.min_entrants, stud.max_entrants) == (
        "sit_and_go",
        "seven_card_stud",
        9,
        9,
    )
    assert (razz.kind, razz.variant, razz.max_entrants, razz.seats_per_table) == (
        "sit_and_go",
        "razz",
        8,
        8,
    )
    for spec in (stud, razz):
        assert {level.minutes for level in spec.structure.levels} == {10}
        assert spec.betting == "fixed_limit"
    pool = 9 * stud.buy_in
    assert payouts(pool, 9, stud.payout_table) == (450, 270, 180)  # a sit-and-go of 9 pays 3
    assert len(payouts(8 * razz.buy_in, 8, razz.payout_table)) == 3


def test_the_scheduled_tournaments() -> None:
    turbo, regular = TEMPLATES["stud-mtt-turbo"], TEMPLATES["stud-mtt-regular"]
    for spec in (turbo, regular):
        assert spec.kind == "scheduled" and spec.seats_per_table == 8
        assert spec.payout_table == "scheduled"
    assert {level.minutes for level in turbo.structure.levels} == {6}
    assert not any(isinstance(entry, Break) for entry in turbo.structure.entries)
    # The regular: 20-minute levels and a 5-minute break after every hour of play.
    played = 0.0
    for entry in regular.structure.entries:
        if isinstance(entry, Break):
            assert entry.minutes == 5 and played == 60
            played = 0
        else:
            assert isinstance(entry, Level) and entry.minutes == 20
            played += entry.minutes
    assert sum(isinstance(entry, Break) for entry in regular.structure.entries) == 8
