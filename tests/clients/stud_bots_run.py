"""``stud-bots`` as the tests run it: the console script in a subprocess, its last line of
output the run's report (JSON); and the checks every tournament of bots makes of its places
and prizes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from live_server import PASSWORD, ROOT


def stud_bots_command() -> list[str]:
    """The installed console script, or the module where the script is not on the path."""
    script = Path(sys.executable).with_name("stud-bots")
    return [str(script)] if script.exists() else [sys.executable, "-m", "stud_bots.runner"]


def run_stud_bots(
    args: list[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    password: str = PASSWORD,
) -> subprocess.CompletedProcess[str]:
    """One run with the operator's password in its environment, as the operator runs it."""
    return subprocess.run(
        [*stud_bots_command(), *args],
        env={**(env if env is not None else os.environ), "STUD_OPERATOR_PASSWORD": password},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def report_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The report of a run that exited 0 (its stderr shown when it did not)."""
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    print(json.dumps(report))  # shown with -s: the run's figures
    return report


def check_places(places: dict[str, tuple[int, int]], payouts: list[int]) -> None:
    """Places 1 to N, players out in the same hand with equal stacks sharing one (the next
    place then the one after the group), each group paid the prizes of the places it takes
    between them, everyone else by the payouts; the prizes summing to the payouts."""
    ordered = sorted(place for place, _ in places.values())
    assert all(place == ordered.index(place) + 1 for place in ordered), ordered
    for place in set(ordered):
        shared = [prize for at, prize in places.values() if at == place]
        due = payouts[place - 1 : place - 1 + len(shared)]
        assert sum(shared) == sum(due), (place, shared, due)
    assert sum(prize for _, prize in places.values()) == sum(payouts)


def check_report_places(report: dict[str, Any], entrants: int) -> dict[str, tuple[int, int]]:
    """A finished tournament's report: every bot placed, one winner, the prizes the
    payouts, the payouts the buy-ins (100 each); its places and prizes by player."""
    assert report["bots"] == report["entrants"] == entrants
    places = {p["player"]: (p["place"], p["prize"]) for p in report["places"]}
    assert len(places) == entrants and places[report["winner"]][0] == 1
    assert [p for p, _ in places.values()].count(1) == 1
    check_places(places, report["payouts"])
    assert sum(report["payouts"]) == report["prize_pool"] == entrants * 100  # the buy-ins
    return places
