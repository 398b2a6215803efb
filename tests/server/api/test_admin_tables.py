"""The back office's table operations over HTTP with real tokens, on SQLite and PostgreSQL:
change a table's settings, pause and resume it, void its hand in progress, close it; what the
players' websockets see of each, the audit log, and the books.

(tests/server/cardroom/test_cluster.py drives the same operations at a table another node runs.)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from live import receive, serve
from play import calling, play, submit, wait_for
from server_helpers import FAST_HASHING, bearer, error_code, operator_token, player_token
from websockets.asyncio.client import ClientConnection, connect

from engine.actions import LegalActions
from engine.events import decode
from engine.table_view import TablePicture
from server import cli
from server.cardroom.supervisor import Cardroom
from server.settings import Settings
from server.table.actor import TableActor


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        starting_bankroll=10_000,
        pause_between_hands_seconds=0,
        action_clock_seconds=30,
        **FAST_HASHING,
    )


@dataclass
class Room:
    client: httpx.AsyncClient
    app: FastAPI
    settings: Settings
    boss: dict[str, str]  # the operator's headers
    tokens: dict[str, str]
    table: int

    @property
    def cardroom(self) -> Cardroom:
        cardroom: Cardroom = self.app.state.cardroom
        return cardroom

    @property
    def actor(self) -> TableActor:
        actor = self.cardroom.actor(self.table)
        assert actor is not None
        return actor

    async def post(self, path: str, body: Any = None, **params: Any) -> httpx.Response:
        return await self.client.post(
            f"/admin/tables/{self.table}/{path}", headers=self.boss, json=body, params=params
        )

    async def patch(self, body: Any, table: int | None = None) -> httpx.Response:
        table = self.table if table is None else table
        return await self.client.patch(f"/admin/tables/{table}", headers=self.boss, json=body)

    async def audit(self, action: str) -> list[dict[str, Any]]:
        answer = await self.client.get("/admin/audit", headers=self.boss, params={"action": action})
        entries: list[dict[str, Any]] = answer.json()["entries"]
        return entries

    async def books_balance(self) -> None:
        books = (await self.client.get("/admin/books", headers=self.boss)).json()
        assert books["balanced"] is True, books
        status, lines = await cli.audit(self.settings)
        assert status == 0, lines


@pytest.fixture
async def room(client: httpx.AsyncClient, app: FastAPI, settings: Settings) -> Room:
    boss = bearer(await operator_token(client, settings))
    tokens = {name: await player_token(client, name) for name in ("ann", "bob", "cat")}
    made = await client.post(
        "/admin/tables",
        headers=boss,
        json={
            "name": "Main",
            "config": {"structure": "no_limit"},
            "min_buy_in": 20,
            "max_buy_in": 500,
        },
    )
    assert made.status_code == 201, made.text
    return Room(client, app, settings, boss, tokens, made.json()["id"])


@pytest.fixture
async def host(app: FastAPI) -> AsyncIterator[str]:
    async with serve(app) as address:
        yield address


async def watch(host: str, token: str, table: int) -> tuple[ClientConnection, dict[str, Any]]:
    """A player's websocket watching the table, and the snapshot it got."""
    ws = await connect(f"ws://{host}/ws")
    assert (await receive(ws))["type"] == "hello"
    await ws.send(json.dumps({"v": 1, "type": "auth", "id": 1, "token": token}))
    await ws.send(json.dumps({"v": 1, "type": "watch", "id": 2, "table": table}))
    while True:
        frame = await receive(ws)
        if frame["type"] == "reply" and frame["result"].get("type") == "snapshot":
            return ws, frame["result"]


async def until_event(
    ws: ClientConnection, kind: str, seen: list[dict[str, Any]]
) -> dict[str, Any]:
    """Frames until an event of ``kind`` (every event kept in ``seen``, in order)."""
    while True:
        frame = await receive(ws)
        if frame["type"] == "event":
            seen.append(frame)
            if frame["kind"] == kind:
                return frame


