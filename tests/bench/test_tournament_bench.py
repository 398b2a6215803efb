"""``bench/tournament.py`` keeps working: a small scheduled tournament of bots (two tables,
short levels) registered in a burst and played to a winner on the embedded default, its
figures all there, nothing refused or lost."""

from __future__ import annotations

import json
from pathlib import Path

from benches import run_bench


def test_a_small_tournament_is_played_to_a_winner_and_reported(tmp_path: Path) -> None:
    report = tmp_path / "tournament.json"
    done = run_bench(
        "tournament.py",
        *("--entrants", "10", "--level-minutes", "0.15", "--starting-chips", "200"),
        *("--think", "0.02,0.1", "--workers", "1", "--json", str(report)),
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads(report.read_text())
    burst = figures["registration"]
    assert burst["entrants"] == 10 and burst["failures"] == 0
    assert figures["not_connected"] == 0
    assert figures["tables_at_start"] == 2
    assert figures["winner"] is not None and figures["to_winner_s"] > 0
    assert figures["players_left"] == 1
    assert figures["hands"] > 0 and figures["acts_timed"] > 0
    assert 0 < figures["p50_ms"] <= figures["p99_ms"]
    assert figures["minutes_p99_ms"] and figures["pauses"] > 0
    spent = figures["minutes_spent"]  # the machine's share of each minute
    assert spent and all(row["node_cpu_percent"] > 0 for row in spent)
    assert all(row["ping_p99_ms"] > 0 for row in spent) and "each minute:" in done.stdout
    shares = [row["node_acts_over_50ms_percent"] for row in spent]
    assert any(share is not None for share in shares)
    assert all(0 <= share <= 100 for share in shares if share is not None)
    # The bots' own share: their loop's lag each minute, their collector's long passes.
    lags = figures["bots_loop_lag_p99_ms"]
    assert lags and all(lag is not None for lag in lags)
    assert figures["bots_collections_over_10ms"] >= 0 and "bots' own collector" in done.stdout
    assert all(p["blocks"] > 0 and p["ms"] >= 0 for p in figures["full_passes"])
    assert "the node's full collections" in done.stdout
    steps = figures["start_steps"]  # the director's start, step by step, its heap settled
    assert steps is not None and steps["settled"] >= 0 and steps["permitted"] >= 0
    moves = figures["moves"]
    assert moves["by_reason"].get("final_table", 0) > 0  # the two tables met at one
    assert sum(moves["hands_waited"].values()) == sum(moves["by_reason"].values())
    assert figures["director_cpu_s"] > 0
    assert figures["errors"] == {} and figures["trouble"] == {}
    assert "to the winner:" in done.stdout and "director:" in done.stdout


def test_too_few_entrants_are_refused() -> None:
    done = run_bench("tournament.py", "--entrants", "1", timeout=60)
    assert done.returncode == 2
    assert "--entrants: at least 2" in done.stderr
