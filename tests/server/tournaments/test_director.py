"""Tournaments played to a winner on one node, on SQLite and PostgreSQL: an operator makes a
sit-and-go, players register over HTTP, the node's director starts it when it fills (seats
drawn, tables made, players seated with tournament chips), the players play at its tables
(acting through the tables as a client's commands do), and the director places and pays each
player out, moves players between tables, and finishes it. Checked: places and prizes, the
prize pool paid out exactly, no ledger movement at a tournament table, the books."""

from __future__ import annotations

import asyncio
import copy
import random
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from play import random_legal, submit
from server_helpers import FAST_HASHING, bearer, operator_token, player_token
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from engine.actions import LegalActions
from engine.tournament.run import Finished
from server.accounts import ledger
from server.cardroom.supervisor import Cardroom
from server.db.models import (
    HandPlayer,
    HandRecord,
    LedgerEntry,
    SeatRecord,
    TableRecord,
    TournamentFact,
)
from server.settings import Settings
from server.table import commands as cmd
from server.table.ports import CommandRefused
from server.tournaments.director import Director
from server.tournaments.directors import TournamentDirectors
from tests.cluster import fault_node


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        starting_bankroll=10_000,
        pause_between_hands_seconds=0,
        showdown_pause_seconds=0,
        **FAST_HASHING,
    )


def quick_sng(templates: dict[str, Any], players: int, seats: int) -> dict[str, Any]:
    """A sit-and-go of ``players`` at tables of ``seats``, with few chips and levels of a few
    hands, so that it ends in a few dozen hands."""
    spec = copy.deepcopy(templates["stud-sng-9"])
    spec.update(min_entrants=players, max_entrants=players, seats_per_table=seats)
    spec["structure"] = {
        "starting_chips": 60,
        "entries": [
            {"ante": 2, "bring_in": 5, "small_bet": 10, "big_bet": 20, "hands": 4},
            {"ante": 5, "bring_in": 10, "small_bet": 20, "big_bet": 40, "hands": 4},
            {"ante": 10, "bring_in": 20, "small_bet": 40, "big_bet": 80, "hands": 4},
        ],
    }
    return spec


async def tournament_tables(session: AsyncSession, tournament_id: int) -> list[int]:
    ids = await session.scalars(
        select(TableRecord.id).where(TableRecord.tournament_id == tournament_id)
    )
    await session.rollback()
    return list(ids.all())


Choose = Callable[[str, LegalActions], tuple[str, int | None]]


async def act_at_tables(
    cardroom: Cardroom,
    session: AsyncSession,
    tournament_id: int,
    choose: Choose,
    *,
    prefix: str,
    start: int,
) -> tuple[int, bool]:
    """One action, by ``choose(player, legal)``, for whoever is to act at each of the
    tournament's tables, as a client's commands act (ids ``prefix`` and a number from
    ``start``): how many were sent, and whether any was taken."""
    sent, acted = 0, False
    for table_id in await tournament_tables(session, tournament_id):
        actor = cardroom.actor(table_id)
        hand = actor.table.hand if actor is not None else None
        if actor is None or hand is None or hand.is_over():
            continue
        legal = hand.legal_actions()
        if legal.seat is None:
            continue
        occupant = actor.table.seats[legal.seat]
        assert occupant is not None
        kind, amount = choose(occupant.player, legal)
        fields: dict[str, Any] = {"action_id": f"{prefix}{start + sent}", "kind": kind}
        if amount is not None:
            fields["amount"] = amount
        sent += 1
        try:
            await submit(actor, "act", occupant.player, **fields)
            acted = True
        except CommandRefused as refused:
            assert refused.code in ("not_your_turn", "no_hand"), refused.code
    return sent, acted


async def play_out(
    client: httpx.AsyncClient,
    cardroom: Cardroom,
    session: AsyncSession,
    tournament_id: int,
    *,
    timeout: float = 240.0,
    meanwhile: Callable[[int], Awaitable[None]] | None = None,
) -> dict[str, Any]:
    """Act for whoever is to act at any of the tournament's tables until it is over;
    ``meanwhile(actions)`` after each round of acts (a fault put in play)."""
    rng = random.Random(tournament_id)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    actions = 0
    while True:
        details = (await client.get(f"/tournaments/{tournament_id}")).json()
        if details["status"] == "finished":
            return details
        if meanwhile is not None:
            await meanwhile(actions)
        assert loop.time() < deadline, f"not over in time: {details}"
        sent, acted = await act_at_tables(
            cardroom,
            session,
            tournament_id,
            lambda _, legal: random_legal(legal, rng),
            prefix="a",
            start=actions,
        )
        actions += sent
        if not acted:
            await asyncio.sleep(0.01)


