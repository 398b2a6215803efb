"""Structures as data: what operators post is read, checked with the field at fault, written
back the same, and a level's stakes are the table's."""

from __future__ import annotations

import doctest
import json
import random
from dataclasses import fields, replace
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from engine.cards import Deck
from engine.errors import ConfigError, Refusal
from engine.events import Ante, HandStarted
from engine.hand import Hand
from engine.protocol import ErrorCode
from engine.tournament import structure as structure_module
from engine.tournament.structure import Break, Level, Structure, StructureError
from engine.variants import TableConfig, find_variant


def level(ante: Any, bring_in: Any, small: Any, big: Any, **length: Any) -> dict[str, Any]:
    return {"ante": ante, "bring_in": bring_in, "small_bet": small, "big_bet": big, **length}


def posted(entries: list[Any], starting_chips: Any = 1500) -> dict[str, Any]:
    return {"starting_chips": starting_chips, "entries": entries}


VALID = posted(
    [
        level(5, 10, 30, 60, minutes=10),
        level(10, 15, 50, 100, minutes=10),
        {"kind": "break", "minutes": 5},
        level(15, 25, 75, 150, hands=12),
    ]
)


def refusal(data: Any) -> StructureError:
    with pytest.raises(StructureError) as caught:
        Structure.from_dict(data)
    return caught.value


def test_the_module_examples_run() -> None:
    assert doctest.testmod(structure_module).failed == 0


def test_a_posted_structure_is_read_in_order_and_written_back_the_same() -> None:
    structure = Structure.from_dict(VALID)
    assert structure.starting_chips == 1500
    assert structure.entries == (
        Level(5, 10, 30, 60, minutes=10),
        Level(10, 15, 50, 100, minutes=10),
        Break(minutes=5),
        Level(15, 25, 75, 150, hands=12),
    )
    written = json.loads(json.dumps(structure.to_dict()))
    assert Structure.from_dict(written) == structure
    assert written["entries"][2] == {"kind": "break", "minutes": 5}
    assert written["entries"][3]["kind"] == "level" and "minutes" not in written["entries"][3]


def test_levels_are_counted_as_players_count_them() -> None:
    structure = Structure.from_dict(VALID)
    assert [structure.level_number(i) for i in range(4)] == [1, 2, 2, 3]
    assert structure.next_level(1) == structure.next_level(2) == structure.entries[3]
    assert structure.next_level(3) is None
    assert structure.levels == (structure.entries[0], structure.entries[1], structure.entries[3])


@pytest.mark.parametrize(
    ("entries", "field"),
    [
        # levels not increasing: a stake below the previous level's, or nothing raised
        ([level(5, 10, 30, 60, minutes=10), level(4, 15, 50, 100, minutes=10)], "entries[1].ante"),
        (
            [level(5, 10, 30, 60, minutes=10), level(5, 10, 30, 50, minutes=10)],
            "entries[1].big_bet",
        ),
        ([level(5, 10, 30, 60, minutes=10), level(5, 10, 30, 60, hands=5)], "entries[1]"),
        # a level's own stakes
        ([level(5, 40, 30, 60, minutes=10)], "entries[0].bring_in"),
        ([level(5, 10, 30, 20, minutes=10)], "entries[0].big_bet"),
        ([level(-1, 10, 30, 60, minutes=10)], "entries[0].ante"),
        ([level(5, 10, 0, 0, minutes=10)], "entries[0].small_bet"),
        ([level(5, 10.5, 30, 60, minutes=10)], "entries[0].bring_in"),
        ([level(5, "10", 30, 60, minutes=10)], "entries[0].bring_in"),
        ([level(True, 10, 30, 60, minutes=10)], "entries[0].ante"),
        # its length: minutes or hands, one of them, above 0
        ([level(5, 10, 30, 60)], "entries[0].minutes"),
        ([level(5, 10, 30, 60, minutes=10, hands=10)], "entries[0].minutes"),
        ([level(5, 10, 30, 60, minutes=0)], "entries[0].minutes"),
        ([level(5, 10, 30, 60, minutes=float("inf"))], "entries[0].minutes"),
        ([level(5, 10, 30, 60, hands=0)], "entries[0].hands"),
        ([level(5, 10, 30, 60, hands=2.5)], "entries[0].hands"),
        # breaks
        (
            [
                level(5, 10, 30, 60, minutes=10),
                {"kind": "break", "minutes": 0},
                level(10, 15, 50, 100, minutes=10),
            ],
            "entries[1].minutes",
        ),
        (
            [
                level(5, 10, 30, 60, minutes=10),
                {"kind": "break", "minutes": 5},
                {"kind": "break", "minutes": 5},
                level(10, 15, 50, 100, minutes=10),
            ],
            "entries[2]",
        ),
        ([{"kind": "break", "minutes": 5}, level(5, 10, 30, 60, minutes=10)], "entries[0]"),
        ([level(5, 10, 30, 60, minutes=10), {"kind": "break", "minutes": 5}], "entries[1]"),
        ([], "entries"),
        # unknown keys and wrong shapes
        ([level(5, 10, 30, 60, minutes=10, antes=5)], "entries[0].antes"),
        ([{"kind": "break", "minutes": 5, "hands": 3}], "entries[0].hands"),
        (
            [
                {
                    "kind": "pause",
                    "ante": 1,
                    "bring_in": 1,
                    "small_bet": 2,
                    "big_bet": 4,
                    "minutes": 1,
                }
            ],
            "entries[0].kind",
        ),
        ([{"ante": 5, "bring_in": 10, "big_bet": 60, "minutes": 10}], "entries[0].small_bet"),
        (["level 1"], "entries[0]"),
        ("5/10/30/60", "entries"),
    ],
)
def test_a_bad_structure_is_refused_with_the_field_at_fault(entries: Any, field: str) -> None:
    error = refusal(posted(entries))
    assert error.field == field, error
    assert str(error).startswith(field + ": ")


