"""``POST /admin/bots``: an operator makes bot accounts beyond one address's registration
limits, each funded by the house (a ledger grant, the books balanced) and audited, played
through its token alone (no password opens it); refusals change nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from server_helpers import FAST_HASHING, PASSWORD, bearer, error_code, login, register
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from server import cli
from server.accounts import ledger
from server.db.models import Account, AuditEntry, Role
from server.settings import Settings


@pytest.fixture
def settings(database_url: str) -> Settings:
    """One registration a minute from an address, and no starting grant: a person's limits
    that an operator's bots must not meet."""
    return Settings(
        database_url=database_url,
        starting_bankroll=10_000,
        **{
            **FAST_HASHING,
            "register_per_address_per_minute": 1,
            "starting_grants_per_address": 0,
        },
    )


@pytest.fixture
async def staff(client: httpx.AsyncClient, settings: Settings) -> dict[str, dict[str, str]]:
    await cli.create_operator(settings, "boss", lambda: PASSWORD)
    await cli.create_operator(settings, "sue", lambda: PASSWORD, Role.SUPPORT)
    assert (await register(client, "alice")).status_code == 201  # the address's one
    return {
        "operator": bearer(await login(client, "boss")),
        "support": bearer(await login(client, "sue")),
        "player": bearer(await login(client, "alice")),
    }


async def counts(session: AsyncSession) -> tuple[int, int]:
    accounts = await session.scalar(select(func.count()).select_from(Account))
    entries = await session.scalar(select(func.count()).select_from(AuditEntry))
    return int(accounts or 0), int(entries or 0)


def bot(name: str, chips: Any = 2_000, reason: str = "load test") -> dict[str, Any]:
    return {"username": name, "chips": chips, "reason": reason}


async def test_an_operator_makes_funded_audited_bots_past_the_address_limits(
    client: httpx.AsyncClient, staff: dict[str, dict[str, str]], session: AsyncSession
) -> None:
    # A person from this address can register no more.
    assert (await register(client, "bob")).status_code == 429
    for n in range(1, 6):
        made = await client.post("/admin/bots", json=bot(f"bot-{n}"), headers=staff["operator"])
        assert made.status_code == 201, made.text
        body = made.json()
        assert body["account"]["username"] == f"bot-{n}" and body["account"]["role"] == "bot"
        assert body["chips"] == 2_000 and body["token_type"] == "bearer"
        # The token plays the bot: its wallet holds what the house granted.
        wallet = await client.get("/wallet", headers=bearer(body["access_token"]))
        assert wallet.status_code == 200 and wallet.json()["balance"] == 2_000
        me = (await client.get("/me", headers=bearer(body["access_token"]))).json()
        assert me["username"] == f"bot-{n}" and me["role"] == "bot"

    # The grant is a ledger movement from the house; the books balance.
    player = (await client.get("/admin/players/bot-1", headers=staff["support"])).json()
    assert [(e["kind"], e["amount"], e["counterparty"]) for e in player["entries"]] == [
        ("grant", 2_000, ledger.HOUSE)
    ]
    assert player["entries"][0]["reference"] == "bot funded by boss"
    books = (await client.get("/admin/books", headers=staff["support"])).json()
    assert books["balanced"] is True

    # Each is one audit entry, naming the operator and the reason.
    audit = (await client.get("/admin/audit?action=bot.create", headers=staff["support"])).json()[
        "entries"
    ]
    assert [e["target_id"] for e in audit] == [f"bot-{n}" for n in range(5, 0, -1)]
    first = audit[-1]
    assert (first["actor"], first["target_kind"], first["reason"]) == (
        "boss",
        "player",
        "load test",
    )
    assert first["before"] is None
    assert first["after"]["balance"] == 2_000 and first["after"]["role"] == "bot"
    assert first["after"]["ledger_entry"] == player["entries"][0]["id"]

    # No password opens a bot made this way: the empty one, a guess, the "hash" itself.
    for guess in ("", PASSWORD, "!operator-made bot: no password"):
        refused = await client.post("/auth/login", json={"username": "bot-1", "password": guess})
        assert refused.status_code == 401 and error_code(refused) == "bad_credentials"


async def test_a_bot_without_chips_has_no_ledger_entry(
    client: httpx.AsyncClient, staff: dict[str, dict[str, str]]
) -> None:
    made = await client.post("/admin/bots", json=bot("bot-0", chips=0), headers=staff["operator"])
    assert made.status_code == 201, made.text
    assert made.json()["chips"] == 0 and made.json()["ledger_entry"] is None
    player = (await client.get("/admin/players/bot-0", headers=staff["support"])).json()
    assert player["balance"] == 0 and player["entries"] == []


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (bot("ALICE"), 409, "username_taken"),  # any case
        (bot("house-razz-9"), 400, "reserved_username"),
        (bot("no spaces"), 400, "bad_request"),
        (bot("b"), 400, "bad_request"),
        (bot("bot-x", chips=-1), 400, "bad_request"),
        (bot("bot-x", chips=10**9 + 1), 400, "bad_request"),
        (bot("bot-x", chips="500"), 400, "bad_request"),
        (bot("bot-x", chips=True), 400, "bad_request"),
        (bot("bot-x", reason="  "), 400, "bad_request"),
        ({"username": "bot-x", "chips": 5}, 400, "bad_request"),  # no reason
        ({**bot("bot-x"), "password": "x" * 12}, 400, "bad_request"),  # no such field
    ],
)
async def test_refusals_make_nothing(
    client: httpx.AsyncClient,
    staff: dict[str, dict[str, str]],
    session: AsyncSession,
    body: dict[str, Any],
    status: int,
    code: str,
) -> None:
    before = await counts(session)
    refused = await client.post("/admin/bots", json=body, headers=staff["operator"])
    assert (refused.status_code, error_code(refused)) == (status, code), refused.text
    assert await counts(session) == before


@pytest.mark.parametrize(("who", "status"), [("support", 403), ("player", 403), (None, 401)])
async def test_only_operators_make_bots(
    client: httpx.AsyncClient,
    staff: dict[str, dict[str, str]],
    session: AsyncSession,
    who: str | None,
    status: int,
) -> None:
    before = await counts(session)
    refused = await client.post("/admin/bots", json=bot("bot-x"), headers=staff[who] if who else {})
    assert refused.status_code == status
    assert await counts(session) == before
