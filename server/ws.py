"""The websocket protocol v1 at ``/ws`` (documented in docs/protocol.md).

Every frame is a JSON object with ``"v": 1`` and a ``type``. A client message may
carry an ``id``; the answer to it is ``{"type": "reply", "id", "result"}`` or
``{"type": "error", "id", "code", "message"}``. Messages are checked at the edge
through a dispatch table, one handler per type; nothing a client sends reaches a
table unless it is well formed, and every refusal has a stable code.

One connection may watch and play several tables. Every frame it is sent, event,
reply or error, goes through one bounded subscription and one writer, so frames
leave in the order they were made: the snapshot a ``watch`` or ``resync`` answers
with is published by the table actor on the connection's own channel, in line with
the table's events, and the next event after a snapshot of ``seq`` S has ``seq``
S + 1. A connection that cannot keep up is closed (code 4008); its client
reconnects and resyncs; it never slows a table down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import orjson
from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from server import tokens
from server.actor import SEQ_PER_RUN, CommandRefused
from server.bus import DEFAULT_QUEUE_SIZE, MemoryBus, Subscription, player_channel, table_channel
from server.cluster import TableHandle

PROTOCOL_VERSION = 1
MAX_FRAME_BYTES = 16_384
IDLE_SECONDS = 60.0  # a connection silent this long (no message, no ping) is closed
TOO_SLOW = 4008
router = APIRouter()
log = logging.getLogger(__name__)


class Cardroom(Protocol):
    bus: MemoryBus

    async def table(self, table_id: int) -> TableHandle | None:
        """The table, run on this node or another (None: no such open table)."""


class ProtocolError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def dumps(frame: dict[str, Any]) -> str:
    # Seat numbers key some maps (a snapshot's seats): JSON writes them as strings.
    return orjson.dumps(
        {"v": PROTOCOL_VERSION, **frame}, option=orjson.OPT_NON_STR_KEYS
    ).decode()


def connection_channel() -> str:
    """A channel of the bus for one connection's replies (snapshots come through it)."""
    return f"connection:{secrets.token_hex(8)}"


