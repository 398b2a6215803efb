"""``stud-bots`` end to end: the console script against a real server (a subprocess on a free
port, SQLite) plays 200 hands on four tables of mixed variants with every strategy, with no
error, closes its tables and leaves the books balanced, every chip the house lent its bots
back with the house. A run that plays no hand exits 1; ``--keep-tables`` keeps them open."""

from __future__ import annotations

import json
import socket
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_server import OPERATOR, PASSWORD, LiveServer
from stud_bots_run import report_of, run_stud_bots

from stud_bots.runner import MIXED_VARIANTS, failures, main, parse_args

HANDS = 200
TABLES = 4
SEATS = 4
BUDGET_SECONDS = 120.0


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(
        tmp_path, STUD_ACTION_CLOCK_SECONDS="2", STUD_PAUSE_BETWEEN_HANDS_SECONDS="0.01"
    )
    server.create_operator()
    with server.running():
        yield server


def test_two_hundred_hands_on_four_tables_without_an_error(
    live: LiveServer, tmp_path: Path
) -> None:
    started = time.monotonic()
    done = run_stud_bots(
        [
            "--server",
            live.url,
            "--tables",
            str(TABLES),
            "--seats",
            str(SEATS),
            "--hands",
            str(HANDS),
            "--strategy",
            "mixed",
            "--variant",
            "mixed",
            "--think-ms",
            "1-5",
            "--operator",
            OPERATOR,
            "--timeout",
            str(BUDGET_SECONDS),
            "--seed",
            "1",
        ],
        timeout=BUDGET_SECONDS + 60,
    )
    elapsed = time.monotonic() - started
    report = report_of(done)
    assert "hands" in done.stderr and "[" in done.stderr  # the progress bar
    assert not report["timed_out"]
    assert report["hands"] >= HANDS
    assert len(report["hands_by_table"]) == TABLES
    assert all(count > 10 for count in report["hands_by_table"].values())
    assert report["errors"] == {}
    assert report["bots"] == TABLES * SEATS
    assert report["strategies"] == {"random": 8, "station": 4, "rules": 4}
    assert report["actions"] > 10 * HANDS
    latency = report["latency_ms"]
    assert latency["count"] == report["actions"]
    assert 0 < latency["p50"] <= latency["p95"] <= latency["p99"]
    assert elapsed < BUDGET_SECONDS

    # The books, as an operator reads them: balanced, every table's pool empty.
    token = httpx.post(
        f"{live.url}/auth/login", json={"username": OPERATOR, "password": PASSWORD}
    ).json()["access_token"]
    books = httpx.get(
        f"{live.url}/admin/books", headers={"Authorization": f"Bearer {token}"}
    ).json()
    assert books["balanced"] is True, books
    assert len(books["tables"]) == TABLES
    assert all(t["pool"] == t["seats"] == 0 for t in books["tables"].values()), books
    assert report["closed_tables"] == report["tables"]
    assert httpx.get(f"{live.url}/tables").json() == []  # every table it opened, closed

    # And straight from the database file: every hand saved, none cancelled, and the bots'
    # wallets empty: what the house granted them went back to it.
    with sqlite3.connect(tmp_path / "cardroom.db") as db:
        hands = db.execute("SELECT result FROM hands").fetchall()
        wallets = db.execute(
            "SELECT count(*), sum(w.balance) FROM wallets w JOIN accounts a"
            " ON a.id = w.account_id WHERE a.role = 'bot'"
        ).fetchone()
        variants = {row[0] for row in db.execute("SELECT variant FROM tables")}
    assert len(hands) == report["hands"]
    assert not [r for (r,) in hands if json.loads(r).get("cancelled")]
    assert wallets == (TABLES * SEATS, 0)
    assert report["chips_returned"] > 0
    assert variants == set(MIXED_VARIANTS[:TABLES])


def test_the_command_line_is_checked() -> None:
    options = parse_args(
        [
            "--server",
            "http://x",
            "--operator-token",
            "t",
            "--table",
            "3",
            "--table",
            "4",
            "--think-ms",
            "5-40",
            "--strategy",
            "rules,random",
            "--variant",
            "razz",
        ]
    )
    assert options.table_ids == (3, 4) and options.tables == 2
    assert options.think == (0.005, 0.04)
    assert options.strategies == ("rules", "random") and options.variants == ("razz",)
    for wrong in (["--strategy", "shark"], ["--variant", "holdem"], ["--think-ms", "9-1"]):
        with pytest.raises(SystemExit):
            parse_args(["--server", "http://x", "--operator-token", "t", "--table", "1", *wrong])
    # Bot accounts are made by an operator, also for tables given by id.
    with pytest.raises(SystemExit):
        parse_args(["--server", "http://x", "--table", "1"])


