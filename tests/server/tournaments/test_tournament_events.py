"""A tournament's events over a real websocket (uvicorn on a free port), in sit-and-gos played
to a winner: each player hears their own (registered, started, seated at their table, moved,
out with their place and prize, the results) without asking, and a follower of the tournament
(``subscribe_tournament``) hears the tournament's (levels, players out, the final table, the
end); ``tournament_state`` says where the tournament and the player stand, also after the
director was taken over. Every event is checked against what the server recorded: the seats,
the entries' places and prizes."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from live import serve
from server_helpers import FAST_HASHING, bearer, operator_token, player_token
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from test_director import play_out, quick_sng
from websockets.asyncio.client import ClientConnection, connect

from server.cardroom.supervisor import Cardroom
from server.db.models import Account, SeatRecord, TableRecord, TournamentFact
from server.settings import Settings
from server.tournaments.directors import TournamentDirectors


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        starting_bankroll=10_000,
        pause_between_hands_seconds=0,
        showdown_pause_seconds=0,
        **FAST_HASHING,
    )


@dataclass
class Socket:
    """A signed-in websocket that keeps every frame it is sent, and asks by id."""

    ws: ClientConnection
    frames: list[dict[str, Any]] = field(default_factory=list)
    replies: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    next_id: int = 1
    reader: asyncio.Task[None] | None = None

    async def read(self) -> None:
        async for text in self.ws:
            frame = json.loads(text)
            self.frames.append(frame)
            waiter = self.replies.pop(frame.get("id"), None) if "id" in frame else None
            if waiter is not None and not waiter.done():
                waiter.set_result(frame)

    async def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        ask_id, self.next_id = self.next_id, self.next_id + 1
        waiter = asyncio.get_running_loop().create_future()
        self.replies[ask_id] = waiter
        await self.ws.send(json.dumps({**message, "id": ask_id}))
        return await asyncio.wait_for(waiter, 10)

    def events(self, kind: str | None = None, *, tournament: int) -> list[dict[str, Any]]:
        """The tournament's events as a client keeps them: each key once, in order."""
        seen: set[str] = set()
        found = []
        for frame in self.frames:
            if frame.get("type") != "tournament_event" or frame["tournament"] != tournament:
                continue
            if frame["key"] in seen:
                continue
            seen.add(frame["key"])
            if kind is None or frame["kind"] == kind:
                found.append(frame)
        return found


@contextlib.asynccontextmanager
async def sockets(host: str, tokens: dict[str, str]) -> AsyncIterator[dict[str, Socket]]:
    opened: dict[str, Socket] = {}
    try:
        for name, token in tokens.items():
            socket = Socket(await connect(f"ws://{host}/ws"))
            socket.reader = asyncio.create_task(socket.read())
            opened[name] = socket
            reply = await socket.ask({"type": "auth", "token": token})
            assert reply["result"] == {"player": name}, reply
        yield opened
    finally:
        for socket in opened.values():
            await socket.ws.close()
            if socket.reader is not None:
                with contextlib.suppress(Exception):
                    await socket.reader


async def make_sng(
    client: httpx.AsyncClient, settings: Settings, players: int, seats: int
) -> tuple[int, str]:
    boss = await operator_token(client, settings)
    templates = (await client.get("/tournaments/templates")).json()
    spec = quick_sng(templates, players, seats)
    spec["structure"]["entries"][0]["hands"] = 1  # level 2 from the second hand
    made = await client.post(
        "/admin/tournaments",
        json={"name": "Events", "spec": spec},
        headers=bearer(boss),
    )
    assert made.status_code == 201, made.text
    return int(made.json()["id"]), boss


