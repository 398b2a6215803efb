"""The engine's ``TableConfig`` as JSON, both ways, with every rule setting.

The JSON schema is made from the dataclass's own fields, so a rule the engine adds is
accepted here (and stored, and shown) without touching this module. Input is strict: an
unknown key, a string for a number, or ``true`` for a chip count is refused, never coerced.

>>> config = config_from_json({"variant": "razz", "ante": 2})
>>> config.variant.name, config.ante, config_to_json(config)["bring_in"]
('razz', 2, 2)
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from engine.errors import ConfigError, EngineError
from engine.variants import VARIANTS, TableConfig, find_variant


def _json_type(annotation: Any) -> Any:
    """The JSON-side type of a field: tuples travel as lists; the rest as they are."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return list[_json_type(args[0])]  # type: ignore[misc]
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(_json_type(a) for a in args)]  # noqa: UP007
    return annotation


def _schema() -> type[BaseModel]:
    hints = typing.get_type_hints(TableConfig)
    defaults = TableConfig()
    fields: dict[str, Any] = {}
    for field in dataclasses.fields(TableConfig):
        if field.name == "variant":
            fields["variant"] = (typing.Literal[tuple(VARIANTS)], defaults.variant.name)
        else:
            default = getattr(defaults, field.name)
            if isinstance(default, tuple):
                default = list(default)
            fields[field.name] = (_json_type(hints[field.name]), default)
    return create_model(
        "TableConfigJson",
        __config__=ConfigDict(strict=True, extra="forbid"),
        __doc__="Every rule setting of a table; a missing key takes the rule books' default.",
        **fields,
    )


TableConfigJson: type[BaseModel] = _schema()


def config_from_json(data: Mapping[str, Any]) -> TableConfig:
    """A playable ``TableConfig`` from JSON, or ``ConfigError`` (code ``bad_config``)."""
    try:
        parsed = TableConfigJson.model_validate(dict(data))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'config'}: {error['msg']}"
            for error in exc.errors()
        )
        raise ConfigError(problems) from None
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
