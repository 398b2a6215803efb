"""Mixed games (engine/rotation.py): a rotation read from JSON with the field at fault in
every refusal, and the game of each hand a pure function of the rotation and the last hand's
position, so a table that deals again from its journal's last position deals what it would
have dealt."""

from __future__ import annotations

import doctest
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine.rotation
from engine.protocol import ErrorCode
from engine.rotation import (
    Position,
    Rotation,
    RotationError,
    hands_to_switch,
    next_position,
    positions,
    schedule,
)

STUD_MIX: dict[str, Any] = {
    "games": [
        {"variant": "seven_card_stud"},
        {"variant": "razz"},
        {"variant": "seven_card_stud_hi_lo", "rules": {"low_qualifier": 8}},
    ],
    "hands": 8,
    "stakes": {"ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
}


def test_the_examples_run() -> None:
    assert doctest.testmod(engine.rotation).failed == 0


def test_the_stud_mix_shares_its_stakes_and_keeps_each_games_rules() -> None:
    mix = Rotation.from_dict(
        {
            **STUD_MIX,
            "games": [
                {"variant": "seven_card_stud"},
                {"variant": "razz", "rules": {"bring_in_tie": "position"}},
                {"variant": "seven_card_stud_hi_lo", "rules": {"low_qualifier": None}},
            ],
            "stakes": {"ante": 2, "bring_in": 3, "small_bet": 10, "big_bet": 20},
        }
    )
    assert [g.variant.name for g in mix.games] == [
        "seven_card_stud",
        "razz",
        "seven_card_stud_hi_lo",
    ]
    assert {(g.ante, g.bring_in, g.small_bet, g.big_bet) for g in mix.games} == {(2, 3, 10, 20)}
    assert mix.games[1].bring_in_tie == "position"
    assert mix.games[2].low_qualifier is None
    assert mix.unit == "hands" and mix.hands == 8
    assert Rotation.from_dict(mix.to_dict()) == mix


def test_a_pot_limit_game_in_a_fixed_limit_rotation_states_its_own_structure() -> None:
    mix = Rotation.from_dict(
        {
            "games": [
                {"variant": "seven_card_stud"},
                {
                    "variant": "razz",
                    "structure": "pot_limit",
                    "stakes": {"ante": 5, "bring_in": 5, "small_bet": 10, "big_bet": 10},
                },
            ],
            "unit": "orbit",
        }
    )
    assert mix.games[0].structure == "fixed_limit" and mix.games[0].small_bet == 5
    assert mix.games[1].structure == "pot_limit" and mix.games[1].ante == 5
    assert mix.to_dict()["games"][1]["structure"] == "pot_limit"
    assert Rotation.from_dict(mix.to_dict()) == mix


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"games": []}, "games"),
        ({"games": "razz"}, "games"),
        ({"games": [{"variant": "omaha"}]}, "games[0].variant"),
        ({"games": [{"variant": "razz"}, {"variant": "hold_em"}]}, "games[1].variant"),
        ({"hands": 0}, "hands"),
        ({"hands": -3}, "hands"),
        ({"hands": 2.5}, "hands"),
        ({"unit": "week"}, "unit"),
        ({"unit": "orbit", "hands": 8}, "hands"),
        ({"games": [{"variant": "razz", "structure": "no_limit"}]}, "games[0].stakes"),
        ({"games": [{"variant": "razz", "structure": "pot_limit"}]}, "games[0].stakes"),
        ({"games": [{"variant": "razz", "structure": "spread"}]}, "games[0].structure"),
        (
            {"games": [{"variant": "razz", "stakes": {"ante": 1, "small_bet": 2, "big_bet": 4}}]},
            "games[0].stakes.bring_in",
        ),
        ({"stakes": {"ante": 1, "bring_in": 2, "small_bet": 5}}, "stakes.big_bet"),
        ({"stakes": {"ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": "10"}}, "stakes.big_bet"),
        ({"games": [{"variant": "razz", "rules": {"ante": 3}}]}, "games[0].rules.ante"),
        (
            {"games": [{"variant": "razz", "rules": {"wild_cards": True}}]},
            "games[0].rules.wild_cards",
        ),
        ({"games": [{"variant": "razz", "rules": {"low_qualifier": 2}}]}, "games[0]"),
        ({"games": [{"variant": "razz", "colour": "red"}]}, "games[0].colour"),
        ({"stakes": {"ante": 1, "bring_in": 6, "small_bet": 5, "big_bet": 10}}, "games[0]"),
        ({"speed": "turbo"}, "speed"),
    ],
)
def test_a_rotation_is_refused_with_the_field_at_fault(change: dict[str, Any], field: str) -> None:
    with pytest.raises(RotationError) as refused:
        Rotation.from_dict({**STUD_MIX, **change})
    assert refused.value.field == field
    assert refused.value.code is ErrorCode.BAD_ROTATION
    assert str(refused.value).startswith(f"{field}: ")


def test_an_empty_rotation_and_a_unit_of_zero_are_refused_when_built_directly() -> None:
    with pytest.raises(RotationError, match="^games: "):
        Rotation(())
    with pytest.raises(RotationError, match="^hands: "):
        Rotation(Rotation.from_dict(STUD_MIX).games, hands=0)


