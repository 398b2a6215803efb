"""Engine benchmarks, printed side by side in one run.

Run from the repository root::

    .venv/bin/python bench/engine.py [--seconds 2] [--hands 50000]

Sections (each returns its report lines, so more can be added to ``main``):

- evaluation: seven-card high hands per second for ``engine.evaluate.high_value``,
  phevaluator's ``evaluate_cards`` and treys' ``Evaluator.evaluate`` on one fixed set of random
  hands, each pre-converted to its library's own card representation outside the timed loop;
  plus the import time of ``engine.evaluate``.
- hands: complete hands per second of random legal play at 2, 4 and 8 players for seven-card
  stud, razz and stud hi-lo, ours (event log and every seat's and a spectator's view included)
  against PokerKit playing the same policy at the same stakes.
- budget: for seven-card stud, PokerKit's time per hand over 20 (the target's budget) against
  what a hand costs with no rule applied: the policy loop, the event log's values, the views
  and the shuffle, each timed alone on recorded hands.
"""

from __future__ import annotations

import argparse
import platform
import random
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pokerkit  # noqa: E402

from engine.actions import Action, LegalActions  # noqa: E402
from engine.cards import Deck  # noqa: E402
from engine.evaluate import high_value  # noqa: E402
from engine.hand import Hand  # noqa: E402
from engine.variants import TableConfig, find_variant  # noqa: E402
from engine.views import views  # noqa: E402

_PK_AUTOMATIONS = (
    pokerkit.Automation.ANTE_POSTING,
    pokerkit.Automation.BET_COLLECTION,
    pokerkit.Automation.BLIND_OR_STRADDLE_POSTING,
    pokerkit.Automation.CARD_BURNING,
    pokerkit.Automation.HOLE_DEALING,
    pokerkit.Automation.BOARD_DEALING,
    pokerkit.Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    pokerkit.Automation.HAND_KILLING,
    pokerkit.Automation.CHIPS_PUSHING,
    pokerkit.Automation.CHIPS_PULLING,
)


def import_time_ms() -> tuple[float, float]:
    """(cumulative ms from ``-X importtime``, wall ms of the import) in a fresh interpreter."""
    code = (
        "import time; t = time.perf_counter(); "
        "import engine.evaluate, engine.hand, engine.table, engine.views, engine.phh_replay, "
        "engine.phh_export; "
        "print((time.perf_counter() - t) * 1000)"
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
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


def _treys_pass(
    evaluate: Callable[[list[int], list[int]], int], hands: Sequence[tuple[list[int], list[int]]]
) -> float:
    start = time.perf_counter()
    for hole, board in hands:
        evaluate(hole, board)
    return time.perf_counter() - start


def _same_order(a: Sequence[int], b: Sequence[int]) -> bool:
    pairs = sorted(set(zip(a, b, strict=True)))
    return len({x for x, _ in pairs}) == len(pairs) == len({y for _, y in pairs}) and all(
        y1 < y2 for (_, y1), (_, y2) in zip(pairs, pairs[1:], strict=False)
    )


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
        ours_values, [-evaluator.evaluate(hole, board) for hole, board in treys_hands]
    )

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
        f"  ours, first (cold) pass      {count / cold:>14,.0f}   (lazy tables filling)",
        f"  the three orderings agree: {'yes' if agree else 'NO'}",
        f"  import engine.evaluate: {cumulative:.1f} ms (-X importtime, cumulative); "
        f"the whole engine: {wall:.1f} ms wall, in a fresh interpreter",
    ]
    return lines


# --------------------------------------------------------------------------- complete hands

HAND_VARIANTS = (
    ("seven_card_stud", "FixedLimitSevenCardStud"),
    ("razz", "FixedLimitRazz"),
    ("seven_card_stud_hi_lo", "FixedLimitSevenCardStudHighLowSplitEightOrBetter"),
)
# Stakes of both engines: ante 1, bring-in 1, bets 2/4, 200 chips each.
ANTE, BRING_IN, SMALL_BET, BIG_BET, STACK = 1, 1, 2, 4, 200


def bench_config(variant: str) -> TableConfig:
    """Our table configuration of a variant at the bench's stakes."""
    return TableConfig(
        variant=find_variant(variant),
        ante=ANTE,
        bring_in=BRING_IN,
        small_bet=SMALL_BET,
        big_bet=BIG_BET,
    )


def _our_hand(config: TableConfig, players: int, rng: random.Random) -> int:
    """One hand of random legal play on our engine, then every seat's and a spectator's view."""
    hand = Hand(config, [(s, STACK) for s in range(players)], Deck(rng=rng))
    _policy(hand, rng)
    events = hand.events
    views(events, (None, *hand.seats))
    return len(events)


