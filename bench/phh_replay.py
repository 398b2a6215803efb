"""How many PHH files per second ``stud-replay --json`` replays.

Writes N random engine hands per variant (``phh`` profile, 2 to 8 players, stacks of
1 to 120 chips) as .phh files, then times ``engine.replay.main`` over all of them in
process (one job, then one per core; best of three), and one run of the installed console
script (start-up included, default jobs).

    .venv/bin/python bench/phh_replay.py [N]
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # before bench/, whose engine.py would shadow the package

from engine.phh_export import export  # noqa: E402
from engine.replay import main, play_random  # noqa: E402


def run(count: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for code in ("F7S", "F7S/8", "FR"):
            for k, hand in enumerate(play_random(code, count, seed=k_seed(code), players=None)):
                path = Path(folder) / f"{code.replace('/', '')}-{k:05d}.phh"
                path.write_text(export(hand))
                files.append(str(path))
        for jobs in ("1", str(os.cpu_count() or 1)):
            best = float("inf")
            for _ in range(3):
                out = io.StringIO()
                start = time.perf_counter()
                main(["--json", "--jobs", jobs, *files], out)
                best = min(best, time.perf_counter() - start)
            errors = out.getvalue().count('"error"')
            print(
                f"in process, {jobs} job(s): {len(files)} files in {best:.2f} s"
                f" = {len(files) / best:,.0f} files/s ({errors} errors)"
            )
        script = Path(sys.executable).with_name("stud-replay")
        start = time.perf_counter()
        done = subprocess.run([str(script), "--json", *files], capture_output=True, check=True)
        took = time.perf_counter() - start
        lines = done.stdout.count(b"\n")
        print(f"console script: {lines} lines in {took:.2f} s = {lines / took:,.0f} files/s")


def k_seed(code: str) -> int:
    return sum(map(ord, code))


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
