"""The engine plays a fixed set of random hands exactly as it did when the golden digest was made.

``bench/differential.py`` draws each hand from its seed (every variant, structure and alternate
rule, bad actions, time-outs, every seat's view) and hashes its record. A change that alters what
the engine does (a legal action, an event, a refusal's code, a payout, a view) changes a digest and
fails here; a deliberate change of behaviour regenerates the golden file::

    .venv/bin/python bench/differential.py --hands 400 --hashes | cut -c1-16 \\
        > tests/engine/differential_golden.txt

and ``bench/differential.py --against main --hands 400`` shows the first field that moved.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from types import ModuleType

from engine.variants import TableConfig

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("differential_golden.txt")


def _harness() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "differential", ROOT / "bench" / "differential.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module._load(ROOT)
    return module


def test_hands_play_as_the_golden_digest_says() -> None:
    harness = _harness()
    golden = GOLDEN.read_text().split()
    for index, expected in enumerate(golden):
        digest = harness.hand_digest(1, index)[: len(expected)]
        assert digest == expected, (
            f"hand {index} of seed 1 plays differently: "
            f"bench/differential.py --against main --hands {len(golden)} shows what changed"
        )


def test_the_harness_draws_every_table_setting() -> None:
    """A new TableConfig field must be drawn by the harness, or the differential misses it."""
    harness = _harness()
    drawn = set(harness.RULES) | set(harness.STAKES)
    assert {f.name for f in dataclasses.fields(TableConfig)} <= drawn