async def seated_at(session: AsyncSession, tournament_id: int) -> dict[str, tuple[int, int]]:
    """Where each of the tournament's players sits now: table id and seat."""
    rows = await session.execute(
        select(Account.username, SeatRecord.table_id, SeatRecord.seat)
        .join(Account, Account.id == SeatRecord.account_id)
        .join(TableRecord, TableRecord.id == SeatRecord.table_id)
        .where(TableRecord.tournament_id == tournament_id)
    )
    found = {name: (int(table), int(seat)) for name, table, seat in rows.all()}
    await session.rollback()
    return found


async def hands_of(session: AsyncSession) -> int:
    """The hands the tournament's director took (its journal's hand facts)."""
    hands = await session.scalar(
        select(func.count()).select_from(TournamentFact).where(TournamentFact.kind == "hand")
    )
    await session.rollback()
    return int(hands or 0)


async def until(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 30) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await check():
        assert loop.time() < deadline, what
        await asyncio.sleep(0.05)


async def play_with_sockets(
    app: FastAPI,
    client: httpx.AsyncClient,
    settings: Settings,
    session: AsyncSession,
    *,
    players: int,
    seats: int,
    meanwhile: Callable[[int, int, dict[str, Socket]], Awaitable[None]] | None = None,
) -> tuple[int, dict[str, Socket], dict[str, Any], dict[str, dict[str, tuple[int, int]]]]:
    """A sit-and-go with every player and a follower on a websocket, played out; its
    details, and where its players sat at the start (``seated_at`` read once it started)."""
    tournament_id, _ = await make_sng(client, settings, players, seats)
    names = [f"player{n}" for n in range(players)]
    tokens = {name: await player_token(client, name) for name in [*names, "rail"]}
    cardroom: Cardroom = app.state.cardroom
    sat: dict[str, dict[str, tuple[int, int]]] = {}
    async with serve(app) as host, sockets(host, tokens) as socks:
        follow = await socks["rail"].ask(
            {"type": "subscribe_tournament", "tournament": tournament_id}
        )
        state = follow["result"]
        assert state["type"] == "tournament_state" and state["status"] == "registering", state
        assert state["entrants"] == 0 and state["you"] is None
        for name in names:
            answer = await client.post(
                f"/tournaments/{tournament_id}/register",
                json={"request_id": name},
                headers=bearer(tokens[name]),
            )
            assert answer.status_code == 201, answer.text

        async def started() -> bool:
            sat["start"] = await seated_at(session, tournament_id)
            return len(sat["start"]) == players

        await until(started, "the sit-and-go never seated its players")

        async def during(actions: int) -> None:
            if meanwhile is not None:
                await meanwhile(tournament_id, actions, socks)

        details = await play_out(client, cardroom, session, tournament_id, meanwhile=during)

        async def told_the_end() -> bool:
            return bool(socks["rail"].events("finished", tournament=tournament_id))

        await until(told_the_end, "the end was never told")
        # After the end, where it stands: the results, and a player's own place.
        final = await socks["player0"].ask(
            {"type": "subscribe_tournament", "tournament": tournament_id}
        )
        state = final["result"]
        assert state["status"] == "finished" and state["players_left"] == 1
        (mine,) = [e for e in details["entries"] if e["player"] == "player0"]
        you = state["you"]
        assert (you["place"], you["prize"]) == (mine["place"], mine["prize"]), you
        results = {r["player"]: (r["place"], r["prize"]) for r in state["results"]}
        assert results == {e["player"]: (e["place"], e["prize"]) for e in details["entries"]}
    return tournament_id, socks, details, sat


