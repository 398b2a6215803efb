"""Third street by the variant's own book: how good my first three cards are, as a tier.

A Monte Carlo share of the pot against random hole cards says little about three cards: it
does not know that a king showing in razz is a hand to throw away against a low card, or that
rolled-up trips in seven-card stud are a raise whatever shows. So the first betting round of
the seven-card games is played from a starting-hand table per variant, as stud players learn
it, judged against the upcards the other live hands show (and the dead cards, for a draw):

- seven-card stud (high): trips, big pairs, smaller pairs with a high kicker or above every
  upcard, live three-flushes and three-straights, two big cards above every upcard;
- razz (ace-to-five low): three distinct low cards, the lower the better; a high card showing
  against a lower board is folded, whatever lies under it;
- stud hi-lo (eight or better): three low cards (with an ace best), trips and aces, big pairs,
  low draws that can scoop.

Tiers: ``PREMIUM`` raises and re-raises (to the usual cap of four bets), ``GOOD`` completes or
raises once and calls anything, ``PLAYABLE`` calls the bring-in or one bet and folds to a
raise, ``FOLD`` checks when it may and otherwise folds. Other variants and streets have no
table here (None): the bot plays its equity.

>>> from stud_client import SeatView, Stakes, TableView
>>> def board(variant, mine_down, mine_up, their_up):
...     seats = (
...         SeatView(0, "me", 100, in_hand=True, up=(mine_up,), down=mine_down, down_count=2),
...         SeatView(1, "you", 100, in_hand=True, up=(their_up,), down_count=2),
...     )
...     return TableView(1, 1, variant, Stakes(1, 2, 5, 10), 20, 1000, seats, 0, street="third")
>>> starting_tier(board("seven_card_stud", ("7c", "7d"), "7h", "As")) == PREMIUM
True
>>> starting_tier(board("razz", ("Ac", "2d"), "Kh", "3s")) == FOLD
True
>>> starting_tier(board("razz", ("Ac", "2d"), "4h", "Ks")) == PREMIUM
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from engine.variants import find_variant
from stud_client import TableView

__all__ = ["FOLD", "GOOD", "PLAYABLE", "PREMIUM", "starting_tier"]

FOLD, PLAYABLE, GOOD, PREMIUM = 0, 1, 2, 3
RANKS = "23456789TJQKA"
TEN, JACK, QUEEN, KING, ACE = 10, 11, 12, 13, 14


def _rank(card: str) -> int:
    """2..14, ace high."""
    return RANKS.index(card[0]) + 2


def _low(card: str) -> int:
    """1..13, ace low (razz and the low half of hi-lo)."""
    rank = _rank(card)
    return 1 if rank == ACE else rank


class _Board:
    """My three cards and what the other live hands show."""

    def __init__(self, view: TableView) -> None:
        me = view.me
        assert me is not None
        self.cards = tuple(me.down) + tuple(me.up)
        self.up = tuple(me.up)
        self.theirs = tuple(card for seat in view.opponents for card in seat.up)
        mine = set(self.cards)
        # Every card showing but mine: live opponents' and folded hands' upcards alike.
        self.seen = tuple(card for seat in view.seats for card in seat.up if card not in mine)

    def dead(self, match: Callable[[str], bool]) -> int:
        """How many cards showing elsewhere ``match``."""
        return sum(1 for card in self.seen if match(card))

    def dead_of_ranks(self, ranks: set[int]) -> int:
        return sum(1 for card in self.seen if _rank(card) in ranks)

    @property
    def their_top(self) -> int:
        """The highest rank a live opponent shows (0: nobody shows a card)."""
        return max((_rank(c) for c in self.theirs), default=0)

    @property
    def their_lowest(self) -> int:
        """The lowest ace-low value a live opponent shows (99: nobody)."""
        return min((_low(c) for c in self.theirs), default=99)


def _flush_draw(board: _Board) -> bool:
    """Three of a suit with at most two more of it showing elsewhere."""
    suits = {card[1] for card in board.cards}
    if len(suits) != 1:
        return False
    (suit,) = suits
    return board.dead(lambda c: c[1] == suit) <= 2


def _straight_draw(ranks: Sequence[int], board: _Board) -> bool:
    """Three distinct ranks within five (ace low too), with the cards they need live."""
    for values in (sorted(ranks), sorted(1 if r == ACE else r for r in ranks)):
        if len(set(values)) == 3 and values[-1] - values[0] <= 4:
            lo, hi = values[0], values[-1]
            needed = {r for r in range(max(1, hi - 4), min(ACE, lo + 4) + 1)} - set(values)
            needed_ranks = {ACE if r == 1 else r for r in needed}
            if board.dead_of_ranks(needed_ranks) <= 4:
                return True
    return False


def _stud_high(board: _Board) -> int:
    ranks = [_rank(c) for c in board.cards]
    counts = Counter(ranks)
    top, many = counts.most_common(1)[0]
    if many == 3:
        return PREMIUM
    if many == 2:
        kicker = next(r for r in ranks if r != top)
        dead = board.dead(lambda c: _rank(c) == top)  # the two that would make trips
        above_board = top > board.their_top
        if top >= TEN or (top >= 8 and above_board):
            tier = PREMIUM if above_board and top >= QUEEN else GOOD
        elif above_board or kicker >= JACK:
            tier = PLAYABLE
        else:
            tier = FOLD
        return max(FOLD, tier - dead)
    if _flush_draw(board):
        return GOOD if max(ranks) >= QUEEN else PLAYABLE
    if _straight_draw(ranks, board) and min(ranks) >= 5:
        return PLAYABLE
    big = sorted(ranks)[-2:]
    if big[0] >= QUEEN and big[1] > board.their_top:
        return PLAYABLE
    return FOLD


def _razz(board: _Board) -> int:
    values = [_low(c) for c in board.cards]
    distinct = sorted(set(values))
    showing = _low(board.up[-1]) if board.up else 0
    if showing > 8 and board.their_lowest < showing:
        return FOLD  # a high card showing against a lower one: beaten on the board
    if len(distinct) < 3:  # a pair: two cards to a low
        return PLAYABLE if distinct[-1] <= 5 and showing <= board.their_lowest else FOLD
    worst = distinct[-1]
    if worst <= 6:
        tier = PREMIUM
    elif worst <= 8:
        tier = GOOD
    elif distinct[1] <= 5 and worst <= 10:
        tier = PLAYABLE
    else:
        tier = FOLD
    if tier == PLAYABLE and showing < board.their_lowest:
        tier = GOOD  # the lowest card showing: it leads the betting
    if tier == GOOD and showing > board.their_lowest and worst > 7:
        tier = PLAYABLE
    return tier


def _hi_lo(board: _Board) -> int:
    ranks = [_rank(c) for c in board.cards]
    lows = sorted({_low(c) for c in board.cards if _low(c) <= 8})
    counts = Counter(ranks)
    top, many = counts.most_common(1)[0]
    if many == 3:
        return PREMIUM
    if many == 2 and top == ACE:
        return PREMIUM  # aces: the best high pair, and an ace for the low
    if len(lows) == 3:
        return PREMIUM if lows[0] == 1 or lows[-1] <= 5 else GOOD
    if many == 2:
        if top >= JACK:
            return GOOD if top > board.their_top else PLAYABLE
        kicker = next(_low(c) for c in board.cards if _rank(c) != top)
        return PLAYABLE if top <= 8 and kicker <= 5 else FOLD
    if _flush_draw(board) and len(lows) >= 2:
        return GOOD
    if len(lows) == 2 and lows[0] == 1:
        return PLAYABLE  # an ace and a low card: draws both ways
    if _straight_draw(ranks, board) and len(lows) >= 2:
        return PLAYABLE
    return FOLD


_BOOKS: dict[str, Callable[[_Board], int]] = {
    "seven_card_stud": _stud_high,
    "razz": _razz,
    "seven_card_stud_hi_lo": _hi_lo,
}


def starting_tier(view: TableView) -> int | None:
    """My three cards' tier on third street by the variant's book, or None where the bot
    should play its equity (another street or variant, or cards it cannot see)."""
    book = _BOOKS.get(view.variant)
    if book is None or view.me is None:
        return None
    if view.street != find_variant(view.variant).streets[0].name:
        return None
    board = _Board(view)
    if len(board.cards) != 3 or not board.up:
        return None
    return book(board)
