"""Frames as the websocket sends them: the protocol's version first, encoded once.

An event the bus delivers to many sockets (:class:`~server.bus.Delivered`) is encoded for
the first and the same text written to the others.
"""

from __future__ import annotations

from typing import Any

import orjson

from server.bus import Delivered

PROTOCOL_VERSION = 1


def dumps(frame: dict[str, Any]) -> str:
    # Seat numbers key some maps (a snapshot's seats): JSON writes them as strings.
    return orjson.dumps({"v": PROTOCOL_VERSION, **frame}, option=orjson.OPT_NON_STR_KEYS).decode()


def wire(message: dict[str, Any]) -> str:
    """A message's frame, encoded once for all the sockets the bus gives it to."""
    if isinstance(message, Delivered):
        if message.wire is None:
            message.wire = dumps(message)
        return message.wire
    return dumps(message)
