"""Instructions per complete hand, counted by valgrind's callgrind: ours and PokerKit's.

Wall-clock ratios on a shared machine move by a third between runs; instruction counts do
not. Each figure is (instructions of a run playing N hands) minus (the same run playing
none), over N, both runs warmed up by the same 200 hands first. Needs ``valgrind``.

    .venv/bin/python bench/instructions.py [--hands 300]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = (
    ("seven_card_stud", 2),
    ("seven_card_stud", 8),
    ("razz", 2),
    ("seven_card_stud_hi_lo", 2),
)


def _play(engine: str, variant: str, players: int, hands: int) -> None:
    """Warm up, then play ``hands`` hands (the child run under callgrind)."""
    import random
    import warnings

    sys.path.insert(0, str(ROOT))
    warnings.simplefilter("ignore")
    import pokerkit

    import bench.engine as bench

    config = bench.bench_config(variant)
    game = getattr(pokerkit, dict(bench.HAND_VARIANTS)[variant])

    def one(rng: random.Random) -> None:
        if engine == "ours":
            bench._our_hand(config, players, rng)
        else:
            bench._pokerkit_hand(game, players, rng)

    warm = random.Random(players)
    for _ in range(200):
        one(warm)
    rng = random.Random(players + 1000)
    for _ in range(hands):
        one(rng)


def _count(engine: str, variant: str, players: int, hands: int) -> int:
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "--child",
            engine,
            variant,
            str(players),
            str(hands),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(done.stderr[-2000:])
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=300, help="hands per count (ours)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        engine, variant, players, hands = args.child
        _play(engine, variant, int(players), int(hands))
        return
    print(
        f"{'variant':<24}{'players':>8}{'ours':>10}{'pokerkit':>10}{'ratio':>8}"
        "   (instructions per hand)"
    )
    for variant, players in CONFIGS:
        per_hand = {}
        for engine, hands in (("ours", args.hands), ("pokerkit", max(20, args.hands // 8))):
            played = _count(engine, variant, players, hands)
            idle = _count(engine, variant, players, 0)
            per_hand[engine] = (played - idle) / hands
        ours, theirs = per_hand["ours"], per_hand["pokerkit"]
        print(
            f"{variant:<24}{players:>8}{ours / 1e6:>9.2f}M{theirs / 1e6:>9.2f}M"
            f"{theirs / ours:>7.1f}x",
            flush=True,
        )


if __name__ == "__main__":
    main()
