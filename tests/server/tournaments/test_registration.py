"""Tournaments over HTTP with real tokens, on SQLite and PostgreSQL: an operator makes one
from a template or a full format, players register (paying the buy-in to the prize pool and
the fee to the house), retry, unregister, fill the field; the operator edits and cancels it
(every entry refunded); each refusal with its code and nothing paid; the books balanced."""

from __future__ import annotations

import asyncio
import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from server_helpers import bearer, error_code, operator_token, player_token
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from server.accounts import ledger
from server.db.models import AuditEntry, TournamentEntry
from server.settings import Settings

SNG = "stud-sng-9"


async def balance(client: httpx.AsyncClient, token: str) -> int:
    wallet = (await client.get("/wallet", headers=bearer(token))).json()
    value: int = wallet["balance"]
    return value


async def make_sng(
    client: httpx.AsyncClient, boss: str, name: str = "Sunday SNG", **body: Any
) -> dict[str, Any]:
    response = await client.post(
        "/admin/tournaments", json={"name": name, "template": SNG, **body}, headers=bearer(boss)
    )
    assert response.status_code == 201, response.text
    made: dict[str, Any] = response.json()
    return made


async def register(
    client: httpx.AsyncClient, tournament: int, token: str, request_id: str = "r1"
) -> httpx.Response:
    return await client.post(
        f"/tournaments/{tournament}/register",
        json={"request_id": request_id},
        headers=bearer(token),
    )


async def books_balance(session: AsyncSession) -> None:
    books = await ledger.verify_books(session)
    assert books.balanced, books.differences()
    await session.rollback()


