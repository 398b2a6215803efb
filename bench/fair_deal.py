"""What a provably fair deal costs: stud-deck/2 (engine.fair2) against stud-deck/1.

Run from the repository root::

    .venv/bin/python bench/fair_deal.py [--rounds 2000] [--hands 300]

Figures (microseconds of CPU, the best of three runs of each):

- commit: the table's next hand committed to (stud-deck/1: SHA-256 of the seed; stud-deck/2:
  the committed deck, its 52 salts and its Merkle tree), what the actor does once a hand;
- deal: the deck the hand is dealt from, once the seeds are in (the deal order);
- hand: one hand of seven-card stud at 6 seats, random legal play, with its event log (and,
  for stud-deck/2, every card's opening in it), over the same hand on a stacked deck;
- verify: ``stud-verify``'s check of one player's history of such a hand;
- bytes: the hand's stored event log, and one seat's history events, as JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine import fair, fair2  # noqa: E402
from engine.actions import Action  # noqa: E402
from engine.cards import Deck  # noqa: E402
from engine.hand import Hand  # noqa: E402
from engine.variants import TableConfig, find_variant  # noqa: E402
from engine.views import visible_events  # noqa: E402
from server.store.table_config import config_to_json  # noqa: E402
from server.verify import verify  # noqa: E402

SEATS = 6
SEEDS = tuple((seat, f"seed-{seat}") for seat in range(SEATS))
CONFIG = TableConfig(variant=find_variant("seven_card_stud"), ante=1, bring_in=2)


def best_of_three(run: Callable[[], None], rounds: int) -> float:
    """Microseconds a call, the best of three timings of ``rounds`` calls (process CPU)."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for _ in range(rounds):
            run()
        best = min(best, (time.process_time() - start) / rounds)
    return best * 1e6


def play(deck: Deck, rng: random.Random) -> Hand:
    hand = Hand(CONFIG, [(seat, 1000) for seat in range(SEATS)], deck)
    while not hand.is_over():
        legal = hand.legal_actions()
        kinds = [k for k in legal.kinds if k != "fold"] or list(legal.kinds)
        if "fold" in legal.kinds and rng.random() < 0.2:
            kinds = ["fold"]
        kind = rng.choice(kinds)
        amount = legal.min_to if kind in ("complete", "bet", "raise") else None
        assert legal.seat is not None
        hand.apply(Action(legal.seat, kind, amount))
    return hand


def history(hand: Hand, seat: int, proof: dict[str, Any]) -> dict[str, Any]:
    """The history ``GET /hands/{id}`` gives ``seat`` (the parts stud-verify reads)."""
    events = [e.record() for e in visible_events(hand.events, seat)]
    return {"seat": seat, "events": events, "fairness": proof}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--hands", type=int, default=300)
    args = parser.parse_args()
    seed = bytes(range(32))
    rows: list[tuple[str, float, float]] = []

    commit1 = best_of_three(lambda: fair.commitment(seed), args.rounds)
    commit2 = best_of_three(
        lambda: fair2.CommittedDeck(seed, table_id=1, number=1).commitment, args.rounds // 4
    )
    rows.append(("commit (once a hand)", commit1, commit2))

    committed = fair2.CommittedDeck(seed, table_id=1, number=1)
    deal1 = best_of_three(lambda: fair.FairDeal(seed, 1, 1, SEEDS).deck(), args.rounds)
    deal2 = best_of_three(lambda: committed.deal(SEEDS).deck(), args.rounds)
    rows.append(("deal: the deck from the seeds", deal1, deal2))

    stacked_order = fair.FairDeal(seed, 1, 1, SEEDS).order()

    def hands(make: Callable[[], Deck]) -> float:
        rng = random.Random(7)
        return best_of_three(lambda: play(make(), rng), args.hands)

    stacked = hands(lambda: Deck(order=stacked_order))
    hand1 = hands(lambda: fair.FairDeal(seed, 1, 1, SEEDS).deck())
    hand2 = hands(lambda: committed.deal(SEEDS).deck())
    rows.append(("hand (6 seats, event log)", hand1, hand2))

    config = config_to_json(CONFIG)
    seeds = [{"seat": s, "seed": v} for s, v in SEEDS]
    h1 = play(fair.FairDeal(seed, 1, 1, SEEDS).deck(), random.Random(1))
    h2 = play(committed.deal(SEEDS).deck(), random.Random(1))
    proof1 = {
        "method": fair.METHOD,
        "table_id": 1,
        "hand": 1,
        "commitment": fair.commitment(seed),
        "server_seed": seed.hex(),
        "client_seeds": seeds,
        "config": config,
    }
    proof2 = {**proof1, "method": fair2.METHOD, "commitment": committed.commitment}
    del proof2["server_seed"]
    one, two = history(h1, 0, proof1), history(h2, 0, proof2)
    assert verify(one).fair and verify(two).fair, (verify(one).lines, verify(two).lines)
    verify1 = best_of_three(lambda: verify(one), args.hands)
    verify2 = best_of_three(lambda: verify(two), args.hands)
    rows.append(("verify one player's history", verify1, verify2))

    print(f"python {sys.version.split()[0]}; CPU microseconds, best of 3")
    print(f"{'':34}{'stud-deck/1':>14}{'stud-deck/2':>14}{'added':>10}")
    for name, first, second in rows:
        print(f"{name:34}{first:14.1f}{second:14.1f}{second - first:10.1f}")
    print(f"{'hand on a stacked deck (no proof)':34}{stacked:14.1f}")
    size1, size2 = (len(json.dumps([e.record() for e in h.events])) for h in (h1, h2))
    mine1, mine2 = (len(json.dumps(h["events"])) for h in (one, two))
    print(f"{'bytes: the hand event log (JSON)':34}{size1:14}{size2:14}{size2 - size1:10}")
    print(f"{'bytes: seat 0 history events':34}{mine1:14}{mine2:14}{mine2 - mine1:10}")


if __name__ == "__main__":
    main()
