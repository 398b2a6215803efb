"""Deals at the final table over HTTP, on SQLite and PostgreSQL: players of a running
sit-and-go propose a deal, see its amounts once the hand in play ends (no hand dealt while it
stands), and accept it (each paid at once, the winner later taking the amount played for:
the pool paid out exactly, the books balanced) or decline it, or let it run out of time
(withdrawn, play goes on); each refusal answers its code with nothing changed."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from play import calling
from server_helpers import bearer, error_code, operator_token, player_token
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from test_director import act_at_tables, play_out, quick_sng, settings, tournament_tables
from test_operator_requests import hands_dealt, in_play

from engine.actions import LegalActions
from engine.tournament import offers
from engine.tournament.deals import chip_chop, icm
from server.accounts import ledger
from server.cardroom.supervisor import Cardroom
from server.db.models import LedgerEntry, TournamentFact, TournamentRecord
from server.settings import Settings
from server.store.tournament_books import check_tournament
from server.tournaments.directors import TournamentDirectors
from server.verify import download_tournament, verify_tournament

__all__ = ["settings"]  # the fixture, shared with the director's tests

BANKROLL = 10_000


def passive(legal: LegalActions, rng: random.Random) -> tuple[str, int | None]:
    """Fold whenever allowed, else check or call: the bring-in takes the antes, nobody is out."""
    if "fold" in legal.kinds:
        return "fold", None
    return calling(legal, rng)


async def act_until(
    cardroom: Cardroom,
    session: AsyncSession,
    tournament_id: int,
    done: Callable[[], Awaitable[bool]],
    *,
    timeout: float = 90.0,
) -> None:
    """Act passively for whoever is to act at the tournament's tables until ``done()``."""
    rng = random.Random(tournament_id)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    actions = 0
    while not await done():
        assert loop.time() < deadline, "never got there"
        sent, _ = await act_at_tables(
            cardroom,
            session,
            tournament_id,
            lambda _, legal: passive(legal, rng),
            prefix="p",
            start=actions,
        )
        actions += sent
        await asyncio.sleep(0.02)


async def sit_and_go(
    client: httpx.AsyncClient, settings: Settings, names: list[str], *, seats: int = 8
) -> tuple[int, dict[str, str], dict[str, Any]]:
    """A quick sit-and-go of ``names``, registered and started: its id, the players' tokens,
    its details."""
    boss = await operator_token(client, settings)
    templates = (await client.get("/tournaments/templates")).json()
    made = await client.post(
        "/admin/tournaments",
        json={"name": f"Deal {names[0]}", "spec": quick_sng(templates, len(names), seats)},
        headers=bearer(boss),
    )
    assert made.status_code == 201, made.text
    tournament_id: int = made.json()["id"]
    tokens = {name: await player_token(client, name) for name in names}
    early = await client.post(
        f"/tournaments/{tournament_id}/deal",
        json={"method": "icm", "request_id": "early"},
        headers=bearer(tokens[names[0]]),
    )
    assert early.status_code == 409 and error_code(early) == "tournament_not_started"
    for name, token in tokens.items():
        answer = await client.post(
            f"/tournaments/{tournament_id}/register",
            json={"request_id": name},
            headers=bearer(token),
        )
        assert answer.status_code == 201, answer.text
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while (details := (await client.get(f"/tournaments/{tournament_id}")).json())[
        "status"
    ] != "running":
        assert loop.time() < deadline, "the sit-and-go did not start"
        await asyncio.sleep(0.05)
    return tournament_id, tokens, details


async def journal(session: AsyncSession, tournament_id: int) -> list[tuple[str, dict[str, Any]]]:
    rows = await session.execute(
        select(TournamentFact.kind, TournamentFact.data)
        .where(TournamentFact.tournament_id == tournament_id)
        .order_by(TournamentFact.seq)
    )
    found = [(kind, data) for kind, data in rows.all()]
    await session.rollback()
    return found


