"""``bench/load.py`` keeps working: a short ramp of one then two tables on the embedded
default, its bots acting and timed, nothing refused or lost; and one on PostgreSQL with a
server of two workers behind one port."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from benches import run_bench


def test_a_short_ramp_on_sqlite_plays_and_reports(tmp_path: Path) -> None:
    report = tmp_path / "load.json"
    done = run_bench(
        "load.py",
        *("--tables", "1,2", "--warmup", "1", "--seconds", "4"),
        *("--think", "0.05,0.2", "--workers", "1", "--json", str(report)),
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(report.read_text())
    steps = results["steps"]
    assert [step["tables"] for step in steps] == [1, 2]
    assert [step["connections"] for step in steps] == [8, 16]
    for step in steps:
        assert step["actions_per_second"] > 0
        assert step["acts_timed"] > 0
        assert 0 < step["p50_ms"] <= step["p99_ms"]
        assert step["server_cpu_percent"] > 0
        assert step["ping_p99_ms"] is not None
        assert step["gc_count"] is not None
        assert step["errors"] == {}
        assert step["trouble"] == {}
        assert step["disconnects"] == 0
        assert step["setup_failures"] == 0
    assert "largest step with p99 under 50 ms" in done.stdout


def test_mixed_tables_run_under_load(tmp_path: Path) -> None:
    """``--game mix``: the tables are the stud mix, their bots play every game of it."""
    report = tmp_path / "load.json"
    done = run_bench(
        "load.py",
        *("--game", "mix", "--tables", "1", "--warmup", "1", "--seconds", "5"),
        *("--think", "0.02,0.05", "--workers", "1", "--json", str(report)),
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the stud mix (seven_card_stud, razz, seven_card_stud_hi_lo, 2 hands each)" in (
        done.stdout
    )
    results = json.loads(report.read_text())
    assert results["options"]["game"] == "mix"
    (step,) = results["steps"]
    assert step["connections"] == 8 and step["setup_failures"] == 0
    assert step["actions_per_second"] > 0 and step["acts_timed"] > 0
    assert step["errors"] == {} and step["trouble"] == {} and step["disconnects"] == 0


def test_a_falling_ramp_is_refused() -> None:
    done = run_bench("load.py", "--tables", "50,25", timeout=60)
    assert done.returncode == 2
    assert "--tables takes rising positive counts" in done.stderr


def test_server_workers_need_postgresql() -> None:
    done = run_bench("load.py", "--server-workers", "2", timeout=60)
    assert done.returncode == 2
    assert "--server-workers: at least 1, and several only on --backend postgresql" in done.stderr


@pytest.mark.skipif(
    "postgresql" not in os.environ.get("STUD_TEST_DATABASES", "sqlite,postgresql"),
    reason="STUD_TEST_DATABASES leaves PostgreSQL out",
)
def test_a_short_ramp_on_two_server_workers(tmp_path: Path) -> None:
    report = tmp_path / "load.json"
    done = run_bench(
        "load.py",
        *("--backend", "postgresql", "--server-workers", "2"),
        *("--tables", "2", "--warmup", "2", "--seconds", "4", "--think", "0.05,0.2"),
        *("--workers", "1", "--json", str(report)),
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 node(s) of 2 workers behind one port" in done.stdout
    (step,) = json.loads(report.read_text())["steps"]
    assert step["connections"] == 16 and step["setup_failures"] == 0
    assert step["actions_per_second"] > 0 and step["acts_timed"] > 0
    assert step["server_cpu_percent"] > 0 and step["errors"] == {}
