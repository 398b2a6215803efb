"""Players of one tournament, over the public websocket protocol alone, until it is over for
them (out, or the tournament finished) or they are killed: ``python tournament_players.py URL
TOURNAMENT_ID NAME...``, the accounts' password in ``STUD_PLAYERS_PASSWORD``, each already
registered. Each follows the tournament (``subscribe_tournament``), goes to the table its own
events (``seated``, ``moved``) or its ``tournament_state`` name, and plays every turn as hard as
the rules allow (raise, bet or complete; else call, check, or bring in): a table of them
loses players quickly. A process of its own, so none of its sockets outlive it in the tests."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

PREFERENCE = ("raise", "bet", "complete", "call", "check", "bring_in", "fold")


def choose(legal: dict[str, Any]) -> dict[str, Any]:
    kind = next(k for k in PREFERENCE if k in legal["kinds"])
    act: dict[str, Any] = {"kind": kind}
    if kind in ("raise", "bet", "complete"):
        choices = legal.get("to_choices")
        act["amount"] = choices[-1] if choices else legal["max_to"]
    return act


class Player:
    def __init__(self, url: str, tournament: int, name: str, password: str) -> None:
        self.url, self.tournament, self.name, self.password = url, tournament, name, password
        self.ids = itertools.count(1)
        self.table: int | None = None
        self.seat: int | None = None
        self.done = False

    async def send(self, ws: ClientConnection, **message: Any) -> None:
        await ws.send(json.dumps({"id": next(self.ids), **message}))

    async def go_to(self, ws: ClientConnection, table: int | None) -> None:
        if table is None or table == self.table:
            return
        if self.table is not None:
            await self.send(ws, type="unwatch", table=self.table)
        self.table, self.seat = table, None
        await self.send(ws, type="watch", table=table)

    async def act(self, ws: ClientConnection, legal: dict[str, Any] | None) -> None:
        if legal is None or self.seat is None or legal.get("seat") != self.seat:
            return
        await self.send(
            ws,
            type="act",
            table=self.table,
            action_id=f"{self.name}-{next(self.ids)}",
            **choose(legal),
        )

    async def play(self) -> None:
        async with httpx.AsyncClient(base_url=self.url) as http:
            login = await http.post(
                "/auth/login", json={"username": self.name, "password": self.password}
            )
            token = login.json()["access_token"]
        ws_url = self.url.replace("http", "ws", 1) + "/ws"
        async with connect(ws_url) as ws:
            await ws.recv()  # hello
            await self.send(ws, type="auth", token=token)
            await self.send(ws, type="subscribe_tournament", tournament=self.tournament)
            while not self.done:
                try:
                    text = await asyncio.wait_for(ws.recv(), 5)
                except TimeoutError:
                    await self.send(ws, type="ping")
                    continue
                await self.take(ws, json.loads(text))

    async def take(self, ws: ClientConnection, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        result = frame.get("result")
        if kind == "reply" and isinstance(result, dict):
            if result.get("type") == "tournament_state":
                you = result.get("you") or {}
                await self.go_to(ws, you.get("table"))
            elif result.get("type") == "snapshot" and result["table"] == self.table:
                self.seat = result["you"]
                hand = result.get("hand")
                await self.act(ws, hand.get("legal") if hand else None)
        elif kind == "tournament_event" and frame["tournament"] == self.tournament:
            data = frame["data"]
            if frame["kind"] in ("seated", "moved"):
                await self.go_to(ws, data["table"])
            elif frame["kind"] == "finished" or (
                frame["kind"] == "eliminated" and data["player"] == self.name
            ):
                self.done = True
        elif kind == "event" and frame["table"] == self.table:
            data = frame["data"]
            if frame["kind"] == "seat_taken" and data["player"] == self.name:
                self.seat = data["seat"]
            elif frame["kind"] == "turn":
                await self.act(ws, data)


async def main(url: str, tournament: str, *names: str) -> None:
    password = os.environ["STUD_PLAYERS_PASSWORD"]
    await asyncio.gather(*(Player(url, int(tournament), n, password).play() for n in names))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
