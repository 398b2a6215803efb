"""``stud-server --demo``: demo tables where house bots play, seen as a newcomer sees them;
the house bots' process (``python -m stud_bots.house``), as the server runs it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from live_server import LiveServer, free_port

from server import demo
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


def _house_bots(orders: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stud_bots.house"],
        input=orders,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_house_bots_go_when_their_orders_end() -> None:
    """The house bots' process plays until its standard input ends (the server closes it, or
    dies): bots waiting for a server that never answers go at once, exit status 0."""
    orders = {"base_url": f"http://127.0.0.1:{free_port()}", "think_seconds": 0.01}
    bots = [{"name": "house-razz-1", "password": "p" * 20, "table_id": 1, "strategy": "rules"}]
    ended = _house_bots(json.dumps({**orders, "bots": bots}) + "\n")
    assert (ended.returncode, ended.stdout, ended.stderr) == (0, "", "")
    # Orders it cannot read: exit status 1, said in a JSON log line.
    refused = _house_bots("not orders\n")
    assert refused.returncode == 1
    line = json.loads(refused.stderr.splitlines()[0])
    assert line["level"] == "ERROR" and line["logger"] == "stud_bots.house"
    assert (
        "orders that cannot be read" in line["message"] and "JSONDecodeError" in line["exception"]
    )


async def test_the_server_restarts_the_house_bots_and_logs_their_lines(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Their lines reach the server's log under their own loggers and levels (a traceback as
    the record's), any other line as a warning; a process that ends is started again."""
    record = {
        "level": "WARNING",
        "logger": "stud_client.client",
        "message": "stud client: reconnect attempt 1 failed",
        "exception": "Traceback (most recent call last):\nOSError: refused\n",
    }
    script = f"import sys; print({json.dumps(record)!r}); print('not json'); sys.exit(3)"
    monkeypatch.setattr(demo, "HOUSE_BOTS_COMMAND", (sys.executable, "-c", script))
    monkeypatch.setattr(demo, "RETRY_SECONDS", 0.01)
    caplog.set_level(logging.INFO)
    bots = [demo.HouseBot("house-razz-1", "p" * 20, 1, "rules")]
    running = asyncio.create_task(demo.run_house_bots("http://127.0.0.1:1", bots, 0.01))
    try:
        async with asyncio.timeout(30):
            while sum("exit status 3" in r.getMessage() for r in caplog.records) < 2:
                await asyncio.sleep(0.05)
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
    relayed = [r for r in caplog.records if r.name == "stud_client.client"]
    assert relayed and relayed[0].levelno == logging.WARNING
    assert relayed[0].getMessage() == record["message"]
    assert relayed[0].exc_text == record["exception"].rstrip()
    other = [r for r in caplog.records if r.getMessage() == "house bots: not json"]
    assert other and other[0].name == "server.demo" and other[0].levelno == logging.WARNING


async def test_house_bots_told_to_go_are_killed_when_they_stay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A house bots' process that ignores the end of its input is killed after a while."""
    script = "import time; time.sleep(600)"
    monkeypatch.setattr(demo, "HOUSE_BOTS_COMMAND", (sys.executable, "-c", script))
    monkeypatch.setattr(demo, "STOP_SECONDS", 0.5)
    running = asyncio.create_task(demo.run_house_bots("http://127.0.0.1:1", [], 0.01))
    await asyncio.sleep(1)
    started = time.monotonic()
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    assert 0.4 < time.monotonic() - started < 10  # told, waited for, then killed
