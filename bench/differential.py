"""The engine's behaviour over random hands, as a digest: to compare two revisions hand by hand.

Each hand is drawn from ``(seed, index)`` alone: a table configuration over every
:class:`~engine.variants.TableConfig` switch (every variant, structure and alternate rule),
2 to the variant's most players on random seat numbers, short stacks so that all-ins and side
pots happen, and now and then a deck that deals unknown cards (a replayed record's ``??``).
It is then played with random legal actions, bad actions (wrong seat, unknown kind, bad
amounts, amounts where none belong, kinds not on offer) and time-outs. The hand's record holds,
step by step, the legal actions, the events in their wire form, each refusal's error class and
code (and whether the hand stayed as it was), then the result, the action log and every seat's
and a spectator's view. The record is canonical JSON; its SHA-256 is the hand's digest.

Only the engine's public surface is used (``Hand``, ``Deck``, ``Action``, ``TableConfig``,
``legal_actions().as_dict()``, ``views``), so the same file runs on an older tree::

    .venv/bin/python bench/differential.py                # 20,000 hands: print the digest
    .venv/bin/python bench/differential.py --save         # and write it to differential_digest.txt
    .venv/bin/python bench/differential.py --check        # compare with that file
    .venv/bin/python bench/differential.py --against main # compare with another revision
    .venv/bin/python bench/differential.py --record 1234  # one hand's record, as JSON
    .venv/bin/python bench/differential.py --against main --without-announcements

``--against REV`` checks REV out in a temporary git worktree, runs this file on that tree in a
subprocess (and on this one in another), compares the hands' digests, and for the first hand
that differs prints its seed, its configuration and the first field that differs.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DIGEST_FILE = ROOT / "bench" / "differential_digest.txt"
CHUNK = 1000  # hands per line of the saved digest

# The engine modules, imported by ``_load`` from the tree under test.
E: Any = None


def _load(tree: Path) -> None:
    """Import the engine of ``tree`` (this repository unless told otherwise)."""
    global E
    sys.path.insert(0, str(tree))
    import importlib
    import types

    import engine.cards
    import engine.errors
    import engine.events
    import engine.hand
    import engine.variants
    import engine.views

    try:  # where a tree keeps what goes into a hand (events.py in older trees)
        actions = importlib.import_module("engine.actions")
    except ModuleNotFoundError:
        actions = engine.events
    where = Path(engine.hand.__file__).resolve()
    if not where.is_relative_to(tree.resolve()):
        raise SystemExit(f"engine imported from {where}, not from {tree}")
    E = types.SimpleNamespace(
        cards=engine.cards,
        errors=engine.errors,
        events=engine.events,
        actions=actions,
        hand=engine.hand,
        variants=engine.variants,
        views=engine.views,
    )


def wire(event: Any) -> list[Any]:
    """An event as its wire triple: ``[kind, data, to]``. The one place that reads events."""
    data = getattr(event, "data", None)
    if data is None:
        convert = getattr(E.events, "wire", None)
        if convert is not None:
            return list(convert(event))
    return [event.kind, data, event.to]


# ----------------------------------------------------------------- configurations

# Every TableConfig field but the variant and the stakes, with the values drawn for it. Each
# field is drawn from its own random source, named after the hand and the field, so adding a
# field (or a value) here changes no other field's draws. The first value is the default.
RULES: dict[str, tuple[Any, ...]] = {
    "structure": ("fixed_limit", "pot_limit", "no_limit"),
    "max_raises": (3, None, 0, 1, 2, 4),
    "uncapped_heads_up": (True, False),
    "bring_in_may_complete_later": (False, True),
    "eligibility": ("ante_and_bring_in", "ante"),
    "bring_in_card": (None, "low", "high"),
    "bring_in_tie": ("suit", "position"),
    "order_tie": (None, "suit", "position"),
    "open_pair_big_bet": (True, False),
    "burn_cards": (True, False),
    "last_card_down": (False, True),
    "low_qualifier": (8, None, 5, 7, 9, 13),
    "kansas_city_low": (False, True),
    "announce_possibles": (False, True),
    "all_in_full_fraction": (0.5, 1.0, 0.25),
    "ante_by_position": (None, "drawn"),
    "antes_dead": (False, True),
    "trim_antes": (False, True),
    "odd_chip_tie": ("highest_card_by_suit", "lowest_position"),
    "all_in_opener": ("next_best_board", "next_seat"),
    "short_all_in": ("half_bet", "largest_increase"),
    "cap_counts_short_all_ins": (False, True),
    "short_bring_in_call": ("full", "posted"),
    "reuse_folded_cards": (False, True),
    "common_card_in_order": (True, False),
    "deal_to_unfaced_folds": (True, False),
    "pots_by_contenders": (False, True),
    "rake_percent": (0, 5, 10, 2.5, 100),
    "rake_cap": (None, 0, 1, 3, 50),
    "rake_from_street": (2, 1, 3, 4),
    "absent_hands": ("killed_when_action_reaches", "killed_after_starting_hands"),
}
STAKES = ("variant", "ante", "bring_in", "small_bet", "big_bet")


def _source(seed: int, index: int, name: str) -> random.Random:
    """The random source of one part of one hand (string seeds hash the same in every run)."""
    return random.Random(f"{seed}:{index}:{name}")


def draw_spec(seed: int, index: int) -> dict[str, Any]:
    """Hand ``index``'s configuration, players and stacks, as plain JSON values."""
    pick = _source(seed, index, "shape")
    variant = sorted(E.variants.VARIANTS)[pick.randrange(len(E.variants.VARIANTS))]
    players = pick.randint(2, E.variants.VARIANTS[variant].max_players)
    small = pick.choice((1, 2, 2, 4, 5, 10))
    stakes = {
        "ante": pick.choice((0, 1, 1, 2, small)),
        "bring_in": pick.choice((0, 1, small // 2, small // 2, small)),
        "small_bet": small,
        "big_bet": small * pick.choice((1, 2, 2, 2)),
    }
    plain = pick.random() < 0.25  # the rule books' defaults but for the stakes and structure
    rules: dict[str, Any] = {}
    for name, values in RULES.items():
        draw = _source(seed, index, name)
        if plain and name != "structure":
            continue
        # Each alternate rule: its default half the time (fixed limit three times in five).
        if name == "structure":
            value = draw.choice(("fixed_limit", "fixed_limit", "fixed_limit", *values[1:]))
        else:
            value = values[0] if draw.random() < 0.5 else draw.choice(values[1:])
        if value == "drawn":  # one ante per position, and now and then a wrong count of them
            count = players if draw.random() < 0.95 else players + 1
            value = [draw.choice((0, 1, 2, 3)) for _ in range(count)]
        if value != values[0]:
            rules[name] = value
    seats_pick = _source(seed, index, "seats")
    seats = sorted(seats_pick.sample(range(10), players))
    cut = seats_pick.randrange(players)  # any seat may sit first from the dealer's left
    seats = seats[cut:] + seats[:cut]
    big = stakes["big_bet"]
    # Deep, mixed or short stacks: short ones go all in early and make side pots.
    depth = seats_pick.choice(
        (
            (200, 50 * big),
            (1, 3, small, 3 * big, 20 * big, 200),
            (1, 2, 3, small, 2 * small, 3 * big),
        )
    )
    stacks = [seats_pick.choice(depth) for _ in range(players)]
    spec: dict[str, Any] = {"variant": variant, **stakes, "rules": rules, "seats": seats}
    spec["stacks"] = stacks
    if rules.get("absent_hands") == "killed_after_starting_hands":
        # Players away at the deal, their hands killed (written only when there are some).
        away = _source(seed, index, "absent")
        absent = [s for s in seats if away.random() < 0.3]
        if absent:
            spec["absent"] = absent
    broken = _source(seed, index, "broken").random()
    if broken < 0.005:
        spec["small_bet"] = 0  # a configuration that cannot be played
    elif broken < 0.01:
        spec["stacks"][0] = 0  # a seat without chips
    elif broken < 0.012:
        spec["seats"], spec["stacks"] = seats[:1], stacks[:1]  # one player
    spec["unknown_cards"] = _source(seed, index, "deck").random() < 0.04
    return spec


def make_config(spec: dict[str, Any]) -> Any:
    values: dict[str, Any] = {"variant": E.variants.find_variant(spec["variant"])}
    for name in STAKES[1:]:
        values[name] = spec[name]
    for name, value in spec["rules"].items():
        values[name] = tuple(value) if isinstance(value, list) else value
    return E.variants.TableConfig(**values)


# ----------------------------------------------------------------- one hand


def _error(exc: Exception) -> list[Any]:
    return [type(exc).__name__, getattr(exc, "code", None)]


def _state(hand: Any) -> tuple[Any, ...]:
    """What a refused action must leave as it was."""
    return (
        len(hand.events),
        len(hand.actions),
        list(hand.stacks),
        list(hand.bets),
        list(hand.total),
        list(hand.folded),
        hand.to_act,
        hand.street,
        hand.legal_actions().as_dict(),
    )


def _bad_actions(legal: Any, seats: Sequence[int], draw: random.Random) -> list[Any]:
    """Actions the engine must refuse (or, a few of them, take), for the seat ``legal.seat``."""
    seat = legal.seat
    others = [s for s in seats if s != seat]
    Action = E.actions.Action
    kinds = legal.kinds
    offered = list(kinds)
    bad: list[Any] = [
        Action(draw.choice(others), draw.choice(offered)),  # not this seat's turn
        Action(10 + draw.randrange(5), "fold"),  # not in the hand
        Action(seat, draw.choice(("shove", "Fold", "", "allin"))),  # unknown kind
        Action(seat, draw.choice(offered), True),  # a bool is not an amount
        Action(seat, draw.choice(offered), draw.choice((5.0, "5", -1, 0))),
        Action(seat, "check", draw.choice((0, 1))),  # amounts on actions that take none
        Action(seat, "fold", 0),
        Action(seat, draw.choice([k for k in E.actions.ACTION_KINDS if k not in kinds])),
    ]
    if legal.wager is not None:
        low, high = legal.min_to, legal.max_to
        bad += [
            Action(seat, legal.wager, low - 1),
            Action(seat, legal.wager, high + 1),
            Action(seat, legal.wager, draw.randint(low, high + 3)),  # fixed limit: maybe not one
            Action(seat, legal.wager, -low),
        ]
        other = [k for k in ("bet", "raise", "complete") if k != legal.wager]
        bad.append(Action(seat, draw.choice(other), low))
    if "call" in kinds:
        bad.append(Action(seat, "call", legal.as_dict()["call"] + draw.choice((-1, 1))))
    if "bring_in" in kinds:
        bad.append(Action(seat, "bring_in", legal.as_dict()["bring_in"] + draw.choice((-1, 1))))
    return bad


def _good_action(legal: Any, draw: random.Random) -> Any:
    """A legal action, amounts drawn across the legal range; now and then named explicitly."""
    Action = E.actions.Action
    seat, kinds, shown = legal.seat, legal.kinds, legal.as_dict()
    roll = draw.random()
    wager = legal.wager
    if "bring_in" in kinds and (roll < 0.5 or wager is None):
        if draw.random() < 0.2:
            return Action(seat, "bring_in", shown["bring_in"])
        return Action(seat, "bring_in")
    if wager is not None and roll < 0.4:
        choices = shown.get("to_choices")
        how = draw.random()
        if how < 0.15:
            return Action(seat, wager)  # the smallest, filled in
        if choices:
            return Action(seat, wager, draw.choice(choices))
        if how < 0.45:
            return Action(seat, wager, legal.max_to)  # all in, or the pot
        if how < 0.7:
            return Action(seat, wager, legal.min_to)
        return Action(seat, wager, draw.randint(legal.min_to, legal.max_to))
    if "call" in kinds and roll < 0.85:
        if draw.random() < 0.1:
            return Action(seat, "call", shown["call"])
        return Action(seat, "call")
    if "check" in kinds and roll < 0.97:
        return Action(seat, "check")
    kind = "fold" if "fold" in kinds else kinds[0]
    if draw.random() < 0.1:
        return (seat, kind, None)  # a plain tuple is taken too
    return Action(seat, kind)


class _UnknownCardsDeck:
    """A deck that deals some cards as unknown, as a replayed record may (``??``)."""

    def __init__(self, rng: random.Random) -> None:
        self.deck = E.cards.Deck(rng=rng)
        self.rng = random.Random(rng.random())

    def __getattr__(self, name: str) -> Any:
        return getattr(self.deck, name)

    def deal_round(self, count: int, burn: bool) -> tuple[list[int], int | None, str | None]:
        cards, common, procedure = self.deck.deal_round(count, burn)
        cards = [E.cards.UNKNOWN if self.rng.random() < 0.15 else c for c in cards]
        return cards, common, procedure


def play_hand(seed: int, index: int) -> dict[str, Any]:
    """Hand ``index`` of the run ``seed``, played out, as its record."""
    spec = draw_spec(seed, index)
    record: dict[str, Any] = {"seed": seed, "index": index, "spec": spec}
    errors = E.errors
    try:
        config = make_config(spec)
    except errors.EngineError as exc:
        record["config_error"] = _error(exc)
        return record
    deck_rng = _source(seed, index, "cards")
    deck = _UnknownCardsDeck(deck_rng) if spec["unknown_cards"] else E.cards.Deck(rng=deck_rng)
    shown = None
    if spec["unknown_cards"]:  # a record shows some seats' cards at the showdown
        table = _source(seed, index, "shown")
        shown = {s: table.sample(range(52), 7) for s in spec["seats"] if table.random() < 0.7}
    seats = spec["seats"]
    try:
        dealt = list(zip(seats, spec["stacks"], strict=True))
        if "absent" in spec:
            hand = E.hand.Hand(config, dealt, deck, shown, absent=spec["absent"])
        else:
            hand = E.hand.Hand(config, dealt, deck, shown)
    except errors.EngineError as exc:
        record["start_error"] = _error(exc)
        return record
    draw = _source(seed, index, "play")
    viewers: list[int | None] = [*seats, None]
    steps: list[Any] = []
    record["start"] = [wire(e) for e in hand.events]
    record["steps"] = steps
    while not hand.is_over():
        legal = hand.legal_actions()
        step: dict[str, Any] = {
            "legal": legal.as_dict(),
            "to_act": hand.seat_to_act(),
            "pot": hand.pot_total(),
        }
        steps.append(step)
        if draw.random() < 0.3:
            refused = []
            candidates = _bad_actions(legal, seats, draw)
            for action in draw.sample(candidates, min(3, len(candidates))):
                refused.append(_attempt(hand, lambda a=action: hand.apply(a), list(action)))
            if draw.random() < 0.1:
                other = draw.choice([s for s in seats if s != legal.seat])
                refused.append(_attempt(hand, lambda o=other: hand.timeout(o), ["timeout", other]))
            if draw.random() < 0.05:
                refused.append(_attempt(hand, hand.result, ["result"]))
            step["tried"] = refused
            if hand.is_over():  # a bad action that was taken after all ended the hand
                break
            if hand.legal_actions().as_dict() != step["legal"]:
                continue  # one was taken: the next step shows the new turn
        if draw.random() < 0.05:
            step["timeout"] = legal.seat
            events = hand.timeout(legal.seat)
        else:
            action = _good_action(legal, draw)
            step["action"] = list(action)
            events = hand.apply(action)
        step["events"] = [wire(e) for e in events]
        if draw.random() < 0.05:
            step["views"] = _views(hand, viewers)
    result = hand.result()
    record["result"] = {
        "stacks": sorted(result.stacks.items()),
        "net": sorted(result.net.items()),
        "shares": result.shares,
        "pots": result.pots,
        "showdown": result.showdown,
    }
    record["actions"] = [list(a) for a in hand.actions]
    record["events"] = len(hand.events)
    record["views"] = _views(hand, viewers)
    after = hand.legal_actions()
    record["after"] = [
        after.as_dict(),
        hand.seat_to_act(),
        _attempt(hand, lambda: hand.apply(E.actions.Action(seats[0], "fold")), ["fold"]),
        _attempt(hand, lambda: hand.timeout(seats[0]), ["timeout"]),
    ]
    return record


def _attempt(hand: Any, call: Callable[[], Any], what: list[Any]) -> list[Any]:
    """Try something the engine may refuse: [what, error or the events, unchanged]."""
    before = _state(hand)
    try:
        out = call()
    except E.errors.EngineError as exc:
        return [what, _error(exc), _state(hand) == before]
    if isinstance(out, list):
        return [what, "taken", [wire(e) for e in out]]
    return [what, "taken", None]


def _views(hand: Any, viewers: list[int | None]) -> list[Any]:
    pictures = E.views.views(hand.events, viewers)
    return [[viewer, pictures[viewer]] for viewer in viewers]


def canonical(record: dict[str, Any]) -> bytes:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), default=_plain).encode()


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"not JSON: {value!r}")


