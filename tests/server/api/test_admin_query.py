"""Every admin endpoint refuses a query parameter it does not take: ``?table_id=2`` where
it reads ``table`` would otherwise answer as if nothing were asked (every hand)."""

from __future__ import annotations

import httpx
import pytest
from server_helpers import FAST_HASHING, bearer, error_code, login, operator_token, register

from server import cli
from server.db.models import Role
from server.settings import Settings


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(database_url=database_url, **FAST_HASHING)


@pytest.mark.parametrize(
    ("url", "unknown"),
    [
        ("/admin/hands?table_id=2", "table_id"),
        ("/admin/hands?table=1&players=ann", "players"),
        ("/admin/tables?verbose=1", "verbose"),
        ("/admin/players?prefix=an&limit=5&pge=2", "pge"),
        ("/admin/audit?actions=x", "actions"),
        ("/admin/tables/live?all=yes", "all"),
    ],
)
async def test_an_unknown_query_parameter_is_refused_by_name(
    client: httpx.AsyncClient, settings: Settings, url: str, unknown: str
) -> None:
    operator = bearer(await operator_token(client, settings))
    refused = await client.get(url, headers=operator)
    assert refused.status_code == 422 and error_code(refused) == "unknown_parameter", refused.text
    message = refused.json()["error"]["message"]
    assert f"no query parameter {unknown} here" in message, message
    # The same call without it is answered.
    path, query = url.split("?")
    known = "&".join(p for p in query.split("&") if not p.startswith(f"{unknown}="))
    answered = await client.get(f"{path}?{known}" if known else path, headers=operator)
    assert answered.status_code == 200, answered.text


async def test_the_callers_are_checked_first_and_a_change_is_refused_whole(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    await cli.create_operator(settings, "sue", lambda: "correct horse", Role.SUPPORT)
    await register(client, "pia")
    anonymous = await client.get("/admin/hands?table_id=2")
    assert anonymous.status_code == 401 and error_code(anonymous) == "not_authenticated"
    player = await client.get("/admin/hands?table_id=2", headers=bearer(await login(client, "pia")))
    assert player.status_code == 403 and error_code(player) == "not_operator"
    operator = bearer(await operator_token(client, settings))
    made = await client.post(
        "/admin/tables?dry_run=1", headers=operator, json={"name": "Never", "seats": 2}
    )
    assert made.status_code == 422 and error_code(made) == "unknown_parameter", made.text
    listed = await client.get("/admin/tables", headers=operator)
    assert [t["name"] for t in listed.json()] == [], "nothing was made"
