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
S + 1. Messages for a table are handled in their own lane (``server.edge.lanes``): in order for
that table, side by side with other tables' lanes. A connection that cannot keep up is
closed (code 4008); its client reconnects and resyncs; it never slows a table down.

A signed-in connection hears its player's own tournament events (seated, moved, out...) from
any node, and follows the tournaments it subscribes to (``subscribe_tournament``: the reply
is where the tournament stands, read from its journal by ``server.tournaments.standing``).

A signed-in connection is bound to its token (``server.edge.sessions``): when the token is
logged out, revoked, expires, or its account is suspended, the connection is sent a
``signed_out`` frame with the code and closed (code 4401), on whichever node it is.

The gateway's limits (``server.edge.rate_limits``) hold here: sockets per address and per
account, and three token buckets per connection (actions, chat, everything else): an
action over its rate waits its turn, unread behind it; any other frame over its rate is
refused, and a connection refused for its rate too often is closed (4029). Frames of
connections not signed in share a budget of each turn of the event loop. A snapshot for
a connection that sits at no table comes from this node's mirror of the table
(``server.edge.spectators``), never from the table's inbox. While the node's event loop is behind
(``server.edge.overload``), new sockets are refused in the handshake and new seats ``server_busy``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import orjson
from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.accounts import tokens
from server.bus.memory import (
    DEFAULT_QUEUE_SIZE,
    Bus,
    Subscription,
    player_channel,
    player_tournaments_channel,
    table_channel,
    table_reply_channel,
    tournament_channel,
)
from server.cardroom.cluster import TableHandle
from server.db.session import is_outage
from server.edge.frames import PROTOCOL_VERSION, Outbox, dumps
from server.edge.lanes import TableLanes
from server.edge.overload import SHED_COMMANDS, LagMonitor
from server.edge.presence import TablePresence
from server.edge.rate_limits import TOO_MANY, Gateway, MessageLimits, origin_allowed
from server.edge.refusals import ServerBusy, outage_refusal, refusal_response
from server.edge.sessions import SessionRegistry, SignIn
from server.edge.spectators import Spectators
from server.metrics import Metrics
from server.settings import Settings
from server.table import commands as cmd
from server.tournaments.standing import Standings

MAX_FRAME_BYTES = 16_384
IDLE_SECONDS = 60.0  # a connection silent this long (no message, no ping) is closed
COMMANDS_IN_FLIGHT = 16  # a connection's messages taken and not yet answered, at most
LANES_GRACE = 1.0  # how long a closed connection's messages in hand may still finish
TOO_SLOW = 4008
SIGNED_OUT = 4401  # the token ended: logged out, revoked, expired, the account suspended
# What writing to or closing a socket raises once the other end is gone (uvicorn's
# ClientDisconnected is an OSError; Starlette raises RuntimeError after a close).
SOCKET_GONE = (WebSocketDisconnect, RuntimeError, OSError)
router = APIRouter()
log = logging.getLogger(__name__)


_Handler = Callable[["Connection", dict[str, Any]], Awaitable[dict[str, Any] | None]]


class Cardroom(Protocol):
    @property
    def bus(self) -> Bus: ...

    async def table(self, table_id: int) -> TableHandle | None:
        """The table, run on this node or another (None: no such open table)."""


class ProtocolError(Refusal):
    """A frame refused at the edge, before any table sees it."""


def connection_channel() -> str:
    """A connection's name on the bus: a table it watches sends it its snapshots on
    ``table_reply_channel(table, name)``, in line with the table's events."""
    return f"connection:{secrets.token_hex(8)}"


