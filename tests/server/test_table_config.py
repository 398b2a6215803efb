from __future__ import annotations

import dataclasses
import json

import pytest
from server_helpers import EVERY_RULE

from engine.errors import ConfigError
from engine.variants import VARIANTS, TableConfig
from server.table_config import config_from_json, config_to_json


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
