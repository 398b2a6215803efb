from __future__ import annotations

import httpx
from server_helpers import bearer, error_code, player_token
from sqlalchemy.ext.asyncio import AsyncSession

from server.accounts import ledger
from server.db.models import Account, WalletKind


async def test_wallet_shows_balance_and_latest_movements(
    client: httpx.AsyncClient, session: AsyncSession
) -> None:
    token = await player_token(client, "alice")
    me = (await client.get("/me", headers=bearer(token))).json()
    pool = ledger.table_pool(7)
    await ledger.open_wallet(session, name=pool, kind=WalletKind.TABLE)
    await ledger.buy_in(session, account_id=me["id"], table_id=7, amount=300)
    await ledger.cash_out(session, account_id=me["id"], table_id=7, amount=120)
    await session.commit()

    wallet = (await client.get("/wallet", headers=bearer(token))).json()
    assert wallet["balance"] == 10_000 - 300 + 120
    assert [(e["kind"], e["amount"], e["counterparty"]) for e in wallet["entries"]] == [
        ("cash_out", 120, pool),
        ("buy_in", -300, pool),
        ("grant", 10_000, ledger.HOUSE),
    ]
    assert wallet["next_before"] is None


async def test_wallet_movements_page_newest_first(
    client: httpx.AsyncClient, session: AsyncSession
) -> None:
    token = await player_token(client, "alice")
    me = (await client.get("/me", headers=bearer(token))).json()
    pool = ledger.table_pool(7)
    await ledger.open_wallet(session, name=pool, kind=WalletKind.TABLE)
    for amount in (10, 20, 30):
        await ledger.buy_in(session, account_id=me["id"], table_id=7, amount=amount)
    await session.commit()
    seen: list[int] = []
    pages = 0
    url = "/wallet?limit=2"
    while True:
        page = (await client.get(url, headers=bearer(token))).json()
        pages += 1
        assert page["balance"] == 10_000 - 60
        seen += [e["amount"] for e in page["entries"]]
        if page["next_before"] is None:
            break
        assert page["next_before"] == page["entries"][-1]["id"]
        url = f"/wallet?limit=2&before={page['next_before']}"
    assert seen == [-30, -20, -10, 10_000] and pages == 3  # two full pages, one empty
    ids = [e["id"] for e in (await client.get("/wallet", headers=bearer(token))).json()["entries"]]
    assert ids == sorted(ids, reverse=True)
    # An id older than every movement: an empty last page.
    empty = (await client.get(f"/wallet?before={min(ids)}", headers=bearer(token))).json()
    assert empty["entries"] == [] and empty["next_before"] is None


async def test_wallet_needs_a_login_and_a_sane_limit(client: httpx.AsyncClient) -> None:
    assert error_code(await client.get("/wallet")) == "not_authenticated"
    token = await player_token(client, "alice")
    response = await client.get("/wallet?limit=0", headers=bearer(token))
    assert response.status_code == 400 and error_code(response) == "bad_request"
    for bad in ("before=0", "before=x", "limit=201"):
        response = await client.get(f"/wallet?{bad}", headers=bearer(token))
        assert response.status_code == 400 and error_code(response) == "bad_request", bad


async def test_wallets_are_private(client: httpx.AsyncClient, session: AsyncSession) -> None:
    alice = await player_token(client, "alice")
    bob = await player_token(client, "bob")
    bob_id = (await client.get("/me", headers=bearer(bob))).json()["id"]
    bob_account = await session.get(Account, bob_id)
    assert bob_account is not None
    await ledger.open_wallet(session, name=ledger.table_pool(1), kind=WalletKind.TABLE)
    await ledger.buy_in(session, account_id=bob_id, table_id=1, amount=50)
    await session.commit()
    assert (await client.get("/wallet", headers=bearer(alice))).json()["balance"] == 10_000
    assert (await client.get("/wallet", headers=bearer(bob))).json()["balance"] == 9_950
