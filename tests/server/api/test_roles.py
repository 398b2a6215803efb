"""Roles over HTTP with real tokens: who may use the back office (``/admin``).

Anonymous callers are refused with 401, players and bots with 403 (``not_operator``);
support accounts read (every ``GET``) and change nothing (403); operators do everything.
The refusals are checked on every ``/admin`` route the app has, so a new endpoint is held
to them at once; what each role may do is checked on each endpoint with a real request.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from server_helpers import PASSWORD, bearer, error_code, login, operator_token, register
from sqlalchemy.ext.asyncio import AsyncSession

from server import cli
from server.db.models import HandRecord, Role, TableRecord
from server.settings import Settings

WRITES = {"POST", "PUT", "PATCH", "DELETE"}


def admin_routes(app: FastAPI) -> set[tuple[str, str]]:
    """Every ``(method, path)`` the app serves under ``/admin``, as its API docs list them."""
    return {
        (method.upper(), path)
        for path, operations in app.openapi()["paths"].items()
        if path.startswith("/admin")
        for method in operations
    }


def concrete(path: str) -> str:
    """A route's path with each parameter filled in (``/admin/hands/{hand_id}`` -> ``/1``)."""
    return re.sub(r"\{[^}]+\}", "1", path)


@dataclass
class Callers:
    """A real token for each kind of caller (None: anonymous)."""

    tokens: dict[str, str | None]

    def headers(self, who: str) -> dict[str, str]:
        token = self.tokens[who]
        return bearer(token) if token else {}


@pytest.fixture
async def callers(client: httpx.AsyncClient, settings: Settings) -> Callers:
    assert (await register(client, "alice")).status_code == 201
    assert (await register(client, "robo", bot=True)).status_code == 201
    made = await cli.create_operator(settings, "sue", lambda: PASSWORD, Role.SUPPORT)
    assert made == "support sue created"
    return Callers(
        {
            "anonymous": None,
            "player": await login(client, "alice"),
            "bot": await login(client, "robo"),
            "support": await login(client, "sue"),
            "operator": await operator_token(client, settings),
        }
    )


async def test_every_admin_route_refuses_anonymous_players_and_bots(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers
) -> None:
    routes = admin_routes(app)
    assert routes, "no /admin routes found"
    for method, path in sorted(routes):
        url = concrete(path)
        anonymous = await client.request(method, url, json={})
        assert anonymous.status_code == 401, (method, path, anonymous.text)
        assert error_code(anonymous) == "not_authenticated", (method, path)
        for who in ("player", "bot"):
            response = await client.request(method, url, headers=callers.headers(who), json={})
            assert response.status_code == 403, (who, method, path, response.text)
            assert error_code(response) == "not_operator", (who, method, path)


async def test_staff_pass_the_gate_of_every_admin_route(
    app: FastAPI, client: httpx.AsyncClient, callers: Callers
) -> None:
    """Whatever an endpoint's own dependency says: the router lets support read only, and
    an operator through everywhere."""
    for method, path in sorted(admin_routes(app)):
        operator = await client.request(
            method, concrete(path), headers=callers.headers("operator"), json={}
        )
        assert operator.status_code not in (401, 403), (method, path, operator.text)
        response = await client.request(
            method, concrete(path), headers=callers.headers("support"), json={}
        )
        if method in WRITES:
            assert response.status_code == 403, (method, path, response.text)
            assert error_code(response) == "not_operator", (method, path)
            assert "support" in response.json()["error"]["message"]
        else:
            # Past the role check (a made-up id may still be unknown).
            assert response.status_code not in (401, 403), (method, path, response.text)


# ---------------------------------------------------------------------- each endpoint, for real


@dataclass
class Call:
    """One real request to an endpoint, and what its success looks like."""

    method: str
    path: str  # the route's path, as the app declares it
    url: Callable[[int], str]  # from the id of a stored hand
    body: dict[str, Any] | None
    status: int
    check: Callable[[Any], bool]


# The node the app of these tests runs as: its default id (this host, this process).
THIS_NODE = f"{socket.gethostname()}-{os.getpid()}"