def check_the_story(
    tournament_id: int,
    socks: dict[str, Socket],
    details: dict[str, Any],
    start: dict[str, tuple[int, int]],
    hands: int,
) -> None:
    """What each player and the follower heard, against what the server recorded."""
    entries = {e["player"]: e for e in details["entries"]}
    players = sorted(entries)
    rail = socks["rail"]
    registered = rail.events("registered", tournament=tournament_id)
    assert [e["data"]["player"] for e in registered] == players
    assert [e["data"]["entrants"] for e in registered] == list(range(1, len(players) + 1))
    (started,) = rail.events("started", tournament=tournament_id)
    assert started["data"]["players_left"] == len(players)
    assert started["data"]["level"]["number"] == 1
    assert started["data"]["next_level"]["number"] == 2
    assert started["data"]["hands_left"] is not None  # levels of hands
    levels = [
        e["data"]["level"]["number"] for e in rail.events("level_up", tournament=tournament_id)
    ]
    assert levels == sorted(levels) and levels[:1] == [2][: len(levels)], levels
    if hands > 1:  # the first hand's end began level 2 (a level of one hand)
        assert levels[0] == 2
    # Every player out, once each, with the place and prize the server paid.
    winner = next(name for name, e in entries.items() if e["place"] == 1 and e["prize"])
    out = rail.events("eliminated", tournament=tournament_id)
    assert sorted(e["data"]["player"] for e in out) == sorted(set(players) - {winner})
    for event in out:
        entry = entries[event["data"]["player"]]
        assert (event["data"]["place"], event["data"]["prize"]) == (entry["place"], entry["prize"])
    lefts = [e["data"]["players_left"] for e in out]
    assert lefts == sorted(lefts, reverse=True) and lefts[-1] == 1
    (finished,) = rail.events("finished", tournament=tournament_id)
    assert finished["data"]["winner"] == winner
    results = {r["player"]: (r["place"], r["prize"]) for r in finished["data"]["results"]}
    assert results == {name: (e["place"], e["prize"]) for name, e in entries.items()}
    for name in players:
        own = [
            e
            for e in socks[name].events(tournament=tournament_id)
            if e["data"].get("player", name) == name
        ]
        kinds = [e["kind"] for e in own]
        assert kinds[:3] == ["registered", "started", "seated"], (name, kinds)
        seated = own[2]["data"]
        assert (seated["table"], seated["seat"]) == start[name], (name, seated)
        assert seated["stack"] == 60
        if name == winner:
            assert "eliminated" not in kinds
        else:
            (gone,) = [e for e in own if e["kind"] == "eliminated"]
            assert (gone["data"]["place"], gone["data"]["prize"]) == (
                entries[name]["place"],
                entries[name]["prize"],
            )
        assert kinds[-1] == "finished", (name, kinds)
        # A player's own socket hears no other player's seat.
        assert all(
            e["kind"] not in ("seated", "moved") or e["data"]["table"] is not None for e in own
        )


