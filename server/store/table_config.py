"""The engine's ``TableConfig`` as JSON, both ways, with every rule setting.

The JSON schema is made from the dataclass's own fields, so a rule the engine adds is
accepted here (and stored, and shown) as it is; :data:`RULES` gives each its description
and the limits of its value, for the OpenAPI schema a client is generated from (a test
asks for every rule's). Input is strict: an unknown key, a string for a number, or
``true`` for a chip count is refused, never coerced.

>>> config = config_from_json({"variant": "razz", "ante": 2})
>>> config.variant.name, config.ante, config_to_json(config)["bring_in"]
('razz', 2, 2)
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    create_model,
)
from pydantic_core import PydanticCustomError

from engine.errors import ConfigError, EngineError
from engine.protocol import ErrorCode
from engine.rotation import RULES as GAME_RULES
from engine.variants import VARIANTS, TableConfig, find_variant

CHIPS = 2**63 - 1  # the most chips a count may hold (64 bits, signed: what the books store)

# Every rule's description and the limits of its value, as the schema shows them (GET
# /admin/table-config and /openapi.json). The engine's own checks (``TableConfig``) judge a
# config in full, rules between fields included; these limits are the same as its bounds
# (tests/server/store/test_table_config.py proves it value by value) and refuse a value early.
RULES: dict[str, tuple[str, dict[str, Any]]] = {
    "variant": ("the game, by name", {}),
    "structure": ("the betting structure", {}),
    "ante": ("chips each player antes", {"ge": 0, "le": CHIPS}),
    "bring_in": (
        "the forced bring-in of the first round; at most small_bet",
        {"ge": 0, "le": CHIPS},
    ),
    "small_bet": ("the small bet (the smallest bet, pot and no limit)", {"ge": 1, "le": CHIPS}),
    "big_bet": ("the big bet of the later rounds; at least small_bet", {"ge": 1, "le": CHIPS}),
    "max_raises": (
        "fixed limit: a bet and this many raises a round; null: no cap",
        {"ge": 0, "le": CHIPS},
    ),
    "uncapped_heads_up": ("fixed limit: no cap while only two players not all in remain", {}),
    "bring_in_may_complete_later": (
        "the bring-in may complete when the action comes back to it uncompleted (SCS 4 alternate)",
        {},
    ),
    "eligibility": ("what a player must post to be dealt in (SCS 11)", {}),
    "bring_in_card": ("which upcard brings in; null: the variant's", {}),
    "bring_in_tie": (
        "equal bring-in cards: the suit decides, or the seat nearest the dealer's left",
        {},
    ),
    "order_tie": ("equal boards after the first round: suit or position; null: the variant's", {}),
    "open_pair_big_bet": ("fixed limit: an open pair on fourth street allows the big bet", {}),
    "burn_cards": ("a card is burnt before each round", {}),
    "last_card_down": ("five-card stud: the last card is dealt face down", {}),
    "low_qualifier": (
        "hi-lo: the highest rank a qualifying low may hold (8: eight or better); null: any low",
        {"ge": 5, "le": 13},
    ),
    "kansas_city_low": ("hi-lo: aces high only, straights and flushes count against a low", {}),
    "announce_possibles": ('the dealer says "possible straight" / "possible flush"', {}),
    "all_in_full_fraction": (
        "fixed limit: an all-in raise of at least this fraction of a bet counts as a full raise",
        {"gt": 0, "le": 1},
    ),
    "ante_by_position": (
        "the ante of each position when they differ; null: ante for everyone",
        {"ge": 0, "le": CHIPS},
    ),
    "antes_dead": ("antes are dead money: all in the main pot", {}),
    "trim_antes": ("an ante above the second highest posted is cut to it", {}),
    "odd_chip_tie": (
        "the odd chips of a split: to the highest cards by suit, or the tied seat nearest the "
        "dealer's left",
        {},
    ),
    "all_in_opener": (
        "the seat chosen to open is all in: the next best board opens, or the next seat",
        {},
    ),
    "short_all_in": (
        "fixed limit, a short all-in wager: reopens at half a bet, or only at the largest "
        "increase of the round (no-limit style)",
        {},
    ),
    "cap_counts_short_all_ins": ("fixed limit: short all-in wagers count toward the cap", {}),
    "short_bring_in_call": (
        "after a short bring-in (all in for less) others call the full bring-in, or what was "
        "posted",
        {},
    ),
    "reuse_folded_cards": ("too few cards: folded hands are shuffled back in with the burns", {}),
    "common_card_in_order": ("the common card counts in the board that acts first", {}),
    "deal_to_unfaced_folds": (
        "a seat folding without facing a bet is still dealt to until a bet is made (SCS 12)",
        {},
    ),
    "pots_by_contenders": (
        "showdown: hands that cannot win are mucked before the pots are made, layers with the "
        "same contenders merged",
        {},
    ),
    "rake_percent": (
        "the rake: this percent of each pot (at most two decimals: 2.5, 4.75), whole chips, "
        "main pot first",
        {"ge": 0, "le": 100},
    ),
    "rake_cap": ("the most chips raked from one hand; null: no cap", {"ge": 0, "le": CHIPS}),
    "rake_from_street": (
        "rake only a hand that reaches this street, counted from 1 (2: no flop, no drop); at "
        "most the variant's number of streets",
        {"ge": 1, "le": max(len(v.streets) for v in VARIANTS.values())},
    ),
    "absent_hands": (
        "an absent player's hand (rule 8): killed when the betting reaches it (cash tables), "
        "or, at tournament tables only, dealt in and killed once every player has the "
        "starting hand",
        {},
    ),
}


def _json_type(annotation: Any, limits: dict[str, Any]) -> Any:
    """The JSON-side type of a field, its limits on the number (or each item) it holds:
    tuples travel as lists; the rest as they are."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return list[_json_type(args[0], limits)]  # type: ignore[misc]
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(_json_type(a, limits) for a in args)]  # noqa: UP007
    if annotation in (int, float) and limits:
        return Annotated[annotation, Field(**limits)]
    return annotation


