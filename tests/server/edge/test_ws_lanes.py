"""A websocket's messages for different tables do not wait on one another
(``server.edge.lanes.TableLanes``): a table that does not answer holds only its own messages, those
of one table keep their order, and a connection has a bounded number in hand."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from play import wait_for

from server.bus.memory import MemoryBus
from server.edge.rate_limits import Gateway
from server.edge.sessions import SignIn
from server.edge.ws import COMMANDS_IN_FLIGHT, Connection, TableLanes
from server.settings import Settings
from server.table import commands as cmd


class FakeSocket:
    """A websocket driven by the test: frames in through ``put``, frames out in ``sent``."""

    def __init__(self) -> None:
        self.scope: dict[str, Any] = {"type": "websocket", "extensions": {}}
        self.incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.sent: list[dict[str, Any]] = []
        self.wrote = asyncio.Event()

    def put(self, frame: dict[str, Any]) -> None:
        self.incoming.put_nowait(
            {"type": "websocket.receive", "text": orjson.dumps(frame).decode()}
        )

    def hang_up(self) -> None:
        self.incoming.put_nowait({"type": "websocket.disconnect", "code": 1000})

    async def accept(self) -> None:
        return None

    async def receive(self) -> dict[str, Any]:
        return await self.incoming.get()

    async def send_text(self, text: str) -> None:
        self.sent.append(orjson.loads(text))
        self.wrote.set()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        return None

    async def answer(self, message_id: Any, timeout: float = 2.0) -> dict[str, Any]:
        """The reply, error or pong with ``message_id``, once written."""
        async with asyncio.timeout(timeout):
            while True:
                for frame in self.sent:
                    if (
                        frame.get("type") in ("reply", "error", "pong")
                        and frame.get("id") == message_id
                    ):
                        return frame
                self.wrote.clear()
                await self.wrote.wait()


class Table:
    """A table that answers every command, unless held: then none until released."""

    def __init__(self, table_id: int, *, held: bool = False) -> None:
        self.table_id = table_id
        self.open = asyncio.Event()
        if not held:
            self.open.set()
        self.seen: list[str] = []  # the commands' kinds, in the order the table took them

    async def submit(self, command: cmd.TableCommand) -> dict[str, Any]:
        if isinstance(command, cmd.Presence):
            return {}
        self.seen.append(type(command).__name__)
        await self.open.wait()
        if isinstance(command, cmd.Chat):
            return {"said": command.text}
        return {"table": self.table_id}


class Cardroom:
    def __init__(self, *tables: Table) -> None:
        self.bus = MemoryBus()
        self.tables = {table.table_id: table for table in tables}

    async def table(self, table_id: int) -> Table | None:
        return self.tables.get(table_id)


async def sign_in(token: str) -> SignIn:
    return SignIn(1, 1, "ann", datetime.now(UTC) + timedelta(hours=1))


@pytest.fixture
async def served() -> AsyncIterator[tuple[FakeSocket, Cardroom]]:
    stalled, quick = Table(1, held=True), Table(2)
    cardroom = Cardroom(stalled, quick)
    unlimited = Settings(ws_other_burst=10**6, ws_chat_burst=10**6, ws_actions_burst=10**6)
    socket = FakeSocket()
    connection = Connection(
        socket,  # type: ignore[arg-type]
        cardroom,
        sign_in,
        gateway=Gateway(unlimited),
    )
    serving = asyncio.create_task(connection.serve())
    socket.put({"type": "auth", "id": "auth", "token": "t"})
    assert (await socket.answer("auth"))["result"] == {"player": "ann"}
    try:
        yield socket, cardroom
    finally:
        stalled.open.set()
        socket.hang_up()
        await asyncio.wait_for(serving, 5)


async def test_a_table_that_does_not_answer_holds_only_its_own_messages(
    served: tuple[FakeSocket, Cardroom],
) -> None:
    socket, cardroom = served
    socket.put({"type": "chat", "id": "stalled", "table": 1, "text": "hello?"})
    socket.put({"type": "chat", "id": "quick", "table": 2, "text": "hi"})
    socket.put({"type": "ping", "id": "ping"})
    assert (await socket.answer("quick", timeout=5))["result"] == {"said": "hi"}
    assert (await socket.answer("ping", timeout=5))["type"] == "pong"
    assert not any(frame.get("id") == "stalled" for frame in socket.sent)
    cardroom.tables[1].open.set()
    assert (await socket.answer("stalled"))["result"] == {"said": "hello?"}


async def test_messages_for_one_table_keep_their_order(
    served: tuple[FakeSocket, Cardroom],
) -> None:
    socket, cardroom = served
    for n in range(5):
        socket.put({"type": "chat", "id": n, "table": 1, "text": f"line {n}"})
    await wait_for(lambda: socket.incoming.empty() and cardroom.tables[1].seen != [])  # all read
    await asyncio.sleep(0.05)
    assert cardroom.tables[1].seen == ["Chat"]  # the next wait for the first to be answered
    cardroom.tables[1].open.set()
    answers = [await socket.answer(n) for n in range(5)]
    assert [a["result"]["said"] for a in answers] == [f"line {n}" for n in range(5)]
    replies = [f["id"] for f in socket.sent if f.get("type") == "reply" and f["id"] != "auth"]
    assert replies == list(range(5))


async def test_a_connection_has_a_bounded_number_of_messages_in_hand(
    served: tuple[FakeSocket, Cardroom],
) -> None:
    socket, cardroom = served
    for n in range(COMMANDS_IN_FLIGHT):
        socket.put({"type": "chat", "id": n, "table": 1, "text": "?"})
    # Read only once one of those is answered, though its table answers at once.
    socket.put({"type": "chat", "id": "after", "table": 2, "text": "!"})
    await wait_for(socket.incoming.empty)  # all of them read (the last waits for a place)
    await asyncio.sleep(0.05)
    assert not any(frame.get("id") == "after" for frame in socket.sent)
    cardroom.tables[1].open.set()
    assert (await socket.answer("after"))["result"] == {"said": "!"}


async def test_lanes_close_drops_what_waits() -> None:
    lanes = TableLanes(4)
    never = asyncio.Event()
    ran: list[int] = []

    async def work(n: int) -> None:
        ran.append(n)
        await never.wait()

    await lanes.enter(7, work(1))
    await lanes.enter(7, work(2))
    await asyncio.sleep(0)
    await lanes.close()
    assert ran == [1]  # the second never started
    await lanes.join()  # nothing is left