def _policy(hand: Any, rng: random.Random) -> None:
    """The bench's random legal play, until the hand is over."""
    apply = hand.apply
    while not hand.over:
        legal = hand.legal_actions()
        seat, kinds, wager = legal.seat, legal.kinds, legal.wager
        if "bring_in" in kinds and rng.random() < 0.5:
            apply(Action(seat, "bring_in"))
            continue
        r = rng.random()
        if wager is not None and r < 0.3:
            apply(Action(seat, wager, legal.min_to))
        elif "fold" in kinds and r < 0.45:
            apply(Action(seat, "fold"))
        elif "call" in kinds:
            apply(Action(seat, "call"))
        elif "check" in kinds:
            apply(Action(seat, "check"))
        elif "bring_in" in kinds:
            apply(Action(seat, "bring_in"))
        else:
            apply(Action(seat, wager, legal.min_to))  # type: ignore[arg-type]


def _pokerkit_hand(game: Any, players: int, rng: random.Random) -> None:
    """The same policy on PokerKit, its dealing and showdown automated."""
    state = game.create_state(
        _PK_AUTOMATIONS,
        True,
        ANTE,
        BRING_IN,
        SMALL_BET,
        BIG_BET,
        [STACK] * players,
        players,
        mode=pokerkit.Mode.CASH_GAME,
    )
    while state.status:
        if state.can_post_bring_in() and rng.random() < 0.5:
            state.post_bring_in()
            continue
        r = rng.random()
        if state.can_complete_bet_or_raise_to() and r < 0.3:
            state.complete_bet_or_raise_to()
        elif state.can_fold() and r < 0.45:
            state.fold()
        elif state.can_check_or_call():
            state.check_or_call()
        elif state.can_post_bring_in():
            state.post_bring_in()
        else:
            state.complete_bet_or_raise_to()


def _rate(play: Callable[[], object], seconds: float) -> float:
    done = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(10):
            play()
        done += 10
        now = time.perf_counter()
        if now >= deadline:
            return done / (now - start)


def _best_of(
    plays: dict[str, Callable[[], object]], seconds: float, rounds: int = 2
) -> dict[str, float]:
    """Interleave the engines in short passes and keep each one's best, so load hits both alike."""
    best = dict.fromkeys(plays, 0.0)
    for _ in range(rounds):
        for name, play in plays.items():
            best[name] = max(best[name], _rate(play, seconds / rounds))
    return best


def bench_hands(seconds: float) -> list[str]:
    """Complete hands per second of random legal play, ours against PokerKit, same policy."""
    lines = [
        "complete hands per second, random legal play (ante 1, bring-in 1, bets 2/4, 200 chips),",
        "ours with its event log and every seat's and a spectator's view,",
        "PokerKit with its automations, both on the same policy:",
        f"{'variant':<24}{'players':>8}{'ours':>10}{'pokerkit':>10}{'ratio':>8}",
    ]
    warnings.simplefilter("ignore")
    for name, pk_name in HAND_VARIANTS:
        config = bench_config(name)
        game = getattr(pokerkit, pk_name)
        for players in (2, 4, 8):
            ours_rng, their_rng = random.Random(players), random.Random(players)
            rates = _best_of(
                {
                    "ours": partial(_our_hand, config, players, ours_rng),
                    "pokerkit": partial(_pokerkit_hand, game, players, their_rng),
                },
                seconds,
            )
            ours, theirs = rates["ours"], rates["pokerkit"]
            lines.append(
                f"{name:<24}{players:>8}{ours:>10.0f}{theirs:>10.0f}{ours / theirs:>7.1f}x"
            )
    return lines


class _Recorded:
    """A hand's legal actions played back: the policy loop's own cost, with no rules run."""

    __slots__ = ("legal", "left", "over")

    def __init__(self, legal: LegalActions, actions: int) -> None:
        self.legal = legal
        self.left = actions
        self.over = False

    def legal_actions(self) -> LegalActions:
        return self.legal

    def apply(self, action: Action) -> None:
        self.left -= 1
        self.over = not self.left


def _repeat(times: int, work: Callable[[], object]) -> None:
    for _ in range(times):
        work()


def _each(items: Sequence[Any], work: Callable[[Any], object]) -> None:
    for item in items:
        work(item)


