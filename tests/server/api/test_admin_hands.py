"""The back office's read side of play over HTTP with real tokens: hands found by table,
player and time a page at a time, their PHH files and event logs, and the live list of
tables (a table mid-hand, its street, the stuck flag)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from play import calling, play, submit, wait_for
from server_helpers import FAST_HASHING, bearer, error_code, login, operator_token, register
from sqlalchemy import select
from test_hands import table

from server import cli
from server.cardroom.live_tables import LiveState, live_row
from server.cardroom.supervisor import Cardroom
from server.db.models import Account, HandPlayer, HandRecord, Role
from server.settings import Settings


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        pause_between_hands_seconds=0,
        **FAST_HASHING,
    )


async def staff(client: httpx.AsyncClient, settings: Settings) -> dict[str, dict[str, str]]:
    """Headers of an operator, a support account and a player."""
    await cli.create_operator(settings, "sue", lambda: "correct horse", Role.SUPPORT)
    await register(client, "pia")
    return {
        "operator": bearer(await operator_token(client, settings)),
        "support": bearer(await login(client, "sue")),
        "player": bearer(await login(client, "pia")),
    }


async def stop_playing(app: FastAPI, table_id: int, players: list[str]) -> None:
    actor = app.state.cardroom.actor(table_id)
    for player in players:
        await submit(actor, "sit_out", player, next_hand=False)
    await play(actor, lambda: actor.table.hand is None, choose=calling)


async def all_pages(
    client: httpx.AsyncClient, headers: dict[str, str], limit: int, **filters: Any
) -> list[dict[str, Any]]:
    """Every hand the filters find, walking the pages."""
    seen: list[dict[str, Any]] = []
    offset: int | None = 0
    totals = set()
    while offset is not None:
        page = await client.get(
            "/admin/hands", params={**filters, "limit": limit, "offset": offset}, headers=headers
        )
        assert page.status_code == 200, page.text
        body = page.json()
        assert len(body["hands"]) <= limit
        totals.add(body["total"])
        seen += body["hands"]
        offset = body["next_offset"]
    assert totals == {len(seen)}, "every page tells the same total"
    return seen


async def test_hands_are_found_by_table_player_and_time_page_by_page(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    first, _ = await table(app, client, settings, ["ann", "bob"])
    cardroom: Cardroom = app.state.cardroom
    one = cardroom.actor(first)
    assert one is not None
    await play(one, lambda: one.hand_number >= 4, choose=calling)
    await stop_playing(app, first, ["ann", "bob"])
    boss = bearer(await operator_token(client, settings))
    made = await client.post("/admin/tables", headers=boss, json={"name": "U"})
    second = made.json()["id"]
    two = cardroom.actor(second)
    assert two is not None
    await register(client, "cat")
    for player in ("bob", "cat"):
        await submit(two, "sit", player, buy_in=200)
    await play(two, lambda: two.hand_number >= 3, choose=calling)
    await stop_playing(app, second, ["bob", "cat"])

    async with app.state.sessionmaker() as session:
        hands = (await session.scalars(select(HandRecord).order_by(HandRecord.id.desc()))).all()
        parts = (
            await session.execute(
                select(HandPlayer, Account.username).join(
                    Account, Account.id == HandPlayer.account_id
                )
            )
        ).all()
    players: dict[int, set[str]] = {}
    for part, name in parts:
        players.setdefault(part.hand_id, set()).add(name)
    ids = [h.id for h in hands]
    assert len(ids) >= 7

    # Everything, newest first, the same through every page size.
    everything = await all_pages(client, boss, 200)
    assert [h["id"] for h in everything] == ids
    assert [h["id"] for h in await all_pages(client, boss, 2)] == ids
    # Each row: its table, number, time, players with chips before and after, pot.
    by_id = {h.id: h for h in hands}
    for row in everything:
        record = by_id[row["id"]]
        assert row["table_id"] == record.table_id and row["number"] == record.number
        assert row["table_name"] == ("T" if record.table_id == first else "U")
        assert datetime.fromisoformat(row["ended_at"]) == record.created_at
        assert {p["player"] for p in row["players"]} == players[row["id"]]
        assert sum(p["ending"] - p["starting"] for p in row["players"]) == 0
        assert row["pot"] == sum(p["amount"] for p in record.result["pots"]) > 0
        assert row["cancelled"] is False

    # Each filter, and filters combined.
    at_first = [h.id for h in hands if h.table_id == first]
    assert [h["id"] for h in await all_pages(client, boss, 3, table=first)] == at_first
    with_ann = [i for i in ids if "ann" in players[i]]
    assert [h["id"] for h in await all_pages(client, boss, 3, player="ANN")] == with_ann
    bob_at_second = [h.id for h in hands if h.table_id == second and "bob" in players[h.id]]
    found = await all_pages(client, boss, 2, table=second, player="bob")
    assert [h["id"] for h in found] == bob_at_second and bob_at_second
    assert await all_pages(client, boss, 2, table=second, player="ann") == []
    assert await all_pages(client, boss, 2, player="nobody") == []
    middle = hands[len(hands) // 2].created_at
    since = [h.id for h in hands if h.created_at >= middle]
    until = [h.id for h in hands if h.created_at < middle]
    assert [h["id"] for h in await all_pages(client, boss, 3, since=middle.isoformat())] == since
    assert [h["id"] for h in await all_pages(client, boss, 3, until=middle.isoformat())] == until
    # Another offset, the same instant.
    paris = middle.astimezone(timezone(timedelta(hours=1)))
    assert [h["id"] for h in await all_pages(client, boss, 3, since=paris.isoformat())] == since
    window = await all_pages(
        client,
        boss,
        3,
        table=first,
        since=(middle - timedelta(days=1)).isoformat(),
        until=(middle + timedelta(days=1)).isoformat(),
    )
    assert [h["id"] for h in window] == at_first
    # Past the last page: nothing, and no next offset.
    beyond = await client.get("/admin/hands", params={"offset": len(ids)}, headers=boss)
    assert beyond.json() == {"total": len(ids), "hands": [], "next_offset": None}


async def test_a_hand_s_phh_file_and_event_log(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    table_id, _ = await table(app, client, settings, ["ann", "bob", "cat"])
    actor = app.state.cardroom.actor(table_id)
    await play(actor, lambda: actor.hand_number >= 2, choose=calling)
    await stop_playing(app, table_id, ["ann", "bob", "cat"])
    callers = await staff(client, settings)
    async with app.state.sessionmaker() as session:
        hand = await session.scalar(select(HandRecord).where(HandRecord.number == 1))
        assert hand is not None
        seats = {
            part.seat: name
            for part, name in (
                await session.execute(
                    select(HandPlayer, Account.username)
                    .join(Account, Account.id == HandPlayer.account_id)
                    .where(HandPlayer.hand_id == hand.id)
                )
            ).all()
        }
        blank = HandRecord(
            table_id=table_id, number=99, phh="", events=[], result={"cancelled": "x"}
        )
        session.add(blank)
        await session.commit()
    for who in ("operator", "support"):
        phh = await client.get(f"/admin/hands/{hand.id}/phh", headers=callers[who])
        assert phh.status_code == 200
        assert phh.text == hand.phh
        assert phh.headers["content-type"].startswith("text/plain")
        assert phh.headers["content-disposition"] == (
            f'attachment; filename="table-{table_id}-hand-1.phh"'
        )
        log = await client.get(f"/admin/hands/{hand.id}/events", headers=callers[who])
        assert log.status_code == 200
        body = log.json()
        assert (body["id"], body["table_id"], body["number"]) == (hand.id, table_id, 1)
        assert [{k: e[k] for k in ("kind", "data", "to")} for e in body["events"]] == hand.events
        for event in body["events"]:
            expected = "everyone" if event["to"] is None else seats[event["to"]]
            assert event["audience"] == expected
        private = [e for e in body["events"] if e["kind"] == "down_cards"]
        assert {e["audience"] for e in private} == set(seats.values()) >= {"ann", "bob"}
    assert hand.phh
    none = await client.get(f"/admin/hands/{blank.id}/phh", headers=callers["support"])
    assert none.status_code == 404 and error_code(none) == "no_phh"
    listed = await client.get("/admin/hands", params={"player": "ann"}, headers=callers["support"])
    assert blank.id not in {h["id"] for h in listed.json()["hands"]}, "it has no players"
    newest = await client.get("/admin/hands", params={"limit": 1}, headers=callers["support"])
    assert newest.json()["hands"][0]["id"] == blank.id
    assert newest.json()["hands"][0]["cancelled"] is True and newest.json()["next_offset"] == 1


@pytest.mark.parametrize(
    ("url", "status", "code"),
    [
        ("/admin/hands/987654", 404, "unknown_hand"),
        ("/admin/hands/987654/phh", 404, "unknown_hand"),
        ("/admin/hands/987654/events", 404, "unknown_hand"),
        ("/admin/hands/x/events", 400, "bad_request"),
        ("/admin/hands?since=2026-12-01T08:00:00", 400, "bad_request"),  # no offset
        ("/admin/hands?until=yesterday", 400, "bad_request"),
        ("/admin/hands?limit=0", 400, "bad_request"),
        ("/admin/hands?limit=201", 400, "bad_request"),
        ("/admin/hands?limit=ten", 400, "bad_request"),
        ("/admin/hands?offset=-1", 400, "bad_request"),
        ("/admin/hands?table=first", 400, "bad_request"),
        ("/admin/tables/live?stuck_after=0", 400, "bad_request"),
        ("/admin/tables/live?stuck_after=soon", 400, "bad_request"),
        ("/admin/tables/live?stuck_after=nan", 400, "bad_request"),
        # Past what the database holds: refused here, never a database error.
        ("/admin/hands/0", 400, "bad_request"),
        ("/admin/hands/99999999999999999999/phh", 400, "bad_request"),
        ("/admin/hands?table=3000000000", 400, "bad_request"),
        ("/admin/hands?offset=99999999999999999999", 400, "bad_request"),
        ("/admin/hands?since=9999-12-31T23:00:00-05:00", 400, "bad_request"),
        ("/admin/hands?player=%00", 400, "bad_request"),
    ],
)
async def test_refusals(
    client: httpx.AsyncClient, settings: Settings, url: str, status: int, code: str
) -> None:
    callers = await staff(client, settings)
    response = await client.get(url, headers=callers["support"])
    assert response.status_code == status and error_code(response) == code, response.text


@pytest.mark.parametrize(
    "url", ["/admin/hands", "/admin/hands/1/phh", "/admin/hands/1/events", "/admin/tables/live"]
)
async def test_only_staff_read_hands_and_live_tables(
    client: httpx.AsyncClient, settings: Settings, url: str
) -> None:
    callers = await staff(client, settings)
    anonymous = await client.get(url)
    assert anonymous.status_code == 401 and error_code(anonymous) == "not_authenticated"
    player = await client.get(url, headers=callers["player"])
    assert player.status_code == 403 and error_code(player) == "not_operator"
    support = await client.get(url, headers=callers["support"])
    assert support.status_code in (200, 404) and error_code_or_none(support) != "not_operator"


def error_code_or_none(response: httpx.Response) -> str | None:
    return error_code(response) if response.status_code >= 400 else None


async def test_the_live_list_shows_a_table_mid_hand_and_flags_it_stuck(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    table_id, _ = await table(app, client, settings, ["ann", "bob"])
    callers = await staff(client, settings)
    boss = callers["operator"]
    empty = (await client.post("/admin/tables", headers=boss, json={"name": "Empty"})).json()["id"]
    actor = app.state.cardroom.actor(table_id)
    assert actor is not None
    await wait_for(lambda: actor.table.hand is not None)
    hand = actor.table.hand
    assert hand is not None
    await asyncio.sleep(0.05)

    live = await client.get("/admin/tables/live", headers=callers["support"])
    assert live.status_code == 200
    rows = {row["id"]: row for row in live.json()}
    assert set(rows) == {table_id, empty}
    row = rows[table_id]
    assert row["state"] == "running" and row["node"] == settings.node_id
    assert row["name"] == "T" and row["variant"] == "seven_card_stud"
    assert row["hand_number"] == 1 and row["in_hand"] is True and row["street"] == "third"
    assert row["pot"] == hand.pot_total() > 0
    assert [(p["seat"], p["player"], p["in_hand"]) for p in row["players"]] == [
        (0, "ann", True),
        (1, "bob", True),
    ]
    assert sum(p["stack"] for p in row["players"]) + row["pot"] == 400
    assert row["seconds_since_action"] >= 0.05
    assert row["stuck"] is False, "the default threshold is a minute"
    idle = rows[empty]
    assert idle["in_hand"] is False and idle["street"] is None and idle["players"] == []
    assert idle["seconds_since_action"] is None and idle["stuck"] is False

    stuck = await client.get(
        "/admin/tables/live", params={"stuck_after": 0.01}, headers=callers["support"]
    )
    flagged = {row["id"]: row["stuck"] for row in stuck.json()}
    assert flagged == {table_id: True, empty: False}

    # An action: the table moved just now; on to the next street, the pot grows.
    await play(actor, lambda: hand.street >= 1, choose=calling)
    moved = await client.get(
        "/admin/tables/live", params={"stuck_after": 5}, headers=callers["operator"]
    )
    row = {row["id"]: row for row in moved.json()}[table_id]
    assert row["street"] == "fourth" and row["stuck"] is False
    assert row["seconds_since_action"] < 5 and row["pot"] == hand.pot_total()


def test_a_live_line_ages_what_another_node_told_and_knows_nothing_between_nodes() -> None:
    summary = {"id": 3, "name": "T", "variant": "razz", "node": "b"}
    told = {"hand_number": 7, "in_hand": True, "street": "fifth", "pot": 40, "players": []}
    row = live_row(
        summary,
        {**told, "seconds_since_action": 2.0},
        LiveState.ELSEWHERE,
        stuck_after=3,
        heard_ago=1.5,
    )
    assert row["state"] == "elsewhere" and row["node"] == "b"
    assert row["seconds_since_action"] == 3.5 and row["stuck"] is True
    between = live_row(summary, None, LiveState.BETWEEN_NODES, stuck_after=3)
    assert between["node"] is None and between["hand_number"] is None
    assert between["in_hand"] is False and between["stuck"] is False and between["players"] == []
