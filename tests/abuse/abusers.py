"""The abusers of tests/abuse, run in a process of their own (so that their work does not
slow the process measuring the seated players): ``python abusers.py MODE URL JSON``, one
JSON line out with what they were answered (HTTP statuses and codes, error frames, close
codes).

Modes: ``login`` (wrong passwords, many at once), ``register`` (new accounts at once),
``snapshots`` (anonymous sockets that watch a table and resync in a loop), ``chat`` (an
account seated at no table sending chat lines), ``ping`` (pings as fast as they go).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections import Counter
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

Seen = Counter[str]
FIRST_ANSWER_SECONDS = 60.0


async def login_burst(url: str, args: dict[str, Any]) -> Seen:
    seen: Seen = Counter()
    gate = asyncio.Semaphore(args["at_once"])
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:

        async def one(n: int) -> None:
            async with gate:
                body = {"username": args["username"], "password": f"wrong password {n}"}
                answer = await client.post("/auth/login", json=body)
                code = answer.json()["error"]["code"] if answer.status_code >= 400 else "ok"
                seen[f"{answer.status_code} {code}"] += 1
                if answer.status_code == 429 and "retry-after" in answer.headers:
                    seen["retry-after"] += 1

        await asyncio.gather(*(one(n) for n in range(args["count"])))
    return seen


async def register_burst(url: str, args: dict[str, Any]) -> Seen:
    seen: Seen = Counter()
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:

        async def one(n: int) -> None:
            body = {"username": f"{args['prefix']}{n}", "password": "a long password"}
            answer = await client.post("/auth/register", json=body)
            code = answer.json()["error"]["code"] if answer.status_code >= 400 else "ok"
            seen[f"{answer.status_code} {code}"] += 1

        await asyncio.gather(*(one(n) for n in range(args["count"])))
    return seen


async def _socket(ws_url: str, seen: Seen) -> ClientConnection | None:
    try:
        ws = await connect(ws_url, max_queue=None)
    except InvalidStatus as refused:
        response = refused.response
        try:
            code = json.loads(response.body or b"{}").get("error", {}).get("code")
        except ValueError:
            code = None
        seen[f"connect refused {response.status_code} {code}"] += 1
        return None
    except OSError as error:
        seen[f"connect failed {error}"] += 1
        return None
    await ws.recv()  # hello
    return ws


async def _drain(ws: ClientConnection, seen: Seen, until: float) -> None:
    """Read frames until the socket closes (counting errors and the close) or time is up."""
    try:
        while time.monotonic() < until:
            try:
                text = await asyncio.wait_for(ws.recv(), max(0.01, until - time.monotonic()))
            except TimeoutError:
                return
            frame = json.loads(text)
            if frame["type"] == "error":
                seen[f"error {frame['code']}"] += 1
            else:
                seen[frame["type"]] += 1
    except ConnectionClosed as closed:
        seen[f"close {closed.rcvd.code if closed.rcvd else None}"] += 1


async def snapshot_loop(url: str, args: dict[str, Any]) -> Seen:
    seen: Seen = Counter()
    ws_url = url.replace("http", "ws", 1) + "/ws"
    until = time.monotonic() + args["seconds"]

    async def one() -> None:
        await one_socket()
        while args.get("reconnect") and time.monotonic() < until:
            await one_socket()

    async def one_socket() -> None:
        ws = await _socket(ws_url, seen)
        if ws is None:
            await asyncio.sleep(until - time.monotonic())
            return
        try:
            await ws.send(json.dumps({"type": "watch", "id": 0, "table": args["table"]}))
            n = 0
            first = True
            while first or time.monotonic() < until:
                # The first answer is waited for however long a busy machine takes (a
                # minute at most); the loop's later ones until the time is up.
                wait = max(0.0, until - time.monotonic()) + (FIRST_ANSWER_SECONDS if first else 0)
                text = await asyncio.wait_for(ws.recv(), wait)
                if first:
                    seen["answered"] += 1
                    first = False
                frame = json.loads(text)
                if frame["type"] == "error":
                    seen[f"error {frame['code']}"] += 1
                if frame["type"] in ("reply", "error"):
                    if frame["type"] == "reply":
                        seen["snapshot"] += 1
                    n += 1
                    await ws.send(json.dumps({"type": "resync", "id": n, "table": args["table"]}))
        except ConnectionClosed as closed:
            seen[f"close {closed.rcvd.code if closed.rcvd else None}"] += 1
        except TimeoutError:
            pass
        finally:
            await ws.close()
            seen["sockets"] += 1

    await asyncio.gather(*(one() for _ in range(args["sockets"])))
    return seen


async def flood(url: str, args: dict[str, Any]) -> Seen:
    """Frames of one type sent as fast as they go (``chat`` lines, or ``ping``s) from a few
    sockets, at ``rate`` a second each; what came back."""
    seen: Seen = Counter()
    ws_url = url.replace("http", "ws", 1) + "/ws"
    until = time.monotonic() + args["seconds"]

    async def one() -> None:
        await one_socket()
        while args.get("reconnect") and time.monotonic() < until:
            await one_socket()

    async def one_socket() -> None:
        ws = await _socket(ws_url, seen)
        if ws is None:
            await asyncio.sleep(until - time.monotonic())
            return
        if args.get("token"):
            await ws.send(json.dumps({"type": "auth", "id": "auth", "token": args["token"]}))
        reader = asyncio.create_task(_drain(ws, seen, until))
        n = 0
        try:
            while time.monotonic() < until and not reader.done():
                frame: dict[str, Any] = {"type": args["type"], "id": n}
                if args["type"] == "chat":
                    frame.update(table=args["table"], text="spam \u202e\u0000 spam")
                await ws.send(json.dumps(frame))
                seen["sent"] += 1
                n += 1
                await asyncio.sleep(1 / args["rate"])
        except ConnectionClosed:
            pass
        await reader
        await ws.close()

    await asyncio.gather(*(one() for _ in range(args["sockets"])))
    return seen


MODES = {
    "login": login_burst,
    "register": register_burst,
    "snapshots": snapshot_loop,
    "flood": flood,
}


def main() -> None:
    mode, url, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    # The abusers' own CPU is not the server's (in the world they are other machines): when
    # the seated players are measured (bench/abuse.py) they yield to the server and to the
    # players. The tests count what the abusers are answered, so they run at the players'
    # priority: at the lowest, beside busy processes, they would hardly send at all.
    os.nice(args.pop("nice", 19))
    seen = asyncio.run(MODES[mode](url, args))
    print(json.dumps(dict(seen)))


if __name__ == "__main__":
    main()
