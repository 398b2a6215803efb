"""Engine benchmarks, printed side by side in one run.

Run from the repository root::

    .venv/bin/python bench/engine.py [--seconds 2] [--hands 50000]

Sections (each returns its report lines, so more can be added to ``main``):

- evaluation: seven-card high hands per second for ``engine.evaluate.high_value``,
  phevaluator's ``evaluate_cards`` and treys' ``Evaluator.evaluate`` on one fixed set of random
  hands, each pre-converted to its library's own card representation outside the timed loop;
  plus the import time of ``engine.evaluate``.
"""

from __future__ import annotations

import argparse
import platform
import random
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.evaluate import high_value  # noqa: E402


def import_time_ms() -> tuple[float, float]:
    """(cumulative ms from ``-X importtime``, wall ms of the import) in a fresh interpreter."""
    code = (
        "import time; t = time.perf_counter(); import engine.evaluate; "
        "print((time.perf_counter() - t) * 1000)"
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    cumulative = float("nan")
    for line in done.stderr.splitlines():
        parts = [part.strip() for part in line.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[2] == "engine.evaluate":
            cumulative = int(parts[1]) / 1000
    return cumulative, float(done.stdout.strip())


def _one_pass(function: Callable[..., int], hands: Sequence[Sequence[int]], star: bool) -> float:
    start = time.perf_counter()
    if star:
        for hand in hands:
            function(*hand)
    else:
        for hand in hands:
            function(hand)
    return time.perf_counter() - start


def _treys_pass(evaluate: Callable[[list[int], list[int]], int],
                hands: Sequence[tuple[list[int], list[int]]]) -> float:
    start = time.perf_counter()
    for hole, board in hands:
        evaluate(hole, board)
    return time.perf_counter() - start


def _same_order(a: Sequence[int], b: Sequence[int]) -> bool:
    pairs = sorted(set(zip(a, b, strict=True)))
    return len({x for x, _ in pairs}) == len(pairs) == len({y for _, y in pairs}) and all(
        y1 < y2 for (_, y1), (_, y2) in zip(pairs, pairs[1:], strict=False))


def bench_evaluation(seconds: float = 2.0, count: int = 50_000, seed: int = 7) -> list[str]:
    """Seven-card evaluations per second: ours, phevaluator (pure-Python API), treys."""
    from phevaluator import evaluate_cards
    from treys import Card as TreysCard
    from treys import Evaluator

    rng = random.Random(seed)
    deck = list(range(52))
    hands = [rng.sample(deck, 7) for _ in range(count)]
    # each library's own representation, converted outside the timed loops
    ours = [list(hand) for hand in hands]
    phe = [tuple(hand) for hand in hands]  # phevaluator ids are also rank * 4 + suit
    names = ["23456789TJQKA"[c >> 2] + "cdhs"[c & 3] for c in range(52)]
    treys_ids = [TreysCard.new(name) for name in names]
    treys_hands = [([treys_ids[c] for c in h[:2]], [treys_ids[c] for c in h[2:]]) for h in hands]
    evaluator = Evaluator()

    cold = _one_pass(high_value, ours, star=False)  # fills the lazy rank-pattern tables
    ours_values = [high_value(h) for h in ours]
    agree = _same_order(ours_values, [-evaluate_cards(*h) for h in phe]) and _same_order(
        ours_values, [-evaluator.evaluate(hole, board) for hole, board in treys_hands])

    runners: dict[str, Callable[[], float]] = {
        "engine.evaluate.high_value": lambda: _one_pass(high_value, ours, star=False),
        "phevaluator.evaluate_cards": lambda: _one_pass(evaluate_cards, phe, star=True),
        "treys Evaluator.evaluate": lambda: _treys_pass(evaluator.evaluate, treys_hands),
    }
    spent = dict.fromkeys(runners, 0.0)
    best = dict.fromkeys(runners, 0.0)
    passes = dict.fromkeys(runners, 0)
    while min(spent.values()) < seconds:  # round robin, so background load hits all alike
        for name, run in runners.items():
            if spent[name] < seconds:
                elapsed = run()
                spent[name] += elapsed
                passes[name] += 1
                best[name] = max(best[name], count / elapsed)
    mean = {name: passes[name] * count / spent[name] for name in runners}

    cumulative, wall = import_time_ms()
    ours_name, phe_name, treys_name = runners
    lines = [
        f"evaluation: {count:,} random seven-card hands (seed {seed}), "
        f"~{seconds:g} s per library, passes interleaved",
        f"  {'':28s} {'best pass':>14s} {'mean':>14s}   (evaluations / second)",
    ]
    for name in runners:
        lines.append(f"  {name:28s} {best[name]:>14,.0f} {mean[name]:>14,.0f}")
    lines += [
        f"  ours / phevaluator           {best[ours_name] / best[phe_name]:>14.2f} "
        f"{mean[ours_name] / mean[phe_name]:>14.2f}",
        f"  ours / treys                 {best[ours_name] / best[treys_name]:>14.2f} "
        f"{mean[ours_name] / mean[treys_name]:>14.2f}",
        f"  ours, first (cold) pass      {count / cold:>14,.0f}"
        "   (lazy tables filling)",
        f"  the three orderings agree: {'yes' if agree else 'NO'}",
        f"  import engine.evaluate: {cumulative:.1f} ms (-X importtime, cumulative), "
        f"{wall:.1f} ms wall, in a fresh interpreter",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per library")
    parser.add_argument("--hands", type=int, default=50_000, help="hands in the fixed set")
    args = parser.parse_args()
    print(f"Python {platform.python_version()} ({platform.python_implementation()}), "
          f"{platform.machine()}")
    for line in bench_evaluation(args.seconds, args.hands):
        print(line)


if __name__ == "__main__":
    main()