class Connection:
    """One websocket: who it is, which tables it watches, and its outgoing frames."""

    def __init__(
        self,
        websocket: WebSocket,
        cardroom: Cardroom,
        authenticate: Callable[[str], Awaitable[SignIn]],
        idle_seconds: float = IDLE_SECONDS,
        metrics: Metrics | None = None,
        sessions: SessionRegistry | None = None,
        gateway: Gateway | None = None,
        address: str = "unknown",
        spectators: Spectators | None = None,
        overload: LagMonitor | None = None,
        standings: Standings | None = None,
    ) -> None:
        self.websocket = websocket
        self.standings = standings  # None: no tournament to follow here
        self.overload = overload  # None: nothing is shed
        self.gateway = gateway if gateway is not None else Gateway(Settings())
        self.address = address
        self.spectators = spectators
        self.limits: MessageLimits = self.gateway.message_limits()
        self._counted_account: str | None = None
        self._closing: tuple[int, str] | None = None  # close the socket so, once flushed
        self.metrics = metrics if metrics is not None else Metrics()
        self.cardroom = cardroom
        self.authenticate = authenticate
        self.idle_seconds = idle_seconds
        self.player: str | None = None
        self.sessions = sessions
        self.sign_in: SignIn | None = None
        self.signed_out: tuple[ErrorCode, str] | None = None
        self.watching: set[int] = set()
        self.presence = TablePresence(cardroom)
        self.lanes = TableLanes(COMMANDS_IN_FLIGHT)
        self.channel = connection_channel()
        self.subscription: Subscription = cardroom.bus.subscribe(size=DEFAULT_QUEUE_SIZE)

    def send(self, frame: dict[str, Any]) -> None:
        """Queue a frame behind every frame queued before it (one writer: the pump)."""
        self.subscription.offer(frame)

    def sign_out(self, code: ErrorCode, message: str) -> None:
        """The token ended: take nothing more from the client; the pump writes what is
        queued, then a ``signed_out`` frame, and closes (4401)."""
        if self.signed_out is not None:
            return
        self.signed_out = (code, message)
        self.subscription.close()

    def _close_after_flush(self, code: int, reason: str) -> None:
        """Once the message in hand is answered: send what is queued, then close the
        socket with ``code`` (the serve loop ends the subscription, the pump closes)."""
        self._closing = (code, reason)

    async def serve(self) -> None:
        await self.websocket.accept()
        self.metrics.connections.inc()
        # How long the server waits for a frame before it closes the socket: clients time
        # their heartbeat by it.
        self.send(
            {"type": "hello", "protocol": PROTOCOL_VERSION, "idle_seconds": self.idle_seconds}
        )
        pump = asyncio.create_task(self._pump())
        try:
            while True:
                try:
                    # A timer, not a task a message (as wait_for would make).
                    async with asyncio.timeout(self.idle_seconds):
                        text = await self._receive_text()
                except TimeoutError:
                    await self.websocket.close(code=1001, reason="idle")
                    return
                if self.subscription.closed:
                    return  # dropped as too slow: the pump closes the socket
                if self.player is None:
                    await self.gateway.anonymous_frames.turn()
                await self._receive(text)
                if self.limits.exhausted and self._closing is None:
                    self._close_after_flush(TOO_MANY, "too many messages")
                elif self.limits.pause:  # over its rate: its next frames wait, unread
                    pause, self.limits.pause = self.limits.pause, 0.0
                    await asyncio.sleep(pause)
                if self._closing is not None:
                    self.subscription.close()
                    return
        except WebSocketDisconnect:
            pass
        finally:
            if self.sessions is not None:
                self.sessions.unbind(self)
            self.metrics.connections.dec()
            if self._counted_account is not None:
                self.gateway.account_disconnected(self._counted_account)
            await self.lanes.close(grace=LANES_GRACE)  # nobody is left to answer
            self.subscription.close()
            try:
                await asyncio.wait_for(pump, 1.0)  # it ends with the subscription
            except TimeoutError:  # wait_for cancelled it
                log.warning("websocket: the writer was still writing a second after the end")
            except Exception:  # noqa: BLE001 - the tables are told the player left all the same
                log.exception("websocket: the writer failed")
            await self.presence.end()

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
        outbox = Outbox(self.websocket)
        try:
            # What is queued when the writer wakes (an action's events come two or three
            # together) leaves in one write.
            while messages := await self.subscription.get_ready():
                for message in messages:
                    self.presence.note_run(message)
                await outbox.write(messages)
            if self.signed_out is not None:
                code, why = self.signed_out
                await self.websocket.send_text(
                    dumps({"type": "signed_out", "code": code, "message": why})
                )
                await self.websocket.close(code=SIGNED_OUT, reason=code)
            elif self.subscription.dropped:
                await self.websocket.close(code=TOO_SLOW, reason="too slow: reconnect and resync")
            elif self._closing is not None:
                await self.websocket.close(code=self._closing[0], reason=self._closing[1])
        except SOCKET_GONE:
            self.subscription.close()  # the socket is gone
        except Exception:  # noqa: BLE001 - a frame that cannot be written ends the connection
            log.exception("websocket: could not write a frame")
            self.subscription.close()
            with contextlib.suppress(*SOCKET_GONE):  # closing a socket already gone
                await self.websocket.close(code=1011, reason="internal error")

    async def _receive(self, text: str) -> None:
        """Check the frame at the edge, then handle it: a message for a table in that
        table's lane (``TableLanes``), any other one here, before the next is read.

        The frame is read first (the transport bounds it: ``ws_transport.MAX_READ_BYTES``), so that
        every refusal, ``rate_limited`` and ``frame_too_large`` included, carries the id it
        had; a frame that is no JSON object, or whose id is no string, number or null,
        has none to carry."""
        message_id: Any = None
        try:
            message = _json_object(text)
            given = message.get("type") if message is not None else None
            bad_id = False
            if message is not None:
                message_id = message.get("id")
                if not isinstance(message_id, str | int | float | None):
                    # Echoed in the answer: a nested value could be any depth (and too deep
                    # to write back), so an id is a string, a number or null.
                    message_id, bad_id = None, True
            # A type that is no string (a list, an object) is no type, as is any type of a
            # frame refused before its type is looked at.
            readable = message is not None and len(text) <= MAX_FRAME_BYTES
            kind = given if readable and isinstance(given, str) else None
            if paced := self.limits.take(kind):
                await asyncio.sleep(paced)  # an action over its rate: this connection waits
            if len(text) > MAX_FRAME_BYTES:
                raise ProtocolError(
                    f"at most {MAX_FRAME_BYTES} bytes a frame", code=ErrorCode.FRAME_TOO_LARGE
                )
            if message is None:
                raise ProtocolError("a frame must be a JSON object", code=ErrorCode.BAD_JSON)
            if bad_id:
                raise ProtocolError(
                    "id must be a string, a number or null", code=ErrorCode.BAD_JSON
                )
            if message.get("v", PROTOCOL_VERSION) != PROTOCOL_VERSION:
                raise ProtocolError(
                    f"this server speaks v{PROTOCOL_VERSION}", code=ErrorCode.BAD_VERSION
                )
            handler = _DISPATCH.get(kind) if kind is not None else None
            if handler is None:
                raise ProtocolError(f"no message type {given!r}", code=ErrorCode.UNKNOWN_TYPE)
        except Exception as error:  # noqa: BLE001 - answered, never the connection's end
            self._failed(message_id, error)
            return
        table_id = message.get("table")
        if handler in _CONNECTION_WIDE or type(table_id) is not int:
            await self._answer(message_id, handler, message)
        else:
            await self.lanes.enter(table_id, self._answer(message_id, handler, message))

    async def _answer(self, message_id: Any, handler: _Handler, message: dict[str, Any]) -> None:
        try:
            result = await handler(self, message)
        except Exception as error:  # noqa: BLE001 - answered, never the connection's end
            self._failed(message_id, error)
            return
        if result is not None:
            self.send({"type": "reply", "id": message_id, "result": result})

    def _failed(self, message_id: Any, error: Exception) -> None:
        """A refusal (the frame's, the table's, the engine's, the token's) is answered with
        its code, a database that did not answer with ``database_unavailable``; anything else
        is a bug here, logged and answered ``internal_error``."""
        if isinstance(error, Refusal):
            self._refuse(message_id, error)
            return
        if is_outage(error):  # not a bug: the database did not answer; nothing changed
            log.warning("websocket: the database did not answer: %r", error)
            self._refuse(message_id, outage_refusal(error))
            return
        log.error("websocket: a message failed", exc_info=error)
        self.metrics.refused(ErrorCode.INTERNAL_ERROR, "websocket")
        self.send(
            {
                "type": "error",
                "id": message_id,
                "code": ErrorCode.INTERNAL_ERROR,
                "message": "the server hit an error",
            }
        )

    # ------------------------------------------------------------------ helpers

    def _refuse(self, message_id: Any, refusal: Refusal) -> None:
        self.metrics.refused(refusal.code, "websocket")
        frame = {
            "type": "error",
            "id": message_id,
            "code": refusal.code,
            "message": refusal.message,
        }
        retry_after = getattr(refusal, "retry_after", None)
        if isinstance(retry_after, int | float):  # when trying again may succeed
            # Up to the millisecond: a wait under half of one is not said as none.
            frame["retry_after"] = (
                retry_after
                if isinstance(retry_after, int)
                else math.ceil(retry_after * 1000) / 1000
            )
        if refusal.code in _AT_ONCE:
            self.subscription.put_now(frame)  # follows no event; may precede a close
        else:
            self.send(frame)

    def _require_player(self) -> str:
        if self.player is None:
            raise ProtocolError("send auth with your token first", code=ErrorCode.NOT_AUTHENTICATED)
        if self.sign_in is not None and self.sign_in.expired():
            # Its timer is due this instant: refuse the command rather than race it.
            self.sign_out(ErrorCode.TOKEN_EXPIRED, "this token has expired: log in again")
            raise ProtocolError("this token has expired", code=ErrorCode.TOKEN_EXPIRED)
        return self.player

    async def _actor(self, message: dict[str, Any]) -> tuple[int, TableHandle]:
        table_id = message.get("table")
        if not isinstance(table_id, int) or isinstance(table_id, bool):
            raise ProtocolError("table must be a table id", code=ErrorCode.BAD_TABLE)
        actor = await self.cardroom.table(table_id)
        if actor is None:
            raise ProtocolError(f"no table {table_id}", code=ErrorCode.UNKNOWN_TABLE)
        return table_id, actor

    async def _watch(self, table_id: int) -> None:
        if table_id not in self.watching:
            self.watching.add(table_id)
            self.subscription.add(table_channel(table_id))
            self.subscription.add(table_reply_channel(table_id, self.channel))
            if self.player is not None:
                self.subscription.add(player_channel(table_id, self.player))
        await self.presence.tell(connected=True, tables={table_id})

    async def _snapshot(self, message: dict[str, Any]) -> None:
        """Watch the table, then have its actor publish a snapshot on this connection's
        channel: every event after it follows it, none before it does."""
        table_id, actor = await self._actor(message)
        await self._watch(table_id)
        spectators = self.spectators
        if spectators is not None and (
            self.player is None or not await spectators.seated(table_id, actor, self.player)
        ):
            try:
                self.gateway.take_spectator_snapshot()
            except Refusal:  # the node's budget: this connection waits as if over its own
                self.limits.pause = 1 / self.gateway.settings.ws_other_per_second
                raise
            await spectators.answer(table_id, actor, self.subscription, message.get("id"))
            return
        await actor.submit(
            cmd.Snapshot(
                player=self.player or "",
                reply_to=table_reply_channel(table_id, self.channel),
                reply_id=message.get("id"),
            )
        )

    # ------------------------------------------------------------------ handlers

    async def on_auth(self, message: dict[str, Any]) -> dict[str, Any]:
        token = message.get("token")
        if not isinstance(token, str) or not token:
            raise ProtocolError("auth needs a token", code=ErrorCode.BAD_TOKEN)
        if self.player is not None:
            raise ProtocolError(
                "this connection is signed in", code=ErrorCode.ALREADY_AUTHENTICATED
            )
        sign_in = await self.authenticate(token)
        if self.signed_out is not None:
            return {"player": sign_in.player}  # ended meanwhile: nothing more is sent
        if not self.gateway.account_connected(sign_in.player):
            self._close_after_flush(TOO_MANY, "too many connections")
            raise ProtocolError(
                "too many connections for this account", code=ErrorCode.TOO_MANY_CONNECTIONS
            )
        self._counted_account = sign_in.player
        self.sign_in, self.player = sign_in, sign_in.player
        self.presence.player = sign_in.player
        if self.sessions is not None:
            self.sessions.bind(self, sign_in)
        for table_id in self.watching:
            self.subscription.add(player_channel(table_id, self.player))
        self.subscription.add(player_tournaments_channel(self.player))
        await self.presence.tell(connected=True, tables=set(self.watching))
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
        self.subscription.remove(table_reply_channel(table_id, self.channel))
        if self.player is not None:
            self.subscription.remove(player_channel(table_id, self.player))
        await self.presence.tell(connected=False, tables={table_id})
        return {"table": table_id}

    async def on_resync(self, message: dict[str, Any]) -> None:
        """A client that saw a gap asks again: a fresh snapshot, then the events after it."""
        await self._snapshot(message)

    async def on_subscribe_tournament(self, message: dict[str, Any]) -> dict[str, Any]:
        """Follow a tournament: its events from now on, and the answer says where it stands
        (asked again, it says it again). Subscribed before the state is read, so no event
        falls between the two."""
        player = self._require_player()
        tournament_id = _tournament_id(message)
        if self.standings is None:
            raise ProtocolError("no tournaments here", code=ErrorCode.UNKNOWN_TOURNAMENT)
        channel = tournament_channel(tournament_id)
        fresh = channel not in self.subscription.channels
        self.subscription.add(channel)
        try:
            return await self.standings.state(tournament_id, player)
        except BaseException:
            if fresh:
                self.subscription.remove(channel)
            raise

    async def on_unsubscribe_tournament(self, message: dict[str, Any]) -> dict[str, Any]:
        self._require_player()
        tournament_id = _tournament_id(message)
        self.subscription.remove(tournament_channel(tournament_id))
        return {"tournament": tournament_id}

    async def on_table_command(self, message: dict[str, Any]) -> dict[str, Any]:
        """A player's command to a table (sit, act, chat...): parsed into its record here,
        once, and carried as it is to the table wherever it runs."""
        player = self._require_player()
        if self.overload is not None and message["type"] in SHED_COMMANDS:
            self.overload.check(str(message["type"]))  # a new seat can wait; an action cannot
        table_id, actor = await self._actor(message)
        command = cmd.parse(str(message["type"]), player, message)
        await self._watch(table_id)
        return await actor.submit(command)