def test_every_eight_hands_the_game_changes_and_the_hand_before_says_the_next() -> None:
    mix = Rotation.from_dict(STUD_MIX)
    last: Position | None = None
    said = []
    for _ in range(24):
        scheduled = schedule(mix, last, players=5)
        said.append(scheduled.text)
        last = scheduled.position
    assert said[0] == "Seven-Card Stud, hand 1 of 8"
    assert said[7] == "Seven-Card Stud, hand 8 of 8; next: Razz"
    assert said[8] == "Razz, hand 1 of 8"
    assert said[10] == "Razz, hand 3 of 8"
    assert said[15] == "Razz, hand 8 of 8; next: Stud Hi-Lo (8 or better)"
    assert said[23] == "Stud Hi-Lo (8 or better), hand 8 of 8; next: Seven-Card Stud"
    assert schedule(mix, last, players=5).config.variant.name == "seven_card_stud"


def test_an_orbit_lasts_as_many_hands_as_players_dealt_in_at_its_start() -> None:
    mix = Rotation.from_dict({"games": STUD_MIX["games"], "unit": "orbit"})
    assert mix.unit == "orbit"
    # Six at the orbit's start: six hands, whoever joins or leaves meanwhile.
    dealt = positions(mix, [6, 7, 5, 5, 4, 6, 3, 3, 3])
    assert [(p.game, p.hand, p.of) for p in dealt] == [
        (0, 1, 6),
        (0, 2, 6),
        (0, 3, 6),
        (0, 4, 6),
        (0, 5, 6),
        (0, 6, 6),
        (1, 1, 3),
        (1, 2, 3),
        (1, 3, 3),
    ]


def test_by_level_every_table_at_a_level_plays_that_levels_game() -> None:
    mix = Rotation.from_dict({"games": STUD_MIX["games"], "unit": "level"})
    first = schedule(mix, None, players=6, level=1)
    assert first.config.variant.name == "seven_card_stud" and first.hands_left is None
    again = schedule(mix, first.position, players=6, level=1)
    assert again.position == Position(0, 2, 0, 1)
    assert again.text == "Seven-Card Stud, level 1, hand 2"
    # A table that joins at level 5 plays level 5's game, as every other table does.
    assert schedule(mix, None, players=4, level=5).config.variant.name == "razz"
    assert schedule(mix, again.position, players=6, level=2).position == Position(1, 1, 0, 2)


def test_a_rotation_made_shorter_starts_again_from_its_first_game() -> None:
    short = Rotation.from_dict({**STUD_MIX, "games": STUD_MIX["games"][:1], "hands": 2})
    assert next_position(short, Position(2, 8, 8), players=5) == Position(0, 1, 2)
    assert next_position(short, Position(2, 1, 8), players=5) == Position(0, 1, 2)


# ---------------------------------------------------------------------- properties

rotations = st.builds(
    lambda count, unit, hands: Rotation.from_dict(
        {
            "games": [
                {"variant": v}
                for v in (["seven_card_stud", "razz", "seven_card_stud_hi_lo", "five_card_stud"])[
                    :count
                ]
            ],
            "unit": unit,
            **({"hands": hands} if unit == "hands" else {}),
        }
    ),
    st.integers(1, 4),
    st.sampled_from(["hands", "orbit"]),
    st.integers(1, 9),
)
players = st.lists(st.integers(2, 8), min_size=1, max_size=120)


@settings(max_examples=200, deadline=None)
@given(rotations, players, st.data())
def test_the_game_of_hand_k_is_the_same_when_dealt_again_from_the_journal(
    rotation: Rotation, dealt: list[int], data: st.DataObject
) -> None:
    """A table restarted after any hand, from that hand's position alone, goes on exactly as
    the table that never stopped."""
    straight = positions(rotation, dealt)
    stop = data.draw(st.integers(0, len(dealt) - 1), label="restarted after hand")
    last = straight[stop]
    resumed = [last]
    for count in dealt[stop + 1 :]:
        last = next_position(rotation, Position.from_dict(last.to_dict()), players=count)
        resumed.append(last)
    assert resumed == straight[stop:]
    assert [
        schedule(rotation, p, players=c).config for p, c in zip(straight, dealt[1:], strict=False)
    ] == [rotation.games[p.game] for p in straight[1:]]


@settings(max_examples=200, deadline=None)
@given(rotations, players)
def test_games_switch_exactly_at_the_end_of_each_turn(rotation: Rotation, dealt: list[int]) -> None:
    dealt_positions = positions(rotation, dealt)
    if rotation.unit == "hands":
        games = len(rotation.games)
        assert [p.game for p in dealt_positions] == [
            (k // rotation.hands) % games for k in range(len(dealt))
        ]
    for before, after in zip(dealt_positions, dealt_positions[1:], strict=False):
        if before.last_of_turn:
            assert after.hand == 1 and after.game == (before.game + 1) % len(rotation.games)
            assert hands_to_switch(before) == 0
        else:
            assert (after.game, after.hand, after.of) == (before.game, before.hand + 1, before.of)
    for position, count in zip(dealt_positions, dealt, strict=True):
        if position.hand == 1 and rotation.unit == "orbit":
            assert position.of == count  # the orbit's players, counted at its start
