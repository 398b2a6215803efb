"""The back office's players over HTTP with real tokens: search, one player, credit and debit
(each refusal changing nothing), and the books balancing after them (``stud-server audit``)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from server_helpers import PASSWORD, bearer, error_code, login, operator_token, register
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from server import cli
from server.accounts import ledger
from server.db.models import AuditEntry, HandPlayer, HandRecord, Role, SeatRecord
from server.settings import Settings

START = 10_000  # the starting bankroll of the tests' settings


@pytest.fixture
async def staff(client: httpx.AsyncClient, settings: Settings) -> dict[str, dict[str, str]]:
    """Headers of an operator (boss), a support account (sue) and a player (alice)."""
    assert (await register(client, "alice")).status_code == 201
    await cli.create_operator(settings, "sue", lambda: PASSWORD, Role.SUPPORT)
    return {
        "operator": bearer(await operator_token(client, settings)),
        "support": bearer(await login(client, "sue")),
        "player": bearer(await login(client, "alice")),
    }


async def balance(client: httpx.AsyncClient, headers: dict[str, str], name: str) -> int:
    response = await client.get(f"/admin/players/{name}", headers=headers)
    assert response.status_code == 200, response.text
    value: int = response.json()["balance"]
    return value


async def audit_count(session: AsyncSession) -> int:
    return int(await session.scalar(select(func.count()).select_from(AuditEntry)) or 0)


# ---------------------------------------------------------------------- search


async def test_search_by_prefix_whatever_the_case_paged(
    client: httpx.AsyncClient, staff: dict[str, dict[str, str]]
) -> None:
    for name in ("Alan", "alba", "Bert", "al_x"):
        assert (await register(client, name)).status_code == 201
    for who in ("support", "operator"):
        found = await client.get("/admin/players?prefix=AL", headers=staff[who])
        assert found.status_code == 200, found.text
        body = found.json()
        assert [p["username"] for p in body["players"]] == ["al_x", "Alan", "alba", "alice"]
        assert body["total"] == 4 and body["players"][0]["role"] == "player"
    page = (
        await client.get("/admin/players?prefix=al&limit=2&offset=2", headers=staff["support"])
    ).json()
    assert [p["username"] for p in page["players"]] == ["alba", "alice"]
    assert (page["total"], page["limit"], page["offset"]) == (4, 2, 2)
    # _ and % are letters in a prefix, not wildcards.
    literal = (await client.get("/admin/players?prefix=al_", headers=staff["support"])).json()
    assert [p["username"] for p in literal["players"]] == ["al_x"]
    everyone = (await client.get("/admin/players", headers=staff["support"])).json()
    assert everyone["total"] == 7  # and alice, boss, sue


@pytest.mark.parametrize("query", ["limit=0", "limit=201", "offset=-1", "limit=x"])
async def test_search_refuses_bad_paging(
    client: httpx.AsyncClient, staff: dict[str, dict[str, str]], query: str
) -> None:
    response = await client.get(f"/admin/players?{query}", headers=staff["support"])
    assert response.status_code == 400 and error_code(response) == "bad_request"


# ---------------------------------------------------------------------- one player


async def test_one_player_account_wallet_ledger_seats_and_hands(
    client: httpx.AsyncClient, staff: dict[str, dict[str, str]], session: AsyncSession
) -> None:
    table = await client.post("/admin/tables", headers=staff["operator"], json={"name": "T"})
    table_id = table.json()["id"]
    alice = (await client.get("/me", headers=staff["player"])).json()["id"]
    # A seat with its chips moved to the pool, and two recorded hands that net to zero.
    await ledger.buy_in(session, account_id=alice, table_id=table_id, amount=300)
    session.add(SeatRecord(table_id=table_id, seat=2, account_id=alice, chips=300))
    for number in (1, 2):
        hand = HandRecord(table_id=table_id, number=number, phh="", events=[], result={})
        session.add(hand)
        await session.flush()
        session.add(HandPlayer(hand_id=hand.id, account_id=alice, seat=2, starting=300, ending=300))
    await session.commit()

    for who in ("support", "operator"):
        response = await client.get("/admin/players/ALICE", headers=staff[who])
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["account"]["username"] == "alice" and body["account"]["role"] == "player"
        assert body["balance"] == START - 300
        assert [(e["kind"], e["amount"]) for e in body["entries"]] == [
            ("buy_in", -300),
            ("grant", START),
        ]
        assert [(s["table_id"], s["table_name"], s["seat"], s["chips"]) for s in body["seats"]] == [
            (table_id, "T", 2, 300)
        ]
        assert [h["number"] for h in body["hands"]] == [2, 1]
        assert body["next_entries_before"] is None and body["next_hands_before"] is None

    first = (
        await client.get("/admin/players/alice?entries=1&hands_limit=1", headers=staff["support"])
    ).json()
    assert [e["kind"] for e in first["entries"]] == ["buy_in"]
    assert [h["number"] for h in first["hands"]] == [2]
    older = (
        await client.get(
            f"/admin/players/alice?entries=1&entries_before={first['next_entries_before']}"
            f"&hands_limit=1&hands_before={first['next_hands_before']}",
            headers=staff["support"],
        )
    ).json()
    assert [e["kind"] for e in older["entries"]] == ["grant"]
    assert [h["number"] for h in older["hands"]] == [1]
    assert (await client.get("/admin/books", headers=staff["support"])).json()["balanced"]


async def test_an_unknown_player_is_refused(
    client: httpx.AsyncClient, staff: dict[str, dict[str, str]]
) -> None:
    for method, path, body in (
        ("GET", "/admin/players/nobody", None),
        ("POST", "/admin/players/nobody/credit", {"amount": 5, "reason": "x"}),
        ("POST", "/admin/players/nobody/debit", {"amount": 5, "reason": "x"}),
    ):
        response = await client.request(method, path, headers=staff["operator"], json=body)
        assert response.status_code == 404, (path, response.text)
        assert error_code(response) == "unknown_player"


# ---------------------------------------------------------------------- credit and debit


async def test_credit_and_debit_move_chips_against_the_house_with_an_audit_entry(
    client: httpx.AsyncClient,
    staff: dict[str, dict[str, str]],
    session: AsyncSession,
    settings: Settings,
) -> None:
    op = staff["operator"]
    credit = await client.post(
        "/admin/players/alice/credit", headers=op, json={"amount": 250, "reason": "  goodwill "}
    )
    assert credit.status_code == 200, credit.text
    done = credit.json()
    assert (done["player"], done["amount"]) == ("alice", 250)
    assert (done["balance_before"], done["balance_after"]) == (START, START + 250)
    debit = await client.post(
        "/admin/players/Alice/debit", headers=op, json={"amount": 100, "reason": "chargeback"}
    )
    assert debit.status_code == 200, debit.text
    assert (debit.json()["amount"], debit.json()["balance_after"]) == (-100, START + 150)
    assert await balance(client, op, "alice") == START + 150

    entries = (await client.get("/admin/players/alice?entries=2", headers=op)).json()["entries"]
    assert [(e["kind"], e["amount"], e["counterparty"], e["reference"]) for e in entries] == [
        ("adjustment", -100, "house:bankroll", "chargeback"),
        ("adjustment", 250, "house:bankroll", "goodwill"),
    ]
    log = (await client.get("/admin/audit?target_kind=player", headers=op)).json()["entries"]
    assert [
        (e["actor"], e["action"], e["target_id"], e["before"], e["after"]["balance"], e["reason"])
        for e in log
    ] == [
        ("boss", "player.debit", "alice", {"balance": START + 250}, START + 150, "chargeback"),
        ("boss", "player.credit", "alice", {"balance": START}, START + 250, "goodwill"),
    ]
    assert log[0]["after"]["ledger_entry"] == debit.json()["ledger_entry"]
    assert log[0]["id"] == debit.json()["audit_id"]

    # The books balance, as `stud-server audit` checks them.
    status, lines = await cli.audit(settings)
    assert status == 0, lines
    books = (await client.get("/admin/books", headers=op)).json()
    assert books["balanced"] is True and books["reclaimed"] == 100


async def test_a_debit_past_the_balance_changes_nothing(
    client: httpx.AsyncClient,
    staff: dict[str, dict[str, str]],
    session: AsyncSession,
    settings: Settings,
) -> None:
    op = staff["operator"]
    logged = await audit_count(session)
    response = await client.post(
        "/admin/players/alice/debit", headers=op, json={"amount": START + 1, "reason": "too much"}
    )
    assert response.status_code == 409 and error_code(response) == "insufficient_funds"
    assert await balance(client, op, "alice") == START
    assert await audit_count(session) == logged
    entries = (await client.get("/admin/players/alice", headers=op)).json()["entries"]
    assert [e["kind"] for e in entries] == ["grant"]
    # The whole balance, and not a chip more, may go.
    emptied = await client.post(
        "/admin/players/alice/debit", headers=op, json={"amount": START, "reason": "closed"}
    )
    assert emptied.status_code == 200 and emptied.json()["balance_after"] == 0
    assert (await cli.audit(settings))[0] == 0


@pytest.mark.parametrize(
    "body",
    [
        {"amount": 0, "reason": "x"},
        {"amount": -5, "reason": "x"},
        {"amount": 1.5, "reason": "x"},
        {"amount": "5", "reason": "x"},
        {"amount": True, "reason": "x"},
        {"amount": 5},
        {"amount": 5, "reason": ""},
        {"amount": 5, "reason": "   "},
        {"amount": 5, "reason": "x" * 501},
        {"reason": "x"},
        {"amount": 5, "reason": "x", "extra": 1},
    ],
)
@pytest.mark.parametrize("direction", ["credit", "debit"])
async def test_bad_values_are_refused_and_change_nothing(
    client: httpx.AsyncClient,
    staff: dict[str, dict[str, str]],
    session: AsyncSession,
    body: dict[str, Any],
    direction: str,
) -> None:
    op = staff["operator"]
    response = await client.post(f"/admin/players/alice/{direction}", headers=op, json=body)
    assert response.status_code == 400, response.text
    assert error_code(response) == "bad_request"
    assert await balance(client, op, "alice") == START
    assert await audit_count(session) == 0


@pytest.mark.parametrize("direction", ["credit", "debit"])
async def test_only_an_operator_credits_or_debits(
    client: httpx.AsyncClient,
    staff: dict[str, dict[str, str]],
    session: AsyncSession,
    direction: str,
) -> None:
    body = {"amount": 5, "reason": "x"}
    url = f"/admin/players/alice/{direction}"
    for who in ("support", "player"):
        response = await client.post(url, headers=staff[who], json=body)
        assert response.status_code == 403 and error_code(response) == "not_operator", who
    anonymous = await client.post(url, json=body)
    assert anonymous.status_code == 401 and error_code(anonymous) == "not_authenticated"
    assert await balance(client, staff["operator"], "alice") == START
    assert await audit_count(session) == 0


async def test_players_reads_refuse_players_and_anonymous_callers(
    client: httpx.AsyncClient, staff: dict[str, dict[str, str]]
) -> None:
    for url in ("/admin/players", "/admin/players/alice", "/admin/audit"):
        mine = await client.get(url, headers=staff["player"])
        assert mine.status_code == 403 and error_code(mine) == "not_operator"
        anonymous = await client.get(url)
        assert anonymous.status_code == 401 and error_code(anonymous) == "not_authenticated"
