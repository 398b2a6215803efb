"""What an idle connection costs a node in memory, against the websocket stack's own floor.

A cardroom's players sit in the lobby, signed in, for far longer than they play: what each
of those sockets holds bounds how many one node can keep. This starts a node as
``bench/load.py`` does (SQLite, or PostgreSQL and Redis), registers ``--connections``
players, connects them one by one (``hello``, then ``auth``: signed in, at no table), and
reports the growth of the node's resident memory over them, after a first few connections
have paid for what is made once (imports, caches).

The same count of idle sockets is then held open on the stack alone, with nothing behind it
(``bench/ws_floor.py``'s server: uvicorn, Starlette and a writer task a socket, as
``stud-server`` serves them): the floor no server of this stack goes below.

    python bench/idle_connections.py [--connections 1000] [--backend sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import httpx
import orjson
from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "cluster"), str(ROOT / "bench")]

from load import Cardroom, Options, ProcessSample, bot_account  # noqa: E402
from ws_floor import free_port  # noqa: E402

FIRST = 50  # connections made before the baseline: what the first ones pay once
SETTLE_SECONDS = 3.0


def resident(pids: Sequence[int]) -> int:
    return ProcessSample.take(list(pids)).rss_bytes


async def accounts(http: httpx.AsyncClient, base: str, count: int) -> list[str]:
    """``count`` registered players' tokens."""
    gate = asyncio.Semaphore(8)

    async def one(index: int) -> str:
        async with gate:
            return await bot_account(http, base, f"idle{index}")

    return list(await asyncio.gather(*(one(i) for i in range(count))))


async def signed_in(url: str, token: str) -> ClientConnection:
    socket = await connect(url, compression=None, ping_interval=None, max_queue=None)
    hello = orjson.loads(await socket.recv())
    assert hello["type"] == "hello", hello
    await socket.send(orjson.dumps({"type": "auth", "id": 1, "token": token}).decode())
    reply = orjson.loads(await socket.recv())
    if reply.get("type") != "reply":
        raise RuntimeError(f"auth refused: {reply}")
    return socket


async def growth_per_connection(
    pids: Sequence[int], count: int, open_one: Callable[[int], Awaitable[ClientConnection]]
) -> float:
    """KiB of ``pids``' RSS each of ``count`` connections adds, once ``FIRST`` are open."""
    sockets = [await open_one(index) for index in range(FIRST)]
    await asyncio.sleep(SETTLE_SECONDS)
    before = resident(pids)
    sockets += [await open_one(index) for index in range(FIRST, FIRST + count)]
    await asyncio.sleep(SETTLE_SECONDS)
    after = resident(pids)
    for socket in sockets:
        await socket.close()
    return (after - before) / count / 1024


async def node_per_connection(room: Cardroom, count: int) -> float:
    """KiB of the node's RSS an idle, signed-in connection adds."""
    base = room.nodes[0].url
    url = base.replace("http://", "ws://") + "/ws"
    async with httpx.AsyncClient(timeout=60) as http:
        tokens = await accounts(http, base, FIRST + count)
    return await growth_per_connection(
        room.pids(), count, lambda index: signed_in(url, tokens[index])
    )


async def stack_per_connection(count: int) -> float:
    """KiB an idle socket adds to the websocket stack alone (``bench/ws_floor.py``)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "ws_floor.py"), "--serve", f"frames:{port}"]
    )
    try:
        time.sleep(2)
        return await growth_per_connection(
            [server.pid],
            count,
            lambda index: connect(
                f"ws://127.0.0.1:{port}/ws?table={index // 8}",
                compression=None,
                ping_interval=None,
            ),
        )
    finally:
        server.terminate()
        server.wait()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    args = parser.parse_args(argv)
    options = Options(
        backend=args.backend,
        nodes=1,
        tables=(),
        seconds=0,
        warmup=0,
        think=(0.5, 1.5),
        workers=0,
        lease_seconds=5.0,
        p99_ms=50,
        json_path=None,
    )
    with tempfile.TemporaryDirectory(prefix="stud-idle-") as directory:
        room = Cardroom(Path(directory), options)
        try:
            room.start()
            node = asyncio.run(node_per_connection(room, args.connections))
        except BaseException:
            print(room.logs(), file=sys.stderr)
            raise
        finally:
            room.close()
    stack = asyncio.run(stack_per_connection(args.connections))
    print(
        f"{args.connections} idle connections ({args.backend}): "
        f"node {node:.1f} KiB each, signed in at no table; "
        f"the websocket stack alone {stack:.1f} KiB each; "
        f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
