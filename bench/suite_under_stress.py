"""The test suite under stress: the README's test command run several times in a row with
busy processes beside it (two, by default: on a 2-core machine the suite gets a third of the
CPU), as on a loaded CI machine or a laptop with a browser open. Prints each run's outcome
and time; exits 0 only when every run passed.

    python bench/suite_under_stress.py [--hogs 2] [--runs 2] [-- PYTEST ARGS]
"""

from __future__ import annotations

import argparse
import multiprocessing
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def busy() -> None:
    """A process that does nothing but take a core."""
    while True:
        pass


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hogs", type=int, default=2, help="busy processes beside the suite")
    parser.add_argument("--runs", type=int, default=2, help="runs of the suite, one after another")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to pytest (-q by default)")
    options = parser.parse_args(argv)
    hogs = [multiprocessing.Process(target=busy, daemon=True) for _ in range(options.hogs)]
    for hog in hogs:
        hog.start()
    outcomes = []
    try:
        for run in range(1, options.runs + 1):
            started = time.monotonic()
            done = subprocess.run(
                [sys.executable, "-m", "pytest", *(options.pytest_args or ["-q"])], cwd=ROOT
            )
            took = time.monotonic() - started
            outcome = "passed" if done.returncode == 0 else f"FAILED ({done.returncode})"
            outcomes.append(done.returncode)
            print(
                f"run {run} of {options.runs}, {options.hogs} busy processes beside it: "
                f"{outcome} in {took / 60:.1f} min",
                flush=True,
            )
    finally:
        for hog in hogs:
            hog.terminate()
            hog.join()
    return 0 if not any(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