def hand_digest(seed: int, index: int, wordless: bool = False) -> str:
    record = play_hand(seed, index)
    return hashlib.sha256(canonical(without_words(record) if wordless else record)).hexdigest()


def digests(seed: int, start: int, hands: int, wordless: bool = False) -> Iterator[str]:
    for index in range(start, start + hands):
        yield hand_digest(seed, index, wordless)


def without_words(value: Any) -> Any:
    """A record without the dealer's words: every ``announcement`` event, the views' lists of
    them and the count of events left out, so that a change of wording alone (or of which
    announcements are made) compares equal and any other change still shows."""
    if isinstance(value, dict):
        return {
            key: without_words(item)
            for key, item in value.items()
            if key != "announcements" and not (key == "events" and isinstance(item, int))
        }
    if isinstance(value, list | tuple):
        return [
            without_words(item)
            for item in value
            if not (isinstance(item, list) and len(item) == 3 and item[0] == "announcement")
        ]
    return value


def chunk_lines(seed: int, hashes: Sequence[str], chunk: int = CHUNK) -> list[str]:
    """The digest file: the run, then one line per ``chunk`` hands (their digests hashed)."""
    lines = [f"seed {seed} hands {len(hashes)} chunk {chunk}"]
    for start in range(0, len(hashes), chunk):
        part = hashes[start : start + chunk]
        joined = hashlib.sha256("\n".join(part).encode()).hexdigest()
        lines.append(f"{start}-{start + len(part) - 1} {joined}")
    lines.append(f"all {hashlib.sha256(chr(10).join(hashes).encode()).hexdigest()}")
    return lines