def _fields(*, partial: bool) -> dict[str, Any]:
    """Each rule as a field: its type, limits and description; its default the rule
    books' (``partial``: no default, a rule left out is one not changed)."""
    hints = typing.get_type_hints(TableConfig)
    defaults = TableConfig()
    fields: dict[str, Any] = {}
    for field in dataclasses.fields(TableConfig):
        description, limits = RULES.get(field.name, ("", {}))
        if field.name == "variant":
            kind: Any = typing.Literal[tuple(VARIANTS)]
            default: Any = defaults.variant.name
        else:
            kind = _json_type(hints[field.name], limits)
            default = getattr(defaults, field.name)
            if isinstance(default, tuple):
                default = list(default)
        if partial:
            # Left out, kept: no default to show (``None`` never reaches a rule: exclude_unset).
            spec = Field(default=None, description=description, json_schema_extra=no_default)
        else:
            spec = Field(default=default, description=description)
        fields[field.name] = (kind, spec)
    return fields


def no_default(schema: dict[str, Any]) -> None:
    """A field that may be left out, whose default (None: not given) the schema does not show."""
    schema.pop("default", None)


_STRICT = ConfigDict(strict=True, extra="forbid")

TableConfigJson: type[BaseModel] = create_model(
    "TableConfigJson",
    __config__=_STRICT,
    __doc__="Every rule setting of a table; a missing key takes the rule books' default.",
    **_fields(partial=False),
)

TableConfigChanges: type[BaseModel] = create_model(
    "TableConfigChanges",
    __config__=_STRICT,
    __doc__="Rule settings to change, by name; a rule left out stays as it is.",
    **_fields(partial=True),
)


GameRulesJson: type[BaseModel] = create_model(
    "GameRulesJson",
    __config__=_STRICT,
    __doc__="A mixed table's game's rule settings, by name (its variant, structure and stakes "
    "are fields of the game); a rule left out is the rule books'.",
    **{name: spec for name, spec in _fields(partial=True).items() if name in GAME_RULES},
)


def problems(exc: ValidationError, whole: str = "config") -> str:
    """A config's refusals in one line: each field (``whole`` for the value itself) and
    what is wrong with it."""
    return "; ".join(
        f"{'.'.join(str(p) for p in error['loc']) or whole}: {error['msg']}"
        if error["loc"] or whole
        else error["msg"]
        for error in exc.errors()
    )


def as_bad_config(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A request's config (or a setting judged with it) checked by its type, refused as
    ``bad_config``: the code of any refused config, by field types or the engine's rules."""
    try:
        return handler(value)
    except ValidationError as exc:
        raise PydanticCustomError(
            str(ErrorCode.BAD_CONFIG), "{message}", {"message": problems(exc, whole="")}
        ) from None


def config_from_json(data: Mapping[str, Any]) -> TableConfig:
    """A playable ``TableConfig`` from JSON, or ``ConfigError`` (code ``bad_config``)."""
    try:
        parsed = TableConfigJson.model_validate(dict(data))
    except ValidationError as exc:
        raise ConfigError(problems(exc)) from None
    values: dict[str, Any] = {
        name: tuple(value) if isinstance(value, list) else value
        for name, value in parsed.model_dump().items()
    }
    try:
        return TableConfig(**{**values, "variant": find_variant(values["variant"])})
    except EngineError as exc:
        raise ConfigError(str(exc)) from None


def config_to_json(config: TableConfig) -> dict[str, Any]:
    """Every field of the config, the variant by name: what the database stores."""
    out: dict[str, Any] = {}
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        if field.name == "variant":
            value = value.name
        elif isinstance(value, tuple):
            value = list(value)
        out[field.name] = value
    return out
