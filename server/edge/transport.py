"""uvicorn's websocket protocol, and a way to write frames made once for many sockets.

An event of a table of eight goes to eight sockets, and each action makes two or three of
them: through Starlette's ``WebSocket`` and uvicorn's ``send``, every one of those frames
is encoded and framed again for every socket, and written to the socket by a call of its
own. :class:`FrameWritingProtocol` offers the app (in the ASGI scope's extensions, under
:data:`FRAMES_EXTENSION`) a writer of whole websocket frames as bytes: the app frames an
event once (:func:`server.edge.frames.frame_bytes`), and a connection writes all its frames
that are waiting in one call (:class:`server.edge.frames.Outbox`).

Only complete, unfragmented frames that need no extension are written this way: the
writer is offered to a connection that negotiated no extension (per-message compression
is off by default, ``STUD_WS_COMPRESSION``). It keeps uvicorn's rules for
``send``: it waits while the transport's buffer is over its mark (so a slow reader's
frames queue in its subscription and it is cut off there, as before), and once the
socket is closing or gone it raises uvicorn's ``ClientDisconnected``.

uvicorn sends no keepalive pings of its own (:func:`websocket_options`): the protocol's
idle timeout (``server.edge.ws``) already closes a connection that says nothing, dead peer or
frozen client alike, and a websocket ping to every socket every 20 s cost a node with
hundreds of them 2-3% of its loop's busy time for nothing more.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State

from server.settings import Settings

FRAMES_EXTENSION = "stud.frames"
# The largest message a client may send at all: a larger one closes the socket (1009) as it
# is read, before it is held whole. The protocol refuses any over 16 KiB (``frame_too_large``,
# server/edge/ws.py) but reads it first, for the id its refusal carries.
MAX_READ_BYTES = 64 * 1024
FrameWriter = Callable[[bytes], Awaitable[None]]


class FrameWritingProtocol(WebSocketsSansIOProtocol):
    """uvicorn's sans-I/O websocket protocol, plus :meth:`write_frames`."""

    async def run_asgi(self) -> None:
        if not self.conn.extensions:  # negotiated in the handshake, before the app runs
            self.scope["extensions"][FRAMES_EXTENSION] = {"write": self.write_frames}
        await super().run_asgi()

    async def write_frames(self, data: bytes) -> None:
        """Write ``data``, one or more whole text frames, as they are."""
        if not self.writable.is_set():
            await self.writable.wait()
        if (
            self.disconnected
            or self.close_sent
            or not self.handshake_complete
            or self.conn.state is not State.OPEN
            or self.transport.is_closing()
        ):
            raise ClientDisconnected()
        self.transport.write(data)


def frame_writer(scope_extensions: dict[str, object] | None) -> FrameWriter | None:
    """The writer the server offers this socket, if it offers one."""
    offer = (scope_extensions or {}).get(FRAMES_EXTENSION)
    if isinstance(offer, dict):
        write = offer.get("write")
        if callable(write):
            return write  # type: ignore[no-any-return]
    return None


def websocket_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's websocket settings for the server, wherever a node is served."""
    return {
        "ws": FrameWritingProtocol,
        "ws_per_message_deflate": settings.ws_compression,
        "ws_max_size": MAX_READ_BYTES,  # uvicorn's default reads up to 16 MiB a message
        # No keepalive pings: the idle timeout finds a silent peer (see the module's docs).
        "ws_ping_interval": None,
        "ws_ping_timeout": None,
    }
