"""The floor of the websocket stack: what a node's CPU pays for an action's frames alone.

A table of eight in play (``bench/load.py``) sends, for each action, the actor's reply and
the action's events to all eight sockets. This serves only that, with no table, engine or
database behind it: ``--tables`` tables of eight websockets; each action is an ``act``
frame from one seat, answered by a reply to it and ``--events`` events to every seat. The
server runs in a process of its own (uvicorn, as ``stud-server`` runs it: uvloop,
httptools, :class:`server.edge.transport.FrameWritingProtocol`), and the clients here, about
one action a second a table; its CPU over the actions is the floor for ``--mode``:

- ``starlette``: each frame encoded for each socket and sent through Starlette's
  ``send_text`` by the socket's writer task (how the server wrote before frames were made
  once);
- ``frames``: each event framed once for every socket, each socket's waiting frames in one
  write by its writer task (:class:`server.edge.frames.Outbox`, what the server does now);
- ``direct``: the same bytes written to each socket's transport at once, with no writer
  task: the least Python can do (a write call a socket an action).

    python bench/ws_floor.py [--mode frames] [--tables 100] [--seconds 20] [--events 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

SEATS = 8
MODES = ("starlette", "frames", "direct")


# ---------------------------------------------------------------------- the server


def serve(mode: str, port: int, events: int) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket

    from server.bus.memory import Delivered
    from server.edge.frames import Outbox, dumps, frame_bytes
    from server.edge.transport import websocket_options
    from server.settings import Settings

    tables: dict[int, list[Any]] = {}

    class Seat:
        def __init__(self, websocket: WebSocket) -> None:
            self.websocket = websocket
            self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
            self.outbox = Outbox(websocket)
            protocol = websocket.scope["extensions"].get("stud.frames", {}).get("write")
            self.transport = getattr(getattr(protocol, "__self__", None), "transport", None)

        async def pump(self) -> None:
            while True:
                messages = [await self.queue.get()]
                if mode == "starlette":
                    await self.websocket.send_text(dumps(messages[0]))
                    continue
                while not self.queue.empty():
                    messages.append(self.queue.get_nowait())
                await self.outbox.write(messages)

        def deliver(self, message: dict[str, Any]) -> None:
            if mode == "direct":
                assert self.transport is not None
                self.transport.write(frame_bytes(message))
            else:
                self.queue.put_nowait(message)

    async def endpoint(websocket: WebSocket) -> None:
        await websocket.accept()
        table = int(websocket.query_params["table"])
        seat = Seat(websocket)
        seats = tables.setdefault(table, [])
        seats.append(seat)
        pump = asyncio.create_task(seat.pump())
        seq = 0
        try:
            while True:
                message = orjson.loads(await websocket.receive_text())
                seat.deliver({"type": "reply", "id": message["id"], "result": {}})
                for _ in range(events):
                    seq += 1
                    event = Delivered(
                        {"type": "event", "table": table, "seq": seq, "kind": "action",
                         "data": {"seat": 3, "player": "somebody", "kind": "bet", "amount": 20,
                                  "pot": 180, "stack": 4_980, "street": 2}}
                    )  # fmt: skip
                    for other in seats:
                        other.deliver(event)
        except Exception:  # noqa: BLE001 - the client went away
            pump.cancel()

    app = Starlette(routes=[WebSocketRoute("/ws", endpoint)])
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        **websocket_options(Settings(ws_compression=False)),  # as stud-server serves them
    )


# ---------------------------------------------------------------------- the clients


async def play(port: int, tables: int, seconds: float, warmup: float, pid: int) -> None:
    from websockets.asyncio.client import connect

    answered = 0
    sockets = []
    for table in range(tables):
        for _ in range(SEATS):
            url = f"ws://127.0.0.1:{port}/ws?table={table}"
            sockets.append(await connect(url, compression=None, ping_interval=None))

    async def read(ws: Any) -> None:
        nonlocal answered
        async for frame in ws:
            if b'"reply"' in (frame if isinstance(frame, bytes) else frame.encode()):
                answered += 1

    async def act(ws: Any) -> None:
        n = 0
        while True:
            await asyncio.sleep(random.uniform(0.5, 1.5))
            n += 1
            await ws.send(orjson.dumps({"type": "act", "id": n}).decode())

    readers = [asyncio.create_task(read(ws)) for ws in sockets]
    actors = [asyncio.create_task(act(sockets[t * SEATS])) for t in range(tables)]
    await asyncio.sleep(warmup)
    before, counted = cpu_seconds(pid), answered
    started = time.monotonic()
    await asyncio.sleep(seconds)
    cpu, actions = cpu_seconds(pid) - before, answered - counted
    elapsed = time.monotonic() - started
    for task in (*readers, *actors):
        task.cancel()
    print(
        f"{actions / elapsed:8.1f} act/s  server CPU {100 * cpu / elapsed:5.1f}%  "
        f"{1000 * cpu / max(actions, 1):.3f} ms/act  (load average "
        + " ".join(f"{v:.2f}" for v in os.getloadavg())
        + ")"
    )
    for ws in sockets:
        await ws.close()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--mode", choices=MODES, action="append", help="default: every mode")
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument("--events", type=int, default=2, help="events to every seat an action")
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # MODE:PORT, the server process
    args = parser.parse_args()
    if args.serve:
        mode, port = args.serve.split(":")
        serve(mode, int(port), args.events)
        return 0
    frames = 1 + SEATS * args.events
    print(f"{args.tables} tables of {SEATS}; {frames} frames out and 1 in an action")
    for mode in args.mode or MODES:
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", f"{mode}:{port}", "--events", str(args.events)]
        )
        try:
            time.sleep(2)
            print(f"{mode:>10}: ", end="", flush=True)
            import uvloop

            uvloop.run(play(port, args.tables, args.seconds, args.warmup, server.pid))
        finally:
            server.terminate()
            server.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
