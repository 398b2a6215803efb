"""Shutdown leaves no task behind: every table actor's task, the cardroom's background work,
the command router's and the websockets' are cancelled and awaited before the app's lifespan
ends (a task left pending is what Python reports as "Task was destroyed but it is pending")."""

from __future__ import annotations

import asyncio
from pathlib import Path

from play import crash
from server_helpers import bearer

from tests.server.edge.test_gateway import act_once
from tests.server.edge.test_protocol import examples_server, hello, request


def pending_tasks() -> list[asyncio.Task[object]]:
    this = asyncio.current_task()
    return [task for task in asyncio.all_tasks() if task is not this and not task.done()]


async def test_shutdown_cancels_and_awaits_every_table_task(tmp_path: Path) -> None:
    before = set(pending_tasks())
    async with examples_server(tmp_path) as room:
        for n in range(3):
            made = await room.client.post(
                "/admin/tables", headers=bearer(room.tokens["boss"]), json={"name": f"T{n}"}
            )
            assert made.status_code == 201
        players = {}
        for name in ("ann", "bob"):
            ws = players[name] = await hello(room.host)
            await request(ws, {"type": "auth", "id": 1, "token": room.tokens[name]})
            sit = await request(ws, {"type": "sit", "id": 2, "table": 1, "buy_in": 200})
            assert sit["type"] == "reply"
        watcher = await hello(room.host)
        await request(watcher, {"type": "watch", "id": 1, "table": 1})
        actor = room.cardroom.actor(1)
        assert actor is not None
        await act_once(actor, players)  # a hand in progress, clocks running
        # One actor dies just before the stop: its restart is under way as the app ends.
        crashed = room.cardroom.actor(2)
        assert crashed is not None
        await crash(crashed)
        actors = room.cardroom.actors()
        assert len(actors) == 4
    left = [task for task in pending_tasks() if task not in before]
    # The test's own client sockets are the test's to close; nothing of the server's is left.
    server_left = [t for t in left if "websockets" not in repr(t.get_coro())]
    assert server_left == [], server_left
    for actor in actors:
        assert actor.task is not None and actor.task.done()
    for ws in (*players.values(), watcher):
        await ws.close()
