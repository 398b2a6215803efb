"""An operator's moves, disqualifications and added time in a running tournament, through
the API, on SQLite and PostgreSQL: a player in a hand moved and disqualified when it ends
(their hand killed meanwhile), a player between hands moved at once with their chips to the
seat asked, each refusal with its code and nothing written; the results once over (places,
prizes, chips issued = in play + removed), the books, and the moves in ``/metrics``."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import httpx
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families
from server_helpers import bearer, error_code, operator_token, player_token
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from test_director import play_out, quick_sng, settings, tournament_tables
from test_operator_requests import in_play

from engine.protocol import ErrorCode
from server.accounts import ledger
from server.cardroom.supervisor import Cardroom
from server.db.models import Account, AuditEntry, SeatRecord, TournamentFact, TournamentRecord
from server.edge.refusals import http_status
from server.settings import Settings
from server.store.tournament_books import check_tournament

__all__ = ["settings"]  # the fixture, shared with the director's tests


async def facts(session: AsyncSession, tournament_id: int, *kinds: str) -> int:
    """The tournament's facts in its journal (of these kinds, if given)."""
    query = (
        select(func.count())
        .select_from(TournamentFact)
        .where(TournamentFact.tournament_id == tournament_id)
    )
    if kinds:
        query = query.where(TournamentFact.kind.in_(kinds))
    count = await session.scalar(query)
    await session.rollback()
    return int(count or 0)


async def seat_of(session: AsyncSession, player: str) -> tuple[int, int, int] | None:
    """Where ``player`` sits by the tables' seat rows: table id, seat, chips."""
    row = (
        await session.execute(
            select(SeatRecord.table_id, SeatRecord.seat, SeatRecord.chips)
            .join(Account, Account.id == SeatRecord.account_id)
            .where(Account.username == player)
        )
    ).first()
    await session.rollback()
    return None if row is None else (int(row[0]), int(row[1]), int(row[2]))


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def metric(client: httpx.AsyncClient, name: str, **labels: str) -> float:
    response = await client.get("/metrics")
    assert response.status_code == 200, response.text
    return samples(response.text).get((name, frozenset(labels.items())), 0.0)


async def make_sit_and_go(
    client: httpx.AsyncClient, boss: str, spec: dict[str, Any], prefix: str
) -> int:
    made = await client.post(
        "/admin/tournaments", json={"name": prefix, "spec": spec}, headers=bearer(boss)
    )
    assert made.status_code == 201, made.text
    tournament_id: int = made.json()["id"]
    for n in range(spec["max_entrants"]):
        token = await player_token(client, f"{prefix}{n}")
        answer = await client.post(
            f"/tournaments/{tournament_id}/register",
            json={"request_id": "r"},
            headers=bearer(token),
        )
        assert answer.status_code == 201, answer.text
    return tournament_id