@pytest.mark.parametrize(
    ("data", "field"),
    [
        (posted([level(5, 10, 30, 60, minutes=10)], starting_chips=0), "starting_chips"),
        (posted([level(5, 10, 30, 60, minutes=10)], starting_chips=1500.0), "starting_chips"),
        ({"entries": [level(5, 10, 30, 60, minutes=10)]}, "starting_chips"),
        ({**VALID, "name": "mine"}, "name"),
        ([1500], ""),
    ],
)
def test_a_bad_structure_top_is_refused_with_the_field_at_fault(data: Any, field: str) -> None:
    assert refusal(data).field == field


def test_a_structure_refusal_is_an_engine_refusal_with_a_stable_code() -> None:
    error = refusal(posted([level(5, 40, 30, 60, minutes=10)]))
    assert isinstance(error, ValueError) and isinstance(error, ConfigError)
    assert isinstance(error, Refusal) and error.code is ErrorCode.BAD_STRUCTURE
    assert error.reason == "may not exceed the small bet"


def test_built_in_code_the_same_checks_apply() -> None:
    with pytest.raises(StructureError, match="^bring_in: "):
        Level(5, 40, 30, 60, minutes=10)
    with pytest.raises(StructureError, match="^minutes: "):
        Break(minutes=-5)
    with pytest.raises(StructureError, match=r"^entries\[1\]\.small_bet: "):
        Structure(1500, (Level(5, 10, 30, 60, hands=5), Level(5, 10, 20, 60, hands=5)))
    with pytest.raises(StructureError, match="^entries: needs at least one level"):
        Structure(1500, ())


def test_a_table_deals_its_next_hand_at_the_level_applied() -> None:
    table = TableConfig(variant=find_variant("razz"))
    second = Structure.from_dict(VALID).levels[1]
    config = replace(table, **second.table_stakes())
    assert config == second.applied_to(table)
    assert (config.ante, config.bring_in, config.small_bet, config.big_bet) == (10, 15, 50, 100)
    assert config.variant.name == "razz"
    hand = Hand(config, [(0, 1500), (1, 1500), (2, 1500)], Deck(rng=random.Random(7)))
    started = next(e for e in hand.events if isinstance(e, HandStarted))
    assert (started.ante, started.small_bet, started.big_bet) == (10, 50, 100)
    assert {e.amount for e in hand.events if isinstance(e, Ante)} == {10}


@st.composite
def ladders(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Levels whose stakes never go down and rise each time (the ante or the bets), with
    breaks between some."""
    small = draw(st.integers(1, 5))
    ante, bring_in = draw(st.integers(0, 5)), draw(st.integers(0, small))
    entries: list[dict[str, Any]] = []
    for index in range(draw(st.integers(1, 12))):
        if index:
            if draw(st.booleans()) and entries[-1].get("kind") != "break":
                entries.append({"kind": "break", "minutes": draw(st.integers(1, 15))})
            if draw(st.booleans()):
                ante += draw(st.integers(1, 10))
            else:
                small += draw(st.integers(1, 20))
            bring_in = min(bring_in + draw(st.integers(0, 5)), small)
        if draw(st.booleans()):
            length = {"minutes": draw(st.integers(1, 30))}
        else:
            length = {"hands": draw(st.integers(1, 40))}
        entries.append(level(ante, bring_in, small, 2 * small, **length))
    return entries


@given(ladders())
def test_any_rising_ladder_is_taken_and_round_trips(entries: list[dict[str, Any]]) -> None:
    structure = Structure.from_dict(posted(entries))
    assert Structure.from_dict(json.loads(json.dumps(structure.to_dict()))) == structure
    assert len(structure.entries) == len(entries)


@given(ladders(), st.data())
def test_lowering_any_stake_of_a_later_level_is_refused_there(
    entries: list[dict[str, Any]], data: st.DataObject
) -> None:
    levels = [i for i, e in enumerate(entries) if e.get("kind") != "break"]
    assume(len(levels) >= 2)
    at = data.draw(st.sampled_from(levels[1:]))
    before = entries[levels[levels.index(at) - 1]]
    name = data.draw(st.sampled_from(["ante", "bring_in", "small_bet", "big_bet"]))
    lowered = dict(entries[at], **{name: before[name] - 1})
    if name == "small_bet":
        lowered["big_bet"] = before["big_bet"]
    assume(before[name] >= 1 and lowered["bring_in"] <= lowered["small_bet"])
    error = refusal(posted([*entries[:at], lowered, *entries[at + 1 :]]))
    assert error.field == f"entries[{at}].{name}"


@given(ladders())
def test_a_hands_stakes_name_the_level_it_was_played_at(entries: list[dict[str, Any]]) -> None:
    """How a hand's level is told afterwards (its PHH ``level``, its history): from the table
    rules it was dealt by. Exact, since no two levels of a rising ladder share their stakes."""
    structure = Structure.from_dict(posted(entries))
    config = TableConfig(find_variant("seven_card_stud"), 1, 1, 2, 4)
    for number, played in enumerate(structure.levels, 1):
        rules = played.applied_to(config)
        assert structure.level_of({f.name: getattr(rules, f.name) for f in fields(rules)}) == number
    top = structure.levels[-1]
    assert structure.level_of({**top.table_stakes(), "ante": top.ante + 1}) is None
    assert structure.level_of({"ante": top.ante}) is None
