"""Frames made once and written whole (``server.edge.frames``, ``server.edge.transport``): what is
framed reads back as websockets reads it, a connection's waiting frames leave in one write
and in order, and a reader that falls behind is cut off (4008) as it always was, without
holding up anyone else."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from live import receive
from test_protocol import examples_server, hello, request
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.streams import StreamReader

from server.bus.memory import Delivered, table_channel
from server.edge.frames import PROTOCOL_VERSION, frame_bytes, text_frame
from server.edge.transport import FrameWritingProtocol


def parse(data: bytes) -> list[Frame]:
    """The frames in ``data``, read as a websockets client reads a server's."""
    reader = StreamReader()
    reader.feed_data(data)
    frames = []
    while reader.buffer:
        parser = Frame.parse(reader.read_exact, mask=False)
        try:
            next(parser)
        except StopIteration as done:
            frames.append(done.value)
        else:
            raise AssertionError("a frame was cut short")
    return frames


@pytest.mark.parametrize("size", [0, 1, 125, 126, 65_535, 65_536, 70_000])
def test_a_text_frame_of_any_size_reads_back(size: int) -> None:
    payload = ("é" * (size // 2) + "x" * (size % 2)).encode()
    assert len(payload) == size
    (frame,) = parse(text_frame(payload))
    assert frame.opcode is Opcode.TEXT and frame.fin and frame.data == payload


def test_a_delivered_message_is_framed_once_for_every_socket() -> None:
    message = Delivered({"type": "event", "table": 3, "seq": 7, "data": {1: "a"}})
    first = frame_bytes(message)
    assert frame_bytes(message) is first  # the same bytes for the next socket
    (frame,) = parse(first)
    assert json.loads(frame.data) == {
        "v": PROTOCOL_VERSION,
        "type": "event",
        "table": 3,
        "seq": 7,
        "data": {"1": "a"},
    }


def event(seq: int, padding: int = 0) -> dict[str, Any]:
    return {"type": "event", "table": 1, "seq": seq, "kind": "test", "data": "x" * padding}


async def test_the_frames_waiting_for_a_connection_leave_in_one_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[bytes] = []
    write_frames = FrameWritingProtocol.write_frames

    async def counted(self: FrameWritingProtocol, data: bytes) -> None:
        writes.append(data)
        await write_frames(self, data)

    monkeypatch.setattr(FrameWritingProtocol, "write_frames", counted)
    async with examples_server(tmp_path) as room:
        ws = await hello(room.host)
        assert (await request(ws, {"type": "watch", "id": 1, "table": 1}))["type"] == "reply"
        writes.clear()
        for seq in range(3):  # one turn of the loop, as an action's events are published
            room.app.state.cardroom.bus.publish_now(table_channel(1), event(seq))
        got = [await receive(ws) for _ in range(3)]
        assert [f["seq"] for f in got] == [0, 1, 2]
        assert len(writes) == 1 and len(parse(writes[0])) == 3
        await ws.close()


async def test_a_reader_that_falls_behind_is_cut_off_and_nobody_else_waits(
    tmp_path: Path,
) -> None:
    async with examples_server(tmp_path, ws_other_burst=10**6) as room:
        bus = room.app.state.cardroom.bus
        # A client that reads nothing until the end: the socket's buffers fill, then the
        # transport's, then the connection's queue.
        slow = await hello(room.host)
        await request(slow, {"type": "watch", "id": 1, "table": 1})
        other = await hello(room.host)
        sent = 0
        # Far more than the socket buffers hold: the writer waits on the transport while
        # the subscription's queue (1024 frames) fills behind it, and overflows.
        for _ in range(60):
            for _ in range(50):
                bus.publish_now(table_channel(1), event(sent, padding=16_000))
                sent += 1
            await asyncio.sleep(0.01)
            # Meanwhile the node answers others at once.
            await other.send(json.dumps({"type": "ping", "id": sent}))
            assert (await receive(other, timeout=2.0)) == {
                "v": PROTOCOL_VERSION,
                "type": "pong",
                "id": sent,
            }
        seqs = []
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                frame = await receive(slow, timeout=10.0)
                if frame.get("kind") == "test":
                    seqs.append(frame["seq"])
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4008
        # What did arrive came in order, from the first.
        assert seqs[0] == 0 and seqs == sorted(set(seqs)) and 0 < len(seqs) < sent
        await other.close()