CALLS = [
    Call(
        "GET",
        "/admin/table-config",
        lambda _: "/admin/table-config",
        None,
        200,
        lambda body: "variant" in body["properties"],
    ),
    Call(
        "GET",
        "/admin/tables",
        lambda _: "/admin/tables",
        None,
        200,
        lambda body: [t["name"] for t in body] == ["Stored"],
    ),
    Call(
        "POST",
        "/admin/tables",
        lambda _: "/admin/tables",
        {"name": "Razz", "config": {"variant": "razz"}},
        201,
        lambda body: body["variant"] == "razz",
    ),
    Call(
        "PATCH",
        "/admin/tables/{table_id}",
        lambda _: "/admin/tables/1",
        {"seats": 6, "config": {"ante": 2}, "reason": "smaller table"},
        200,
        lambda body: body["table"]["seats"] == 6 and body["table"]["config"]["ante"] == 2,
    ),
    Call(
        "PUT",
        "/admin/tables/{table_id}/rotation",
        lambda _: "/admin/tables/1/rotation",
        {"rotation": {"games": [{"variant": "razz"}, {"variant": "seven_card_stud"}]}},
        200,  # nobody plays at the stored table: idle, dealt from its next hand
        lambda body: (
            body["after_hand"] is False
            and [g["variant"] for g in body["rotation"]["rotation"]["games"]]
            == ["razz", "seven_card_stud"]
        ),
    ),
    Call(
        "POST",
        "/admin/tables/{table_id}/pause",
        lambda _: "/admin/tables/1/pause",
        {"reason": "maintenance"},
        200,
        lambda body: body["table"]["paused_reason"] == "maintenance",
    ),
    Call(
        "POST",
        "/admin/tables/{table_id}/resume",
        lambda _: "/admin/tables/1/resume",
        {"reason": "done"},
        409,  # it was not paused: the table itself says so
        lambda body: body["error"]["code"] == "table_not_paused",
    ),
    Call(
        "POST",
        "/admin/tables/{table_id}/close",
        lambda _: "/admin/tables/1/close",
        {"reason": "end of the night"},
        200,
        lambda body: body["table"]["status"] == "closed" and body["after_hand"] is False,
    ),
    Call(
        "POST",
        "/admin/tables/{table_id}/void",
        lambda _: "/admin/tables/1/void",
        {"reason": "misdeal"},
        409,  # nobody plays at the stored table: no hand to void
        lambda body: body["error"]["code"] == "no_hand_in_progress",
    ),
    Call(
        "GET",
        "/admin/books",
        lambda _: "/admin/books",
        None,
        200,
        lambda body: body["balanced"] is True,
    ),
    Call(
        "GET",
        "/admin/hands/{hand_id}",
        lambda hand_id: f"/admin/hands/{hand_id}",
        None,
        200,
        lambda body: body["phh"] == "stored hand" and body["number"] == 1,
    ),
    Call(
        "GET",
        "/admin/hands",
        lambda hand_id: "/admin/hands?limit=10",
        None,
        200,
        lambda body: body["total"] == 1 and body["hands"][0]["number"] == 1,
    ),
    Call(
        "GET",
        "/admin/hands/{hand_id}/phh",
        lambda hand_id: f"/admin/hands/{hand_id}/phh",
        None,
        200,
        lambda body: body == "stored hand",
    ),
    Call(
        "GET",
        "/admin/hands/{hand_id}/events",
        lambda hand_id: f"/admin/hands/{hand_id}/events",
        None,
        200,
        lambda body: body["events"] == [] and body["number"] == 1,
    ),
    Call(  # the stored hand kept no deck: a played one's opens
        # (tests/server/process/test_deck_openings.py)
        "POST",
        "/admin/hands/{hand_id}/open-deck",
        lambda hand_id: f"/admin/hands/{hand_id}/open-deck",
        None,
        404,
        lambda body: body["error"]["code"] == "no_deck",
    ),
    Call(
        "GET",
        "/admin/tables/live",
        lambda _: "/admin/tables/live",
        None,
        200,
        lambda body: [(t["name"], t["state"]) for t in body] == [("Stored", "running")],
    ),
    Call(
        "GET",
        "/admin/players",
        lambda _: "/admin/players?prefix=AL",
        None,
        200,
        lambda body: [p["username"] for p in body["players"]] == ["alice"],
    ),
    Call(
        "GET",
        "/admin/players/{name}",
        lambda _: "/admin/players/alice",
        None,
        200,
        lambda body: body["account"]["username"] == "alice" and body["balance"] == 10_000,
    ),
    Call(
        "POST",
        "/admin/players/{name}/credit",
        lambda _: "/admin/players/alice/credit",
        {"amount": 5, "reason": "goodwill"},
        200,
        lambda body: body["balance_after"] == 10_005,
    ),
    Call(
        "POST",
        "/admin/players/{name}/debit",
        lambda _: "/admin/players/alice/debit",
        {"amount": 5, "reason": "correction"},
        200,
        lambda body: body["balance_after"] == 9_995,
    ),
    Call(
        "POST",
        "/admin/players/{name}/suspend",
        lambda _: "/admin/players/alice/suspend",
        {"reason": "abuse"},
        200,
        lambda body: body["player"] == "alice" and body["suspension"]["reason"] == "abuse",
    ),
    Call(
        "POST",
        "/admin/players/{name}/unsuspend",
        lambda _: "/admin/players/alice/unsuspend",
        {"reason": "cleared"},
        409,  # alice is not suspended (tests/server/api/test_suspend_kick.py lifts one)
        lambda body: body["error"]["code"] == "not_suspended",
    ),
    Call(
        "POST",
        "/admin/tables/{table_id}/kick",
        lambda _: "/admin/tables/1/kick",  # "Stored", the first table of the test
        {"player": "alice", "reason": "abuse"},
        409,  # nobody sits there (tests/server/api/test_suspend_kick.py kicks for real)
        lambda body: body["error"]["code"] == "not_seated",
    ),
    Call(
        "POST",
        "/admin/bots",
        lambda _: "/admin/bots",
        {"username": "loadbot-1", "chips": 500, "reason": "load test"},
        201,
        lambda body: body["account"]["role"] == "bot" and body["chips"] == 500,
    ),
    Call(
        "GET",
        "/admin/nodes",
        lambda _: "/admin/nodes",
        None,
        200,
        lambda body: (
            [(n["node"], n["tables"], n["draining"]) for n in body] == [(THIS_NODE, 1, False)]
        ),
    ),
    Call(
        "POST",
        "/admin/nodes/{node_id}/drain",
        lambda _: "/admin/nodes/elsewhere/drain",
        {"reason": "maintenance"},
        404,  # no such node (tests/server/cardroom/test_placement_nodes.py drains for real)
        lambda body: body["error"]["code"] == "unknown_node",
    ),
    Call(
        "POST",
        "/admin/nodes/{node_id}/undrain",
        lambda _: f"/admin/nodes/{THIS_NODE}/undrain",
        {"reason": "maintenance done"},
        200,
        lambda body: body["node"] == THIS_NODE and not body["draining"],
    ),
    Call(
        "POST",
        "/admin/tournaments",
        lambda _: "/admin/tournaments",
        {"name": "Sunday razz", "template": "razz-sng-8"},
        201,
        lambda body: body["status"] == "registering" and body["variant"] == "razz",
    ),
    Call(
        "PATCH",
        "/admin/tournaments/{tournament_id}",
        lambda _: "/admin/tournaments/9",
        {"name": "Renamed"},
        404,  # none made here (tests/server/tournaments/test_registration.py edits for real)
        lambda body: body["error"]["code"] == "unknown_tournament",
    ),
    Call(
        "POST",
        "/admin/tournaments/{tournament_id}/cancel",
        lambda _: "/admin/tournaments/9/cancel",
        {"reason": "no room"},
        404,  # (tests/server/tournaments/test_registration.py cancels for real)
        lambda body: body["error"]["code"] == "unknown_tournament",
    ),
    Call(
        "POST",
        "/admin/tournaments/{tournament_id}/pause",
        lambda _: "/admin/tournaments/9/pause",
        {"reason": "a dispute"},
        404,  # (tests/server/tournaments/test_operator_requests.py pauses for real)
        lambda body: body["error"]["code"] == "unknown_tournament",
    ),
    Call(
        "POST",
        "/admin/tournaments/{tournament_id}/resume",
        lambda _: "/admin/tournaments/9/resume",
        {"reason": "settled"},
        404,  # (tests/server/tournaments/test_operator_requests.py resumes for real)
        lambda body: body["error"]["code"] == "unknown_tournament",
    ),
    Call(
        "GET",
        "/admin/tournaments/{tournament_id}/requests/{request_pk}",
        lambda _: "/admin/tournaments/9/requests/1",
        None,
        404,  # (tests/server/tournaments/test_operator_requests.py reads one for real)
        lambda body: body["error"]["code"] == "unknown_request",
    ),
    Call(
        "POST",
        "/admin/tournaments/{tournament_id}/move",
        lambda _: "/admin/tournaments/9/move",
        {"player": "ann", "reason": "a seat by the window"},
        404,  # (tests/server/tournaments/test_operator_moves.py does it for real)
        lambda body: body["error"]["code"] == "unknown_tournament",
    ),
    Call(
        "POST",
        "/admin/tournaments/{tournament_id}/disqualify",
        lambda _: "/admin/tournaments/9/disqualify",
        {"player": "ann", "reason": "collusion"},
        404,  # (tests/server/tournaments/test_operator_moves.py does it for real)
        lambda body: body["error"]["code"] == "unknown_tournament",
    ),
    Call(
        "POST",
        "/admin/tournaments/{tournament_id}/add-time",
        lambda _: "/admin/tournaments/9/add-time",
        {"minutes": 5, "reason": "a long dispute"},
        404,  # (tests/server/tournaments/test_operator_moves.py does it for real)
        lambda body: body["error"]["code"] == "unknown_tournament",
    ),
    Call(
        "GET",
        "/admin/tournaments/{tournament_id}/results",
        lambda _: "/admin/tournaments/9/results",
        None,
        404,  # (tests/server/tournaments/test_operator_moves.py does it for real)
        lambda body: body["error"]["code"] == "unknown_tournament",
    ),
    Call(
        "GET",
        "/admin/audit",
        lambda _: "/admin/audit?action=table.create",
        None,
        200,
        lambda body: [e["after"]["name"] for e in body["entries"]] == ["Stored"],
    ),
]