def fold(snapshot: dict[str, Any], frames: list[dict[str, Any]], me: str) -> TablePicture:
    """The Python client's fold of a snapshot and the public events after it."""
    picture = TablePicture.of_snapshot(snapshot, me)
    for frame in frames:
        if frame["seq"] > snapshot["seq"] and not frame.get("private"):
            picture.apply(decode(frame["kind"], frame["data"]))
    return picture


# ---------------------------------------------------------------------- void and close


def side_pot_play(actor: TableActor) -> Any:
    """Ann shoves her short stack; then one of the others bets past her and the hand is
    stopped with the other still to act: a side pot, mid-street."""

    def choose(legal: LegalActions, _: Any) -> tuple[str, int | None]:
        hand = actor.table.hand
        assert hand is not None
        player = actor.table.seats[legal.seat].player  # type: ignore[index,union-attr]
        if player == "ann" and legal.wager is not None:
            return legal.wager, legal.max_to
        for kind in ("bring_in", "call", "check"):
            if kind in legal.kinds:
                if kind != "bring_in" and ann_all_in(actor) and legal.wager and not side(actor):
                    return legal.wager, legal.min_to
                return kind, None
        return "fold", None

    return choose


def ann_all_in(actor: TableActor) -> bool:
    hand = actor.table.hand
    assert hand is not None
    ann = actor.table.seat_of("ann")
    return hand.stacks[hand.seats.index(ann)] == 0  # type: ignore[arg-type]


def side(actor: TableActor) -> bool:
    """Someone has put more in than ann's whole stack: a side pot."""
    hand = actor.table.hand
    if hand is None or hand.is_over():
        return False
    put = [start - now for start, now in zip(hand.starting, hand.stacks, strict=True)]
    ann = hand.seats.index(actor.table.seat_of("ann"))  # type: ignore[arg-type]
    return hand.stacks[ann] == 0 and max(put) > put[ann]


