"""A websocket that says nothing, served by ``python -m server`` as an operator runs it: the
server sends it no keepalive pings, closes it once its idle time has passed, with the
documented code, and ends the TCP connection itself when the peer never answers the close
(a dead peer, gone without a word)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from live_server import LiveServer
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

from server.settings import Settings
from server.workers import node_config

IDLE = 1.0
CLOSE_TIMEOUT = 10.0  # how long uvicorn waits for the peer's answer to its close


def test_the_node_s_websockets_have_no_keepalive_pings() -> None:
    """The idle timeout alone finds a silent peer: uvicorn is asked to ping nobody."""
    config = node_config(object(), Settings(), "warning")  # type: ignore[arg-type]
    assert config.ws_ping_interval is None and config.ws_ping_timeout is None


async def test_a_silent_peer_gets_no_ping_and_is_closed_as_idle(tmp_path: Path) -> None:
    live = LiveServer(tmp_path, STUD_WS_IDLE_SECONDS=str(IDLE))
    live.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", live.port)
        # websockets' sans-I/O client reads the frames; the only bytes ever sent are the
        # handshake's: no message, no pong, no answer to the close.
        protocol = ClientProtocol(parse_uri(f"ws://127.0.0.1:{live.port}/ws"))
        protocol.send_request(protocol.connect())
        writer.write(b"".join(protocol.data_to_send()))
        frames: list[tuple[float, Frame]] = []
        response: Response | None = None
        started = time.monotonic()
        while data := await asyncio.wait_for(reader.read(65536), IDLE + CLOSE_TIMEOUT + 10):
            protocol.receive_data(data)
            for event in protocol.events_received():
                if isinstance(event, Response):
                    response = event
                else:
                    frames.append((time.monotonic() - started, event))
        ended = time.monotonic() - started
        writer.close()
    finally:
        live.stop()
    assert response is not None and response.status_code == 101
    kinds = [frame.opcode for _, frame in frames]
    assert kinds == [Opcode.TEXT, Opcode.CLOSE], kinds  # hello, close: no ping
    hello = json.loads(frames[0][1].data)
    assert hello["type"] == "hello" and hello["idle_seconds"] == IDLE
    closed_at, close = frames[1]
    assert protocol.close_rcvd is not None
    assert (protocol.close_rcvd.code, protocol.close_rcvd.reason) == (1001, "idle"), close
    assert IDLE <= closed_at < IDLE + 3
    # Unanswered, the close is followed by the end of the connection from the server's side.
    assert closed_at + CLOSE_TIMEOUT - 1 < ended < closed_at + CLOSE_TIMEOUT + 5
