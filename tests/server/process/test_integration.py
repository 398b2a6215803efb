"""The whole cardroom in one process, as an operator runs it: ``python -m server`` in a
subprocess (uvicorn, SQLite, the in-memory bus), eight real websocket clients playing random
legal actions over two tables at a time and three variants, one of them dropping and coming
back. Then: the books balance, no frame ever carried another seat's down card before the
showdown, no client saw a gap in a table's sequence, and the PHH of every hand of the PHH
tables replays to the stacks the table paid.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_helpers import end_process
from websockets.asyncio.client import ClientConnection, connect

from engine import phh, phh_replay, phh_rules
from server.logs import level_of
from server.store.table_config import config_to_json

ROOT = Path(__file__).resolve().parents[3]
PLAYERS = [f"player{n}" for n in range(1, 9)]
PASSWORD = "integration"
BANKROLL = 10_000
HANDS = 100  # at least, over all tables
BUY_IN = 200


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """``python -m server`` on a fresh SQLite file; yields its base URL."""
    port = free_port()
    env = {
        **os.environ,
        "STUD_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'cardroom.db'}",
        "STUD_PORT": str(port),
        "STUD_STARTING_BANKROLL": str(BANKROLL),
        "STUD_ACTION_CLOCK_SECONDS": "2",
        "STUD_TIME_BANK_SECONDS": "0",
        "STUD_PAUSE_BETWEEN_HANDS_SECONDS": "0.01",
        "STUD_PASSWORD_TIME_COST": "1",
        "STUD_PASSWORD_MEMORY_KIB": "8",
        "STUD_PASSWORD_PARALLELISM": "1",
        "STUD_LOGIN_FAILURES_PER_ADDRESS_PER_MINUTE": "100000",
        "STUD_REGISTER_PER_ADDRESS_PER_MINUTE": "100000",
        "STUD_STARTING_GRANTS_PER_ADDRESS": "100000",
        "STUD_WS_SOCKETS_PER_ADDRESS": "100000",
    }
    command = [sys.executable, "-m", "server"]
    subprocess.run(
        [*command, "create-operator", "boss", "--password-stdin"],
        input=PASSWORD + "\n",
        text=True,
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    log = (tmp_path / "server.log").open("w")
    process = subprocess.Popen(
        [*command, "--log-level", "warning"], env=env, cwd=ROOT, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx.get(f"{url}/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, (tmp_path / "server.log").read_text()
            time.sleep(0.05)
        yield url
    finally:
        end_process(process)
        log.close()
        errors = [
            line
            for line in (tmp_path / "server.log").read_text().splitlines()
            if "Traceback" in line or level_of(line) in ("ERROR", "CRITICAL")
        ]
        assert not errors, (tmp_path / "server.log").read_text()[-5000:]


@dataclass
class Client:
    """A player's websocket client: acts at random from the ``turn`` events, checks seqs."""

    name: str
    token: str
    url: str
    rng: random.Random
    ws: ClientConnection | None = None
    table: int | None = None
    seat: int | None = None
    last_seq: dict[int, int] = field(default_factory=dict)
    hand: dict[int, int] = field(default_factory=dict)  # table -> hand being dealt
    before_showdown: dict[int, bool] = field(default_factory=dict)
    frames: list[tuple[int, int, int | None, str]] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    acted: int = 0
    ended: set[tuple[int, int]] = field(default_factory=set)  # (table, hand) seen to end
    next_id: int = 0
    seated: asyncio.Event = field(default_factory=asyncio.Event)
    left: asyncio.Event = field(default_factory=asyncio.Event)
    leaving: bool = False  # asked to leave: no more rebuys or sitting in

    async def send(self, **frame: Any) -> None:
        self.next_id += 1
        assert self.ws is not None
        await self.ws.send(json.dumps({"id": self.next_id, **frame}))

    async def connect(self) -> None:
        self.ws = await connect(self.url.replace("http", "ws") + "/ws")
        await self.send(type="auth", token=self.token)

    async def serve(self) -> None:
        """Read frames until the socket closes."""
        assert self.ws is not None
        try:
            async for text in self.ws:
                await self.on_frame(json.loads(text), str(text))
        except Exception:  # noqa: BLE001 - a dropped socket ends the reader
            pass

    async def on_frame(self, frame: dict[str, Any], text: str) -> None:
        kind = frame["type"]
        if kind == "error":
            if not (self.leaving and frame["code"] == "not_seated"):
                # (a rebuy sent just before leaving may land after the seat is gone)
                self.refusals.append(f"{frame['code']}: {frame['message']}")
        elif kind == "reply" and frame["result"].get("type") == "snapshot":
            snap = frame["result"]
            table = snap["table"]
            self.last_seq[table] = snap["seq"]
            if snap["hand"] is not None:
                self.hand[table] = snap["hand_number"]
                shown = any(s["shown"] for s in snap["hand"]["seats"].values())
                self.before_showdown[table] = not snap["hand"]["over"] and not shown
            if table == self.table:
                self.seat = snap["you"]
                mine = [s for s in snap["seats"] if s["seat"] == self.seat]
                if mine and mine[0].get("sitting_out") and not self.leaving:
                    # Back from a drop during which the seat was sat out (broke, say).
                    if mine[0]["stack"] == 0:
                        await self.send(type="add_chips", table=table, amount=BUY_IN)
                    await self.send(type="sit_in", table=table)
            self.record(table, text)
        elif kind == "reply" and "cashed_out" in frame["result"]:
            self.left.set()
        elif kind == "event":
            await self.on_event(frame, text)

    def record(self, table: int, text: str) -> None:
        if self.before_showdown.get(table) and table in self.hand:
            seat = self.seat if table == self.table else None
            self.frames.append((table, self.hand[table], seat, text))

    async def on_event(self, frame: dict[str, Any], text: str) -> None:
        table, seq, kind, data = frame["table"], frame["seq"], frame["kind"], frame["data"]
        if table in self.last_seq:
            expected = self.last_seq[table] + 1
            if seq != expected:
                self.gaps.append(f"{self.name} table {table}: seq {seq} after {expected - 1}")
            if not frame.get("private"):
                self.last_seq[table] = seq
        if kind == "hand_number":
            self.hand[table] = data["hand"]
            self.before_showdown[table] = True
        elif kind in ("showdown", "hand_ended"):
            self.before_showdown[table] = False
            if kind == "hand_ended" and table in self.hand:
                self.ended.add((table, self.hand[table]))
        self.record(table, text)
        if table != self.table:
            return
        if kind == "seat_taken" and data["player"] == self.name:
            self.seat = data["seat"]
            self.seated.set()
        elif kind == "seat_left" and data["player"] == self.name:
            self.seat = None
            self.left.set()
        elif (
            kind == "sat_out"
            and data["seat"] == self.seat
            and data.get("busted")
            and not self.leaving
        ):
            await self.send(type="add_chips", table=table, amount=BUY_IN)
            await self.send(type="sit_in", table=table)
        elif kind == "turn" and data["seat"] == self.seat and self.seat is not None:
            action, amount = choose(data, self.rng)
            extra = {} if amount is None else {"amount": amount}
            self.acted += 1
            await self.send(
                type="act",
                table=table,
                action_id=f"{self.name}-{self.next_id}",
                kind=action,
                **extra,
            )

    async def sit(self, table: int) -> None:
        self.table, self.seat, self.leaving = table, None, False
        self.seated.clear()
        await self.send(type="watch", table=table)
        await self.send(type="sit", table=table, buy_in=BUY_IN)
        await asyncio.wait_for(self.seated.wait(), 10)

    async def leave(self) -> None:
        self.left.clear()
        self.leaving = True
        await self.send(type="leave", table=self.table)
        await asyncio.wait_for(self.left.wait(), 30)


