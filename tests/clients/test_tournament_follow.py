"""A followed tournament as the client keeps it, frame by frame (no server): the state, the
player's seat from ``seated`` and ``moved``, a key seen before dropped, an event older than the
state dropped, an event newer than a state that came after it applied again on top of it, the
end."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from stud_client import StudClient, TournamentFollow, TournamentSeat


def event(kind: str, fact: int, key: str, **data: Any) -> dict[str, Any]:
    return {
        "type": "tournament_event",
        "tournament": 3,
        "fact": fact,
        "key": key,
        "kind": kind,
        "data": data,
    }


def state(fact: int, **you: Any) -> dict[str, Any]:
    return {
        "type": "tournament_state",
        "tournament": 3,
        "status": "running",
        "fact": fact,
        "players_left": 9,
        "you": you or None,
    }


@pytest.fixture
async def client() -> AsyncIterator[StudClient]:
    made = StudClient("http://127.0.0.1:1")
    made.player = "ann"
    yield made
    await made.close()


def followed(client: StudClient) -> TournamentFollow:
    follow = TournamentFollow(client.tournaments, 3, everything=True)
    client.tournaments._follows[3] = follow
    return follow


async def test_the_seat_follows_the_state_and_the_moves(client: StudClient) -> None:
    follow = followed(client)
    follow._apply_state(state(10, status="playing", table=7, table_number=1, seat=2, stack=60))
    assert follow.seat == TournamentSeat(7, 1, 2) and follow.fact == 10
    moved = event("moved", 12, "12:0", from_table=7, table=8, table_number=2, seat=5, stack=80)
    client._on_text(_dumps(moved))
    assert follow.seat == TournamentSeat(8, 2, 5) and follow.you is not None
    assert follow.you["stack"] == 80
    # The same event again (a director taking over says its last fact again): dropped.
    client._on_text(_dumps({**moved, "data": {**moved["data"], "seat": 6}}))
    assert follow.seat == TournamentSeat(8, 2, 5) and follow.dropped == 1
    # An event of a fact below the state's: dropped (the state has it).
    client._on_text(_dumps(event("moved", 9, "9:0", table=9, table_number=3, seat=1)))
    assert follow.seat == TournamentSeat(8, 2, 5) and follow.dropped == 2
    # Another tournament's events are not this follow's.
    client._on_text(_dumps({**event("moved", 20, "20:0", table=1, seat=1), "tournament": 4}))
    assert follow.seat == TournamentSeat(8, 2, 5)


async def test_an_event_newer_than_a_state_that_came_after_it_stays(client: StudClient) -> None:
    follow = followed(client)
    follow._apply_state(state(10, status="playing", table=7, table_number=1, seat=2))
    client._on_text(_dumps(event("moved", 14, "14:0", table=8, table_number=2, seat=5)))
    # A state read before that move, answered after it: the move is applied on top again.
    follow._apply_state(state(13, status="playing", table=7, table_number=1, seat=2))
    assert follow.seat == TournamentSeat(8, 2, 5) and follow.states == 2
    # A state that has the move: as it says.
    follow._apply_state(state(20, status="playing", table=9, table_number=3, seat=0))
    assert follow.seat == TournamentSeat(9, 3, 0)


async def test_out_the_end_and_waiting_for_them(client: StudClient) -> None:
    follow = followed(client)
    follow._apply_state(state(10, status="playing", table=7, table_number=1, seat=2))
    waiter = asyncio.create_task(follow.wait_for(lambda f: f.over_for_me, timeout=5))
    await asyncio.sleep(0)
    assert not waiter.done()
    # Another player out changes the field, not my part.
    client._on_text(_dumps(event("eliminated", 11, "11:0", player="bob", place=9, prize=0)))
    assert follow.state["players_left"] == 9 and follow.seat is not None
    gone = event("eliminated", 15, "15:1", player="ann", place=4, prize=0, players_left=3)
    client._on_text(_dumps(gone))
    assert (await waiter) is follow
    assert follow.seat is None and (follow.place, follow.prize) == (4, 0)
    assert follow.state["players_left"] == 3 and not follow.over
    results = [{"player": "cat", "place": 1, "prize": 500}, {"player": "ann", "place": 4}]
    client._on_text(_dumps(event("finished", 30, "30:2", winner="cat", results=results)))
    assert follow.over and follow.status == "finished" and follow.place == 4


async def test_the_winner_is_told_by_the_end(client: StudClient) -> None:
    follow = followed(client)
    follow._apply_state(state(10, status="playing", table=7, table_number=1, seat=2))
    stream = follow.events()
    results = [{"player": "ann", "place": 1, "prize": 500, "tied": 1}]
    client._on_text(_dumps(event("finished", 30, "30:2", winner="ann", results=results)))
    assert follow.you == {"status": "winner", "place": 1, "prize": 500, "tied": 1}
    assert follow.seat is None and follow.over_for_me
    taken = await asyncio.wait_for(stream.__anext__(), 1)
    assert taken.kind == "finished" and taken.key == "30:2"
    await stream.aclose()


def _dumps(frame: dict[str, Any]) -> str:
    return json.dumps(frame)
