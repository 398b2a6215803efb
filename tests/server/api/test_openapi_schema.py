"""Every request body of the back office is typed in the OpenAPI schema, down to each rule
of a table's configuration, so a client generated from /openapi.json can build it: no body
under /admin holds an object of unknown shape, and the rules' limits and descriptions are
the engine's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from engine.variants import VARIANTS


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    node: Any = spec
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return dict(node)


def _untyped(spec: dict[str, Any], schema: dict[str, Any], where: str) -> Iterator[str]:
    """Every place in ``schema`` that is an object of unknown shape: open to any property
    (``additionalProperties: true``), or ``object`` with neither properties nor a typed
    value."""
    schema = _resolve(spec, schema)
    if schema.get("additionalProperties") is True:
        yield where
    if schema.get("type") == "object" and not schema.get("properties"):
        values = schema.get("additionalProperties")
        if not isinstance(values, dict) or not values:
            yield where
    if not schema.get("type") and not any(
        k in schema for k in ("$ref", "anyOf", "oneOf", "allOf", "enum", "const")
    ):
        yield f"{where} (no type)"
    for name, sub in schema.get("properties", {}).items():
        yield from _untyped(spec, sub, f"{where}.{name}")
    for key in ("anyOf", "oneOf", "allOf"):
        for index, sub in enumerate(schema.get(key, [])):
            yield from _untyped(spec, sub, f"{where}.{key}[{index}]")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from _untyped(spec, schema[key], f"{where}.{key}")


async def _spec(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/openapi.json")
    assert response.status_code == 200
    return dict(response.json())


async def test_no_admin_body_is_an_untyped_object(client: httpx.AsyncClient) -> None:
    spec = await _spec(client)
    bodies = {
        f"{method.upper()} {path}": operation["requestBody"]["content"]["application/json"]
        for path, operations in spec["paths"].items()
        if path.startswith("/admin")
        for method, operation in operations.items()
        if "requestBody" in operation
    }
    assert "POST /admin/tables" in bodies and "PATCH /admin/tables/{table_id}" in bodies
    untyped = [
        place for label, body in bodies.items() for place in _untyped(spec, body["schema"], label)
    ]
    assert untyped == []


@pytest.mark.parametrize(
    ("body", "rules"), [("TableCreate", "TableConfigJson"), ("TableUpdate", "TableConfigChanges")]
)
async def test_a_tables_rules_are_typed_with_their_limits(
    client: httpx.AsyncClient, body: str, rules: str
) -> None:
    spec = await _spec(client)
    schemas = spec["components"]["schemas"]
    config = schemas[body]["properties"]["config"]
    refs = [config.get("$ref")] + [s.get("$ref") for s in config.get("anyOf", [])]
    assert f"#/components/schemas/{rules}" in refs
    model = schemas[rules]
    assert model["additionalProperties"] is False
    fields = model["properties"]
    assert fields["variant"]["enum"] == list(VARIANTS)
    assert fields["structure"]["enum"] == ["fixed_limit", "pot_limit", "no_limit"]
    assert (fields["ante"]["type"], fields["ante"]["minimum"]) == ("integer", 0)
    assert fields["small_bet"]["minimum"] == 1
    assert fields["low_qualifier"]["anyOf"][0] == {"type": "integer", "minimum": 5, "maximum": 13}
    assert fields["rake_percent"]["maximum"] == 100
    # Every rule says what it does; a new one of the engine's needs its words.
    assert [name for name, field in fields.items() if not field.get("description")] == []
    if rules == "TableConfigJson":
        assert fields["ante"]["default"] == 1 and fields["variant"]["default"] == "seven_card_stud"
    else:  # a rule left out of a change is kept: nothing is required, nothing defaulted
        assert "required" not in model
        assert [name for name, field in fields.items() if "default" in field] == []
