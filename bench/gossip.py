"""What the lobby gossip costs a node: each node tells, every lease round, one message a table
it runs (``server.cardroom.gossip``), and every node hears every one of them.

A table's message as a node tells it mid-hand (the lobby line, the players to carry over on a
takeover, the live state: about 1.2 KB, as heard on ``cardroom:lobby`` at 600 tables), for
``--tables`` tables: the CPU of telling one (``orjson.dumps``) and of hearing one
(``orjson.loads`` and :meth:`~server.cardroom.gossip.Gossip.note`), then what hearing every
table of a cardroom costs each node at a message a table every lease round (a third of a
lease: 1.67 s at the default 5 s), for cardrooms of 1,000 to 100,000 tables. The Redis side
(the one channel's master sends every message to every node) is in docs/scaling.md.

    python bench/gossip.py [--tables 1000] [--rounds 20] [--lease-seconds 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.bus.memory import MemoryBus  # noqa: E402
from server.cardroom.gossip import Gossip  # noqa: E402
from server.cardroom.placement import NodeLoad  # noqa: E402


class Elsewhere:
    """The hearing node's side of the lobby: it runs none of the tables it hears of."""

    def running(self) -> list[Any]:
        return []

    def load(self) -> NodeLoad:
        return NodeLoad("B", tables=0, busy=0.0, draining=False, moving={})

    def runs(self, table_id: int) -> bool:
        return False

    def summary(self, table_id: int) -> dict[str, Any]:
        return {}

    def forget_table(self, table_id: int) -> None:
        """Nothing to forget: this node runs none of the tables."""


def told(table_id: int) -> dict[str, Any]:
    """A table's message mid-hand, shaped as ``Gossip.told`` makes it."""
    players = [
        {"seat": s, "player": f"t{table_id}p{s}", "stack": 900 + 7 * s, "in_hand": True,
         "sitting_out": False}
        for s in range(8)
    ]  # fmt: skip
    return {
        "type": "lobby",
        "node": "A",
        "table": table_id,
        "summary": {
            "id": table_id,
            "name": f"table-{table_id}",
            "variant": "seven_card_stud",
            "variant_title": "Seven-Card Stud",
            "structure": "fixed_limit",
            "stakes": {"ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
            "seats": 8,
            "seats_taken": 8,
            "waiting": 0,
            "min_buy_in": 200,
            "max_buy_in": 1000,
            "paused": False,
            "average_pot": 248,
            "hands_per_hour": 22,
            "restarts": 0,
            "node": "A",
        },  # fmt: skip
        "sitting_out": [],
        "check_when_free": [],
        "after_hand": {},
        "waiting_list": [],
        "released": False,
        "live": {
            "hand_number": 2,
            "in_hand": True,
            "street": "sixth",
            "pot": 208,
            "players": players,
            "seconds_since_action": 0.326,
            "paused_by": None,
            "pause_reason": None,
        },  # fmt: skip
    }


def cpu() -> float:
    return time.process_time()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--lease-seconds", type=float, default=5.0)
    args = parser.parse_args()
    messages = [told(table_id) for table_id in range(1, args.tables + 1)]
    gossip = Gossip(
        MemoryBus(), "B", Elsewhere(), lease_seconds=args.lease_seconds, lapses=lambda: True
    )
    started = cpu()
    for _ in range(args.rounds):
        payloads = [orjson.dumps(message) for message in messages]
    tell_us = (cpu() - started) / (args.rounds * args.tables) * 1e6
    started = cpu()
    for _ in range(args.rounds):
        for payload in payloads:
            gossip.note(orjson.loads(payload))
    hear_us = (cpu() - started) / (args.rounds * args.tables) * 1e6
    size = sum(len(p) for p in payloads) / len(payloads)
    per_table_second = 3 / args.lease_seconds  # a message a table every third of a lease
    print(
        f"{args.tables:,} tables x {args.rounds} rounds; a message {size:,.0f} bytes; "
        f"telling one {tell_us:.1f} us of CPU, hearing one {hear_us:.1f} us"
    )
    print("| tables in the cardroom | messages a node hears a second | its CPU hearing them | "
          "bytes a second to each node |")  # fmt: skip
    print("|---|---|---|---|")
    for tables in (1_000, 5_000, 10_000, 100_000):
        rate = tables * per_table_second
        print(
            f"| {tables:,} | {rate:,.0f} | {rate * hear_us / 1e6:.0%} of a core | "
            f"{rate * size / 1e6:,.1f} MB |"
        )


if __name__ == "__main__":
    main()
