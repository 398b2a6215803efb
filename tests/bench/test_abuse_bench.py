"""``bench/abuse.py`` keeps working: an abuse is run against a live node and the seated
players' latencies before and during it are reported."""

from __future__ import annotations

import json

from benches import run_bench


def test_an_abuse_is_run_and_its_latencies_reported() -> None:
    done = run_bench(
        "abuse.py", "--modes", "ping", "--baseline-seconds", "1", "--json", timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| ping |" in done.stdout, done.stdout
    result = json.loads(done.stdout.splitlines()[-1])
    for window in (result["before"], result["during"]):
        assert window["actions"] > 0 and 0 < window["p50_ms"] <= window["p99_ms"], result
    # The pings went out and were answered (how many before their bucket ran dry is the
    # machine's: the abusers run at the lowest priority).
    assert result["answers"].get("sent", 0) > 0 and result["answers"].get("pong", 0) > 0, result


def test_an_unknown_mode_is_refused() -> None:
    done = run_bench("abuse.py", "--modes", "ping,teleport", timeout=60)
    assert done.returncode == 2 and "no mode teleport" in done.stderr, done.stderr
