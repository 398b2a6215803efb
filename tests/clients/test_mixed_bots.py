"""A mixed table end to end: ``stud-bots`` joins a stud-mix table (stud, razz, stud hi-lo, 8
hands each) on a real server (a subprocess, SQLite) through the public protocol and plays 48
hands: each hand is of its scheduled game and its PHH replays under its variant. Then the
server is killed (SIGKILL) in the middle of the rotation while the bots play, started again,
and deals on at the same game and count."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_server import OPERATOR, PASSWORD, ROOT, LiveServer
from stud_bots_run import report_of, run_stud_bots, stud_bots_command

from engine import phh, phh_replay
from engine.rotation import Position, Rotation, next_position
from engine.variants import VARIANTS

STUD_MIX: dict[str, Any] = {
    "games": [
        {"variant": "seven_card_stud"},
        {"variant": "razz"},
        {"variant": "seven_card_stud_hi_lo"},
    ],
    "hands": 8,
    "stakes": {"ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
}


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(
        tmp_path, STUD_ACTION_CLOCK_SECONDS="2", STUD_PAUSE_BETWEEN_HANDS_SECONDS="0.01"
    )
    server.create_operator()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def mixed_table(live: LiveServer) -> int:
    token = httpx.post(
        f"{live.url}/auth/login", json={"username": OPERATOR, "password": PASSWORD}
    ).json()["access_token"]
    made = httpx.post(
        f"{live.url}/admin/tables",
        headers={"Authorization": f"Bearer {token}"},
        json={"name": "Stud mix", "rotation": STUD_MIX, "min_buy_in": 200, "max_buy_in": 1000},
    )
    assert made.status_code == 201, made.text
    table_id: int = made.json()["id"]
    return table_id


def bots(live: LiveServer, table_id: int, hands: int, seed: int) -> list[str]:
    return [
        "--server",
        live.url,
        "--table",
        str(table_id),
        "--seats",
        "3",
        "--hands",
        str(hands),
        "--strategy",
        "mixed",
        "--think-ms",
        "0-2",
        "--operator",
        OPERATOR,
        "--timeout",
        "150",
        "--seed",
        str(seed),
        "--quiet",
    ]


def hands_of(directory: Path, table_id: int) -> list[tuple[Any, ...]]:
    with sqlite3.connect(directory / "cardroom.db") as db:
        return db.execute(
            "SELECT number, rotation, config, phh, result FROM hands WHERE table_id = ?"
            " ORDER BY number",
            (table_id,),
        ).fetchall()


def check_the_rotation(rows: list[tuple[Any, ...]]) -> None:
    """Every hand where the one before it left the rotation, of that position's game."""
    rotation = Rotation.from_dict(STUD_MIX)
    last: Position | None = None
    assert [row[0] for row in rows] == list(range(1, len(rows) + 1))
    for number, position, config, _, result in rows:
        dealt_to = len(json.loads(result).get("net", {})) or 2
        expected = next_position(rotation, last, players=dealt_to)
        here = Position.from_dict(json.loads(position))
        assert (here.game, here.hand, here.of) == (expected.game, expected.hand, expected.of)
        assert here.game == (number - 1) // 8 % 3, number
        game = rotation.games[here.game].variant.name
        assert json.loads(config)["variant"] == game, number
        last = here


def test_bots_play_48_hands_of_the_stud_mix(live: LiveServer, tmp_path: Path) -> None:
    table_id = mixed_table(live)
    report = report_of(run_stud_bots(bots(live, table_id, 48, seed=3), timeout=210))
    assert report["hands"] >= 48 and report["errors"] == {}, report
    rows = [row for row in hands_of(tmp_path, table_id) if row[0] <= 48]
    assert len(rows) == 48
    check_the_rotation(rows)
    for number, _, config, text, result in rows:
        assert json.loads(result)["cancelled"] is False
        history = phh.loads(text)
        assert history.variant == VARIANTS[json.loads(config)["variant"]].phh_code
        assert phh_replay.replay(history) == list(history.finishing_stacks or ()), number
    assert not live.errors(), live.log()[-5000:]


def test_a_server_killed_mid_rotation_deals_on_at_the_same_game_and_count(
    live: LiveServer, tmp_path: Path
) -> None:
    table_id = mixed_table(live)
    playing = subprocess.Popen(
        [*stud_bots_command(), *bots(live, table_id, 30, seed=4)],
        env={**os.environ, "STUD_OPERATOR_PASSWORD": PASSWORD},
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 90
        while len(hands_of(tmp_path, table_id)) < 11:  # into razz's turn
            assert time.monotonic() < deadline and playing.poll() is None
            time.sleep(0.05)
        live.stop(kill=True)
        killed_after = len(hands_of(tmp_path, table_id))
        live.start()
        out, err = playing.communicate(timeout=180)
    finally:
        if playing.poll() is None:
            playing.kill()
    report = json.loads(out.strip().splitlines()[-1])
    # An action sent as the server died may reach the restarted table after its hand was
    # voided or finished (``no_hand``): the bots' race with the kill, nothing of the rotation.
    assert set(report["errors"]) <= {"no_hand"}, err[-3000:]
    assert playing.returncode == (1 if report["errors"] else 0), err[-3000:]
    assert report["reconnects"] >= 1, report
    rows = hands_of(tmp_path, table_id)
    assert len(rows) > killed_after + 8, "dealt on well past the kill"
    # The hand in play at the kill was resumed, or voided: it counts either way.
    check_the_rotation(rows)
    assert {json.loads(row[2])["variant"] for row in rows[8:16]} == {"razz"}
