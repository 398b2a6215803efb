from __future__ import annotations

import dataclasses
import json

import pytest
from server_helpers import EVERY_RULE

from engine.errors import ConfigError
from engine.variants import VARIANTS, TableConfig
from server.store.table_config import CHIPS, RULES, config_from_json, config_to_json


def test_the_defaults_round_trip() -> None:
    assert config_from_json(config_to_json(TableConfig())) == TableConfig()
    assert config_from_json({}) == TableConfig()


def test_every_rule_round_trips_through_json_text() -> None:
    config = config_from_json(EVERY_RULE)
    assert config.ante_by_position == (1, 2, 3) and config.variant is VARIANTS["five_card_stud"]
    again = config_from_json(json.loads(json.dumps(config_to_json(config))))
    assert again == config
    assert config_to_json(again) == EVERY_RULE


def test_the_json_has_one_key_per_engine_setting() -> None:
    assert list(config_to_json(TableConfig())) == [f.name for f in dataclasses.fields(TableConfig)]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_by_name(name: str) -> None:
    assert config_from_json({"variant": name}).variant is VARIANTS[name]


@pytest.mark.parametrize(
    "data",
    [
        {"ante": 1.0},
        {"ante": "1"},
        {"burn_cards": 1},
        {"max_raises": False},
        {"ante_by_position": "1,2"},
        {"variant": "omaha"},
        {"Ante": 1},
    ],
)
def test_input_is_strict(data: dict[str, object]) -> None:
    with pytest.raises(ConfigError) as refused:
        config_from_json(data)
    assert refused.value.code == "bad_config"


def _limits() -> list[tuple[str, str, float]]:
    return [
        (name, kind, bound)
        for name, (_, limits) in RULES.items()
        for kind, bound in limits.items()
        if bound != CHIPS  # the books' 64 bits, the server's limit, not a rule's
    ]


@pytest.mark.parametrize(("name", "kind", "bound"), _limits())
def test_the_schemas_limits_are_the_engines(name: str, kind: str, bound: float) -> None:
    """At each limit the schema shows, the engine itself (not only the schema) accepts what
    the schema allows and refuses the value just past it."""
    step = 0.01 if name in ("all_in_full_fraction", "rake_percent") else 1
    inside = {"ge": bound, "le": bound, "gt": bound + step, "lt": bound - step}[kind]
    outside = {"ge": bound - step, "le": bound + step, "gt": bound, "lt": bound}[kind]
    base = {
        "variant": VARIANTS["eight_card_stud"],
        "ante": 0,
        "bring_in": 0,
        "small_bet": 1,
        "big_bet": 1,
    }

    def value(number: float) -> object:
        return (number,) if name == "ante_by_position" else number

    TableConfig(**{**base, name: value(inside)})  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        TableConfig(**{**base, name: value(outside)})  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as refused:
        config_from_json({"variant": "eight_card_stud", name: value(outside)})
    assert refused.value.code == "bad_config"


def test_every_rule_is_described() -> None:
    assert list(RULES) == [f.name for f in dataclasses.fields(TableConfig)]
    assert all(description for description, _ in RULES.values())