class Connection:
    """One websocket: who it is, which tables it watches, and its outgoing frames."""

    def __init__(self, websocket: WebSocket, cardroom: Cardroom,
                 authenticate: Callable[[str], Awaitable[str]],
                 idle_seconds: float = IDLE_SECONDS) -> None:
        self.websocket = websocket
        self.cardroom = cardroom
        self.authenticate = authenticate
        self.idle_seconds = idle_seconds
        self.player: str | None = None
        self.watching: set[int] = set()
        self.present: set[int] = set()  # tables told that this player's connection is here
        # The run of each table (seq // SEQ_PER_RUN) that counted this connection (None: not
        # known), and the run being told now.
        self._told: dict[int, int | None] = {}
        self._telling_run: dict[int, int] = {}
        self._telling: set[asyncio.Task[None]] = set()
        self.channel = connection_channel()
        self.subscription: Subscription = cardroom.bus.subscribe(
            self.channel, size=DEFAULT_QUEUE_SIZE
        )

    def send(self, frame: dict[str, Any]) -> None:
        """Queue a frame behind every frame queued before it (one writer: the pump)."""
        self.subscription.offer(frame)

    async def serve(self) -> None:
        await self.websocket.accept()
        self.send({"type": "hello", "protocol": PROTOCOL_VERSION})
        pump = asyncio.create_task(self._pump())
        try:
            while True:
                try:
                    text = await asyncio.wait_for(self._receive_text(), self.idle_seconds)
                except TimeoutError:
                    await self.websocket.close(code=1001, reason="idle")
                    return
                if self.subscription.closed:
                    return  # dropped as too slow: the pump closes the socket
                await self._receive(text)
        except WebSocketDisconnect:
            pass
        finally:
            self.subscription.close()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(pump, 1.0)
            await self._tell_tables(connected=False, tables=set(self.present))

    async def _receive_text(self) -> str:
        message = await self.websocket.receive()
        if message["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(message.get("code", 1000))
        text = message.get("text")
        if text is None:
            data = message.get("bytes") or b""
            try:
                text = data.decode()
            except UnicodeDecodeError:
                text = ""
        return str(text)

    async def _pump(self) -> None:
        """Write the queued frames to the socket; close a connection that fell behind."""
        try:
            async for message in self.subscription:
                self._note_run(message)
                await self.websocket.send_text(dumps(message))
            if self.subscription.dropped:
                await self.websocket.close(code=TOO_SLOW, reason="too slow: reconnect and resync")
        except (WebSocketDisconnect, RuntimeError, OSError):
            self.subscription.close()  # the socket is gone
        except Exception:  # noqa: BLE001 - a frame that cannot be written ends the connection
            log.exception("websocket: could not write a frame")
            self.subscription.close()
            with contextlib.suppress(Exception):
                await self.websocket.close(code=1011, reason="internal error")

    async def _receive(self, text: str) -> None:
        message_id: Any = None
        try:
            if len(text) > MAX_FRAME_BYTES:
                raise ProtocolError("frame_too_large", f"at most {MAX_FRAME_BYTES} bytes a frame")
            try:
                message = orjson.loads(text)
            except orjson.JSONDecodeError:
                raise ProtocolError("bad_json", "a frame must be a JSON object") from None
            if not isinstance(message, dict):
                raise ProtocolError("bad_json", "a frame must be a JSON object")
            message_id = message.get("id")
            if message.get("v", PROTOCOL_VERSION) != PROTOCOL_VERSION:
                raise ProtocolError("bad_version", f"this server speaks v{PROTOCOL_VERSION}")
            kind = message.get("type")
            handler = _DISPATCH.get(kind) if isinstance(kind, str) else None
            if handler is None:
                raise ProtocolError("unknown_type", f"no message type {kind!r}")
            result = await handler(self, message)
        except (ProtocolError, CommandRefused) as refusal:
            self.send({"type": "error", "id": message_id, "code": refusal.code,
                       "message": refusal.message})
            return
        except Exception:  # noqa: BLE001 - a bug here must not end the connection silently
            log.exception("websocket: a message failed")
            self.send({"type": "error", "id": message_id, "code": "internal_error",
                       "message": "the server hit an error"})
            return
        if result is not None:
            self.send({"type": "reply", "id": message_id, "result": result})

    # ------------------------------------------------------------------ helpers

    def _require_player(self) -> str:
        if self.player is None:
            raise ProtocolError("not_authenticated", "send auth with your token first")
        return self.player

    async def _actor(self, message: dict[str, Any]) -> tuple[int, TableHandle]:
        table_id = message.get("table")
        if not isinstance(table_id, int) or isinstance(table_id, bool):
            raise ProtocolError("bad_table", "table must be a table id")
        actor = await self.cardroom.table(table_id)
        if actor is None:
            raise ProtocolError("unknown_table", f"no table {table_id}")
        return table_id, actor

    async def _watch(self, table_id: int) -> None:
        if table_id not in self.watching:
            self.watching.add(table_id)
            self.subscription.add(table_channel(table_id))
            if self.player is not None:
                self.subscription.add(player_channel(table_id, self.player))
        await self._tell_tables(connected=True, tables={table_id})

    async def _tell_tables(self, *, connected: bool, tables: set[int]) -> None:
        """Tell tables this player's connection came or went (once each way per table)."""
        if self.player is None:
            return
        for table_id in tables:
            if connected == (table_id in self.present):
                continue
            if connected:
                self.present.add(table_id)
            else:
                self.present.discard(table_id)
                self._told.pop(table_id, None)
                self._telling_run.pop(table_id, None)
            actor = await self.cardroom.table(table_id)
            if actor is None:
                continue
            with contextlib.suppress(CommandRefused):
                reply = await actor.submit("connection", self.player, connected=connected)
                if connected and table_id in self.present:
                    self._told[table_id] = reply.get("run")

    def _note_run(self, message: dict[str, Any]) -> None:
        """A message from a run of the table that has not counted this connection (another
        node took the table over, or the table was changing hands when the connection came)
        means that run knows nothing of it yet: tell it. Any message of the run will do, so
        one lost while the bus was away costs nothing."""
        table_id, seq = message.get("table"), message.get("seq")
        if type(table_id) is not int or type(seq) is not int or table_id not in self.present:
            return
        run = seq // SEQ_PER_RUN
        if self._told.get(table_id) != run and self._telling_run.get(table_id) != run:
            self._present_again(table_id, run)

    def _present_again(self, table_id: int, run: int) -> None:
        """Tell the table's run ``run`` this connection is here. Until an old node learns the
        table moved, it may still answer for it: the tell names the run, only that run takes
        it, and it is tried again until it does (or a newer run, or the connection's end,
        makes it moot)."""
        if self.player is None:
            return
        player = self.player
        self._telling_run[table_id] = run

        async def tell() -> None:
            delay = 0.05
            while self._telling_run.get(table_id) == run and table_id in self.present:
                actor = await self.cardroom.table(table_id)
                if actor is None:
                    return
                try:
                    await actor.submit("connection", player, connected=True, run=run)
                except CommandRefused as refusal:
                    if refusal.code not in ("table_moved", "table_unavailable"):
                        return
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 1.0)
                    continue
                if table_id not in self.present:  # the connection ended meanwhile
                    with contextlib.suppress(CommandRefused):
                        await actor.submit("connection", player, connected=False)
                    return
                self._told[table_id] = run
                if self._telling_run.get(table_id) == run:
                    del self._telling_run[table_id]
                return

        task = asyncio.create_task(tell())
        self._telling.add(task)
        task.add_done_callback(self._telling.discard)

    async def _snapshot(self, message: dict[str, Any]) -> None:
        """Watch the table, then have its actor publish a snapshot on this connection's
        channel: every event after it follows it, none before it does."""
        table_id, actor = await self._actor(message)
        await self._watch(table_id)
        await actor.submit("snapshot", self.player or "", reply_to=self.channel,
                           reply_id=message.get("id"))

    # ------------------------------------------------------------------ handlers

    async def on_auth(self, message: dict[str, Any]) -> dict[str, Any]:
        token = message.get("token")
        if not isinstance(token, str) or not token:
            raise ProtocolError("bad_token", "auth needs a token")
        if self.player is not None:
            raise ProtocolError("already_authenticated", "this connection is signed in")
        self.player = await self.authenticate(token)
        for table_id in self.watching:
            self.subscription.add(player_channel(table_id, self.player))
        await self._tell_tables(connected=True, tables=set(self.watching))
        return {"player": self.player}

    async def on_ping(self, message: dict[str, Any]) -> None:
        self.send({"type": "pong", "id": message.get("id")})

    async def on_watch(self, message: dict[str, Any]) -> None:
        """The answer is the table's snapshot, sent by the actor (see ``_snapshot``)."""
        await self._snapshot(message)

    async def on_unwatch(self, message: dict[str, Any]) -> dict[str, Any]:
        table_id, _ = await self._actor(message)
        self.watching.discard(table_id)
        self.subscription.remove(table_channel(table_id))
        if self.player is not None:
            self.subscription.remove(player_channel(table_id, self.player))
        await self._tell_tables(connected=False, tables={table_id})
        return {"table": table_id}

    async def on_resync(self, message: dict[str, Any]) -> None:
        """A client that saw a gap asks again: a fresh snapshot, then the events after it."""
        await self._snapshot(message)

    async def _command(self, command: str, message: dict[str, Any],
                       fields: dict[str, type]) -> dict[str, Any]:
        player = self._require_player()
        table_id, actor = await self._actor(message)
        data: dict[str, Any] = {}
        for name, kind in fields.items():
            if name in message:
                value = message[name]
                fits = isinstance(value, bool) if kind is bool else (
                    isinstance(value, kind) and not isinstance(value, bool)
                )
                if not fits:
                    raise ProtocolError("bad_field", f"{name} must be a {kind.__name__}")
                data[name] = value
        await self._watch(table_id)
        return await actor.submit(command, player, **data)

    async def on_sit(self, message: dict[str, Any]) -> dict[str, Any]:
        return await self._command("sit", message, {"seat": int, "buy_in": int})

    async def on_add_chips(self, message: dict[str, Any]) -> dict[str, Any]:
        return await self._command("add_chips", message, {"amount": int})

    async def on_act(self, message: dict[str, Any]) -> dict[str, Any]:
        return await self._command(
            "act", message, {"action_id": str, "kind": str, "amount": int}
        )

    async def on_sit_out(self, message: dict[str, Any]) -> dict[str, Any]:
        return await self._command("sit_out", message, {"next_hand": bool})

    async def on_sit_in(self, message: dict[str, Any]) -> dict[str, Any]:
        return await self._command("sit_in", message, {})

    async def on_leave(self, message: dict[str, Any]) -> dict[str, Any]:
        return await self._command("leave", message, {})

    async def on_join_waiting_list(self, message: dict[str, Any]) -> dict[str, Any]:
        return await self._command("join_waiting_list", message, {})

    async def on_chat(self, message: dict[str, Any]) -> dict[str, Any]:
        return await self._command("chat", message, {"text": str})


