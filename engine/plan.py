"""What a table configuration fixes for every hand dealt under it, worked out once.

A :class:`Plan` holds a configuration's streets, bet sizes, rule switches and the bring-in
order of every card, so a hand reads them as attributes instead of working them out again;
:func:`plan_of` finds it by the configuration's identity. Boards are kept as rank-pattern
keys (:data:`BOARD_STEP`): equal keys mean equal ranks, so a board's value and the dealer's
words for it are remembered by key, shared by every plan of the same board order.
"""

from __future__ import annotations

import sys

from engine.boards import board_value, describe_board, razz_board_value
from engine.cards import UNKNOWN, Card
from engine.variants import TableConfig

# A board's rank-pattern key grows by this per upcard: 3 bits of count per rank above 3 bits
# of card count (evaluate's board key), so equal keys mean equal ranks, whatever the suits.
BOARD_STEP = tuple((1 << 3 * (c >> 2) << 3) + 1 for c in range(UNKNOWN))
# A board key holds a pair (or more) of some rank when a rank's count has its 2 or 4 bit set.
PAIRED = sum(0b110 << 3 * rank << 3 for rank in range(13))
# Board key -> (value, the dealer's words), high boards and razz boards; filled as met.
_HIGH_BOARDS: dict[int, tuple[int, str]] = {}
_LOW_BOARDS: dict[int, tuple[int, str]] = {}


class Plan:
    """What a table configuration fixes for every hand dealt under it, worked out once."""

    __slots__ = (
        "streets",
        "names",
        "faces",
        "any_up",
        "increments",
        "started",
        "fixed",
        "largest",
        "plain_limit",
        "high_board",
        "by_suit",
        "bring_in_low",
        "bring_in_rank",
        "cap",
        "count_short",
        "full_fraction",
        "boards",
        "board_kind",
        "board_text",
    )

    def __init__(self, config: TableConfig) -> None:
        variant = config.variant
        streets = config.streets
        self.streets = streets
        self.names = tuple(s.name for s in streets)
        self.faces = tuple(s.cards for s in streets)
        self.any_up = tuple(any(s.cards) for s in streets)
        # Fixed limit outside an open-pair big bet: the one increment of each street.
        self.increments = tuple(
            (config.big_bet,) if s.big_bet else (config.small_bet,) for s in streets
        )
        # The fields of every hand_started but the seats.
        self.started: tuple[str, str, int, int, int, int] = (
            variant.name,
            config.structure,
            config.ante,
            config.bring_in,
            config.small_bet,
            config.big_bet,
        )
        self.fixed = config.structure == "fixed_limit"
        self.largest = self.fixed and config.short_all_in == "largest_increase"
        # Fixed limit under the half-bet rule: one bet size a street (engine.betting).
        self.plain_limit = self.fixed and not self.largest
        self.high_board = variant.board_order == "high"
        self.by_suit = config.effective_order_tie == "suit"
        self.bring_in_low = config.effective_bring_in_card == "low"
        # Each card's place in the bring-in order: rank (aces low in razz), then suit; by
        # position, the rank alone, so equal ranks tie and the first in position order wins.
        aces_low = variant.aces_low
        by_suit = config.bring_in_tie == "suit"
        self.bring_in_rank = tuple(
            ((((c >> 2) + 1) % 13 if aces_low else c >> 2) << 2) + ((c & 3) if by_suit else 0)
            for c in range(UNKNOWN + 1)
        )
        # Fixed limit: the bet and raises a street allows (no cap: never reached), counting
        # short all-ins or not.
        self.cap = sys.maxsize if config.max_raises is None else config.max_raises + 1
        self.count_short = config.cap_counts_short_all_ins
        self.full_fraction = config.all_in_full_fraction
        self.boards = _HIGH_BOARDS if self.high_board else _LOW_BOARDS
        self.board_kind = "high_board" if self.high_board else "low_board"
        self.board_text = "high" if self.high_board else "low"

    def board_facts(self, board: list[Card]) -> tuple[int, str]:
        """(value, announcement text) of a board of known upcards, remembered by rank pattern."""
        key = 0
        for card in board:
            key += BOARD_STEP[card]
        facts = self.boards.get(key)
        if facts is None:
            high = self.high_board
            value = board_value(board) if high else razz_board_value(board)
            said = describe_board(board, low=not high)
            facts = self.boards[key] = (value, board_words(said, self.board_text))
        return facts


def board_words(said: str, order: str) -> str:
    """The dealer's words for the board that opens: "pair of fours is high", but "ace-king
    high" and "seven-six low" as they are, not "ace-king high is high"."""
    return said if said.endswith(" " + order) else f"{said} is {order}"


_PLANS: dict[int, tuple[TableConfig, Plan]] = {}


def plan_of(config: TableConfig) -> Plan:
    """The plan of a configuration, by identity: hashing a whole config costs more than a hand
    of lookups. The entry keeps its config alive, so an id is never reused while cached."""
    entry = _PLANS.get(id(config))
    if entry is not None and entry[0] is config:
        return entry[1]
    if len(_PLANS) >= 256:
        _PLANS.clear()
    plan = Plan(config)
    _PLANS[id(config)] = (config, plan)
    return plan


__all__ = ["BOARD_STEP", "PAIRED", "Plan", "board_words", "plan_of"]
