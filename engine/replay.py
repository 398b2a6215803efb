"""``stud-replay``: replay PHH files with the engine, and write engine hands as PHH.

The only module of ``engine`` that touches files. ``stud-replay --json FILE...``
prints one JSON line per file, in order: ``{"file": ..., "finishing_stacks": [...]}``
or ``{"file": ..., "error": "..."}``; a ``.phhs`` file gets one line per hand, with
its table name as ``"hand"``. The exit status is 0 when every file got its lines.

``--export DIR`` also writes each replayed hand to DIR as the engine played it, and
``--play N --variant CODE`` deals and plays N random hands under the ``phh`` profile
and writes them to DIR (``--export``, default ``.``), for PokerKit to check.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, TextIO

from engine.cards import Deck
from engine.errors import PhhError
from engine.hand import Hand
from engine.phh import from_fields, hands_of, parse_toml
from engine.phh_export import export
from engine.phh_replay import replay_hand
from engine.phh_rules import PHH_VARIANTS, phh_config
from engine.play import random_action


def replay_file(path: str) -> list[dict[str, Any]]:
    """The JSON lines of one file: one per hand, an error line when it cannot be replayed."""
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8-sig")
        hands = hands_of(parse_toml(text))
    except (OSError, UnicodeDecodeError, PhhError) as exc:
        return [{"file": path, "error": f"cannot read: {exc}"}]
    return [_line(path, key, fields) for key, fields in hands]


def _line(path: str, key: str | None, fields: Mapping[str, Any]) -> dict[str, Any]:
    line: dict[str, Any] = {"file": path}
    if key is not None:
        line["hand"] = key
    try:
        hand = replay_hand(from_fields(fields))
        line["finishing_stacks"] = [hand.stacks[i] for i in range(hand.n)]
        line["_hand"] = hand
    except Exception as exc:  # noqa: BLE001 - every file must get its line, whatever went wrong
        line["error"] = str(exc) or type(exc).__name__
    return line


def _json_lines(paths: Sequence[str]) -> list[str]:
    """Replay files in a worker process: their JSON lines (hands stay in the worker)."""
    out = []
    for path in paths:
        for line in replay_file(path):
            line.pop("_hand", None)
            out.append(json.dumps(line))
    return out


def play_random(code: str, count: int, seed: int, players: int | None) -> list[Hand]:
    """Deal and play ``count`` random hands of PHH variant ``code`` under the ``phh`` profile."""
    rng = random.Random(seed)
    hands = []
    for _ in range(count):
        n = players or rng.randint(2, 8)
        ante, bring_in, small = rng.choice([0, 1, 2]), rng.choice([1, 2]), rng.choice([4, 5])
        config = phh_config(code, ante, bring_in, small, 2 * small, rng.random() < 0.5)
        stacks = [rng.randint(1, 120) for _ in range(n)]
        hand = Hand(config, list(enumerate(stacks)), Deck(rng=rng))
        while not hand.over:
            hand.apply(random_action(hand, rng))
        hands.append(hand)
    return hands


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point of the ``stud-replay`` console script."""
    out = out if out is not None else sys.stdout
    parser = argparse.ArgumentParser(
        prog="stud-replay", description="Replay PHH stud hands with the engine."
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help=".phh or .phhs files")
    parser.add_argument("--json", action="store_true", help="one JSON line per hand")
    parser.add_argument("--export", metavar="DIR", help="write the engine's PHH of each hand")
    parser.add_argument("--play", type=int, metavar="N", help="play N random engine hands")
    parser.add_argument("--variant", default="F7S", choices=sorted(PHH_VARIANTS))
    parser.add_argument("--players", type=int, choices=range(2, 9), metavar="2..8")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="worker processes (default: one per core, for 2000 files or more)",
    )
    args = parser.parse_args(argv)
    if args.play is None and not args.files:
        parser.error("give PHH files to replay, or --play N")
    target = Path(args.export) if args.export else None
    if args.play is not None:
        target = target or Path(".")
        target.mkdir(parents=True, exist_ok=True)
        name = args.variant.replace("/", "")
        for k, hand in enumerate(play_random(args.variant, args.play, args.seed, args.players)):
            (target / f"{name}-{args.seed}-{k:05d}.phh").write_text(export(hand))
    if target is not None:
        target.mkdir(parents=True, exist_ok=True)
    jobs = args.jobs if args.jobs is not None else _default_jobs(len(args.files))
    chunk: list[str] = []
    for text in _lines(args.files, target, args.json, jobs):
        chunk.append(text)
        if len(chunk) >= 512:
            out.write("\n".join(chunk) + "\n")
            chunk.clear()
    if chunk:
        out.write("\n".join(chunk) + "\n")
    out.flush()
    return 0


def _default_jobs(files: int) -> int:
    """Worker processes: one per core for big batches (start-up costs ~0.1 s), else none."""
    return min(os.cpu_count() or 1, 8) if files >= 2000 else 1


def _lines(files: Sequence[str], target: Path | None, as_json: bool, jobs: int) -> Iterator[str]:
    """Output lines for ``files``, in order."""
    start = 0
    if jobs > 1 and target is None and as_json:
        size = max(64, len(files) // (jobs * 8))
        batches = [files[k : k + size] for k in range(0, len(files), size)]
        try:
            with ProcessPoolExecutor(jobs) as pool:
                for lines in pool.map(_json_lines, batches):
                    yield from lines
                    start += size
            return
        except Exception:  # noqa: BLE001 - a lost worker: the rest is replayed here
            start = min(start, len(files))
    for k in range(start, len(files)):
        path = files[k]
        for line in replay_file(path):
            hand = line.pop("_hand", None)
            if target is not None and hand is not None:
                suffix = f"-{line['hand']}" if "hand" in line else ""
                try:
                    text = export(hand)
                except Exception as exc:  # noqa: BLE001 - the replay line still stands
                    line["export_error"] = str(exc)
                else:
                    (target / f"{k:05d}-{Path(path).stem}{suffix}.phh").write_text(text)
            if as_json:
                yield json.dumps(line)
            elif "error" in line:
                yield f"{path}: error: {line['error']}"
            else:
                yield f"{path}: {' '.join(map(str, line['finishing_stacks']))}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