async def test_an_operator_moves_and_disqualifies_players_between_their_hands(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    boss = await operator_token(client, settings)
    templates = (await client.get("/tournaments/templates")).json()
    tournament_id = await make_sit_and_go(client, boss, quick_sng(templates, 7, 4), "mover")
    path = f"/admin/tournaments/{tournament_id}"
    cardroom: Cardroom = app.state.cardroom
    seen: dict[str, Any] = {}

    async def ask(kind: str, body: dict[str, Any]) -> httpx.Response:
        return await client.post(f"{path}/{kind}", json=body, headers=bearer(boss))

    async def results() -> dict[str, Any]:
        answer = await client.get(f"{path}/results", headers=bearer(boss))
        assert answer.status_code == 200, answer.text
        found: dict[str, Any] = answer.json()
        return found

    async def operate(actions: int) -> None:
        if "resumed" in seen:
            return
        tables = await tournament_tables(session, tournament_id)
        if "paused" not in seen:
            # A hand in play at a table of two or more: pause, and ask for a move and a
            # disqualification of two of its players, who wait for the hand to end.
            standing = await results()
            if actions < 3 or len(standing["tables"]) != 2:
                return
            busy = [
                t
                for t, other in zip(standing["tables"], standing["tables"][::-1], strict=True)
                if len(t["players"]) >= 3
                and len(other["players"]) < 4  # a seat for the player moved
                and in_play(cardroom, [t["table_id"]])
            ]
            if not busy:
                return
            table = busy[0]
            actor = cardroom.actor(table["table_id"])
            assert actor is not None and actor.table.hand is not None
            dealt = {actor.table.seats[s].player for s in actor.table.hand.seats}  # type: ignore[union-attr]
            mover, cheat = sorted(p["player"] for p in table["players"] if p["player"] in dealt)[:2]
            paused = await ask("pause", {"reason": "floor call", "request_id": "p"})
            assert paused.status_code == 200, paused.text
            seen["filed"] = 2
            moved = await ask(
                "move", {"player": mover, "reason": "seat change", "request_id": "m1"}
            )
            assert moved.status_code == 200, moved.text
            assert moved.json()["status"] == "done"
            assert moved.json()["outcome"] == {"ok": True, "after_hand_at": table["number"]}
            again = await ask(
                "move", {"player": mover, "reason": "seat change", "request_id": "m1"}
            )
            assert again.json()["id"] == moved.json()["id"]  # filed once
            twice = await ask("move", {"player": mover, "reason": "again"})
            assert twice.status_code == 409 and error_code(twice) == "move_pending"
            out = await ask("disqualify", {"player": cheat, "reason": "collusion"})
            assert out.status_code == 200, out.text
            assert out.json()["outcome"] == {"ok": True, "after_hand_at": table["number"]}
            seen.update(paused=True, mover=mover, cheat=cheat, table=table)
            return
        if in_play(cardroom, tables):
            return  # paused: the hands in play are played out
        # Every hand over: the move and the disqualification are made (the director may
        # still be telling the tables: look again until it has).
        standing = await results()
        cheat, mover, table = seen["cheat"], seen["mover"], seen["table"]
        if (
            any(t["dealing"] for t in standing["tables"])  # a hand's end not yet taken
            or standing["waiting"]["moves"]
            or await seat_of(session, cheat) is not None
        ):
            return
        assert standing["clock"]["paused"] and standing["waiting"] == {
            "moves": [],
            "disqualifications": [],
        }
        (cheating,) = [s for s in standing["standings"] if s["player"] == cheat]
        assert cheating["status"] == "disqualified" and cheating["place"] is None
        assert cheating["chips_removed"] == standing["chips"]["removed"]
        chips = standing["chips"]
        assert chips["issued"] == 7 * 60 == chips["in_play"] + chips["removed"]
        where = {p["player"]: t for t in standing["tables"] for p in t["players"]}
        # Moved unless out of chips in that hand (then out, not moved), and seen at the other
        # table unless the final table was drawn.
        seen["pending_moved"] = mover in where
        if mover not in where:
            (moving,) = [s for s in standing["standings"] if s["player"] == mover]
            assert moving["status"] == "out" and moving["place"] is not None
        if mover in where and len(standing["tables"]) == 2:
            assert where[mover]["number"] != table["number"]
        # Between hands: a move is made at once, with the player's chips, to the seat asked.
        if len(standing["tables"]) == 2:
            source, target = sorted(standing["tables"], key=lambda t: -len(t["players"]))
            free = sorted(set(range(4)) - {p["seat"] for p in target["players"]})
            if free:
                player = source["players"][0]
                # (The director may still journal a hand ended meanwhile: count its moves.)
                before = await facts(session, tournament_id, "moved", "disqualified")
                for body, code in (
                    ({"player": "nobody"}, "not_in_tournament"),
                    ({"player": cheat}, "already_disqualified"),
                    ({"player": player["player"], "table": 99}, "unknown_tournament_table"),
                    ({"player": player["player"], "table": source["number"]}, "already_seated"),
                    (
                        {"player": player["player"], "table": target["number"], "seat": 6},
                        "bad_seat",
                    ),
                ):
                    refused = await ask("move", {**body, "reason": "try"})
                    seen["filed"] += 1
                    assert refused.status_code == http_status(ErrorCode(code)), refused.text
                    assert error_code(refused) == code
                bad = await ask("move", {"player": player["player"], "reason": "x", "seat": -1})
                assert bad.status_code == 400 and error_code(bad) == "bad_request"
                assert await facts(session, tournament_id, "moved", "disqualified") == before
                moved = await ask(
                    "move",
                    {
                        "player": player["player"],
                        "table": target["number"],
                        "seat": free[0],
                        "reason": "balance by hand",
                    },
                )
                assert moved.status_code == 200, moved.text
                seen["filed"] += 1
                assert moved.json()["outcome"] == {
                    "ok": True,
                    "table": target["number"],
                    "seat": free[0],
                    "chips": player["chips"],
                }
                assert await seat_of(session, player["player"]) == (
                    target["table_id"],
                    free[0],
                    player["chips"],
                )
                seen["moved_now"] = True
        assert await metric(client, "stud_tournaments_running") == 1
        assert await metric(client, "stud_tournament_players_left") == standing["players_left"]
        assert await metric(client, "stud_tournament_requests_waiting") == 0
        resumed = await ask("resume", {"reason": "settled"})
        assert resumed.status_code == 200, resumed.text
        seen["resumed"] = True

    finished = await play_out(client, cardroom, session, tournament_id, meanwhile=operate)
    assert seen.get("resumed"), "the tournament ended before the operator could act"

    # The results: every player but the disqualified one placed; the pool paid exactly.
    standing = await results()
    assert standing["status"] == "finished" and standing["clock"] is None
    assert standing["entries"] == standing["players"] == 7
    assert standing["disqualified"] == [seen["cheat"]]
    places = sorted(s["place"] for s in standing["standings"] if s["place"] is not None)
    assert len(places) == 6 and places[0] == 1
    assert standing["prizes_paid"] == standing["prize_pool"] == sum(standing["payouts"])
    assert sum(e["prize"] for e in finished["entries"]) == standing["prize_pool"]
    winner = standing["standings"][0]
    assert winner["place"] == 1 and winner["chips"] == standing["chips"]["in_play"]
    chips = standing["chips"]
    assert chips["issued"] == chips["in_play"] + chips["removed"]
    assert standing["standings"][-1]["player"] == seen["cheat"]
    (public,) = [e for e in finished["entries"] if e["player"] == seen["cheat"]]
    assert public["status"] == "disqualified" and public["place"] is None and public["prize"] == 0
    books = await ledger.verify_books(session)
    assert books.balanced, books.differences()
    # The tournament's own books: its chips issued are the winner's and the chips removed.
    record = await session.get(TournamentRecord, tournament_id)
    assert record is not None
    tournament_books = await check_tournament(session, record)
    assert not tournament_books.differences, tournament_books.differences
    assert tournament_books.removed == chips["removed"]
    assert tournament_books.issued == chips["issued"] == tournament_books.in_play + chips["removed"]
    await session.rollback()
    kinds = list(
        (
            await session.scalars(
                select(TournamentFact.kind).where(TournamentFact.tournament_id == tournament_id)
            )
        ).all()
    )
    assert kinds.count("disqualified") == 1 and kinds.count("moved") == 1 + ("moved_now" in seen)
    assert kinds.count("chips_removed") == 1  # the chips that left play, a record of the journal
    audited = list(
        (
            await session.scalars(
                select(AuditEntry.action).where(AuditEntry.target_id == str(tournament_id))
            )
        ).all()
    )
    assert audited.count("tournament.move") == seen["filed"]  # refused or not; a retry once
    assert audited.count("tournament.disqualify") == 1
    moves = await metric(client, "stud_tournament_moves_total", reason="operator")
    assert moves == seen["pending_moved"] + ("moved_now" in seen)
    assert (
        await metric(client, "stud_tournament_move_wait_seconds_count", reason="operator") == moves
    )
    assert await metric(client, "stud_tournaments_running") == 0
    late = await client.post(
        f"{path}/disqualify",
        json={"player": winner["player"], "reason": "late"},
        headers=bearer(boss),
    )
    assert late.status_code == 409 and error_code(late) == "tournament_over"


async def test_an_operator_adds_time_to_a_timed_level_and_not_to_a_level_of_hands(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    boss = await operator_token(client, settings)
    templates = (await client.get("/tournaments/templates")).json()
    hands = await make_sit_and_go(client, boss, quick_sng(templates, 2, 8), "hands")
    timed_spec = copy.deepcopy(quick_sng(templates, 2, 8))
    for entry in timed_spec["structure"]["entries"]:
        entry["minutes"] = 10
        del entry["hands"]
    early = await client.post(
        "/admin/tournaments",
        json={"name": "Timed", "spec": timed_spec},
        headers=bearer(boss),
    )
    assert early.status_code == 201, early.text
    add = {"minutes": 5, "reason": "a long dispute", "request_id": "t1"}
    before_start = await client.post(
        f"/admin/tournaments/{early.json()['id']}/add-time", json=add, headers=bearer(boss)
    )
    assert before_start.status_code == 409
    assert error_code(before_start) == "tournament_not_started"
    timed = await make_sit_and_go(client, boss, timed_spec, "timed")

    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while (await facts(session, hands)) == 0 or (await facts(session, timed)) == 0:
        assert loop.time() < deadline, "the sit-and-gos never started"
        await asyncio.sleep(0.1)

    refused = await client.post(
        f"/admin/tournaments/{hands}/add-time", json=add, headers=bearer(boss)
    )
    assert refused.status_code == 409 and error_code(refused) == "level_not_timed"
    for minutes in (0, -1, 24 * 60 + 1):
        bad = await client.post(
            f"/admin/tournaments/{timed}/add-time",
            json={"minutes": minutes, "reason": "x"},
            headers=bearer(boss),
        )
        assert bad.status_code == 400 and error_code(bad) == "bad_request"

    def left(standing: httpx.Response) -> float:
        assert standing.status_code == 200, standing.text
        seconds: float = standing.json()["clock"]["seconds_left"]
        return seconds

    before = left(await client.get(f"/admin/tournaments/{timed}/results", headers=bearer(boss)))
    added = await client.post(
        f"/admin/tournaments/{timed}/add-time", json=add, headers=bearer(boss)
    )
    assert added.status_code == 200, added.text
    assert added.json()["kind"] == "add_time" and added.json()["data"] == {"minutes": 5}
    after = left(await client.get(f"/admin/tournaments/{timed}/results", headers=bearer(boss)))
    assert 240 < after - before <= 300  # five minutes more, less the seconds between reads
    retried = await client.post(
        f"/admin/tournaments/{timed}/add-time", json=add, headers=bearer(boss)
    )
    assert retried.status_code == 200 and retried.json()["id"] == added.json()["id"]
    kinds = list(
        (
            await session.scalars(
                select(TournamentFact.kind).where(TournamentFact.tournament_id == timed)
            )
        ).all()
    )
    assert kinds.count("time_added") == 1
    await session.rollback()
    anonymous = await client.get(f"/admin/tournaments/{timed}/results")
    assert anonymous.status_code == 401
    cardroom: Cardroom = app.state.cardroom
    for tournament_id in (hands, timed):
        finished = await play_out(client, cardroom, session, tournament_id)
        assert finished["status"] == "finished"
