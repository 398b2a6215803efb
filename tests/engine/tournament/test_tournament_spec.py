"""Tournament formats as data: read from what operators post, refused with the field at fault,
written back the same; a freezeout by default; the windows of late registration, re-entry,
rebuys and the add-on read off the level clock."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.errors import ConfigError
from engine.tournament.clock import LevelClock
from engine.tournament.spec import Rebuys, SpecError, TournamentSpec
from engine.tournament.structure import Break, Level, Structure

STRUCTURE = Structure(
    1500,
    (
        Level(5, 10, 30, 60, minutes=10),
        Level(10, 15, 50, 100, minutes=10),
        Break(minutes=5),
        Level(15, 25, 75, 150, minutes=10),
        Level(20, 30, 100, 200, minutes=10),
    ),
)


def posted(**changes: Any) -> dict[str, Any]:
    """A scheduled freezeout as an operator posts it, with ``changes``."""
    data = {
        "kind": "scheduled",
        "variant": "seven_card_stud",
        "betting": "fixed_limit",
        "seats_per_table": 8,
        "structure": STRUCTURE.to_dict(),
        "buy_in": 100,
        "fee": 10,
        "min_entrants": 10,
        "max_entrants": 500,
        "payout_table": "scheduled",
    }
    data.update(changes)
    return data


def refusal(data: Any) -> SpecError:
    with pytest.raises(SpecError) as caught:
        TournamentSpec.from_dict(data)
    return caught.value


def test_a_posted_format_is_a_freezeout_unless_it_says_otherwise() -> None:
    spec = TournamentSpec.from_dict(posted())
    assert spec.structure == STRUCTURE
    assert (spec.late_registration_levels, spec.re_entries, spec.rebuys) == (None, 0, None)
    assert not spec.late_registration_open(0) and not spec.may_re_enter(1, 0)
    assert not spec.may_rebuy(0, 0) and not spec.add_on_open(1)


def test_a_format_round_trips_through_json() -> None:
    data = posted(
        late_registration_levels=3,
        re_entries=2,
        rebuys={"levels": 2, "chips": 1500, "add_on_chips": 3000},
    )
    spec = TournamentSpec.from_dict(data)
    assert spec.rebuys == Rebuys(levels=2, chips=1500, add_on_chips=3000)
    assert TournamentSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    assert spec.to_dict() == data


def test_the_tables_play_the_game_at_each_level_stakes() -> None:
    spec = TournamentSpec.from_dict(posted(variant="razz", betting="pot_limit"))
    config = spec.table_config(STRUCTURE.levels[2])
    assert config.variant.name == "razz" and config.structure == "pot_limit"
    assert (config.ante, config.bring_in, config.small_bet, config.big_bet) == (15, 25, 75, 150)


def test_seats_follow_the_variant() -> None:
    five = TournamentSpec.from_dict(posted(variant="five_card_stud", seats_per_table=10))
    assert five.seats_per_table == 10
    assert refusal(posted(seats_per_table=9)).field == "seats_per_table"  # seven-card: 8
    assert refusal(posted(variant="eight_card_stud", seats_per_table=8)).field == "seats_per_table"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"kind": "satellite"}, "kind"),
        ({"variant": "texas_holdem"}, "variant"),
        ({"betting": "spread_limit"}, "betting"),
        ({"seats_per_table": 1}, "seats_per_table"),
        ({"seats_per_table": "8"}, "seats_per_table"),
        ({"buy_in": -5}, "buy_in"),
        ({"fee": 1.5}, "fee"),
        ({"min_entrants": 1}, "min_entrants"),
        ({"max_entrants": 9}, "max_entrants"),
        ({"max_entrants": 6000}, "max_entrants"),
        ({"payout_table": "winner_takes_all"}, "payout_table"),
        ({"late_registration_levels": 0}, "late_registration_levels"),
        ({"late_registration_levels": 5}, "late_registration_levels"),
        ({"late_registration_levels": 4}, "late_registration_levels"),  # the last goes on
        ({"rebuys": {"levels": 3, "chips": 1500, "add_on_chips": 1500}}, "rebuys.levels"),
        ({"re_entries": 1}, "re_entries"),
        ({"late_registration_levels": 2, "re_entries": -1}, "re_entries"),
        ({"rebuys": {"levels": 4, "chips": 1500}}, "rebuys.levels"),
        ({"rebuys": {"levels": 2, "chips": 0}}, "rebuys.chips"),
        ({"rebuys": {"levels": 2, "chips": 1500, "add_on_chips": 0}}, "rebuys.add_on_chips"),
        ({"rebuys": {"levels": 2, "chips": 1500, "addon": 3000}}, "rebuys.addon"),
        ({"rebuys": [2, 1500]}, "rebuys"),
        ({"name": "Sunday stud"}, "name"),
        ({"structure": {**STRUCTURE.to_dict(), "starting_chips": 0}}, "structure.starting_chips"),
        (
            {
                "structure": {
                    "starting_chips": 1500,
                    "entries": [
                        {"ante": 5, "bring_in": 40, "small_bet": 30, "big_bet": 60, "minutes": 5}
                    ],
                }
            },
            "structure.entries[0].bring_in",
        ),
    ],
)
def test_a_bad_format_is_refused_with_the_field_at_fault(
    changes: dict[str, Any], field: str
) -> None:
    error = refusal(posted(**changes))
    assert error.field == field, error
    assert isinstance(error, ConfigError) and isinstance(error, ValueError)


def test_a_missing_field_or_a_body_that_is_no_object_is_refused() -> None:
    data = posted()
    del data["payout_table"]
    assert refusal(data).field == "payout_table"
    assert refusal(["scheduled"]).field == ""


def test_a_sit_and_go_starts_full_on_one_table_or_several() -> None:
    sng = posted(kind="sit_and_go", min_entrants=18, max_entrants=18, payout_table="sit_and_go")
    assert TournamentSpec.from_dict(sng).max_entrants == 18
    assert refusal({**sng, "max_entrants": 20}).field == "max_entrants"
    assert refusal({**sng, "late_registration_levels": 2}).field == "late_registration_levels"
    assert refusal({**sng, "min_entrants": 50, "max_entrants": 50}).field == "max_entrants"


def test_the_options_open_and_close_with_the_levels() -> None:
    spec = TournamentSpec.from_dict(
        posted(
            late_registration_levels=2,
            re_entries=1,
            rebuys={"levels": 2, "chips": 1500, "add_on_chips": 3000},
        )
    )
    clock = LevelClock.start(spec.structure, at=0.0)
    windows = []
    money = []
    for minute in (0, 15, 20, 22, 25, 34, 35, 45):
        ended = clock.read(minute * 60.0).levels_ended
        windows.append(
            (
                spec.late_registration_open(ended),
                spec.may_re_enter(1, ended),
                spec.may_rebuy(1500, ended),
                spec.add_on_open(ended),
            )
        )
        money.append(spec.money_open(ended))
    assert money == [True] * 6 + [False] * 2  # the prizes are fixed from level 4
    open_, closed = (True, True, True, False), (False, False, False, True)
    # Levels 1 and 2 (20 minutes), then the break and level 3 (the add-on), then level 4.
    assert windows == [open_, open_, closed, closed, closed, closed, (False,) * 4, (False,) * 4]
    assert not spec.may_re_enter(2, 0)  # one re-entry: a second entry was the last
    assert not spec.may_rebuy(1501, 0)  # above the starting chips: no rebuy
