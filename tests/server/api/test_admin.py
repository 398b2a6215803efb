from __future__ import annotations

import dataclasses
from typing import Any

import httpx
import pytest
from server_helpers import EVERY_TABLE_RULE, bearer, error_code, operator_token, player_token
from sqlalchemy.ext.asyncio import AsyncSession

from engine.variants import TableConfig
from server.accounts import ledger
from server.settings import Settings


async def test_operator_creates_a_table_with_every_rule(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    token = await operator_token(client, settings)
    response = await client.post(
        "/admin/tables",
        headers=bearer(token),
        json={
            "name": "Five alive",
            "config": EVERY_TABLE_RULE,
            "seats": 10,
            "min_buy_in": 100,
            "max_buy_in": 600,
        },
    )
    assert response.status_code == 201, response.text
    table = response.json()
    assert (table["variant"], table["seats"], table["status"]) == ("five_card_stud", 10, "open")
    assert (table["min_buy_in"], table["max_buy_in"]) == (100, 600)
    stored = table["config"]
    assert {name: stored[name] for name in EVERY_TABLE_RULE} == EVERY_TABLE_RULE
    # The stored config is the full rule set: one key per engine setting, no more.
    assert set(stored) == {field.name for field in dataclasses.fields(TableConfig)}

    listed = (await client.get("/admin/tables", headers=bearer(token))).json()
    assert [t["name"] for t in listed] == ["Five alive"]
    assert listed[0]["config"] == stored


async def test_defaults_fill_a_partial_config(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    token = await operator_token(client, settings)
    response = await client.post(
        "/admin/tables", headers=bearer(token), json={"name": "Razz", "config": {"variant": "razz"}}
    )
    table = response.json()
    assert table["seats"] == 8
    assert (table["min_buy_in"], table["max_buy_in"]) == (200, 1000)  # 20 and 100 big bets
    assert table["config"]["ante"] == TableConfig().ante


async def test_a_new_table_has_an_empty_chip_pool(
    client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    token = await operator_token(client, settings)
    table = (await client.post("/admin/tables", headers=bearer(token), json={"name": "T"})).json()
    assert await ledger.balance(session, wallet=ledger.table_pool(table["id"])) == 0


@pytest.mark.parametrize(
    "body",
    [
        {"config": {"variant": "texas_holdem"}},
        {"config": {"ante": "1"}},
        {"config": {"ante": True}},
        {"config": {"ante": -1}},
        {"config": {"small_bet": 0}},
        {"config": {"bring_in": 9}},
        {"config": {"structure": "spread_limit"}},
        {"config": {"no_such_rule": 1}},
        {"config": {"ante_by_position": [1, -2]}},
        {"config": {"all_in_full_fraction": -1}},
        {"config": {"all_in_full_fraction": 0}},
        {"config": {"all_in_full_fraction": 1.5}},
        {"config": {"max_raises": -1}},
        {"config": {"low_qualifier": 4}},
        # Recorded hands' antes by position: a table cannot promise how many are dealt in.
        {"config": {"ante_by_position": [1, 1, 1]}},
        {"config": {"variant": "seven_card_stud"}, "seats": 9},
        {"seats": 1},
        {"min_buy_in": 1},
        {"min_buy_in": 500, "max_buy_in": 400},
    ],
)
async def test_bad_config_is_refused_with_a_stable_code(
    client: httpx.AsyncClient, settings: Settings, body: dict[str, Any]
) -> None:
    token = await operator_token(client, settings)
    response = await client.post("/admin/tables", headers=bearer(token), json={"name": "X", **body})
    assert response.status_code == 400
    assert error_code(response) == "bad_config", response.json()
    assert (await client.get("/admin/tables", headers=bearer(token))).json() == []


async def test_table_names_are_unique(client: httpx.AsyncClient, settings: Settings) -> None:
    token = await operator_token(client, settings)
    first = await client.post("/admin/tables", headers=bearer(token), json={"name": "A"})
    assert first.status_code == 201
    again = await client.post("/admin/tables", headers=bearer(token), json={"name": "A"})
    assert again.status_code == 409 and error_code(again) == "table_name_taken"


async def test_table_config_schema_lists_every_rule(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    token = await operator_token(client, settings)
    schema = (await client.get("/admin/table-config", headers=bearer(token))).json()
    assert set(schema["properties"]) == {field.name for field in dataclasses.fields(TableConfig)}
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/admin/tables"), ("POST", "/admin/tables"), ("GET", "/admin/table-config")],
)
async def test_admin_endpoints_are_for_operators_only(
    client: httpx.AsyncClient, method: str, path: str
) -> None:
    token = await player_token(client, "alice")
    response = await client.request(method, path, headers=bearer(token), json={"name": "T"})
    assert response.status_code == 403 and error_code(response) == "not_operator"
    anonymous = await client.request(method, path, json={"name": "T"})
    assert anonymous.status_code == 401 and error_code(anonymous) == "not_authenticated"


async def test_create_operator_promotes_an_existing_account(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    token = await player_token(client, "carol")
    assert (await client.get("/admin/tables", headers=bearer(token))).status_code == 403
    await operator_token(client, settings, "carol")
    assert (await client.get("/admin/tables", headers=bearer(token))).status_code == 200
