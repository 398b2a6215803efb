"""The order of play and the dealer's words: who brings it in, who opens each later street,
the pairs and possibles the dealer announces, and whether a pair shows (the open-pair rule).

Like :mod:`engine.betting`, these are functions of the hand (its
:class:`~engine.hand_state.HandState`), which calls them as it deals. While every board is
its upcards, all known, a board is its rank-pattern key (:mod:`engine.plan`), so who opens
and what the dealer says are dictionary lookups and bit tests; a common card or a replayed
record's unknown upcard takes the general path through :mod:`engine.boards`.
"""

from __future__ import annotations

from engine.boards import (
    board_suit_tiebreak,
    board_value,
    describe_board,
    razz_board_suit_tiebreak,
    razz_board_value,
)
from engine.cards import RANK_NAMES, RANK_PLURALS, SUIT_NAMES, UNKNOWN, Card, format_card
from engine.events import Announcement, new_event
from engine.hand_state import HandState
from engine.plan import PAIRED, board_words

_FACE_RANKS = frozenset((9, 10, 11))  # jack, queen, king


def bring_in_seat(hand: HandState) -> int:
    """The seat index whose upcard brings it in (SCS 3, Razz 3), announced by the dealer."""
    up = hand.up
    plan = hand.plan
    rank = plan.bring_in_rank
    if hand.known_boards:
        order: list[int] = []
        for cards in up:
            order.append(rank[cards[-1]])
        designated = order.index(min(order) if plan.bring_in_low else max(order))
    else:
        # An unknown upcard (a replayed record's "??") cannot be ranked: that seat is
        # passed over.
        seen = [i for i in range(hand.n) if up[i][-1] != UNKNOWN] or [0]
        if plan.bring_in_low:
            designated = min(seen, key=lambda i: rank[up[i][-1]])
        else:
            designated = max(seen, key=lambda i: rank[up[i][-1]])
    low_card = up[designated][-1]
    card = format_card(low_card)
    text = (
        f"the {card_words(low_card)} brings it in"
        if low_card != UNKNOWN
        else f"{card} brings it in"
    )
    hand.events.append(new_event(Announcement, ("bring_in", hand.seats[designated], text, card)))
    return designated


def card_words(card: Card) -> str:
    """A card as the dealer names it: "seven of diamonds"."""
    return f"{RANK_NAMES[card >> 2]} of {SUIT_NAMES[card & 3]}"


def board_of(hand: HandState, i: int) -> list[Card]:
    """The board of seat index ``i`` as the order of play reads it: its known upcards, and the
    common card where it counts (a setting)."""
    board = hand.up[i]
    if hand.common and hand.config.common_card_in_order:
        board = board + hand.common
    if UNKNOWN in board:  # a replayed record's unknown upcard shows nothing
        board = [c for c in board if c != UNKNOWN]
    return board


def first_to_act(hand: HandState, since: int) -> int:
    """Who opens a later street, announced with the dealer's words for the best board: the
    seat index to act (the next seat clockwise when the best board is all in). A pair just
    announced (events from ``since``) on that board is said once: "pair of fours is high"."""
    folded, stacks = hand.folded, hand.stacks
    live: list[int] = []
    with_chips: list[int] = []
    for j in range(hand.n):
        if not folded[j]:
            live.append(j)
            if stacks[j]:
                with_chips.append(j)
    # "next_seat": the best board opens; all in, the next seat clockwise does.
    next_seat = hand.config.all_in_opener == "next_seat"
    candidates = live if next_seat else with_chips or live
    plan = hand.plan
    keys = hand.board_keys
    if hand.known_boards and not (hand.common and hand.config.common_card_in_order) and all(keys):
        # Every board is its upcards, all known: values and words by rank pattern.
        boards, up = plan.boards, hand.up
        top = -1
        first = -1
        tied = False
        for j in candidates:
            facts = boards.get(keys[j]) or plan.board_facts(up[j])
            if facts[0] > top:
                top, first, tied = facts[0], j, False
            elif facts[0] == top:
                tied = True
        if tied and plan.by_suit:
            first = _suit_tiebreak(hand, candidates, top)
        text = boards[keys[first]][1]
    else:
        first, text = _first_by_boards(hand, candidates)
    seat = hand.seats[first]
    events = hand.events
    for k in range(len(events) - 1, since - 1, -1):
        said = events[k]
        if type(said) is Announcement and said.seat == seat and said.topic == "pair":
            if said.text in text:
                del events[k]
            break
    events.append(new_event(Announcement, (plan.board_kind, seat, text, None)))
    if not hand.is_active(first):
        following = hand.next_clockwise(first)
        return first if following < 0 else following
    return first