async def test_an_operator_voids_a_hand_mid_street_then_closes_the_table(
    room: Room, host: str
) -> None:
    actor = room.actor
    # Held while the three sit down, so that the first hand deals all three in.
    assert (await room.post("pause", {"reason": "seating"})).json()["after_hand"] is False
    for seat, (player, chips) in enumerate((("ann", 30), ("bob", 200), ("cat", 200))):
        await submit(actor, "sit", player, buy_in=chips, seat=seat)
    assert actor.table.hand is None
    assert (await room.post("resume", {"reason": "seated"})).status_code == 200
    bob, snapshot = await watch(host, room.tokens["bob"], room.table)
    await play(actor, lambda: side(actor), choose=side_pot_play(actor))
    hand = actor.table.hand
    assert hand is not None and not hand.is_over() and hand.seat_to_act() is not None
    number = actor.hand_number
    start = {
        actor.table.seats[seat].player: hand.starting[i]  # type: ignore[union-attr]
        for i, seat in enumerate(hand.seats)
    }
    assert sum(start.values()) == 430 and start["ann"] < 200
    assert hand.pot_total() > 2 * start["ann"]  # ann's all-in, and more beside it

    voided = await room.post("void", {"reason": "  misdeal reported  "})
    assert voided.status_code == 200, voided.text
    assert voided.json() == {
        "table_id": room.table,
        "hand": number,
        "stacks": start,
        "reason": "misdeal reported",
    }
    assert {s.player: s.stack for s in actor.table.seats if s is not None} == start
    # bob's screen: the hand void, by an operator, and why; every stack back.
    seen: list[dict[str, Any]] = []
    assert hand.deck.fair is not None and hand.deck.fair.method == "stud-deck/2"
    cancelled = await until_event(bob, "hand_cancelled", seen)
    assert cancelled["data"] == {  # a stud-deck/2 void reveals no seed (docs/fairness.md)
        "hand": number,
        "reason": "operator_void",
        "detail": "misdeal reported",
        "stacks": {"0": start["ann"], "1": start["bob"], "2": start["cat"]},
    }
    picture = fold(snapshot, seen, "bob")
    assert [s.stack for s in picture.seats[:3]] == [start["ann"], start["bob"], start["cat"]]
    assert picture.hand == []
    [entry] = await room.audit("hand.void")
    assert entry["actor"] == "boss" and entry["reason"] == "misdeal reported"
    assert entry["target_id"] == str(room.table)
    assert entry["after"] == {"hand": number, "stacks": start}
    assert entry["before"]["hand"] == number and entry["before"]["pot"] == hand.pot_total()
    record = (
        await room.client.get("/admin/hands", headers=room.boss, params={"table": room.table})
    ).json()["hands"][0]
    assert record["number"] == number and record["cancelled"] is True
    events = (
        await room.client.get(f"/admin/hands/{record['id']}/events", headers=room.boss)
    ).json()["events"]
    assert events[-1]["data"] == {"reason": "operator_void", "detail": "misdeal reported"}
    await room.books_balance()

    # The next hand is dealt; the operator closes the table in its middle: it finishes first.
    await wait_for(lambda: actor.hand_number == number + 1 and actor.table.hand is not None)
    closing = await room.post("close", {"reason": "end of the night"})
    assert closing.status_code == 200, closing.text
    assert closing.json()["after_hand"] is True and closing.json()["cashed_out"] == {}
    assert closing.json()["table"]["status"] == "open"
    assert closing.json()["table"]["closing_reason"] == "end of the night"
    again = await room.post("close", {"reason": "twice"})
    assert again.status_code == 409 and error_code(again) == "table_shut"
    await until_event(bob, "operator_closed", seen)
    assert seen[-1]["data"] == {"reason": "end of the night", "after_hand": True}
    await play(actor, lambda: actor.shut, choose=calling)
    left = await until_event(bob, "operator_closed", seen)
    assert left["data"] == {"reason": "end of the night", "after_hand": False}
    gone = {f["data"]["player"]: f["data"]["cashed_out"] for f in seen if f["kind"] == "seat_left"}
    assert set(gone) == {"ann", "bob", "cat"} and sum(gone.values()) == 430
    assert fold(snapshot, seen, "bob").closed == "end of the night"
    await wait_for(lambda: room.cardroom.actor(room.table) is None)

    for name, chips in gone.items():
        me = (await room.client.get("/wallet", headers=bearer(room.tokens[name]))).json()
        assert me["balance"] == 10_000 - {"ann": 30}.get(name, 200) + chips
    await room.books_balance()
    listed = (await room.client.get("/admin/tables", headers=room.boss)).json()
    assert listed[0]["status"] == "closed" and listed[0]["closed_at"] is not None
    assert (await room.client.get("/tables")).json() == []
    assert (await room.client.get("/admin/tables/live", headers=room.boss)).json() == []
    hands = (await room.client.get("/admin/hands", headers=room.boss)).json()
    assert hands["total"] == number + 1  # the history stays
    [entry] = await room.audit("table.close")
    assert entry["before"]["status"] == "open" and set(entry["before"]["players"]) == set(start)
    assert entry["after"] == {"status": "closing", "void": False}
    # A closed table refuses every command, over REST and over a websocket, for good.
    for path in ("pause", "resume", "void", "close"):
        refused = await room.post(path, {"reason": "x"})
        assert refused.status_code == 409 and error_code(refused) == "table_shut", path
    refused = await room.patch({"seats": 4})
    assert refused.status_code == 409 and error_code(refused) == "table_shut"
    await bob.send(json.dumps({"v": 1, "type": "sit", "id": 9, "table": room.table, "buy_in": 50}))
    frame = await receive(bob)
    while frame["type"] != "error":
        frame = await receive(bob)
    assert frame["code"] == "table_shut"
    await bob.close()


async def test_close_with_void_cashes_everyone_out_at_once(room: Room) -> None:
    actor = room.actor
    for player in ("ann", "bob", "cat"):
        await submit(actor, "sit", player, buy_in=100)
    await wait_for(lambda: actor.table.hand is not None)
    closed = await room.post("close", {"reason": "fire drill"}, void="true")
    assert closed.status_code == 200, closed.text
    body = closed.json()
    assert body["after_hand"] is False and body["cashed_out"] == {
        "ann": 100,
        "bob": 100,
        "cat": 100,
    }
    assert body["table"]["status"] == "closed"
    [entry] = await room.audit("table.close")
    assert entry["after"] == {"status": "closed", "void": True}
    await room.books_balance()


# ---------------------------------------------------------------------- pause and resume


