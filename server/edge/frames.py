"""Frames as the websocket sends them: the protocol's version first, encoded once.

An event the bus delivers to many sockets (:class:`~server.bus.memory.Delivered`) is encoded for
the first and the same text, or the same whole websocket frame, written to the others. A
connection's :class:`Outbox` writes the frames waiting for it: where the server offers it
(:mod:`server.edge.transport`), as whole frames in one write; elsewhere (a test client, an
ASGI server of another make) one ``send_text`` each.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import orjson
from starlette.websockets import WebSocket

from server.bus.memory import Delivered
from server.edge.transport import frame_writer

PROTOCOL_VERSION = 1
_TEXT_FIN = 0x81  # FIN, opcode 1 (text); a server's frames are not masked (RFC 6455, 5.1)


def encode(frame: dict[str, Any]) -> bytes:
    # Seat numbers key some maps (a snapshot's seats): JSON writes them as strings.
    return orjson.dumps({"v": PROTOCOL_VERSION, **frame}, option=orjson.OPT_NON_STR_KEYS)


def dumps(frame: dict[str, Any]) -> str:
    return encode(frame).decode()


def wire(message: dict[str, Any]) -> str:
    """A message's frame, encoded once for all the sockets the bus gives it to."""
    if isinstance(message, Delivered):
        if message.wire is None:
            message.wire = dumps(message)
        return message.wire
    return dumps(message)


def text_frame(payload: bytes) -> bytes:
    """``payload`` (UTF-8) as one whole websocket text frame, from a server."""
    size = len(payload)
    if size < 126:
        header = bytes((_TEXT_FIN, size))
    elif size < 1 << 16:
        header = struct.pack("!BBH", _TEXT_FIN, 126, size)
    else:
        header = struct.pack("!BBQ", _TEXT_FIN, 127, size)
    return header + payload


def frame_bytes(message: dict[str, Any]) -> bytes:
    """A message as a whole websocket frame, made once for all the sockets it goes to."""
    if isinstance(message, Delivered):
        if message.frame is None:
            message.frame = text_frame(encode(message))
        return message.frame
    return text_frame(encode(message))


class Outbox:
    """Where a connection's frames are written, in order, by its one writer."""

    def __init__(self, websocket: WebSocket) -> None:
        self.websocket = websocket
        self._write = frame_writer(websocket.scope.get("extensions"))

    async def write(self, messages: Sequence[dict[str, Any]]) -> None:
        """Write ``messages`` in order: in one write of whole frames where the server takes
        them, else one ``send_text`` each. Raises as the socket's ``send`` would once the
        socket is gone."""
        if self._write is not None:
            if len(messages) == 1:
                await self._write(frame_bytes(messages[0]))
            else:
                await self._write(b"".join([frame_bytes(m) for m in messages]))
            return
        for message in messages:
            await self.websocket.send_text(wire(message))