async def run_sit_and_go(
    app: FastAPI,
    client: httpx.AsyncClient,
    settings: Settings,
    session: AsyncSession,
    *,
    players: int,
    seats: int,
    meanwhile: Callable[[int], Awaitable[None]] | None = None,
) -> int:
    boss = await operator_token(client, settings)
    templates = (await client.get("/tournaments/templates")).json()
    made = await client.post(
        "/admin/tournaments",
        json={"name": "Quick", "spec": quick_sng(templates, players, seats)},
        headers=bearer(boss),
    )
    assert made.status_code == 201, made.text
    sng = made.json()
    tokens = {f"player{n}": await player_token(client, f"player{n}") for n in range(players)}
    for name, token in tokens.items():
        answer = await client.post(
            f"/tournaments/{sng['id']}/register", json={"request_id": name}, headers=bearer(token)
        )
        assert answer.status_code == 201, answer.text
    ledger_rows = await session.scalar(select(func.count()).select_from(LedgerEntry))
    await session.rollback()

    cardroom: Cardroom = app.state.cardroom
    finished = await play_out(client, cardroom, session, sng["id"], meanwhile=meanwhile)

    pool = players * sng["buy_in"]
    entries = finished["entries"]
    places = sorted(e["place"] for e in entries)  # players tied share their best place
    assert len(places) == players and places[0] == 1 and places[-1] <= players
    assert places.count(1) == 1
    assert all(e["status"] == "out" for e in entries)
    assert sum(e["prize"] for e in entries) == pool
    assert finished["prize_pool"] == 0  # every chip of the pool paid out
    prizes = [e["prize"] for e in sorted(entries, key=lambda e: e["place"])]
    assert prizes == sorted(prizes, reverse=True)  # a better place never pays less
    for name, token in tokens.items():
        wallet = (await client.get("/wallet", headers=bearer(token))).json()["balance"]
        (mine,) = [e for e in entries if e["player"] == name]
        assert wallet == 10_000 - sng["buy_in"] - sng["fee"] + mine["prize"]
    # The only ledger movements since the entries: one prize each for the places paid.
    after = await session.scalar(select(func.count()).select_from(LedgerEntry))
    assert after - ledger_rows == sum(1 for e in entries if e["prize"])
    # The journal: the start, then every hand the tournament's tables wrote, each once.
    kinds = list(
        (await session.scalars(select(TournamentFact.kind).order_by(TournamentFact.seq))).all()
    )
    hands = await session.scalar(
        select(func.count())
        .select_from(HandRecord)
        .join(TableRecord, TableRecord.id == HandRecord.table_id)
        .where(TableRecord.tournament_id == sng["id"])
    )
    assert kinds[0] == "started" and kinds.count("hand") == hands >= 1
    books = await ledger.verify_books(session)
    assert books.balanced, books.differences()
    await session.rollback()
    tournament_id: int = sng["id"]
    await closed_for_good(cardroom, session, tournament_id)
    return tournament_id


async def closed_for_good(cardroom: Cardroom, session: AsyncSession, tournament_id: int) -> None:
    """Every table of the tournament closed as the cardroom closes one: its row closed, its
    actor stopped and retired (no table of the node's, nowhere in the live list), nobody
    seated; a command for it refused ``table_shut``."""
    tables = await tournament_tables(session, tournament_id)

    async def statuses() -> set[str]:
        rows = await session.scalars(select(TableRecord.status).where(TableRecord.id.in_(tables)))
        await session.rollback()
        return set(rows.all())

    loop = asyncio.get_running_loop()
    deadline = loop.time() + 15
    while await statuses() != {"closed"} or set(cardroom.running_tables()) & set(tables):
        assert loop.time() < deadline, f"tables of {tournament_id} still open: {tables}"
        await asyncio.sleep(0.05)
    assert all(cardroom.actor(table_id) is None for table_id in tables)
    live = {row["id"] for row in cardroom.live_tables(stuck_after=60)}
    assert not live & set(tables)
    seated = await session.scalar(
        select(func.count()).select_from(SeatRecord).where(SeatRecord.table_id.in_(tables))
    )
    await session.rollback()
    assert seated == 0
    for table_id in tables:
        handle = await cardroom.table(table_id)
        assert handle is not None
        with pytest.raises(CommandRefused) as refusal:
            await handle.submit(cmd.DealNext(tournament_id=tournament_id, number=99))
        assert refusal.value.code == "table_shut"