def _tournament_id(message: dict[str, Any]) -> int:
    tournament_id = message.get("tournament")
    if type(tournament_id) is not int or not 0 < tournament_id < 2**31:
        raise ProtocolError("tournament must be a tournament id", code=ErrorCode.BAD_TOURNAMENT)
    return tournament_id


def _json_object(text: str) -> dict[str, Any] | None:
    """The frame as a JSON object, or None when it is none."""
    try:
        message = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return message if isinstance(message, dict) else None


# Refusals of the gateway's limits: queued at once (a close may follow them).
_AT_ONCE = frozenset({ErrorCode.RATE_LIMITED, ErrorCode.TOO_MANY_CONNECTIONS})

# The websocket's own messages: about the connection (who it is, which tables it watches,
# that it is alive), never a table's command.
_OWN: dict[str, _Handler] = {
    "auth": Connection.on_auth,
    "ping": Connection.on_ping,
    "watch": Connection.on_watch,
    "unwatch": Connection.on_unwatch,
    "resync": Connection.on_resync,
}
CONNECTION_MESSAGES = frozenset(_OWN)
"""The message types of the websocket's own (none needs a signed-in connection)."""
_TOURNAMENTS: dict[str, _Handler] = {
    "subscribe_tournament": Connection.on_subscribe_tournament,
    "unsubscribe_tournament": Connection.on_unsubscribe_tournament,
}
TOURNAMENT_MESSAGES = frozenset(_TOURNAMENTS)
"""Following a tournament (signed in): ``server.tournaments``' events and standing."""
TABLE_MESSAGES = frozenset(cmd.PLAYER_COMMANDS)
"""The message types that are a player's commands to a table (``server.table.commands``)."""
_DISPATCH: dict[str, _Handler] = {
    **_OWN,
    **_TOURNAMENTS,
    **dict.fromkeys(cmd.PLAYER_COMMANDS, Connection.on_table_command),
}
# Handled before the next frame is read, whatever they carry: they change the connection.
_CONNECTION_WIDE = frozenset({Connection.on_auth, Connection.on_ping})