def test_bots_take_several_servers_and_play_on_through_lost_connections(
    live: LiveServer,
) -> None:
    """The first address answers nothing: the bots go on to the next, as the client library
    does. Connections dropped every few tenths of a second cost the bots a command each at
    most: none stops, and the hands asked for are played."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        nobody = f"http://127.0.0.1:{s.getsockname()[1]}"  # closed once the block ends
    hands = 30
    done = run_stud_bots(
        [
            "--server",
            f"{nobody},{live.url}",
            "--tables",
            "1",
            "--seats",
            "3",
            "--hands",
            str(hands),
            "--think-ms",
            "1-5",
            "--chaos",
            "0.3",
            "--operator",
            OPERATOR,
            "--timeout",
            "90",
            "--seed",
            "2",
            "--quiet",
        ],
        timeout=150,
    )
    report = report_of(done)
    assert not report["timed_out"] and report["hands"] >= hands, report
    assert report["reconnects"] >= 3, report
    assert report["bots"] == 3
    assert "lost_seat" not in report["errors"], report


def test_several_servers_are_one_and_its_fallbacks() -> None:
    options = parse_args(
        ["--server", "http://a,http://b", "--server", "http://c", "--operator-token", "t"]
    )
    assert options.server == "http://a"
    assert options.fallback_servers == ("http://b", "http://c")


def _operator(url: str) -> dict[str, str]:
    token = httpx.post(
        f"{url}/auth/login", json={"username": OPERATOR, "password": PASSWORD}
    ).json()["access_token"]
    return {"Authorization": f"Bearer {token}"}


def _run_bots(live: LiveServer, *args: str) -> tuple[int, dict[str, Any], str]:
    done = run_stud_bots(
        ["--server", live.url, "--operator", OPERATOR, "--quiet", *args], timeout=120
    )
    return done.returncode, json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_a_run_that_plays_no_hand_exits_1(live: LiveServer) -> None:
    """The only table is paused: the bots sit, nothing is dealt, the run ends at its timeout
    and says it failed. The table it was given stays open; the bots' chips go back."""
    admin = _operator(live.url)
    table = httpx.post(
        f"{live.url}/admin/tables",
        json={"name": "paused", "config": {"variant": "razz"}},
        headers=admin,
    ).json()["id"]
    paused = httpx.post(
        f"{live.url}/admin/tables/{table}/pause", json={"reason": "no deal"}, headers=admin
    )
    assert paused.status_code == 200, paused.text
    code, report, stderr = _run_bots(
        live, "--table", str(table), "--seats", "2", "--hands", "5", "--timeout", "3"
    )
    assert code == 1, stderr
    assert report["hands"] == 0 and report["timed_out"] and report["bots"] == 2
    assert "no hand was played" in stderr
    assert report["closed_tables"] == []  # not opened by the run: not closed by it
    assert [t["id"] for t in httpx.get(f"{live.url}/tables").json()] == [table]
    books = httpx.get(f"{live.url}/admin/books", headers=admin).json()
    assert books["balanced"] is True, books
    assert report["chips_returned"] > 0
    bots = httpx.get(f"{live.url}/admin/players?prefix=bot-", headers=admin).json()
    assert bots["total"] == 2
    for bot in bots["players"]:
        assert bot["role"] == "bot"
        found = httpx.get(f"{live.url}/admin/players/{bot['username']}", headers=admin).json()
        assert found["balance"] == 0 and found["seats"] == []


def test_keep_tables_keeps_the_tables_it_opened(live: LiveServer) -> None:
    code, report, stderr = _run_bots(
        live, "--tables", "1", "--seats", "2", "--hands", "2", "--keep-tables", "--seed", "3"
    )
    assert code == 0, stderr
    assert report["hands"] >= 2 and report["errors"] == {}
    assert report["closed_tables"] == []
    lobby = httpx.get(f"{live.url}/tables").json()
    assert [t["id"] for t in lobby] == report["tables"]
    assert lobby[0]["seats_taken"] == 0  # the bots left it


def test_a_run_fails_for_no_hand_or_any_error() -> None:
    played = {"hands": 12, "errors": {}}
    assert failures(played) == []
    assert failures({"hands": 0, "errors": {}}) == ["no hand was played"]
    broken = {"hands": 12, "errors": {"lost_seat": 1, "connection_lost": 2}}
    assert failures(broken) == ["errors: lost_seat x1, connection_lost x2"]
    # Under --chaos the connections it cut itself are no failure; anything else still is.
    assert failures(broken, chaos=True) == ["errors: lost_seat x1"]
    assert failures({"hands": 3, "errors": {"connection_lost": 5}}, chaos=True) == []


def test_an_unreachable_server_is_a_message_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        nobody = f"http://127.0.0.1:{s.getsockname()[1]}"
    assert main(["--server", nobody, "--operator-token", "t", "--quiet"]) == 1
    assert capsys.readouterr().err.startswith("stud-bots: ")