async def test_a_pause_takes_effect_after_the_hand_and_play_goes_on_after_resume(
    room: Room, host: str
) -> None:
    actor = room.actor
    for player in ("ann", "bob"):
        await submit(actor, "sit", player, buy_in=100)
    ann, snapshot = await watch(host, room.tokens["ann"], room.table)
    await wait_for(lambda: actor.table.hand is not None)
    paused = await room.post("pause", {"reason": "dealer change"})
    assert paused.status_code == 200, paused.text
    assert paused.json()["after_hand"] is True
    assert paused.json()["table"]["paused_reason"] == "dealer change"
    twice = await room.post("pause", {"reason": "again"})
    assert twice.status_code == 409 and error_code(twice) == "table_already_paused"
    [row] = (await room.client.get("/admin/tables/live", headers=room.boss)).json()
    assert (row["paused_by"], row["pause_reason"]) == ("operator", "dealer change")
    [line] = (await room.client.get("/tables")).json()
    assert line["paused"] is True

    seen: list[dict[str, Any]] = []
    told = await until_event(ann, "operator_paused", seen)
    assert told["data"] == {"reason": "dealer change", "after_hand": True}
    await play(actor, lambda: actor.table.hand is None, choose=calling)  # the hand finishes
    await asyncio.sleep(0.3)
    assert actor.hand_number == 1 and actor.table.hand is None, "no new hand while paused"
    assert fold(snapshot, seen, "ann").operator_pause == "dealer change"
    resync = await watch(host, room.tokens["bob"], room.table)
    assert resync[1]["operator_pause"] == "dealer change"
    await resync[0].close()

    resumed = await room.post("resume", {"reason": "new dealer seated"})
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["table"]["paused_reason"] is None
    await until_event(ann, "operator_resumed", seen)
    assert seen[-1]["data"] == {"reason": "new dealer seated"}
    await wait_for(lambda: actor.hand_number == 2)
    not_paused = await room.post("resume", {"reason": "again"})
    assert not_paused.status_code == 409 and error_code(not_paused) == "table_not_paused"
    [pause] = await room.audit("table.pause")
    assert pause["before"] == {"paused": None}
    assert pause["after"] == {"paused": "dealer change", "after_hand": True}
    [resume] = await room.audit("table.resume")
    assert resume["reason"] == "new dealer seated" and resume["after"] == {"paused": None}
    await ann.close()


async def test_operations_refuse_bad_input_and_change_nothing(room: Room) -> None:
    for path in ("pause", "resume", "void", "close"):
        for body in ({}, {"reason": ""}, {"reason": "   "}, {"reason": "x", "extra": 1}, None):
            refused = await room.post(path, body)
            assert refused.status_code == 400 and error_code(refused) == "bad_request", (path, body)
        unknown = await room.client.post(
            f"/admin/tables/999/{path}", headers=room.boss, json={"reason": "x"}
        )
        assert unknown.status_code == 404 and error_code(unknown) == "unknown_table"
    nothing = await room.post("void", {"reason": "no hand yet"})
    assert nothing.status_code == 409 and error_code(nothing) == "no_hand_in_progress"
    log = (await room.client.get("/admin/audit", headers=room.boss)).json()["entries"]
    assert [e["action"] for e in log] == ["table.create"]


# ---------------------------------------------------------------------- new settings


