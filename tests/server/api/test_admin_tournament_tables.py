"""A tournament's table over HTTP, on SQLite and PostgreSQL: not in the cash lobby (reached
through its tournament), in the back office's lists with its tournament, and an operator's
change, void or close of it refused (``409 tournament_table``: its director's), changing
nothing."""

from __future__ import annotations

import httpx
from fastapi import FastAPI
from server_helpers import bearer, error_code, operator_token
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from engine.variants import TableConfig
from server.cardroom.supervisor import Cardroom
from server.db.models import AuditEntry, TableRecord
from server.db.session import make_sessionmaker
from server.settings import Settings
from server.store import tables
from server.tournaments import registry as tournaments

TOURNEY = TableConfig(absent_hands="killed_after_starting_hands")


async def test_a_tournament_table_is_its_director_s_not_the_lobby_s_nor_an_operator_s(
    client: httpx.AsyncClient, app: FastAPI, engine: AsyncEngine, settings: Settings
) -> None:
    boss = bearer(await operator_token(client, settings))
    cash = await client.post("/admin/tables", headers=boss, json={"name": "Main", "config": {}})
    assert cash.status_code == 201, cash.text
    sessionmaker = make_sessionmaker(engine)
    async with sessionmaker() as session:
        event = await tournaments.create(
            session,
            name="Sunday SNG",
            template="stud-sng-9",
            spec=None,
            starts_at=None,
            created_by="boss",
            seal=settings.deck_seal(),
        )
        record = await tables.create_tournament_table(
            session, tournament_id=event.id, number=1, config=TOURNEY, seats=8
        )
        await session.commit()
    cardroom: Cardroom = app.state.cardroom
    actor = await cardroom.open_table(record)
    assert actor is not None and actor.tournament_id == event.id

    lobby = (await client.get("/tables")).json()
    assert [t["id"] for t in lobby] == [cash.json()["id"]], "the cash lobby lists cash tables"
    listed = (await client.get("/admin/tables", headers=boss)).json()
    assert {(t["id"], t["tournament_id"], t["tournament_table"]) for t in listed} == {
        (cash.json()["id"], None, None),
        (record.id, event.id, 1),
    }
    live = (await client.get("/admin/tables/live", headers=boss)).json()
    assert {t["id"] for t in live} == {cash.json()["id"], record.id}

    path = f"/admin/tables/{record.id}"
    for answer in (
        await client.patch(path, headers=boss, json={"seats": 6}),
        await client.post(f"{path}/close", headers=boss, json={"reason": "late"}),
        await client.post(f"{path}/void", headers=boss, json={"reason": "misdeal"}),
    ):
        assert answer.status_code == 409 and error_code(answer) == "tournament_table", answer.text
    async with sessionmaker() as session:
        again = await session.get(TableRecord, record.id)
        assert again is not None and again.status == "open" and again.seats == 8
        audited = (
            select(func.count())
            .select_from(AuditEntry)
            .where(AuditEntry.target_kind == "table", AuditEntry.target_id == str(record.id))
        )
        assert await session.scalar(audited) == 0