@router.websocket("/ws")
async def websocket_endpoint(websocket: WebSocket) -> None:
    app = websocket.app
    cardroom: Cardroom = app.state.cardroom

    async def authenticate(token: str) -> SignIn:
        async with app.state.sessionmaker() as session:
            row, account = await tokens.resolve(session, token=token)  # or a TokenRefused
            return SignIn(row.id, account.id, str(account.username), row.expires_at)

    settings: Settings = app.state.settings
    if not origin_allowed(websocket.headers.get("origin"), websocket.headers.get("host"), settings):
        await websocket.close(code=1008)  # before the handshake completes: HTTP 403
        return
    try:
        app.state.overload.check("connect")
    except ServerBusy as busy:  # refused in the handshake: 503, Retry-After, the error body
        await websocket.send_denial_response(refusal_response(busy))
        return
    address = websocket.client.host if websocket.client is not None else "unknown"
    gateway: Gateway = app.state.gateway
    if not gateway.socket_opened(address):
        # Refused in the handshake (HTTP 403), before any websocket work: a flood of sockets
        # from one address costs the node as little as can be. (uvicorn logs an ERROR for a
        # denial response with a body, so the refusal carries no body.)
        metrics: Metrics = app.state.metrics
        metrics.refused(ErrorCode.TOO_MANY_CONNECTIONS, "websocket")
        await websocket.close(code=TOO_MANY)
        return
    try:
        await Connection(
            websocket,
            cardroom,
            authenticate,
            idle_seconds=settings.ws_idle_seconds,
            metrics=app.state.metrics,
            gateway=gateway,
            address=address,
            spectators=app.state.spectators,
            sessions=app.state.sessions,
            overload=app.state.overload,
            standings=app.state.standings,
        ).serve()
    finally:
        gateway.socket_closed(address)
