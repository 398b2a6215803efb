"""An operator's requests to a running tournament, taken by its director: pausing stops
the clock and the deals once the hands in play are played out, resuming deals again; each
refused when it does not fit (paused twice, resumed while running, before the start, after
the end) with nothing changed; a retried request is filed once and audited once."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from fastapi import FastAPI
from server_helpers import bearer, error_code, operator_token, player_token
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from test_director import play_out, quick_sng, settings, tournament_tables

from server.cardroom.supervisor import Cardroom
from server.db.models import AuditEntry, HandRecord, TournamentFact, TournamentRequest
from server.settings import Settings

__all__ = ["settings"]  # the fixture, shared with the director's tests


async def hands_dealt(session: AsyncSession, tournament_id: int) -> int:
    tables = await tournament_tables(session, tournament_id)
    count = await session.scalar(
        select(func.count()).select_from(HandRecord).where(HandRecord.table_id.in_(tables))
    )
    await session.rollback()
    return int(count or 0)


def in_play(cardroom: Cardroom, tables: list[int]) -> bool:
    for table_id in tables:
        actor = cardroom.actor(table_id)
        hand = actor.table.hand if actor is not None else None
        if hand is not None and not hand.is_over():
            return True
    return False


async def test_an_operator_pauses_and_resumes_a_running_tournament(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    boss = await operator_token(client, settings)
    templates = (await client.get("/tournaments/templates")).json()
    made = await client.post(
        "/admin/tournaments",
        json={"name": "Pausable", "spec": quick_sng(templates, 3, 8)},
        headers=bearer(boss),
    )
    assert made.status_code == 201, made.text
    tournament_id = made.json()["id"]
    path = f"/admin/tournaments/{tournament_id}"

    early = await client.post(f"{path}/pause", json={"reason": "too soon"}, headers=bearer(boss))
    assert early.status_code == 409 and error_code(early) == "tournament_not_started"

    for n in range(3):
        token = await player_token(client, f"pausing{n}")
        answer = await client.post(
            f"/tournaments/{tournament_id}/register",
            json={"request_id": "r"},
            headers=bearer(token),
        )
        assert answer.status_code == 201, answer.text

    cardroom: Cardroom = app.state.cardroom
    seen: dict[str, Any] = {}

    async def pause_and_resume(actions: int) -> None:
        if actions < 6 or seen.get("resumed"):
            return
        if not seen.get("paused"):
            paused = await client.post(
                f"{path}/pause",
                json={"reason": "a dispute at table 1", "request_id": "p1"},
                headers=bearer(boss),
            )
            assert paused.status_code == 200, paused.text
            assert paused.json()["status"] == "done" and paused.json()["fact_seq"] > 1
            again = await client.post(
                f"{path}/pause",
                json={"reason": "a dispute at table 1", "request_id": "p1"},
                headers=bearer(boss),
            )
            assert again.json()["id"] == paused.json()["id"]  # filed once
            twice = await client.post(
                f"{path}/pause", json={"reason": "again"}, headers=bearer(boss)
            )
            assert twice.status_code == 409 and error_code(twice) == "tournament_paused"
            seen["paused"] = True
            return
        tables = await tournament_tables(session, tournament_id)
        if in_play(cardroom, tables):
            return  # the hand in play is played out
        before = await hands_dealt(session, tournament_id)
        await asyncio.sleep(1.5)
        assert not in_play(cardroom, tables), "a hand was dealt while paused"
        assert await hands_dealt(session, tournament_id) == before
        resumed = await client.post(
            f"{path}/resume", json={"reason": "settled"}, headers=bearer(boss)
        )
        assert resumed.status_code == 200, resumed.text
        seen["resumed"] = True

    finished = await play_out(client, cardroom, session, tournament_id, meanwhile=pause_and_resume)
    assert seen.get("resumed"), "the tournament ended before it could be paused"
    assert finished["status"] == "finished"

    after = await client.post(f"{path}/resume", json={"reason": "late"}, headers=bearer(boss))
    assert after.status_code == 409 and error_code(after) == "tournament_over"

    kinds = list(
        (
            await session.scalars(
                select(TournamentFact.kind)
                .where(TournamentFact.tournament_id == tournament_id)
                .order_by(TournamentFact.seq)
            )
        ).all()
    )
    assert kinds.count("paused") == 1 and kinds.count("resumed") == 1
    refused = list(
        (
            await session.scalars(
                select(TournamentRequest.outcome).where(
                    TournamentRequest.tournament_id == tournament_id,
                    TournamentRequest.fact_seq.is_(None),
                )
            )
        ).all()
    )
    assert [o["code"] for o in refused if o] == ["tournament_paused"]
    audited = list(
        (
            await session.scalars(
                select(AuditEntry.action).where(AuditEntry.target_kind == "tournament")
            )
        ).all()
    )
    assert audited.count("tournament.pause") == 2  # the retry is not filed again
    assert audited.count("tournament.resume") == 1
    request = await client.get(f"{path}/requests/1", headers=bearer(boss))
    assert request.status_code == 200 and request.json()["kind"] == "pause"
    missing = await client.get(f"{path}/requests/999", headers=bearer(boss))
    assert missing.status_code == 404 and error_code(missing) == "unknown_request"