async def test_an_entry_pays_the_buy_in_to_the_pool_and_the_fee_to_the_house_once(
    client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    boss = await operator_token(client, settings)
    sng = await make_sng(client, boss)
    assert sng["status"] == "registering" and sng["kind"] == "sit_and_go"
    assert len(sng["draw_commitment"]) == 64 and sng["entries"] == []
    cost = sng["buy_in"] + sng["fee"]
    assert sng["buy_in"] > 0 and sng["fee"] > 0
    alice = await player_token(client, "alice")
    before = await balance(client, alice)
    revenue = await ledger.balance(session, wallet=ledger.REVENUE)
    await session.rollback()

    first = await register(client, sng["id"], alice)
    assert first.status_code == 201, first.text
    assert first.json() == {
        "tournament_id": sng["id"],
        "status": "registered",
        "number": 1,
        "buy_in": sng["buy_in"],
        "fee": sng["fee"],
        "created": True,
    }
    # The same request again (a client that lost the answer): the entry it made, paid once.
    again = await register(client, sng["id"], alice)
    assert again.status_code == 200 and again.json() == {**first.json(), "created": False}
    assert await balance(client, alice) == before - cost
    assert await ledger.balance(session, wallet=ledger.tournament_pool(sng["id"])) == sng["buy_in"]
    assert await ledger.balance(session, wallet=ledger.REVENUE) == revenue + sng["fee"]
    await session.rollback()
    # Another request while registered: refused, nothing paid.
    other = await register(client, sng["id"], alice, request_id="r2")
    assert other.status_code == 409 and error_code(other) == "already_registered"
    assert await balance(client, alice) == before - cost

    details = (await client.get(f"/tournaments/{sng['id']}")).json()
    assert details["entrants"] == 1 and details["prize_pool"] == sng["buy_in"]
    assert [(e["player"], e["status"]) for e in details["entries"]] == [("alice", "registered")]
    assert details["payouts"] == []  # one entrant: nothing to pay yet
    await books_balance(session)


async def test_concurrent_retries_of_one_registration_pay_once(
    client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    boss = await operator_token(client, settings)
    sng = await make_sng(client, boss)
    bob = await player_token(client, "bob")
    before = await balance(client, bob)
    answers = await asyncio.gather(*(register(client, sng["id"], bob) for _ in range(4)))
    assert sorted(answer.status_code for answer in answers) == [200, 200, 200, 201]
    assert await balance(client, bob) == before - sng["buy_in"] - sng["fee"]
    count = await session.scalar(select(func.count()).select_from(TournamentEntry))
    assert count == 1
    await books_balance(session)


async def test_unregistering_refunds_exactly_and_a_player_may_enter_again(
    client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    boss = await operator_token(client, settings)
    sng = await make_sng(client, boss)
    cat = await player_token(client, "cat")
    before = await balance(client, cat)
    assert (await register(client, sng["id"], cat)).status_code == 201
    gone = await client.delete(f"/tournaments/{sng['id']}/register", headers=bearer(cat))
    assert gone.status_code == 200 and gone.json()["status"] == "unregistered"
    assert await balance(client, cat) == before
    assert await ledger.balance(session, wallet=ledger.tournament_pool(sng["id"])) == 0
    await session.rollback()
    again = await client.delete(f"/tournaments/{sng['id']}/register", headers=bearer(cat))
    assert again.status_code == 409 and error_code(again) == "not_registered"
    # The old request id finds the old entry; a new one enters again.
    old = await register(client, sng["id"], cat)
    assert old.status_code == 200 and old.json()["status"] == "unregistered"
    new = await register(client, sng["id"], cat, request_id="r2")
    assert new.status_code == 201 and new.json()["number"] == 2
    assert await balance(client, cat) == before - sng["buy_in"] - sng["fee"]
    await books_balance(session)


async def test_a_full_field_refuses_the_next_player_and_takes_nothing(
    client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    boss = await operator_token(client, settings)
    sng = await make_sng(client, boss)
    seats = sng["max_entrants"]
    for n in range(seats):
        token = await player_token(client, f"player{n}")
        assert (await register(client, sng["id"], token)).status_code == 201
    late = await player_token(client, "late")
    before = await balance(client, late)
    refused = await register(client, sng["id"], late)
    assert refused.status_code == 409 and error_code(refused) == "tournament_full"
    assert await balance(client, late) == before
    details = (await client.get(f"/tournaments/{sng['id']}")).json()
    assert details["entrants"] == seats and details["prize_pool"] == seats * sng["buy_in"]
    assert sum(details["payouts"]) == details["prize_pool"]
    await books_balance(session)


async def test_players_racing_for_the_last_seat_get_one_entry_between_them(
    client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    boss = await operator_token(client, settings)
    sng = await make_sng(client, boss)
    for n in range(sng["max_entrants"] - 1):
        token = await player_token(client, f"early{n}")
        assert (await register(client, sng["id"], token)).status_code == 201
    racers = [await player_token(client, f"racer{n}") for n in range(4)]
    answers = await asyncio.gather(*(register(client, sng["id"], token) for token in racers))
    assert sorted(answer.status_code for answer in answers) == [201, 409, 409, 409]
    assert {error_code(a) for a in answers if a.status_code == 409} == {"tournament_full"}
    paid = [await balance(client, token) for token in racers]
    assert sorted(paid) == [10_000 - sng["buy_in"] - sng["fee"]] + [10_000] * 3
    details = (await client.get(f"/tournaments/{sng['id']}")).json()
    assert details["entrants"] == sng["max_entrants"]
    await books_balance(session)


async def test_a_wallet_short_of_the_buy_in_and_fee_is_refused_with_nothing_taken(
    client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    boss = await operator_token(client, settings)
    sng = await make_sng(client, boss)
    dan = await player_token(client, "dan")
    me = (await client.get("/me", headers=bearer(dan))).json()
    # Leave dan one chip short of the entry: enough for the buy-in, not for the fee too.
    short = await balance(client, dan) - (sng["buy_in"] + sng["fee"] - 1)
    await ledger.adjust(session, account_id=me["id"], amount=-short)
    await session.commit()
    refused = await register(client, sng["id"], dan)
    assert refused.status_code == 409 and error_code(refused) == "insufficient_funds"
    assert await balance(client, dan) == sng["buy_in"] + sng["fee"] - 1
    assert await session.scalar(select(func.count()).select_from(TournamentEntry)) == 0
    await books_balance(session)


async def test_cancelling_refunds_every_entry_and_closes_registration(
    client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    boss = await operator_token(client, settings)
    sng = await make_sng(client, boss)
    players = {name: await player_token(client, name) for name in ("ann", "ben", "cyd")}
    start = {name: await balance(client, token) for name, token in players.items()}
    for token in players.values():
        assert (await register(client, sng["id"], token)).status_code == 201
    # ben leaves first: his refund is not paid twice by the cancel.
    await client.delete(f"/tournaments/{sng['id']}/register", headers=bearer(players["ben"]))
    cancelled = await client.post(
        f"/admin/tournaments/{sng['id']}/cancel",
        json={"reason": "the room closes early"},
        headers=bearer(boss),
    )
    assert cancelled.status_code == 200, cancelled.text
    body = cancelled.json()
    assert body["status"] == "cancelled" and body["cancelled_reason"] == "the room closes early"
    assert {e["player"]: e["status"] for e in body["entries"]} == {
        "ann": "refunded",
        "ben": "unregistered",
        "cyd": "refunded",
    }
    assert {name: await balance(client, token) for name, token in players.items()} == start
    assert await ledger.balance(session, wallet=ledger.tournament_pool(sng["id"])) == 0
    await session.rollback()
    closed = await register(client, sng["id"], players["ann"], request_id="after")
    assert closed.status_code == 409 and error_code(closed) == "registration_closed"
    over = await client.delete(f"/tournaments/{sng['id']}/register", headers=bearer(players["cyd"]))
    assert over.status_code == 409 and error_code(over) == "tournament_over"
    twice = await client.post(
        f"/admin/tournaments/{sng['id']}/cancel", json={"reason": "again"}, headers=bearer(boss)
    )
    assert twice.status_code == 409 and error_code(twice) == "tournament_over"
    listed = (await client.get("/tournaments")).json()
    assert sng["id"] not in [t["id"] for t in listed]  # the default list: open ones only
    cancelled_list = (await client.get("/tournaments?status=cancelled")).json()
    assert [t["id"] for t in cancelled_list] == [sng["id"]]
    actions = (
        await session.scalars(
            select(AuditEntry.action)
            .where(AuditEntry.target_kind == "tournament")
            .order_by(AuditEntry.id)
        )
    ).all()
    assert actions == ["tournament.create", "tournament.cancel"]
    await books_balance(session)


async def test_an_operator_edits_before_the_start_but_not_the_price_once_paid(
    client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    boss = await operator_token(client, settings)
    templates = (await client.get("/tournaments/templates")).json()
    spec = copy.deepcopy(templates["stud-mtt-regular"])
    starts = datetime.now(UTC) + timedelta(hours=2)
    made = await client.post(
        "/admin/tournaments",
        json={"name": "Big Sunday", "spec": spec, "starts_at": starts.isoformat()},
        headers=bearer(boss),
    )
    assert made.status_code == 201, made.text
    mtt = made.json()
    assert mtt["kind"] == "scheduled" and mtt["template"] is None
    later = starts + timedelta(hours=1)
    edited = await client.patch(
        f"/admin/tournaments/{mtt['id']}",
        json={"name": "Bigger Sunday", "starts_at": later.isoformat(), "reason": "a later start"},
        headers=bearer(boss),
    )
    assert edited.status_code == 200, edited.text
    assert edited.json()["name"] == "Bigger Sunday"
    assert datetime.fromisoformat(edited.json()["starts_at"]) == later
    eve = await player_token(client, "eve")
    assert (await register(client, mtt["id"], eve)).status_code == 201
    dearer = {**spec, "buy_in": spec["buy_in"] * 2}
    refused = await client.patch(
        f"/admin/tournaments/{mtt['id']}", json={"spec": dearer}, headers=bearer(boss)
    )
    assert refused.status_code == 409 and error_code(refused) == "tournament_has_entries"
    assert (await client.get(f"/tournaments/{mtt['id']}")).json()["buy_in"] == spec["buy_in"]
    # The same tournament, listed by its filters.
    assert [t["id"] for t in (await client.get("/tournaments?kind=scheduled")).json()] == [
        mtt["id"]
    ]
    assert (await client.get("/tournaments?kind=sit_and_go")).json() == []
    assert (await client.get(f"/tournaments?buy_in_max={spec['buy_in'] - 1}")).json() == []
    assert (await client.get("/tournaments?game=razz")).json() == []
    await books_balance(session)


async def test_bad_formats_and_requests_are_refused_with_their_codes(
    client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    boss = await operator_token(client, settings)
    templates = (await client.get("/tournaments/templates")).json()
    spec = copy.deepcopy(templates[SNG])
    levels = [entry for entry in spec["structure"]["entries"] if "bring_in" in entry]
    levels[1]["bring_in"] = levels[1]["small_bet"] + 1

    async def create(body: dict[str, Any]) -> httpx.Response:
        return await client.post("/admin/tournaments", json=body, headers=bearer(boss))

    bad = await create({"name": "x", "spec": spec})
    assert bad.status_code == 400 and error_code(bad) == "bad_structure"
    assert "bring_in" in bad.json()["error"]["message"]
    both = await create({"name": "x", "template": SNG, "spec": templates[SNG]})
    assert both.status_code == 400 and error_code(both) == "bad_request"
    unknown = await create({"name": "x", "template": "no-such-format"})
    assert unknown.status_code == 400 and error_code(unknown) == "bad_request"
    unscheduled = await create({"name": "x", "template": "stud-mtt-turbo"})
    assert unscheduled.status_code == 400 and error_code(unscheduled) == "bad_request"
    past = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    late = await create({"name": "x", "template": "stud-mtt-turbo", "starts_at": past})
    assert late.status_code == 400 and error_code(late) == "bad_request"
    await make_sng(client, boss, name="taken")
    taken = await create({"name": "taken", "template": SNG})
    assert taken.status_code == 409 and error_code(taken) == "tournament_name_taken"
    nobody = await client.get("/tournaments/999")
    assert nobody.status_code == 404 and error_code(nobody) == "unknown_tournament"
    alice = await player_token(client, "alice")
    not_staff = await client.post(
        "/admin/tournaments", json={"name": "mine", "template": SNG}, headers=bearer(alice)
    )
    assert not_staff.status_code == 403 and error_code(not_staff) == "not_operator"
    before = await balance(client, alice)
    missing = await register(client, 999, alice)
    assert missing.status_code == 404 and error_code(missing) == "unknown_tournament"
    unsigned = await client.post("/tournaments/1/register", json={"request_id": "r"})
    assert unsigned.status_code == 401
    odd = await client.post(
        "/tournaments/1/register", json={"request_id": "no spaces"}, headers=bearer(alice)
    )
    assert odd.status_code == 400 and error_code(odd) == "bad_request"
    assert await balance(client, alice) == before
    await books_balance(session)


async def test_a_suspended_account_cannot_register(
    client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    boss = await operator_token(client, settings)
    sng = await make_sng(client, boss)
    mal = await player_token(client, "mal")
    suspended = await client.post(
        "/admin/players/mal/suspend", json={"reason": "collusion"}, headers=bearer(boss)
    )
    assert suspended.status_code == 200, suspended.text
    refused = await register(client, sng["id"], mal)
    assert refused.status_code == 401 and error_code(refused) in {
        "account_suspended",
        "token_revoked",
    }
    assert await session.scalar(select(func.count()).select_from(TournamentEntry)) == 0