_Handler = Callable[[Connection, dict[str, Any]], Awaitable[dict[str, Any] | None]]
_DISPATCH: dict[str, _Handler] = {
    "auth": Connection.on_auth,
    "ping": Connection.on_ping,
    "watch": Connection.on_watch,
    "unwatch": Connection.on_unwatch,
    "resync": Connection.on_resync,
    "sit": Connection.on_sit,
    "add_chips": Connection.on_add_chips,
    "act": Connection.on_act,
    "sit_out": Connection.on_sit_out,
    "sit_in": Connection.on_sit_in,
    "leave": Connection.on_leave,
    "join_waiting_list": Connection.on_join_waiting_list,
    "chat": Connection.on_chat,
}


@router.websocket("/ws")
async def websocket_endpoint(websocket: WebSocket) -> None:
    app = websocket.app
    cardroom: Cardroom = app.state.cardroom

    async def authenticate(token: str) -> str:
        async with app.state.sessionmaker() as session:
            try:
                _, account = await tokens.resolve(session, token=token)
            except tokens.TokenRefused as refused:
                raise ProtocolError(refused.code, str(refused)) from None
            return str(account.username)

    idle = app.state.settings.ws_idle_seconds
    await Connection(websocket, cardroom, authenticate, idle_seconds=idle).serve()