async def money(
    client: httpx.AsyncClient, session: AsyncSession, tournament_id: int, tokens: dict[str, str]
) -> dict[str, int]:
    """Every wallet of the test, the prize pool's and the ledger's rows."""
    found = {
        name: (await client.get("/wallet", headers=bearer(token))).json()["balance"]
        for name, token in tokens.items()
    }
    found["pool"] = await ledger.balance(session, wallet=ledger.tournament_pool(tournament_id))
    found["rows"] = int(await session.scalar(select(func.count()).select_from(LedgerEntry)) or 0)
    await session.rollback()
    return found


async def deal_of(client: httpx.AsyncClient, tournament_id: int) -> dict[str, Any] | None:
    deal: dict[str, Any] | None = (await client.get(f"/tournaments/{tournament_id}")).json()["deal"]
    return deal


async def test_a_final_table_of_three_accepts_an_icm_deal_and_plays_on_for_the_rest(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    names = ["ada", "ben", "cyd"]
    tournament_id, tokens, details = await sit_and_go(client, settings, names)
    path = f"/tournaments/{tournament_id}/deal"
    cardroom: Cardroom = app.state.cardroom
    buy_in, fee = details["buy_in"], details["fee"]
    pool = 3 * buy_in
    prizes = [pool * 65 // 100, pool * 35 // 100]  # a sit-and-go of three pays two
    assert sum(prizes) == pool
    stranger = await player_token(client, "dee")

    async def ask(name: str, route: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
        token = stranger if name == "dee" else tokens[name]
        answer = await client.post(f"{path}{route}", json=body, headers=bearer(token))
        assert answer.status_code == status, answer.text
        result: dict[str, Any] = answer.json()
        return result

    before = await money(client, session, tournament_id, tokens)
    facts = len(await journal(session, tournament_id))
    refused = await ask("dee", "", {"method": "icm", "request_id": "x"}, 409)
    assert refused["error"]["code"] == "not_playing"
    gap = prizes[0] - prizes[1]
    refused = await ask("ada", "", {"method": "icm", "played_for": gap + 1, "request_id": "x"}, 400)
    assert (
        refused["error"]["code"] == "bad_deal" and f"at most {gap}" in refused["error"]["message"]
    )
    refused = await ask("ada", "/accept", {"offer": 1, "request_id": "x1"}, 409)
    assert refused["error"]["code"] == "no_deal_offer"
    assert await money(client, session, tournament_id, tokens) == before
    assert len(await journal(session, tournament_id)) == facts  # refused: nothing journaled

    # Proposed while the first hand is in play: its amounts wait for the hand's end.
    proposed = await ask("ben", "", {"method": "icm", "played_for": 50, "request_id": "d1"})
    assert proposed["status"] == "done" and proposed["kind"] == "deal"
    assert proposed["deal"]["status"] in ("proposed", "offered")
    assert proposed["deal"]["number"] == 1 and proposed["deal"]["proposer"] == "ben"
    refused = await ask("cyd", "", {"method": "chip_chop", "request_id": "d2"}, 409)
    assert refused["error"]["code"] == "deal_offer_standing"

    async def offered() -> bool:
        deal = await deal_of(client, tournament_id)
        return deal is not None and deal["status"] == "offered"

    await act_until(cardroom, session, tournament_id, offered)
    deal = await deal_of(client, tournament_id)
    assert deal is not None
    shares = deal["shares"]
    assert sorted(s["player"] for s in shares) == names  # nobody out: they only folded
    chips = [s["chips"] for s in shares]
    assert sum(chips) == 3 * 60
    assert deal["prizes"] == prizes and deal["played_for"] == 50
    assert [s["amount"] for s in shares] == list(icm(chips, prizes, played_for=50))
    assert sum(s["amount"] for s in shares) + 50 == pool
    assert not any(s["accepted"] for s in shares) and deal["expires_at"] is not None

    # No hand is dealt while the offer stands.
    tables = await tournament_tables(session, tournament_id)
    dealt = await hands_dealt(session, tournament_id)
    await asyncio.sleep(1.0)
    assert not in_play(cardroom, tables) and await hands_dealt(session, tournament_id) == dealt

    # The director stopped with the offer standing: the next one replays the journal, its
    # deal records checked, and takes the answers.
    directors: TournamentDirectors = app.state.directors
    for task in list(directors.running.values()):
        task.cancel()

    amounts = {s["player"]: s["amount"] for s in shares}
    first = await ask("ada", "/accept", {"offer": 1, "request_id": "a1"})
    assert first["deal"]["status"] == "offered"
    assert [s["accepted"] for s in first["deal"]["shares"] if s["player"] == "ada"] == [True]
    await ask("cyd", "/accept", {"offer": 1, "request_id": "a1"})
    assert await money(client, session, tournament_id, tokens) == before  # nothing paid yet
    last = await ask("ben", "/accept", {"offer": 1, "request_id": "a1"})
    assert last["deal"]["status"] == "made" and all(s["accepted"] for s in last["deal"]["shares"])
    again = await ask("ben", "/accept", {"offer": 1, "request_id": "a1"})
    assert again["id"] == last["id"]  # a retry finds the request it filed

    # Paid at once, each their amount; the pool keeps the amount played for.
    after = await money(client, session, tournament_id, tokens)
    assert after["pool"] == 50 and after["rows"] == before["rows"] + 3
    for name in names:
        assert after[name] == before[name] + amounts[name]
    details = (await client.get(f"/tournaments/{tournament_id}")).json()
    assert {e["player"]: e["prize"] for e in details["entries"]} == amounts
    assert {e["status"] for e in details["entries"]} == {"playing"}
    refused = await ask("ada", "/accept", {"offer": 1, "request_id": "late"}, 409)
    assert refused["error"]["code"] == "no_deal_offer"

    # Played on to a winner, who takes the 50; the places as ever.
    finished = await play_out(client, cardroom, session, tournament_id)
    entries = {e["player"]: e for e in finished["entries"]}
    assert sorted(e["place"] for e in entries.values()) == [1, 2, 3]
    (winner,) = [name for name, e in entries.items() if e["place"] == 1]
    for name, entry in entries.items():
        assert entry["prize"] == amounts[name] + (50 if name == winner else 0)
    end = await money(client, session, tournament_id, tokens)
    assert end["pool"] == 0 and finished["prize_pool"] == 0
    for name in names:
        assert end[name] == BANKROLL - buy_in - fee + entries[name]["prize"]
    assert end["rows"] == after["rows"] + 1  # the winner's 50
    books = await ledger.verify_books(session)
    assert books.balanced, books.differences()
    record = await session.get(TournamentRecord, tournament_id)
    assert record is not None
    tournament_books = await check_tournament(session, record)
    assert not tournament_books.differences, tournament_books.differences
    # Checked whole afterwards, as anyone may: the draws, every hand, the places and prizes.
    verdict = verify_tournament(await download_tournament(client, tournament_id))
    assert verdict.fair, verdict.lines
    await session.rollback()
    kinds = [kind for kind, _ in await journal(session, tournament_id)]
    deal_kinds = [k for k in kinds if k.startswith("deal")]
    assert deal_kinds == [
        "deal_proposed",
        "deal_offered",
        "deal_accepted",
        "deal_accepted",
        "deal_accepted",
        "deal_made",
    ]
    made = [data for kind, data in await journal(session, tournament_id) if kind == "deal_made"]
    assert [s["amount"] for s in made[0]["shares"]] == [s["amount"] for s in shares]
    assert finished["deal"]["status"] == "made"


async def test_a_declined_or_expired_offer_is_withdrawn_and_play_goes_on(
    app: FastAPI,
    client: httpx.AsyncClient,
    settings: Settings,
    session: AsyncSession,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    names = ["eli", "fay", "gus"]
    tournament_id, tokens, _ = await sit_and_go(client, settings, names)
    path = f"/tournaments/{tournament_id}/deal"
    cardroom: Cardroom = app.state.cardroom

    async def post(name: str, route: str, body: dict[str, Any]) -> httpx.Response:
        return await client.post(f"{path}{route}", json=body, headers=bearer(tokens[name]))

    def deal_is(status: str | None) -> Callable[[], Awaitable[bool]]:
        async def check() -> bool:
            deal = await deal_of(client, tournament_id)
            return (deal["status"] if deal is not None else None) == status

        return check

    # An offer nobody answers in time is withdrawn when its time is over.
    monkeypatch.setattr(offers, "DEAL_OFFER_SECONDS", 1.5)
    proposed = await post("eli", "", {"method": "chip_chop", "played_for": 10, "request_id": "d1"})
    assert proposed.status_code == 200, proposed.text
    await act_until(cardroom, session, tournament_id, deal_is("offered"))
    deal = await deal_of(client, tournament_id)
    assert deal is not None
    chips = [s["chips"] for s in deal["shares"]]
    assert [s["amount"] for s in deal["shares"]] == list(
        chip_chop(chips, deal["prizes"], played_for=10)
    )
    await post("eli", "/accept", {"offer": 1, "request_id": "a1"})
    await act_until(cardroom, session, tournament_id, deal_is(None), timeout=30)
    dealt = await hands_dealt(session, tournament_id)

    async def dealing_again() -> bool:
        return await hands_dealt(session, tournament_id) > dealt

    await act_until(cardroom, session, tournament_id, dealing_again)
    late = await post("fay", "/accept", {"offer": 1, "request_id": "a1"})
    assert late.status_code == 409 and error_code(late) == "no_deal_offer"

    # A second offer, declined by one player: withdrawn, nothing paid, play goes on.
    monkeypatch.setattr(offers, "DEAL_OFFER_SECONDS", 60.0)
    proposed = await post("gus", "", {"method": "icm", "request_id": "d2"})
    assert proposed.status_code == 200, proposed.text
    await act_until(cardroom, session, tournament_id, deal_is("offered"))
    deal = await deal_of(client, tournament_id)
    assert deal is not None and deal["number"] == 2 and deal["method"] == "icm"
    before = await money(client, session, tournament_id, tokens)
    await post("eli", "/accept", {"offer": 2, "request_id": "a2"})
    stale = await post("gus", "/accept", {"offer": 1, "request_id": "a2"})
    assert stale.status_code == 409 and error_code(stale) == "no_deal_offer"
    declined = await post("fay", "/decline", {"offer": 2, "request_id": "n2"})
    assert declined.status_code == 200, declined.text
    assert declined.json()["deal"] is None
    refused = await post("gus", "/accept", {"offer": 2, "request_id": "a3"})
    assert refused.status_code == 409 and error_code(refused) == "no_deal_offer"
    assert await money(client, session, tournament_id, tokens) == before
    dealt = await hands_dealt(session, tournament_id)
    await act_until(cardroom, session, tournament_id, dealing_again)

    records = [
        (kind, data)
        for kind, data in await journal(session, tournament_id)
        if kind.startswith("deal")
    ]
    withdrawn = [data for kind, data in records if kind == "deal_withdrawn"]
    assert withdrawn == [
        {"number": 1, "reason": "timeout", "player": None},
        {"number": 2, "reason": "declined", "player": "fay"},
    ]
    assert not any(kind == "deal_made" for kind, _ in records)
    books = await ledger.verify_books(session)
    assert books.balanced, books.differences()
    await session.rollback()


async def test_no_deal_before_the_final_table(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    names = ["hal", "ivy", "joe", "kit", "lux"]
    tournament_id, tokens, _ = await sit_and_go(client, settings, names, seats=3)
    assert len(await tournament_tables(session, tournament_id)) == 2
    facts = len(await journal(session, tournament_id))
    answer = await client.post(
        f"/tournaments/{tournament_id}/deal",
        json={"method": "chip_chop", "request_id": "d1"},
        headers=bearer(tokens["hal"]),
    )
    assert answer.status_code == 409 and error_code(answer) == "not_final_table"
    assert len(await journal(session, tournament_id)) == facts
    assert (await client.get(f"/tournaments/{tournament_id}")).json()["deal"] is None