def test_every_admin_route_has_a_real_call() -> None:
    """A new endpoint under /admin needs its ``Call`` here (the refusals check it already)."""
    from server.app import create_app

    app = create_app(Settings(database_url="sqlite+aiosqlite://"))
    assert {(c.method, c.path) for c in CALLS} == admin_routes(app)


def test_every_admin_route_is_in_the_operators_guide() -> None:
    """docs/operators.md names every endpoint (parameters by any name: ``{id}``)."""
    from server.app import create_app

    def unnamed(text: str) -> str:
        return re.sub(r"\{[^}]+\}", "{}", text)

    guide = unnamed((Path(__file__).resolve().parents[3] / "docs" / "operators.md").read_text())
    app = create_app(Settings(database_url="sqlite+aiosqlite://"))
    missing = [
        f"{method} {path}"
        for method, path in sorted(admin_routes(app))
        if f"`{method} {unnamed(path)}`" not in guide
    ]
    assert missing == [], "not in docs/operators.md"


@pytest.fixture
async def stored_hand(
    client: httpx.AsyncClient, callers: Callers, session: AsyncSession
) -> Callable[[], Awaitable[int]]:
    """A table (made over HTTP by the operator) with one stored hand; the hand's id."""

    async def make() -> int:
        made = await client.post(
            "/admin/tables", headers=callers.headers("operator"), json={"name": "Stored"}
        )
        assert made.status_code == 201, made.text
        table = await session.get(TableRecord, made.json()["id"])
        assert table is not None
        hand = HandRecord(table_id=table.id, number=1, phh="stored hand", events=[], result={})
        session.add(hand)
        await session.commit()
        return hand.id

    return make


