"""Running a bench of bench/ as its users do: a process of its own, from the project's root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_bench(script: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``python bench/SCRIPT ARGS``, its output captured."""
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