async def test_players_hear_their_seat_the_levels_their_place_and_the_results(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    tournament_id, socks, details, sat = await play_with_sockets(
        app, client, settings, session, players=4, seats=8
    )
    check_the_story(tournament_id, socks, details, sat["start"], await hands_of(session))
    # One table: nobody moved, and the table is final from the start.
    for socket in socks.values():
        assert not socket.events("moved", tournament=tournament_id)
        assert not socket.events("final_table", tournament=tournament_id)


async def test_players_moved_to_the_final_table_hear_where(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    tournament_id, socks, details, sat = await play_with_sockets(
        app, client, settings, session, players=7, seats=4
    )
    check_the_story(tournament_id, socks, details, sat["start"], await hands_of(session))
    (final,) = socks["rail"].events("final_table", tournament=tournament_id)
    at_final = {s["player"]: s["seat"] for s in final["data"]["seats"]}
    assert final["data"]["players_left"] == len(at_final) <= 4
    table = final["data"]["table"]
    moved_to: dict[str, tuple[int, int]] = {}
    for entry in details["entries"]:
        player = entry["player"]
        for event in socks[player].events("moved", tournament=tournament_id):
            moved_to[player] = (event["data"]["table"], event["data"]["seat"])
    assert moved_to, "nobody heard of a move"
    # Each player at the final table last heard of the seat the draw gave them there (or
    # never moved from it).
    for player, seat in at_final.items():
        assert moved_to.get(player, sat["start"][player]) == (table, seat), player


async def test_a_player_learns_their_table_from_the_state_after_a_takeover(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    """The director killed mid-tournament: the player's ``tournament_state`` says the table and
    seat they sit at, the one the director that took over made them sit at; no player's
    place is told twice differently, every place is told."""
    directors: TournamentDirectors = app.state.directors
    stopped: list[int] = []
    checked: list[str] = []

    async def stop_the_director(tournament_id: int, actions: int, socks: dict[str, Socket]) -> None:
        if len(checked) < len(stopped):
            # Nobody acts meanwhile: the director that takes over seats everyone where its
            # journal says, and each player's state says that seat.
            await check_every_seat(tournament_id, socks)
            checked.append("seats")
        elif actions >= 10 * (len(stopped) + 1) and len(stopped) < 2:
            for task in list(directors.running.values()):
                task.cancel()
            stopped.append(actions)

    async def check_every_seat(tournament_id: int, socks: dict[str, Socket]) -> None:
        async def agree() -> bool:
            where = await seated_at(session, tournament_id)
            for player, seat in where.items():
                reply = await socks[player].ask(
                    {"type": "subscribe_tournament", "tournament": tournament_id}
                )
                you = reply["result"]["you"]
                if you["status"] == "playing" and (you["table"], you["seat"]) != seat:
                    return False
            return bool(where)

        await until(agree, "the players' states never matched their seats")

    tournament_id, socks, details, sat = await play_with_sockets(
        app, client, settings, session, players=7, seats=4, meanwhile=stop_the_director
    )
    assert stopped and checked, "the tournament ended before its director could be stopped"
    check_the_story(tournament_id, socks, details, sat["start"], await hands_of(session))


async def test_the_state_says_where_a_player_sits_mid_tournament(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    tournament_id, _ = await make_sng(client, settings, 3, 8)
    tokens = {f"pl{n}": await player_token(client, f"pl{n}") for n in range(3)}
    for name, token in tokens.items():
        answer = await client.post(
            f"/tournaments/{tournament_id}/register",
            json={"request_id": name},
            headers=bearer(token),
        )
        assert answer.status_code == 201, answer.text
    async with serve(app) as host, sockets(host, tokens) as socks:

        async def seated() -> bool:
            return len(await seated_at(session, tournament_id)) == 3

        await until(seated, "never seated")
        where = await seated_at(session, tournament_id)
        reply = await socks["pl1"].ask(
            {"type": "subscribe_tournament", "tournament": tournament_id}
        )
        state = reply["result"]
        assert state["status"] == "running" and state["players_left"] == 3
        assert state["average_stack"] == 60 and state["tables"] == 1
        assert state["level"]["number"] == 1 and state["next_level"]["number"] == 2
        you = state["you"]
        assert you["status"] == "playing" and (you["table"], you["seat"]) == where["pl1"]
        assert you["stack"] == 60 and you["rank"] == 1
        # Refusals: not a tournament id, no such tournament, not signed in.
        bad = await socks["pl1"].ask({"type": "subscribe_tournament", "tournament": "x"})
        assert bad["type"] == "error" and bad["code"] == "bad_tournament"
        unknown = await socks["pl1"].ask({"type": "subscribe_tournament", "tournament": 999})
        assert unknown["type"] == "error" and unknown["code"] == "unknown_tournament"
        gone = await socks["pl1"].ask(
            {"type": "unsubscribe_tournament", "tournament": tournament_id}
        )
        assert gone["result"] == {"tournament": tournament_id}
        async with connect(f"ws://{host}/ws") as anonymous:
            await anonymous.recv()  # hello
            await anonymous.send(
                json.dumps({"type": "subscribe_tournament", "id": 1, "tournament": tournament_id})
            )
            refused = json.loads(await asyncio.wait_for(anonymous.recv(), 10))
            assert refused["code"] == "not_authenticated"