@pytest.mark.parametrize("call", CALLS, ids=lambda c: f"{c.method} {c.path}")
@pytest.mark.parametrize("who", ["support", "operator"])
async def test_staff_use_each_admin_endpoint(
    client: httpx.AsyncClient,
    callers: Callers,
    stored_hand: Callable[[], Awaitable[int]],
    call: Call,
    who: str,
) -> None:
    hand_id = await stored_hand()
    response = await client.request(
        call.method, call.url(hand_id), headers=callers.headers(who), json=call.body
    )
    if who == "support" and call.method in WRITES:
        assert response.status_code == 403 and error_code(response) == "not_operator"
        tables = await client.get("/admin/tables", headers=callers.headers("operator"))
        assert [t["name"] for t in tables.json()] == ["Stored"]  # nothing changed
    else:
        assert response.status_code == call.status, response.text
        json = response.headers["content-type"].startswith("application/json")
        body = response.json() if json else response.text
        assert call.check(body), body


async def test_a_support_account_says_so(client: httpx.AsyncClient, callers: Callers) -> None:
    me = await client.get("/me", headers=callers.headers("support"))
    assert me.status_code == 200 and me.json()["role"] == "support"


async def test_promotion_and_demotion_take_effect_on_the_next_request(
    client: httpx.AsyncClient, settings: Settings, callers: Callers
) -> None:
    """The role is read with the token on every request: no new login needed."""
    sue = callers.headers("support")
    body = {"name": "By sue"}
    assert (await client.post("/admin/tables", headers=sue, json=body)).status_code == 403
    assert await cli.create_operator(settings, "sue", lambda: None) == (
        "sue is now an operator (was support)"
    )
    assert (await client.post("/admin/tables", headers=sue, json=body)).status_code == 201
    await cli.create_operator(settings, "sue", lambda: None, Role.SUPPORT)
    again = await client.post("/admin/tables", headers=sue, json={"name": "Again"})
    assert again.status_code == 403 and error_code(again) == "not_operator"
    assert (await client.get("/admin/tables", headers=sue)).status_code == 200