def _suit_tiebreak(hand: HandState, candidates: list[int], top: int) -> int:
    """Among the candidates whose boards value ``top``, the one whose best card by suit
    acts first (SCS 8, Razz 4); the first in position order on an exact tie."""
    if hand.plan.high_board:
        value, tiebreak = board_value, board_suit_tiebreak
    else:
        value, tiebreak = razz_board_value, razz_board_suit_tiebreak
    tied = [j for j in candidates if value(board_of(hand, j)) == top]
    return max(tied, key=lambda j: tiebreak(board_of(hand, j)))


def _first_by_boards(hand: HandState, candidates: list[int]) -> tuple[int, str]:
    """Who opens, and the dealer's words, when a board holds a common card or an unknown one."""
    plan = hand.plan
    by_suit = plan.by_suit
    if plan.high_board:
        value, tiebreak = board_value, board_suit_tiebreak
    else:
        value, tiebreak = razz_board_value, razz_board_suit_tiebreak
    # Only unknown upcards (a replayed record) count as the lowest board.
    scored = [(value(board) if (board := board_of(hand, j)) else -1, j) for j in candidates]
    top = max(scored)[0]
    tied = [j for v, j in scored if v == top]
    if len(tied) > 1 and by_suit and top >= 0:
        first = max(tied, key=lambda j: tiebreak(board_of(hand, j)))
    else:
        first = tied[0]  # by position: the first clockwise from the dealer
    board = board_of(hand, first)
    said = describe_board(board, low=not plan.high_board) if board else "an unknown board"
    return first, board_words(said, plan.board_text)


def announce(hand: HandState, common: Card | None = None) -> None:
    """Dealer announcements of SCS 9: new pairs on board, and possibles if set; after a
    common card (``common``), every pair it makes on a board."""
    if common is not None:
        _announce_common_pairs(hand, common)
        return
    plan = hand.plan
    if hand.common or not plan.any_up[hand.street]:
        return  # no new upcard this street: nothing new to announce
    razz = not plan.high_board
    possibles = hand.config.announce_possibles and not razz
    folded, ups, keys = hand.folded, hand.up, hand.board_keys
    known = hand.known_boards
    for j in range(hand.n):
        up = ups[j]
        if folded[j] or not up or up[-1] == UNKNOWN:
            continue  # an unknown upcard (a replayed "??") announces nothing
        newest = up[-1] >> 2
        if known:  # the count of each rank is in the board key
            paired = (keys[j] >> 3 * newest + 3) & 7 == 2
        else:
            paired = len(up) >= 2 and sum(1 for c in up if c >> 2 == newest) == 2
        if paired and not (razz and newest in _FACE_RANKS):
            said = f"pair of {RANK_PLURALS[newest]}"
            hand.events.append(Announcement("pair", hand.seats[j], said))
        if possibles and len(up) >= 3:
            _announce_possibles(hand, j, up)


def _announce_common_pairs(hand: HandState, common: Card) -> None:
    """The common card plays on every board: each live board it pairs is announced (SCS 9:
    all pairs on board), as a pair dealt to that seat would be."""
    if common == UNKNOWN:
        return  # a replayed record's unknown common card announces nothing
    rank = common >> 2
    if not hand.plan.high_board and rank in _FACE_RANKS:
        return
    said = f"pair of {RANK_PLURALS[rank]}"
    shared = sum(1 for c in hand.common if c >> 2 == rank)
    for j in range(hand.n):
        if hand.folded[j]:
            continue
        if shared + sum(1 for c in hand.up[j] if c >> 2 == rank) == 2:
            hand.events.append(Announcement("pair", hand.seats[j], said))


def _announce_possibles(hand: HandState, j: int, up: list[Card]) -> None:
    """Possible flushes and straights on seat index ``j``'s board, each said once a hand."""
    said = hand.possibles_said(j)
    suits = [c & 3 for c in up]
    if "flush" not in said and max(suits.count(s) for s in range(4)) >= 3:
        said.add("flush")
        hand.events.append(Announcement("possible_flush", hand.seats[j], "possible flush"))
    ranks = {c >> 2 for c in up}
    if 12 in ranks:
        ranks.add(-1)
    if "straight" not in said and any(
        sum(1 for r in ranks if low <= r <= low + 4) >= 3 for low in range(-1, 9)
    ):
        said.add("straight")
        hand.events.append(Announcement("possible_straight", hand.seats[j], "possible straight"))


def pair_showing(hand: HandState, live: list[int]) -> bool:
    """Some live seat shows a pair on its board (the open-pair rule, SCS 5)."""
    if hand.known_boards:
        keys = hand.board_keys
        for j in live:  # noqa: SIM110 - a loop, not a generator: no frame per call
            if keys[j] & PAIRED:
                return True
        return False
    up = hand.up
    return any(len({c >> 2 for c in up[j]}) < len(up[j]) for j in live)


__all__ = ["announce", "board_of", "bring_in_seat", "card_words", "first_to_act", "pair_showing"]