def _per_hand(work: Callable[[], object], hands: int, seconds: float) -> float:
    """Microseconds per hand of ``work`` (which does ``hands`` hands), best of several passes."""
    best = float("inf")
    deadline = time.perf_counter() + seconds
    while True:
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
        if time.perf_counter() >= deadline:
            return best / hands * 1e6


def _values(value: Any) -> Any:
    """A record's values as plain (nested) tuples."""
    return tuple(_values(v) for v in value) if isinstance(value, tuple) else value


def _budget_row(config: TableConfig, players: int, hands: int, share: float) -> str:
    """One line of the budget table: each part timed for ``share`` seconds."""
    rng = random.Random(players)
    recorded: list[tuple[Hand, int, LegalActions]] = []
    for _ in range(hands):
        deck = Deck(rng=rng)
        hand = Hand(config, [(s, STACK) for s in range(players)], deck)
        first = hand.legal_actions()
        _policy(hand, rng)
        recorded.append((hand, deck.position, first))
    logs = [(hand.events, (None, *hand.seats)) for hand, _, _ in recorded]
    # The event log's values alone: each hand's events rebuilt from constants, as tuples.
    literals = [
        compile(repr([_values(e) for e in events]), "<events>", "eval") for events, _ in logs
    ]
    dealt = [position for _, position, _ in recorded]
    plays = [(first, len(hand.actions)) for hand, _, first in recorded]
    # Each pass plays the same hands (the same seed), keeping nothing it makes, as a hand
    # of the bench keeps nothing.
    pk = _per_hand(
        lambda: _repeat(
            hands,
            partial(
                _pokerkit_hand, pokerkit.FixedLimitSevenCardStud, players, random.Random(players)
            ),
        ),
        hands,
        share,
    )
    ours = _per_hand(
        lambda: _repeat(hands, partial(_our_hand, config, players, random.Random(players))),
        hands,
        share,
    )
    policy = _per_hand(
        lambda: _each(plays, lambda play: _policy(_Recorded(*play), rng)), hands, share
    )
    events = _per_hand(lambda: _each(literals, eval), hands, share)
    view_time = _per_hand(lambda: _each(logs, lambda log: views(*log)), hands, share)
    shuffle = _per_hand(
        lambda: _each(dealt, lambda count: Deck(rng=rng).deal_round(count, False)),
        hands,
        share,
    )
    floor = policy + events + view_time + shuffle
    budget = pk / 20
    return (
        f"{players:>8}{pk:>10.0f}{budget:>8.1f}{ours:>8.1f}{policy:>8.1f}{events:>8.1f}"
        f"{view_time:>8.1f}{shuffle:>8.1f}{floor:>8.1f}{budget - floor:>8.1f}"
    )


def bench_budget(seconds: float, hands: int = 200) -> list[str]:
    """What the 20x target leaves for the rules: PokerKit's time per hand over 20, against what
    a hand's outputs and the bench's own loop cost with no rule applied at all."""
    warnings.simplefilter("ignore")
    lines = [
        "the 20x budget, seven-card stud, microseconds per hand (best pass; the parts below",
        "are each timed alone on recorded hands, so they are lower bounds):",
        f"{'players':>8}{'pokerkit':>10}{'budget':>8}{'ours':>8}{'policy':>8}{'events':>8}"
        f"{'views':>8}{'shuffle':>8}{'floor':>8}{'rules':>8}",
    ]
    config = bench_config("seven_card_stud")
    for players in (2, 4, 8):
        lines.append(_budget_row(config, players, hands, seconds / 6))
    lines += [
        "  budget: pokerkit / 20; policy: the bench's loop over a hand's recorded legal",
        "  actions; events: the hand's event values rebuilt from constants; views: the views",
        "  of the finished hand; shuffle: drawing the cards it dealt; floor: their sum;",
        "  rules: what the budget leaves for everything else (ours spends ours - floor).",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per library")
    parser.add_argument("--hands", type=int, default=50_000, help="hands in the fixed set")
    parser.add_argument(
        "--hand-seconds",
        type=float,
        default=2.0,
        help="time per engine per configuration of complete hands",
    )
    parser.add_argument("--only", choices=["evaluation", "hands", "budget"], help="run one section")
    args = parser.parse_args()
    print(
        f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.machine()}"
    )
    if args.only in (None, "evaluation"):
        for line in bench_evaluation(args.seconds, args.hands):
            print(line, flush=True)
    if args.only in (None, "hands"):
        for line in bench_hands(args.hand_seconds):
            print(line, flush=True)
    if args.only in (None, "budget"):
        for line in bench_budget(args.hand_seconds * 3):
            print(line, flush=True)


if __name__ == "__main__":
    main()
