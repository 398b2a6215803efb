"""``stud-server --demo``: demo tables where house bots play, seen as a newcomer sees them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from live_server import LiveServer

from stud_client import StudClient

DEMO = {"STUD_DEMO": "true", "STUD_DEMO_THINK_SECONDS": "0.01"}


async def _hands_seen(url: str, table_id: int, hands: int, seconds: float) -> int:
    """Watch a table as a spectator until ``hands`` hands end there; how many did."""
    ended = 0
    async with StudClient(url) as spectator:
        await spectator.connect()
        table = await spectator.watch(table_id)
        stream = table.events()
        try:
            async with asyncio.timeout(seconds):
                async for event in stream:
                    if event.kind == "hand_ended":
                        ended += 1
                        if ended >= hands:
                            break
        except TimeoutError:
            pass
        finally:
            await stream.aclose()
    return ended


async def test_demo_tables_fill_with_house_bots_that_play(tmp_path: Path) -> None:
    server = LiveServer(tmp_path, **DEMO)
    server.start()
    try:
        lobby = httpx.get(f"{server.url}/tables").json()
        demo = [t for t in lobby if t["name"].startswith("Demo: ")]
        assert sorted(t["variant"] for t in demo) == [
            "razz",
            "seven_card_stud",
            "seven_card_stud_hi_lo",
        ]
        for table in demo:
            assert await _hands_seen(server.url, table["id"], 2, 60) == 2
        lobby = {t["id"]: t for t in httpx.get(f"{server.url}/tables").json()}
        for table in demo:
            assert lobby[table["id"]]["seats_taken"] == 3  # the other seats wait for people
        # A restart keeps the same tables, and the bots come back to them.
        server.stop()
        server.start()
        again = [
            t for t in httpx.get(f"{server.url}/tables").json() if t["name"].startswith("Demo: ")
        ]
        assert sorted(t["id"] for t in again) == sorted(t["id"] for t in demo)
        assert await _hands_seen(server.url, demo[0]["id"], 1, 60) == 1
    finally:
        server.stop()
