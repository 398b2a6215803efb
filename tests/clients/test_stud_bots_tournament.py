"""``stud-bots --tournament`` end to end: the console script against a real server (a
subprocess on a free port, SQLite) has its operator make a tournament, registers its bots and
plays it to a winner: a 9-player sit-and-go from the shipped template (levels of a few hands,
connections dropped on purpose), a sit-and-go of 22 on tables of 8 (three tables, broken down
to a final table), and a mixed sit-and-go (each level the next game of the stud mix). Each
checks the places (1 to N; shared only by players out in the same hand with equal stacks),
the prizes (the published payouts, summing to the prize pool), each prize paid to the bot's
wallet through the ledger, and the books (``stud-server audit``)."""

from __future__ import annotations

import copy
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_server import OPERATOR, PASSWORD, ROOT, LiveServer
from stud_bots_run import check_report_places, report_of, run_stud_bots

from engine import phh
from engine.tournament.spec import TournamentSpec
from engine.variants import VARIANTS
from stud_bots.tournament import failures, parse_args, quick_spec

BUDGET_SECONDS = 150.0


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(
        tmp_path,
        STUD_ACTION_CLOCK_SECONDS="3",
        STUD_PAUSE_BETWEEN_HANDS_SECONDS="0.01",
        STUD_SHOWDOWN_PAUSE_SECONDS="0",
    )
    server.create_operator()
    with server.running():
        yield server


def play(live: LiveServer, *args: str) -> dict[str, Any]:
    options = ["--operator", OPERATOR, "--think-ms", "0", "--timeout", str(BUDGET_SECONDS)]
    return report_of(
        run_stud_bots(
            ["--server", live.url, *options, "--seed", "3", *args], timeout=BUDGET_SECONDS + 60
        )
    )


def play_format(
    live: LiveServer, directory: Path, template: str, hands_per_level: int, **changes: Any
) -> dict[str, Any]:
    """A sit-and-go of a shipped template with ``changes``, given to the bots as a format
    file, played by bots of the rules and random strategies."""
    spec = copy.deepcopy(httpx.get(f"{live.url}/tournaments/templates").json()[template])
    spec.update(changes)
    path = directory / "format.json"
    path.write_text(json.dumps(spec))
    return play(
        live,
        "--tournament",
        "new",
        "--spec",
        f"@{path}",
        "--hands-per-level",
        str(hands_per_level),
        "--strategy",
        "rules,random",
    )