# ----------------------------------------------------------------- comparing two trees


def _run_tree(tree: Path, args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "--tree", str(tree), *args],
        cwd=tree,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    if type(a) is not type(b):
        return f"{path or '/'}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return f"{path}/{key}: only in {'this tree' if key in a else 'the other'}"
            found = _first_difference(a[key], b[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        for k, (x, y) in enumerate(zip(a, b, strict=False)):
            found = _first_difference(x, y, f"{path}/{k}")
            if found:
                return found
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)} items"
        return None
    return None if a == b else f"{path or '/'}: {a!r} (this tree) != {b!r} (the other)"


def against(rev: str, seed: int, hands: int, wordless: bool = False) -> int:
    """Compare this tree with revision ``rev`` hand by hand; returns the differing hands."""
    with tempfile.TemporaryDirectory(prefix="differential-") as scratch:
        other = Path(scratch) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(other), rev],
            cwd=ROOT,
            check=True,
        )
        try:
            run = ["--hashes", "--seed", str(seed), "--hands", str(hands)]
            run += ["--without-announcements"] if wordless else []
            mine, theirs = _run_tree(ROOT, run), _run_tree(other, run)
            ours_out, _ = mine.communicate()
            theirs_out, _ = theirs.communicate()
            if mine.returncode or theirs.returncode:
                raise SystemExit("a run failed")
            ours, their = ours_out.split(), theirs_out.split()
            differing = [k for k, (x, y) in enumerate(zip(ours, their, strict=True)) if x != y]
            leaving = ", announcements left out" if wordless else ""
            print(f"{hands} hands (seed {seed}) against {rev}{leaving}: {len(differing)} differ")
            if differing:
                first = differing[0]
                show = ["--record", str(first), "--seed", str(seed)]
                a = json.loads(subprocess.run(*_cmd(ROOT, show), **_opts(ROOT)).stdout)
                b = json.loads(subprocess.run(*_cmd(other, show), **_opts(other)).stdout)
                if wordless:
                    a, b = without_words(a), without_words(b)
                print(f"first: hand {first} of seed {seed}; spec {json.dumps(a['spec'])}")
                print(f"first difference: {_first_difference(a, b)}")
                print(f"differing hands: {differing[:20]}{' ...' if len(differing) > 20 else ''}")
            return len(differing)
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(other)], cwd=ROOT, check=False
            )