async def test_a_sit_and_go_on_one_table_plays_to_a_winner(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    await run_sit_and_go(app, client, settings, session, players=4, seats=8)


async def test_a_sit_and_go_on_two_tables_meets_at_a_final_table(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    tournament_id = await run_sit_and_go(app, client, settings, session, players=7, seats=4)
    # Two tables at the start (4 and 3), one at the end: players moved between them.
    tables = await tournament_tables(session, tournament_id)
    assert len(tables) == 2
    rows = await session.execute(
        select(HandPlayer.account_id, func.count(func.distinct(HandRecord.table_id)))
        .join(HandRecord, HandRecord.id == HandPlayer.hand_id)
        .where(HandRecord.table_id.in_(tables))
        .group_by(HandPlayer.account_id)
    )
    assert any(count == 2 for _, count in rows.all()), "nobody played at both tables"
    await session.rollback()


async def test_a_director_stopped_mid_tournament_is_taken_over_from_its_journal(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    """The director's task killed at a few points of play (between any two of its steps):
    the next round starts another, which replays the journal, makes the tables match it,
    and plays the tournament out with every place and prize as the rules give them."""
    directors: TournamentDirectors = app.state.directors
    stopped: list[int] = []

    async def stop_the_director(actions: int) -> None:
        if actions >= 12 * (len(stopped) + 1) and len(stopped) < 3:
            for task in list(directors.running.values()):
                task.cancel()
            stopped.append(actions)

    await run_sit_and_go(
        app, client, settings, session, players=7, seats=4, meanwhile=stop_the_director
    )
    assert stopped, "the tournament ended before its director could be stopped"


@pytest.mark.parametrize(("point", "players"), [("move", 7), ("break", 7), ("end", 3)])
async def test_a_director_cut_short_mid_work_is_finished_by_the_next(
    app: FastAPI,
    client: httpx.AsyncClient,
    settings: Settings,
    session: AsyncSession,
    monkeypatch: pytest.MonkeyPatch,
    point: str,
    players: int,
) -> None:
    """The director stops with a fact journaled and only part of its orders carried out, as
    a node dying there would leave it (``tests/cluster/fault_node.py`` has the points): a
    player taken from a table and not yet seated at the other (``move``), a table broken
    with its players taken away and one of them seated again (``break``: here the final
    table's draw), the tournament's end journaled and not told to the tables (``end``). The
    next round's director seats everyone where the journal says, closes the tables it no
    longer runs (a finished tournament with a table open is directed again), and the
    tournament ends with every place, prize and table as it should."""
    carry_out = Director.carry_out
    cut: list[int] = []

    async def cut_short(self: Director, orders: list[Any]) -> None:
        done = 0 if point == "end" and any(isinstance(o, Finished) for o in orders) else None
        if point != "end":
            done = fault_node.cut(point, orders)
        if done is None or cut:
            await carry_out(self, orders)
            return
        await carry_out(self, orders[:done])
        cut.append(done)
        raise RuntimeError("the node stopped here")

    monkeypatch.setattr(Director, "carry_out", cut_short)
    await run_sit_and_go(app, client, settings, session, players=players, seats=4)
    assert cut, "the director was never cut short there"


async def test_a_scheduled_tournament_short_of_its_field_is_cancelled_and_refunded_at_its_time(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    boss = await operator_token(client, settings)
    templates = (await client.get("/tournaments/templates")).json()
    spec = {**quick_sng(templates, 3, 8), "kind": "scheduled", "payout_table": "scheduled"}
    spec.update(min_entrants=3, max_entrants=50)
    tokens = [await player_token(client, name) for name in ("early1", "early2")]
    soon = datetime.now(UTC) + timedelta(seconds=3)
    made = await client.post(
        "/admin/tournaments",
        json={"name": "Early bird", "spec": spec, "starts_at": soon.isoformat()},
        headers=bearer(boss),
    )
    assert made.status_code == 201, made.text
    tournament_id = made.json()["id"]
    for n, token in enumerate(tokens):
        answer = await client.post(
            f"/tournaments/{tournament_id}/register",
            json={"request_id": f"r{n}"},
            headers=bearer(token),
        )
        assert answer.status_code == 201, answer.text
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while True:
        details = (await client.get(f"/tournaments/{tournament_id}")).json()
        if details["status"] != "registering":
            break
        assert loop.time() < deadline, "the tournament never started nor was cancelled"
        await asyncio.sleep(0.2)
    assert details["status"] == "cancelled"
    assert details["cancelled_reason"] == "2 of the 3 entrants it needed came"
    assert {e["status"] for e in details["entries"]} == {"refunded"}
    for token in tokens:
        assert (await client.get("/wallet", headers=bearer(token))).json()["balance"] == 10_000
    assert await tournament_tables(session, tournament_id) == []
