"""``bench/hand_writes.py`` keeps working: hands are started and recorded through the store
on SQLite and on PostgreSQL, and the CPU of each write is reported."""

from __future__ import annotations

import os
import re

import pytest
from benches import run_bench

FIGURES = (
    "start of a hand",
    "record of a hand",
    "a fenced write with nothing in it",
    "one statement more in it",
)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_hands_are_written_and_their_cost_reported(backend: str) -> None:
    args = ["--backend", backend, "--hands", "20"]
    url = os.environ.get("STUD_TEST_POSTGRES_URL")
    if backend == "postgresql" and url:
        args += ["--postgres-url", url]
    done = run_bench("hand_writes.py", *args, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{backend}: 20 hands of 8" in done.stdout, done.stdout
    figures = {}
    for figure in FIGURES:
        found = re.search(rf"{figure}:\s+(-?[\d.]+) ms", done.stdout)
        assert found, (figure, done.stdout)
        figures[figure] = float(found.group(1))
    # Every write costs some CPU; the last figure is a difference of two, so it is only read.
    assert all(figures[figure] > 0 for figure in FIGURES[:3]), done.stdout
