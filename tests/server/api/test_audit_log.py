"""The audit log over HTTP: what operators did, filtered and paged; written with the change
it records, so a refused action leaves no entry."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from server_helpers import PASSWORD, bearer, error_code, login, operator_token, player_token

from server import cli
from server.db.models import Role
from server.settings import Settings


@pytest.fixture
async def boss(client: httpx.AsyncClient, settings: Settings) -> dict[str, str]:
    return bearer(await operator_token(client, settings))


async def test_creating_a_table_is_audited(
    client: httpx.AsyncClient, settings: Settings, boss: dict[str, str]
) -> None:
    before = datetime.now(UTC)
    made = await client.post(
        "/admin/tables", headers=boss, json={"name": "Razz", "config": {"variant": "razz"}}
    )
    assert made.status_code == 201
    await cli.create_operator(settings, "sue", lambda: PASSWORD, Role.SUPPORT)
    sue = bearer(await login(client, "sue"))
    response = await client.get("/admin/audit", headers=sue)
    assert response.status_code == 200, response.text
    [entry] = response.json()["entries"]
    assert (entry["actor"], entry["action"]) == ("boss", "table.create")
    assert (entry["target_kind"], entry["target_id"]) == ("table", str(made.json()["id"]))
    assert entry["before"] is None and entry["reason"] is None
    assert entry["after"] == made.json()
    when = datetime.fromisoformat(entry["created_at"])
    assert when.tzinfo is not None and before <= when <= datetime.now(UTC)
    assert response.json()["next_before"] is None


async def test_a_refused_table_leaves_no_entry(
    client: httpx.AsyncClient, boss: dict[str, str]
) -> None:
    assert (await client.post("/admin/tables", headers=boss, json={"name": "T"})).status_code == 201
    again = await client.post("/admin/tables", headers=boss, json={"name": "T"})
    assert again.status_code == 409
    bad = await client.post(
        "/admin/tables", headers=boss, json={"config": {"ante": -1}, "name": "U"}
    )
    assert bad.status_code == 400
    entries = (await client.get("/admin/audit", headers=boss)).json()["entries"]
    assert len(entries) == 1


async def test_filters_and_paging(
    client: httpx.AsyncClient, settings: Settings, boss: dict[str, str]
) -> None:
    await player_token(client, "alice")
    await cli.create_operator(settings, "max", lambda: PASSWORD)
    max_ = bearer(await login(client, "max"))
    for headers, name in ((boss, "A"), (max_, "B"), (boss, "C")):
        made = await client.post("/admin/tables", headers=headers, json={"name": name})
        assert made.status_code == 201
    credit = await client.post(
        "/admin/players/alice/credit", headers=max_, json={"amount": 5, "reason": "prize"}
    )
    assert credit.status_code == 200

    async def actions(query: str) -> list[tuple[str, str]]:
        response = await client.get(f"/admin/audit?{query}", headers=boss)
        assert response.status_code == 200, response.text
        return [(e["actor"], e["action"]) for e in response.json()["entries"]]

    assert await actions("") == [
        ("max", "player.credit"),
        ("boss", "table.create"),
        ("max", "table.create"),
        ("boss", "table.create"),
    ]
    assert await actions("actor=MAX") == [("max", "player.credit"), ("max", "table.create")]
    assert await actions("action=table.create&actor=boss") == [("boss", "table.create")] * 2
    assert await actions("target_kind=player&target_id=alice") == [("max", "player.credit")]
    assert await actions("target_kind=table&target_id=999") == []
    now = datetime.now(UTC)
    hour = timedelta(hours=1)
    params = {"since": (now - hour).isoformat(), "until": (now + hour).isoformat()}
    in_range = await client.get("/admin/audit", headers=boss, params=params)
    assert len(in_range.json()["entries"]) == 4
    later = await client.get(
        "/admin/audit", headers=boss, params={"since": (now + hour).isoformat()}
    )
    assert later.json()["entries"] == []
    earlier = await client.get(
        "/admin/audit", headers=boss, params={"until": (now - hour).isoformat()}
    )
    assert earlier.json()["entries"] == []

    seen: list[int] = []
    url = "/admin/audit?limit=3"
    while True:
        page = (await client.get(url, headers=boss)).json()
        seen.extend(e["id"] for e in page["entries"])
        if page["next_before"] is None:
            break
        url = f"/admin/audit?limit=3&before={page['next_before']}"
    assert len(seen) == 4 and seen == sorted(seen, reverse=True)


@pytest.mark.parametrize(
    "query", ["limit=0", "limit=201", "before=0", "since=yesterday", "since=2026-12-01T08:00:00"]
)
async def test_bad_filters_are_refused(
    client: httpx.AsyncClient, boss: dict[str, str], query: str
) -> None:
    """A time without its zone is refused: the log's times are UTC, and a guess is not."""
    response = await client.get(f"/admin/audit?{query}", headers=boss)
    assert response.status_code == 400 and error_code(response) == "bad_request"


def test_the_log_has_no_way_to_change_it() -> None:
    """Append-only: no route edits or deletes an entry."""
    from server.app import create_app

    app = create_app(Settings(database_url="sqlite+aiosqlite://"))
    methods = {
        method.upper()
        for path, operations in app.openapi()["paths"].items()
        if path.startswith("/admin/audit")
        for method in operations
    }
    assert methods == {"GET"}