def check_the_tournament(live: LiveServer, report: dict[str, Any], entrants: int) -> None:
    """Places, prizes, the ledger's prizes and the books, against what the server says."""
    assert report["status"] == "finished" and not report["timed_out"], report
    places = check_report_places(report, entrants)
    assert report["actions"] > 0 and report["hands"] > 0
    assert report["latency_ms"]["count"] == report["actions"]
    # The details as anyone reads them agree.
    details = httpx.get(f"{live.url}/tournaments/{report['tournament']}").json()
    assert {e["player"]: (e["place"], e["prize"]) for e in details["entries"]} == places

    # Each prize went through the ledger, from the tournament's prize pool to the bot's
    # wallet; the bots' chips went back to the house afterwards.
    with sqlite3.connect(live.directory / "cardroom.db") as db:
        prizes = dict(
            db.execute(
                "SELECT a.username, sum(l.amount) FROM ledger_entries l"
                " JOIN wallets w ON w.id = l.credit_wallet_id"
                " JOIN accounts a ON a.id = w.account_id"
                " JOIN wallets pool ON pool.id = l.debit_wallet_id"
                " WHERE l.kind = 'prize' AND pool.name = ?"
                " GROUP BY a.username",
                (f"tournament:{report['tournament']}",),
            ).fetchall()
        )
        left = db.execute(
            "SELECT sum(w.balance) FROM wallets w JOIN accounts a ON a.id = w.account_id"
            " WHERE a.role = 'bot'"
        ).fetchone()[0]
    assert prizes == {name: prize for name, (_, prize) in places.items() if prize}
    assert left == 0 and report["chips_returned"] == report["prize_pool"]

    # The books: the operator's view, and stud-server audit end to end.
    token = httpx.post(
        f"{live.url}/auth/login", json={"username": OPERATOR, "password": PASSWORD}
    ).json()["access_token"]
    books = httpx.get(
        f"{live.url}/admin/books", headers={"Authorization": f"Bearer {token}"}
    ).json()
    assert books["balanced"] is True, books
    chips = entrants * 1500
    assert books["tournaments"] == {
        str(report["tournament"]): {"issued": chips, "removed": 0, "in_play": chips, "pool": 0}
    }
    audit = subprocess.run(
        [sys.executable, "-m", "server", "audit"],
        env=live.env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_a_sit_and_go_of_nine_bots_from_the_template_to_a_winner(live: LiveServer) -> None:
    """The shipped 9-seat stud sit-and-go, its levels two hands long: two tables, broken to
    one when eight are left; connections dropped on purpose, followed again after each."""
    report = play(
        live,
        "--tournament",
        "new",
        "--template",
        "stud-sng-9",
        "--hands-per-level",
        "2",
        "--strategy",
        "mixed",
        "--chaos",
        "1.0",
    )
    check_the_tournament(live, report, 9)
    assert report["tables"] == 2 and report["moves"] > 0
    assert report["strategies"] == {"random": 3, "station": 3, "rules": 3}
    assert report["reconnects"] > 0 and report["states"] >= 9 + report["reconnects"]
    faults = ("connection_lost", "timeout", "table_unavailable")  # the chaos's reconnects
    wrong = {code for code in report["errors"] if code not in faults}
    assert not wrong, report


def test_three_tables_of_bots_broken_down_to_a_final_table(
    live: LiveServer, tmp_path: Path
) -> None:
    """A sit-and-go of 22 on tables of 8, made from a format file: three tables, then two,
    then the final table; the bots go where the director moves them."""
    report = play_format(live, tmp_path, "stud-sng-9", 3, min_entrants=22, max_entrants=22)
    check_the_tournament(live, report, 22)
    assert report["errors"] == {}, report
    assert report["tables"] == 3 and report["moves"] >= 6, report
    assert len(report["hands_by_table"]) == 3


def test_a_run_that_did_not_finish_fails() -> None:
    report: dict[str, Any] = {
        "status": "running",
        "timed_out": True,
        "bots": 3,
        "places": [{"player": "a", "place": None, "prize": None}],
        "errors": {"connection_lost": 2},
    }
    assert failures(report) == [
        "the tournament is running, not finished",
        "timed out",
        "bots with no place: 3",
        "errors: connection_lost x2",
    ]
    assert failures(report, chaos=True)[-1] == "bots with no place: 3"


def test_the_command_line_is_checked() -> None:
    options = parse_args(
        ["--server", "http://x", "--operator-token", "t", "--tournament", "12", "--bots", "4"]
    )
    assert options.tournament == 12 and options.bots == 4
    made = parse_args(
        [
            "--server",
            "http://x",
            "--operator-token",
            "t",
            "--tournament",
            "new",
            "--spec",
            '{"kind": "sit_and_go"}',
            "--hands-per-level",
            "2",
        ]
    )
    assert made.tournament is None and made.spec == {"kind": "sit_and_go"}
    for wrong in (
        ["--tournament", "new"],  # neither a template nor a format
        ["--tournament", "new", "--template", "a", "--spec", "{}"],  # both
        ["--tournament", "12", "--template", "stud-sng-9"],  # a template for one made already
        ["--tournament", "twelve"],
        ["--tournament", "12", "--bots", "0"],
    ):
        with pytest.raises(SystemExit):
            parse_args(["--server", "http://x", "--operator-token", "t", *wrong])


def test_a_quick_format_has_levels_of_hands_and_no_breaks() -> None:
    spec = {
        "structure": {
            "starting_chips": 100,
            "entries": [
                {
                    "kind": "level",
                    "ante": 1,
                    "bring_in": 2,
                    "small_bet": 4,
                    "big_bet": 8,
                    "minutes": 5,
                },
                {"kind": "break", "minutes": 5},
                {
                    "kind": "level",
                    "ante": 2,
                    "bring_in": 3,
                    "small_bet": 6,
                    "big_bet": 12,
                    "hands": 9,
                },
            ],
        }
    }
    quick = quick_spec(spec, 4)
    assert [e.get("hands") for e in quick["structure"]["entries"]] == [4, 4]
    assert all("minutes" not in e for e in quick["structure"]["entries"])
    assert quick["structure"]["starting_chips"] == 100
    assert spec["structure"]["entries"][0]["minutes"] == 5  # the format given is untouched


def test_a_mixed_sit_and_go_of_bots_switches_game_by_level_to_a_winner(
    live: LiveServer, tmp_path: Path
) -> None:
    """The stud-mix format (seven-card stud, razz, stud hi-lo, a level each) as a sit-and-go
    of 9 on tables of 8, levels two hands long: the bots play each level's game to a winner,
    every hand recorded in its level's game, its PHH naming its variant."""
    report = play_format(
        live, tmp_path, "stud-mix-turbo", 2, min_entrants=9, max_entrants=9, buy_in=100, fee=10
    )
    check_the_tournament(live, report, 9)
    assert report["errors"] == {}, report
    format_ = TournamentSpec.from_dict(
        httpx.get(f"{live.url}/tournaments/{report['tournament']}").json()["spec"]
    )
    with sqlite3.connect(live.directory / "cardroom.db") as db:
        rows = db.execute(
            "SELECT h.config, h.rotation, h.phh FROM hands h JOIN tables t ON t.id = h.table_id"
            " WHERE t.tournament_id = ?",
            (report["tournament"],),
        ).fetchall()
    games = set()
    for config_text, rotation_text, text in rows:
        config, rotation = json.loads(config_text), json.loads(rotation_text)
        level = format_.structure.level_of(config)
        assert level is not None and rotation["level"] == level
        game = format_.game_of(format_.structure.levels[level - 1])
        assert config["variant"] == game and phh.loads(text).variant == VARIANTS[game].phh_code
        games.add(game)
    assert len(rows) == report["hands"] and len(games) >= 2, games
