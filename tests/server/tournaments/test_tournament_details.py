"""``GET /tournaments/{id}`` as players read it while the tournament runs: its tables with
their players and chips, each playing entry's chips, the caller's own entry with their table
and seat (signed in; nobody's for an anonymous caller), the list of entries left out on
asking (``?entries=false``); all of it against where the tables seat the players."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from server_helpers import FAST_HASHING, bearer, error_code, player_token
from sqlalchemy.ext.asyncio import AsyncSession
from test_director import play_out
from test_tournament_events import make_sng, seated_at, until

from server.cardroom.supervisor import Cardroom
from server.settings import Settings

PLAYERS, SEATS = 5, 3


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        starting_bankroll=10_000,
        pause_between_hands_seconds=0,
        showdown_pause_seconds=0,
        **FAST_HASHING,
    )


async def test_the_tables_the_chips_and_your_own_seat(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    tournament_id, _ = await make_sng(client, settings, PLAYERS, SEATS)
    names = [f"entrant{n}" for n in range(PLAYERS)]
    tokens = {name: await player_token(client, name) for name in [*names, "rail"]}
    path = f"/tournaments/{tournament_id}"
    for name in names[:-1]:
        answer = await client.post(
            f"{path}/register", json={"request_id": name}, headers=bearer(tokens[name])
        )
        assert answer.status_code == 201, answer.text

    # Before the start: your entry, registered; no tables; nobody's entry for anyone else.
    mine = (await client.get(path, headers=bearer(tokens["entrant0"]))).json()
    assert mine["you"] == {
        "status": "registered",
        "number": 1,
        "stack": None,
        "table_id": None,
        "table_number": None,
        "seat": None,
        "place": None,
        "prize": None,
    }
    assert mine["tables"] == [] and len(mine["entries"]) == PLAYERS - 1
    assert (await client.get(path)).json()["you"] is None
    assert (await client.get(path, headers=bearer(tokens["rail"]))).json()["you"] is None
    refused = await client.get(path, headers=bearer("not-a-token"))
    assert refused.status_code == 401 and error_code(refused) == "bad_token"

    last = names[-1]
    answer = await client.post(
        f"{path}/register", json={"request_id": last}, headers=bearer(tokens[last])
    )
    assert answer.status_code == 201, answer.text

    async def started() -> bool:
        details = (await client.get(path)).json()
        return len(await seated_at(session, tournament_id)) == PLAYERS and bool(details["tables"])

    await until(started, "the sit-and-go never seated its players")
    where = await seated_at(session, tournament_id)
    details = (await client.get(path, headers=bearer(tokens["entrant2"]))).json()
    assert details["status"] == "running"
    tables = details["tables"]
    assert [t["number"] for t in tables] == [1, 2]
    assert sorted(len(t["seats"]) for t in tables) == [2, 3]
    seats = {s["player"]: (t["table_id"], s["seat"]) for t in tables for s in t["seats"]}
    assert seats == where
    assert all(s["stack"] == 60 for t in tables for s in t["seats"])
    assert {e["player"]: e["chips"] for e in details["entries"]} == dict.fromkeys(names, 60)
    you = details["you"]
    assert you["status"] == "playing" and you["number"] == 1 and you["stack"] == 60
    assert (you["table_id"], you["seat"]) == where["entrant2"]
    (number,) = [t["number"] for t in tables if t["table_id"] == you["table_id"]]
    assert you["table_number"] == number

    # A big field's details without the list of entries: the rest as it was.
    short = (await client.get(f"{path}?entries=false", headers=bearer(tokens["entrant2"]))).json()
    assert short["entries"] is None
    assert short["tables"] == tables and short["you"] == you
    assert short["entrants"] == PLAYERS and short["payouts"] == details["payouts"]

    # Played out: no tables; each player's own place and prize; no chips on the entries.
    cardroom: Cardroom = app.state.cardroom
    finished = await play_out(client, cardroom, session, tournament_id)
    places = {e["player"]: (e["place"], e["prize"]) for e in finished["entries"]}
    assert sorted(place for place, _ in places.values()) == list(range(1, PLAYERS + 1))
    assert finished["tables"] == [] and all(e["chips"] is None for e in finished["entries"])
    for name in names:
        own = (await client.get(path, headers=bearer(tokens[name]))).json()["you"]
        assert (own["place"], own["prize"]) == places[name]
        assert own["status"] == "out" and own["table_id"] is None and own["stack"] is None


async def test_an_unknown_tournament_and_a_wrong_entries_flag(client: httpx.AsyncClient) -> None:
    unknown = await client.get("/tournaments/999")
    assert unknown.status_code == 404 and error_code(unknown) == "unknown_tournament"
    wrong = await client.get("/tournaments/999?entries=maybe")
    assert wrong.status_code == 422 or error_code(wrong) == "bad_request", wrong.text