def choose(turn: dict[str, Any], rng: random.Random) -> tuple[str, int | None]:
    kinds = turn["kinds"]
    roll = rng.random()
    if "fold" in kinds and roll < 0.08:
        return "fold", None
    wager = turn.get("wager")
    if wager is not None and roll < 0.3:
        choices = turn.get("to_choices") or [turn["min_to"], turn["max_to"]]
        return wager, rng.choice(choices)
    for kind in ("check", "call", "bring_in"):
        if kind in kinds:
            return kind, None
    return kinds[-1], (turn["min_to"] if kinds[-1] == wager else None)


async def test_a_cardroom_plays_a_hundred_hands(server: str) -> None:
    async with httpx.AsyncClient(base_url=server, timeout=30) as http:
        await play_a_hundred_hands(http, server)


async def play_a_hundred_hands(http: httpx.AsyncClient, server: str) -> None:
    boss = await login(http, "boss")
    rules = {
        "Stud": config_to_json(phh_rules.phh_config("F7S", 1, 2, 5, 10)),
        "Razz": {"variant": "razz"},
        "Hi-Lo": config_to_json(phh_rules.phh_config("F7S/8", 1, 2, 5, 10)),
    }
    ids = {}
    for name, config in rules.items():
        created = await http.post(
            "/admin/tables",
            headers=auth(boss),
            json={
                "name": name,
                "config": config,
                "min_buy_in": 100,
                "max_buy_in": 1000,
            },
        )
        assert created.status_code == 201, created.text
        ids[name] = created.json()["id"]
    lobby = (await http.get("/tables")).json()
    assert [t["variant"] for t in lobby] == ["seven_card_stud", "razz", "seven_card_stud_hi_lo"]

    clients = []
    for n, name in enumerate(PLAYERS):
        registered = await http.post(
            "/auth/register", json={"username": name, "password": PASSWORD}
        )
        assert registered.status_code == 201, registered.text
        clients.append(Client(name, await login(http, name), server, random.Random(n)))
    readers = []
    for client in clients:
        await client.connect()
        readers.append(asyncio.create_task(client.serve()))
    stud, razz = clients[:4], clients[4:]
    for client in stud:
        await client.sit(ids["Stud"])
    for client in razz:
        await client.sit(ids["Razz"])

    def hands_at(name: str) -> int:
        return len({key for c in clients for key in c.ended if key[0] == ids[name]})

    async def until(condition: Any, timeout: float = 240.0) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while not condition():
            assert asyncio.get_running_loop().time() < deadline, "the tables stalled"
            await asyncio.sleep(0.1)

    # player1 drops mid-game, comes back, resyncs and plays on.
    await until(lambda: hands_at("Stud") >= 15)
    dropper = clients[0]
    assert dropper.ws is not None
    dropper.ws.transport.abort()
    await readers[0]
    acted_before = dropper.acted
    await asyncio.sleep(0.3)
    await dropper.connect()
    readers[0] = asyncio.create_task(dropper.serve())
    del dropper.last_seq[ids["Stud"]]  # a new connection: the resync sets the baseline
    await dropper.send(type="resync", table=ids["Stud"])

    # The razz players move to the hi-lo table: two tables at a time, three variants.
    await until(lambda: hands_at("Razz") >= 35)
    for client in razz:
        await client.leave()
        await client.send(type="unwatch", table=ids["Razz"])
        client.last_seq.pop(ids["Razz"], None)
    for client in razz:
        await client.sit(ids["Hi-Lo"])

    await until(lambda: sum(map(hands_at, rules)) >= HANDS and hands_at("Hi-Lo") >= 20)
    for client in clients:
        await client.leave()
    for client in clients:
        assert client.ws is not None
        await client.ws.close()
    await asyncio.gather(*readers)

    # Every chip is where the ledger says, and back in the wallets.
    books = (await http.get("/admin/books", headers=auth(boss))).json()
    assert books["balanced"] is True, books
    assert all(t["pool"] == t["seats"] == 0 for t in books["tables"].values()), books
    wallets = [
        (await http.get("/wallet", headers=auth(c.token))).json()["balance"] for c in clients
    ]
    assert sum(wallets) == BANKROLL * len(clients)
    # No gaps; the dropped client played on after coming back.
    assert [g for c in clients for g in c.gaps] == []
    assert dropper.acted > acted_before
    refusals = [r for c in clients for r in c.refusals]
    assert {r.split(":")[0] for r in refusals} <= {"not_your_turn", "no_hand"}, refusals

    # No frame before a showdown carried a down card of another seat.
    records = await all_hands(http, boss)
    assert len(records) >= HANDS
    down = {}
    for record in records:
        for event in record["events"]:
            if event["kind"] == "down_cards":
                key = (record["table_id"], record["number"])
                down.setdefault(key, {}).setdefault(event["to"], set()).update(
                    event["data"]["cards"]
                )
    checked = 0
    for client in clients:
        for table, number, seat, text in client.frames:
            for other, cards in down.get((table, number), {}).items():
                if other == seat:
                    continue
                leaked = [c for c in cards if f'"{c}"' in text]
                assert not leaked, (client.name, table, number, seat, other, leaked, text)
                checked += 1
    assert checked > 1000

    # PHH: every hand of the PHH tables replays to the stacks the table paid.
    replayed = 0
    for record in records:
        if record["table_id"] != ids["Razz"] and not record["result"]["cancelled"]:
            history = phh.loads(record["phh"])
            assert phh_replay.replay(history) == list(history.finishing_stacks or ()), record["phh"]
            replayed += 1
    assert replayed >= 50


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def login(http: httpx.AsyncClient, name: str) -> str:
    response = await http.post("/auth/login", json={"username": name, "password": PASSWORD})
    assert response.status_code == 200, response.text
    token: str = response.json()["access_token"]
    return token


async def all_hands(http: httpx.AsyncClient, boss: str) -> list[dict[str, Any]]:
    """Every hand's full record (operator), cancelled ones included."""
    records = []
    hand_id = 1
    while True:
        response = await http.get(f"/admin/hands/{hand_id}", headers=auth(boss))
        if response.status_code == 404:
            return records
        records.append(response.json())
        hand_id += 1