def _cmd(tree: Path, args: list[str]) -> tuple[list[str]]:
    return ([sys.executable, __file__, "--tree", str(tree), *args],)


def _opts(tree: Path) -> dict[str, Any]:
    return {"cwd": tree, "capture_output": True, "text": True, "check": True}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--start", type=int, default=0, help="first hand's index")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the engine's tree")
    parser.add_argument("--against", metavar="REV", help="compare with a git revision")
    parser.add_argument("--save", action="store_true", help=f"write {DIGEST_FILE.name}")
    parser.add_argument("--check", action="store_true", help=f"compare with {DIGEST_FILE.name}")
    parser.add_argument("--hashes", action="store_true", help="print each hand's digest")
    parser.add_argument("--record", type=int, metavar="INDEX", help="print one hand's record")
    parser.add_argument(
        "--without-announcements",
        action="store_true",
        help="with --hashes or --against: leave the dealer's words out of every record",
    )
    args = parser.parse_args(argv)
    _load(args.tree)
    if args.record is not None:
        # In play order (not canonical): a comparison finds the first difference as it happened.
        print(json.dumps(play_hand(args.seed, args.record), default=_plain))
        return 0
    if args.against:
        return 1 if against(args.against, args.seed, args.hands, args.without_announcements) else 0
    if args.hashes:
        for digest in digests(args.seed, args.start, args.hands, args.without_announcements):
            print(digest)
        return 0
    lines = chunk_lines(args.seed, list(digests(args.seed, args.start, args.hands)))
    print("\n".join(lines))
    if args.check:
        saved = DIGEST_FILE.read_text().splitlines()
        moved = [line for line, was in zip(lines, saved, strict=False) if line != was]
        if moved or len(saved) != len(lines):
            print(f"differs from {DIGEST_FILE.name}: {moved[:3]}; --against REV finds the hand")
            return 1
        print(f"same as {DIGEST_FILE.name}")
    if args.save:
        DIGEST_FILE.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