async def test_new_settings_take_effect_at_the_next_hand(room: Room, host: str) -> None:
    actor = room.actor
    await submit(actor, "sit", "ann", buy_in=100, seat=0)
    await submit(actor, "sit", "bob", buy_in=100, seat=6)
    ann, snapshot = await watch(host, room.tokens["ann"], room.table)
    await wait_for(lambda: actor.table.hand is not None)
    in_use = await room.patch({"seats": 4})
    assert in_use.status_code == 409 and error_code(in_use) == "seats_in_use"

    new = {
        "config": {
            "structure": "fixed_limit",
            "ante": 2,
            "bring_in": 3,
            "small_bet": 10,
            "big_bet": 20,
        },
        "seats": 7,
        "min_buy_in": 50,
        "action_clock": 20,
        "time_bank": 10,
        "spectator_chat": True,
        "reason": "higher stakes",
    }
    changed = await room.patch(new)
    assert changed.status_code == 200, changed.text
    table = changed.json()["table"]
    assert changed.json()["after_hand"] is True
    assert (table["seats"], table["min_buy_in"], table["max_buy_in"]) == (7, 50, 500)
    assert (table["action_clock"], table["time_bank"]) == (20, 10)
    assert table["config"]["ante"] == 2 and table["config"]["structure"] == "fixed_limit"
    assert table["config"]["variant"] == "seven_card_stud"  # what was not given stays
    # The hand in progress plays on under the old rules.
    hand = actor.table.hand
    assert hand is not None and hand.config.ante == 1 and hand.config.structure == "no_limit"
    assert actor.settings.action_clock == 30 and len(actor.table.seats) == 8

    seen: list[dict[str, Any]] = []
    await play(actor, lambda: actor.hand_number >= 2, choose=calling)
    told = await until_event(ann, "table_settings", seen)
    data = told["data"]
    assert data["seats"] == 7 and data["buy_in"] == {"min": 50, "max": 500}
    assert data["stakes"] == {
        "ante": 2,
        "bring_in": 3,
        "small_bet": 10,
        "big_bet": 20,
        "structure": "fixed_limit",
    }
    assert (data["action_clock"], data["time_bank"]) == (20, 10)
    assert data["config"] == table["config"]
    picture = fold(snapshot, seen, "ann")
    assert len(picture.seats) == 7 and picture.rules is not None
    assert picture.rules["stakes"]["ante"] == 2
    await wait_for(lambda: actor.table.hand is not None and actor.hand_number == 2)
    assert actor.table.hand is not None and actor.table.hand.config.ante == 2
    assert actor.settings.action_clock == 20 and len(actor.table.seats) == 7
    assert actor.settings.spectator_chat is True
    [line] = (await room.client.get("/tables")).json()
    assert line["stakes"]["ante"] == 2 and line["seats"] == 7 and line["min_buy_in"] == 50
    [entry] = await room.audit("table.update")
    assert entry["reason"] == "higher stakes"
    assert entry["before"]["seats"] == 8 and entry["after"]["seats"] == 7
    assert entry["before"]["config"]["ante"] == 1 and entry["after"]["config"]["ante"] == 2
    assert (entry["before"]["action_clock"], entry["after"]["action_clock"]) == (None, 20)
    await ann.close()


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({}, "bad_request"),
        ({"reason": "nothing else"}, "bad_request"),
        ({"seats": 1}, "bad_request"),
        ({"seats": "six"}, "bad_request"),
        ({"action_clock": 0}, "bad_request"),
        ({"time_bank": -1}, "bad_request"),
        ({"nonsense": 1}, "bad_request"),
        ({"spectator_chat": None}, "bad_request"),  # left out is kept; null is no setting
        ({"time_fee": None}, "bad_request"),
        ({"time_fee_period": None, "reason": "x"}, "bad_request"),
        ({"seats": 11}, "bad_request"),  # past any variant's most
        ({"seats": 9}, "bad_config"),  # seven-card stud seats 8 at most
        ({"config": {"bring_in": 9}}, "bad_config"),
        ({"config": {"variant": "texas_holdem"}}, "bad_config"),
        ({"config": {"no_such_rule": 1}}, "bad_config"),
        ({"config": {"ante_by_position": [1, 1]}}, "bad_config"),
        ({"min_buy_in": 600}, "bad_config"),  # above the maximum of 500
        ({"min_buy_in": 1}, "bad_config"),  # does not cover a hand
    ],
)
async def test_bad_settings_are_refused_and_change_nothing(
    room: Room, body: dict[str, Any], code: str
) -> None:
    before = (await room.client.get("/admin/tables", headers=room.boss)).json()
    refused = await room.patch(body)
    assert refused.status_code == 400 and error_code(refused) == code, refused.text
    assert (await room.client.get("/admin/tables", headers=room.boss)).json() == before
    assert room.actor.table.config.structure == "no_limit"
    assert await room.audit("table.update") == []
    unknown = await room.patch({"seats": 4}, table=999)
    assert unknown.status_code == 404 and error_code(unknown) == "unknown_table"
