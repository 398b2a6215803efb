"""One hand of stud as a pure state machine: actions in, events out.

A hand is its configuration, its seats, its deck and the actions applied to it,
so replaying those reproduces it exactly. Nothing here reads a clock or does
I/O; an absent player is the caller's business, told to the hand through
:meth:`Hand.timeout`.

Seats are the table's seat numbers; the hand keeps them in position order
(clockwise from the dealer's left), which is the order cards are dealt in.

Speed: what a configuration fixes (streets, bet sizes, the rule switches, the
bring-in order of every card) is worked out once per :class:`TableConfig`
(:class:`_Plan`); each seat's board is kept as a rank-pattern key as its upcards
are dealt, so who acts first and the dealer's words are dictionary lookups; and
fixed limit, the common structure, builds its legal actions and their ``turn``
event in one step. Rare cases (no and pot limit, the "largest increase" rule,
unknown cards of a replayed record, common cards) take the general paths.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from itertools import compress
from typing import Any

from engine import evaluate as ev
from engine.cards import UNKNOWN, Card, Deck, format_card, format_cards
from engine.errors import IllegalAction, InvalidAction, NotYourTurn
from engine.events import ACTION_KINDS, NO_ACTION, Action, Event, LegalActions
from engine.pots import Pot, Share, award, build_pots
from engine.variants import TableConfig

_FACE_RANKS = frozenset((9, 10, 11))  # jack, queen, king
_new_event = _new_tuple = tuple.__new__
# The kinds on offer, by (facing a bet, wager on offer): built once, shared by every turn.
_KINDS = {
    (facing, wager): ("fold", "call" if facing else "check") + ((wager,) if wager else ())
    for facing in (False, True)
    for wager in (None, "bet", "raise", "complete")
}
_FACING_KINDS = {wager: _KINDS[True, wager] for wager in ("bet", "raise", "complete")}
_OPEN_KINDS = {wager: _KINDS[False, wager] for wager in ("bet", "raise", "complete")}
_FOLD_CALL, _FOLD_CHECK = _KINDS[True, None], _KINDS[False, None]
_BRING_IN_KINDS = ("bring_in", "complete")
_ACTION_KINDS = frozenset(ACTION_KINDS)
_CARD_TEXT = tuple(format_card(c) for c in range(UNKNOWN + 1))  # a replay's "??" last
# A board's rank-pattern key grows by this per upcard: 3 bits of count per rank above 3 bits
# of card count (evaluate's board key), so equal keys mean equal ranks, whatever the suits.
_BOARD_STEP = tuple((1 << 3 * (c >> 2) << 3) + 1 for c in range(UNKNOWN))
# A board key holds a pair (or more) of some rank when a rank's count has its 2 or 4 bit set.
_PAIRED = sum(0b110 << 3 * rank << 3 for rank in range(13))
# Board key -> (value, the dealer's words), high boards and razz boards; filled as met.
_HIGH_BOARDS: dict[int, tuple[int, str]] = {}
_LOW_BOARDS: dict[int, tuple[int, str]] = {}


class _Plan:
    """What a table configuration fixes for every hand dealt under it, worked out once."""

    __slots__ = (
        "streets", "names", "faces", "any_up", "increments", "started", "fixed", "largest",
        "plain_limit", "high_board", "by_suit", "bring_in_low", "bring_in_rank", "cap",
        "count_short", "full_fraction", "boards", "board_kind", "board_text",
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
        self.started: dict[str, Any] = {
            "variant": variant.name,
            "structure": config.structure,
            "ante": config.ante,
            "bring_in": config.bring_in,
            "small_bet": config.small_bet,
            "big_bet": config.big_bet,
        }
        self.fixed = config.structure == "fixed_limit"
        self.largest = self.fixed and config.short_all_in == "largest_increase"
        # Fixed limit under the half-bet rule: legal actions built inline (Hand._set_turn).
        self.plain_limit = self.fixed and not self.largest
        self.high_board = variant.board_order == "high"
        self.by_suit = config.effective_order_tie == "suit"
        self.bring_in_low = config.effective_bring_in_card == "low"
        # Each card's place in the bring-in order: rank (aces low in razz), then suit.
        aces_low = variant.aces_low
        self.bring_in_rank = tuple(
            ((((c >> 2) + 1) % 13 if aces_low else c >> 2) << 2) + (c & 3)
            for c in range(UNKNOWN + 1)
        )
        self.cap = None if config.max_raises is None else config.max_raises + 1
        self.count_short = config.cap_counts_short_all_ins
        self.full_fraction = config.all_in_full_fraction
        self.boards = _HIGH_BOARDS if self.high_board else _LOW_BOARDS
        self.board_kind = "high_board" if self.high_board else "low_board"
        self.board_text = "is high" if self.high_board else "is low"

    def board_facts(self, board: list[Card]) -> tuple[int, str]:
        """(value, announcement text) of a board of known upcards, remembered by rank pattern."""
        key = 0
        for card in board:
            key += _BOARD_STEP[card]
        facts = self.boards.get(key)
        if facts is None:
            high = self.high_board
            value = ev.board_value(board) if high else ev.razz_board_value(board)
            said = ev.describe_board(board, low=not high)
            facts = self.boards[key] = (value, f"{said} {self.board_text}")
        return facts


_PLANS: dict[int, tuple[TableConfig, _Plan]] = {}


def _plan_of(config: TableConfig) -> _Plan:
    """The plan of a configuration, by identity: hashing a whole config costs more than a hand
    of lookups. The entry keeps its config alive, so an id is never reused while cached."""
    entry = _PLANS.get(id(config))
    if entry is not None and entry[0] is config:
        return entry[1]
    if len(_PLANS) >= 256:
        _PLANS.clear()
    plan = _Plan(config)
    _PLANS[id(config)] = (config, plan)
    return plan


class HandResult:
    """How the hand ended: final stacks, net chips and every pot share, by seat."""

    __slots__ = ("stacks", "net", "shares", "pots", "showdown")

    def __init__(
        self,
        stacks: dict[int, int],
        net: dict[int, int],
        shares: list[dict[str, Any]],
        pots: list[dict[str, Any]],
        showdown: bool,
    ) -> None:
        self.stacks = stacks
        self.net = net
        self.shares = shares
        self.pots = pots
        self.showdown = showdown


class Hand:
    """A hand in progress. Construct it to post antes and deal the first street."""

    def __init__(
        self,
        config: TableConfig,
        seats: Sequence[tuple[int, int]],
        deck: Deck,
        shown: Mapping[int, Sequence[Card]] | None = None,
    ) -> None:
        """``shown``: for a replayed record (PHH), the cards each seat tabled at the showdown;
        only those play there, as the record cannot say more. None: every dealt card plays."""
        n = len(seats)
        if n < 2:
            raise IllegalAction("a hand needs at least two players", code="not_enough_players")
        numbers: list[int] = []
        starting: list[int] = []
        for number, stack in seats:
            numbers.append(number)
            starting.append(stack)
        if len(set(numbers)) != n:
            raise InvalidAction("a seat may play once per hand", code="bad_seats")
        for stack in starting:
            if not isinstance(stack, int) or stack <= 0:
                raise InvalidAction("every player needs chips", code="bad_seats")
        plan = self._plan = _plan_of(config)
        if n > config.variant.max_players or n * len(plan.faces[0]) > deck.dealable():
            raise IllegalAction("too many players for one deck", code="too_many_players")
        self.config = config
        self.deck = deck
        self.streets = plan.streets
        self._high_board = plan.high_board
        self._fixed = plan.fixed
        self._largest = plan.largest
        self.n = n
        self.seats: list[int] = numbers
        self.index_of: dict[int, int] = dict(zip(numbers, range(n), strict=True))
        self.starting: list[int] = starting
        self.stacks: list[int] = list(starting)
        self.total: list[int] = [0] * n  # chips put in this hand (folded chips stay in)
        self.bets: list[int] = [0] * n  # chips put in on this street
        self.folded: list[bool] = [False] * n
        self.receiving: list[bool] = [True] * n  # dealt cards (live, or folded unfaced: SCS 12)
        self.acted: list[int] = [-1] * n
        self.cards: list[list[Card]] = []
        self.up: list[list[Card]] = []
        for _ in range(n):
            self.cards.append([])
            self.up.append([])
        self.common: list[Card] = []
        self.events: list[Event] = []
        self.actions: list[Action] = []
        self.street = 0
        self.to_act = -1
        self.over = False
        self._legal: LegalActions | None = None
        self._announced: list[set[str]] | None = None  # possibles said, by seat (on demand)
        self._result: HandResult | None = None
        self._paid: tuple[list[Pot], list[Share], bool] | None = None  # pots, shares, showdown
        self._shown = shown
        self.antes: list[int] = [0] * n  # antes posted (dead money under TableConfig.antes_dead)
        # Each seat's upcards as a rank-pattern key (see _BOARD_STEP); known while every
        # upcard is a known card (a replayed record may deal "??").
        self._board_keys: list[int] = [0] * n
        self._known_boards = True
        self._unfaced_folds = 0  # folded seats still dealt to (SCS 12) until a bet is made
        self._increments: tuple[int, ...] = plan.increments[0]
        self._bet_size = self._increments[0]
        self._plain_limit = plan.plain_limit
        # Fixed limit: the bet and raises a street allows (a setting; no cap: never reached),
        # counting short all-ins or not.
        self._cap = plan.cap if plan.cap is not None else sys.maxsize
        self._count_short = plan.count_short
        self._reset_round()
        self._start()

    # ----------------------------------------------------------------- queries

    def is_over(self) -> bool:
        return self.over

    def result(self) -> HandResult:
        """Built when first asked for: a hand played out for its events alone never needs it."""
        if self._result is None:
            if self._paid is None:
                raise IllegalAction("the hand is not over", code="hand_in_progress")
            self._result = self._build_result(*self._paid)
        return self._result

    def seat_to_act(self) -> int | None:
        return None if self.to_act < 0 else self.seats[self.to_act]

    def pot_total(self) -> int:
        return sum(self.total)

    def legal_actions(self) -> LegalActions:
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    # ----------------------------------------------------------------- inputs

    def apply(self, action: Action) -> list[Event]:
        """Apply one seat's action; an illegal or malformed one raises and changes nothing."""
        seat, kind, amount = action
        legal = self._legal
        # The usual action passes in one test: the seat to act, a kind on offer, and no amount,
        # or one of the street totals on offer for the wager (fields 0, 1, 4 and 7 of the
        # legal actions: seat, kinds, wager, to_choices). Anything else is checked in full.
        if (
            legal is None
            or seat != legal[0]
            or kind not in legal[1]
            or (
                kind == legal[4]
                if amount is None
                else kind != legal[4] or type(amount) is not int or amount not in legal[7]
            )
        ):
            amount, legal = self._check(seat, kind, amount)
        events = self.events
        mark = len(events)
        same = type(action) is Action and amount == action[2]
        self.actions.append(action if same else _new_tuple(Action, (seat, kind, amount)))
        self._act(self.to_act, kind, amount, legal, False)
        return events[mark:]

    def _check(self, seat: int, kind: str, amount: int | None) -> tuple[int | None, LegalActions]:
        """Every check of an action, in order; raises on the first failed. Returns the amount
        (a wager's default filled in) and the legal actions it was checked against."""
        if kind not in _ACTION_KINDS:
            raise InvalidAction(f"unknown action {kind!r}", code="unknown_action")
        if amount is not None and (not isinstance(amount, int) or isinstance(amount, bool)):
            raise InvalidAction("amount must be a whole number of chips", code="bad_amount")
        if self.over:
            raise IllegalAction("the hand is over", code="hand_over")
        i = self.index_of.get(seat, -1)
        if i != self.to_act:
            if i < 0:
                raise IllegalAction(f"seat {seat} is not in this hand", code="not_in_hand")
            raise NotYourTurn(f"seat {self.seats[self.to_act]} is to act, not seat {seat}")
        legal = self._legal or self.legal_actions()
        if kind not in legal.kinds:
            raise IllegalAction(
                f"{kind} is not allowed now; allowed: {', '.join(legal.kinds)}",
                code="action_not_allowed",
            )
        if kind == legal.wager:
            if amount is None:
                amount = legal.to_choices[0] if legal.to_choices else legal.min_to
            if not legal.allows(kind, amount):
                raise IllegalAction(
                    f"{kind} to {amount} is not allowed", code="bad_amount"
                )
        elif amount is not None:
            if kind not in ("call", "bring_in"):
                raise InvalidAction(f"{kind} takes no amount", code="bad_amount")
            due = legal.call if kind == "call" else legal.bring_in
            if amount != due:  # a call or bring-in may name its chips, but only the right ones
                raise IllegalAction(f"{kind} is {due} chips, not {amount}", code="bad_amount")
        return amount, legal

    def timeout(self, seat: int) -> list[Event]:
        """The seat's clock ran out: post a forced bring-in, check if possible, else fold."""
        if self.over or self.to_act < 0 or self.seats[self.to_act] != seat:
            raise NotYourTurn(f"seat {seat} is not to act")
        legal = self.legal_actions()
        if "bring_in" in legal.kinds:
            kind = "bring_in"
        elif "check" in legal.kinds:
            kind = "check"
        else:
            kind = "fold"
        mark = len(self.events)
        self.actions.append(Action(seat, kind, None))
        self._act(self.to_act, kind, None, legal, True)
        return self.events[mark:]

    # ----------------------------------------------------------------- start

    def _emit(self, kind: str, data: dict[str, Any], to: int | None = None) -> None:
        self.events.append(_new_event(Event, (kind, data, to)))

    def _start(self) -> None:
        config = self.config
        started = self._plan.started.copy()
        started["seats"] = entries = []
        for seat, stack in zip(self.seats, self.stacks, strict=True):
            entries.append({"seat": seat, "stack": stack})
        self._emit("hand_started", started)
        by_position = config.ante_by_position
        if by_position is not None and len(by_position) != self.n:
            raise InvalidAction("ante_by_position needs one ante per player", code="bad_seats")
        if config.ante or by_position:
            seats, stacks, total, antes = self.seats, self.stacks, self.total, self.antes
            events = self.events
            for i in range(self.n):
                ante = config.ante if by_position is None else by_position[i]
                if not ante:
                    continue
                stack = stacks[i]
                paid = ante if ante < stack else stack
                stacks[i] = stack - paid
                total[i] += paid
                antes[i] = paid
                events.append(_new_event(Event, (
                    "ante", {"seat": seats[i], "amount": paid, "all_in": stack == paid}, None
                )))
            if config.trim_antes:
                # No one can match an ante above the second-highest: the excess goes back.
                cutoff = sorted(antes)[-2]
                for i in range(self.n):
                    excess = antes[i] - cutoff
                    if excess > 0:
                        antes[i] -= excess
                        total[i] -= excess
                        stacks[i] += excess
                        self._emit("uncalled_returned", {"seat": seats[i], "amount": excess})
        self._deal_street()
        self._start_first_round()

    def _deal_street(self) -> None:
        plan = self._plan
        street = self.street
        receiving = self.receiving
        takers = list(compress(range(self.n), receiving))
        faces = plan.faces[street]
        per_seat = len(faces)
        dealt, common, procedure = self.deck.deal_round(
            per_seat * len(takers), self.config.burn_cards and street > 0
        )
        name = plan.names[street]
        if procedure is not None:
            self._emit("deck_procedure", {"street": name, "procedure": procedure})
        if common is not None:
            self.common.append(common)
            self._emit("common_card", {"street": name, "card": format_card(common)})
            return
        text = _CARD_TEXT
        step = _BOARD_STEP
        seats, folded, cards, ups = self.seats, self.folded, self.cards, self.up
        keys = self._board_keys
        events = self.events
        public: list[dict[str, Any]] = []
        entry: dict[str, Any]
        if per_seat == 1 and faces[0]:  # one upcard each (fourth to sixth street)
            for card, i in zip(dealt, takers, strict=True):
                cards[i].append(card)
                ups[i].append(card)
                if card == UNKNOWN:
                    self._known_boards = False
                else:
                    keys[i] += step[card]
                entry = {"seat": seats[i], "up": [text[card]], "down": 0}
                if folded[i]:
                    entry["dead"] = True
                public.append(entry)
        elif per_seat == 1:  # one down card each (the river)
            for card, i in zip(dealt, takers, strict=True):
                seat = seats[i]
                cards[i].append(card)
                entry = {"seat": seat, "up": [], "down": 1}
                if folded[i]:
                    entry["dead"] = True
                public.append(entry)
                own = {"seat": seat, "street": name, "cards": [text[card]]}
                events.append(_new_event(Event, ("down_cards", own, seat)))
        else:
            count = len(takers)
            known = True
            for n, i in enumerate(takers):
                seat = seats[i]
                mine = dealt[n::count]
                cards[i] += mine
                up = ups[i]
                shown: list[str] = []
                down: list[str] = []
                for card, face_up in zip(mine, faces, strict=True):
                    if not face_up:
                        down.append(text[card])
                        continue
                    up.append(card)
                    shown.append(text[card])
                    if card == UNKNOWN:
                        known = False
                    else:
                        keys[i] += step[card]
                entry = {"seat": seat, "up": shown, "down": len(down)}
                if folded[i]:
                    entry["dead"] = True
                public.append(entry)
                if down:
                    events.append(_new_event(
                        Event, ("down_cards", {"seat": seat, "street": name, "cards": down}, seat)
                    ))
            if not known:
                self._known_boards = False
        events.append(_new_event(Event, ("street_dealt", {"street": name, "deals": public}, None)))

    # ----------------------------------------------------------------- betting rounds

    def _reset_round(self) -> None:
        n = self.n
        self.bets = [0] * n
        self.acted = [-1] * n
        self.current_bet = 0  # the amount each seat must reach to stay in
        self.bet_level = 0  # the last full bet or raise; a full raise builds on it
        self.bets_made = 0  # the bet (or completion) and full raises this street
        self.raise_count = 0  # bumped by each full bet or raise: reopens the betting
        self.last_raise = self.config.small_bet  # pot/no limit: size of the last full raise
        self.big_mode = False  # fixed limit: the big bet has been made on an open-pair street
        self.open_pair = False
        self.last_aggressor = -1
        self.first_actor = -1
        self.bring_in_pending = False
        self.bring_in_seat = -1
        self.wagers = 0  # every completion, bet and raise this street, short all-ins too
        self.largest_increase = 0  # "largest_increase" rule: the largest wager increase so far
        self.short_run = 0  # "largest_increase" rule: short all-in increases since a full one
        self._legal = None
        self._increments = self._plan.increments[self.street]
        self._bet_size = self._increments[0]  # fixed limit: the one size, 0 while there are two

    def _active(self, i: int) -> bool:
        return not self.folded[i] and self.stacks[i] > 0

    def _active_count(self) -> int:
        folded, stacks = self.folded, self.stacks
        count = 0
        for i in range(self.n):
            if not folded[i] and stacks[i]:
                count += 1
        return count

    def _heads_up(self) -> bool:
        """At most two seats are in with chips (the fixed-limit raise cap may not apply)."""
        folded, stacks = self.folded, self.stacks
        count = 0
        for i in range(self.n):
            if not folded[i] and stacks[i]:
                count += 1
                if count > 2:
                    return False
        return True

    def _next_clockwise(self, start: int) -> int:
        n = self.n
        for step in range(1, n + 1):
            j = (start + step) % n
            if self._active(j):
                return j
        return -1

    def _start_first_round(self) -> None:
        config = self.config
        up = self.up
        rank = self._plan.bring_in_rank
        if self._known_boards:
            order: list[int] = []
            for cards in up:
                order.append(rank[cards[-1]])
            designated = order.index(min(order) if self._plan.bring_in_low else max(order))
        else:
            # An unknown upcard (a replayed record's "??") cannot be ranked: that seat is
            # passed over.
            seen = [i for i in range(self.n) if up[i][-1] != UNKNOWN] or [0]
            if self._plan.bring_in_low:
                designated = min(seen, key=lambda i: rank[up[i][-1]])
            else:
                designated = max(seen, key=lambda i: rank[up[i][-1]])
        self.bring_in_seat = designated
        self.first_actor = designated
        card = _CARD_TEXT[up[designated][-1]]
        self._emit(
            "announcement",
            {
                "kind": "bring_in",
                "seat": self.seats[designated],
                "card": card,
                "text": f"{card} brings it in",
            },
        )
        if config.bring_in == 0 or self._active_count() < 2:
            # No forced bet (Hoyle's no-ante game), or nobody left to bet against: the
            # designated seat simply opens; all in for the ante, the next seat opens instead.
            live = self.stacks[designated] > 0
            self._open_round(designated if live else self._next_clockwise(designated))
            return
        if self.stacks[designated] == 0 and config.all_in_opener == "next_seat":
            # All in for the ante: the next seat clockwise must bring in or complete.
            self._emit(
                "announcement",
                {
                    "kind": "bring_in_all_in",
                    "seat": self.seats[designated],
                    "text": "all in for the ante; the next player brings it in",
                },
            )
            designated = self._next_clockwise(designated)
            self.bring_in_seat = designated
        elif self.stacks[designated] == 0:
            # All in for the ante: the next seat acts as if the bring-in had been posted
            # (SCS 11 alternate, Robert's 4).
            self.current_bet = config.bring_in
            self._emit(
                "announcement",
                {
                    "kind": "bring_in_all_in",
                    "seat": self.seats[designated],
                    "text": "all in for the ante; the next player acts on the bring-in",
                },
            )
            self._open_round(self._next_clockwise(designated))
            return
        self.bring_in_pending = True
        self._set_turn(designated)

    def _open_round(self, first: int) -> None:
        if first < 0 or self._active_count() < 2:
            self._end_round()
            return
        self._set_turn(first)

    def _set_turn(self, i: int) -> None:
        """Seat index ``i`` is to act: its legal actions, and the ``turn`` event showing them."""
        self.to_act = i
        if not self._plain_limit:
            self._set_general_turn()
            return
        if self.bring_in_pending:
            self._set_bring_in_turn(i)
            return
        # Fixed limit, betting open: what _compute_legal, _may_raise and _wager_targets
        # work out, in one step, with the event data built alongside.
        seat = self.seats[i]
        stack = self.stacks[i]
        bet = self.bets[i]
        current = self.current_bet
        owe = current - bet
        call = owe if owe < stack else stack
        target = 0
        if bet + stack > current:
            acted = self.acted[i]
            # A seat that acted since the last full bet or raise may not reopen the betting.
            if acted != self.raise_count or acted < 0:
                made = self.wagers if self._count_short else self.bets_made
                if made >= self._cap and not (self.config.uncapped_heads_up and self._heads_up()):
                    pass  # the raises are capped: no wager on offer
                elif self._bet_size:
                    target = self.bet_level + self._bet_size
                    if target > bet + stack:
                        target = bet + stack
                    if target <= current:
                        target = 0
                else:  # the open-pair choice of the small or the big bet
                    self._set_general_turn()
                    return
        if target:
            wager = "bet" if current == 0 else "complete" if self.bet_level == 0 else "raise"
            if owe > 0:
                kinds = _FACING_KINDS[wager]
                data = {
                    "seat": seat, "kinds": list(kinds), "call": call, "wager": wager,
                    "min_to": target, "max_to": target, "to_choices": [target],
                }
            else:
                kinds = _OPEN_KINDS[wager]
                data = {
                    "seat": seat, "kinds": list(kinds), "wager": wager,
                    "min_to": target, "max_to": target, "to_choices": [target],
                }
            self._legal = _new_tuple(
                LegalActions, (seat, kinds, call, 0, wager, target, target, (target,))
            )
        elif owe > 0:
            data = {"seat": seat, "kinds": ["fold", "call"], "call": call}
            self._legal = _new_tuple(LegalActions, (seat, _FOLD_CALL, call, 0, None, 0, 0, ()))
        else:
            data = {"seat": seat, "kinds": ["fold", "check"]}
            self._legal = _new_tuple(LegalActions, (seat, _FOLD_CHECK, call, 0, None, 0, 0, ()))
        self.events.append(_new_event(Event, ("turn", data, None)))

    def _set_bring_in_turn(self, i: int) -> None:
        """Fixed limit: the bring-in, or completing to the small bet (all in when short),
        as _compute_legal gives them, with the ``turn`` event built alongside."""
        config = self.config
        seat = self.seats[i]
        stack = self.stacks[i]
        bring_in = config.bring_in
        posts = bring_in if bring_in < stack else stack
        reach = self.bets[i] + stack
        if reach > bring_in and bring_in < config.small_bet and self._bet_size:
            target = self.bet_level + self._bet_size
            if target > reach:
                target = reach
            if target > self.current_bet:
                self._legal = _new_tuple(LegalActions, (
                    seat, _BRING_IN_KINDS, 0, posts, "complete", target, target, (target,)
                ))
                data = {
                    "seat": seat, "kinds": ["bring_in", "complete"], "bring_in": posts,
                    "wager": "complete", "min_to": target, "max_to": target,
                    "to_choices": [target],
                }
                self.events.append(_new_event(Event, ("turn", data, None)))
                return
        self._set_general_turn()

    def _set_general_turn(self) -> None:
        """The legal actions of the seat to act by the general rules, and their ``turn``."""
        legal = self._legal = self._compute_legal()
        self.events.append(_new_event(Event, ("turn", legal.as_dict(), None)))

    def _compute_legal(self) -> LegalActions:
        i = self.to_act
        if i < 0 or self.over:
            return NO_ACTION
        config = self.config
        seat = self.seats[i]
        stack = self.stacks[i]
        reach = self.bets[i] + stack  # the most this seat can have in on this street
        if self.bring_in_pending:
            bring_in = min(config.bring_in, stack)
            kinds: tuple[str, ...] = ("bring_in",)
            # Under "largest_increase" a short stack may also complete, all in, for less.
            if (reach > config.bring_in or self._largest) and config.bring_in < config.small_bet:
                targets = self._wager_targets(i, reach)
                return _new_tuple(LegalActions, (
                    seat, ("bring_in", "complete"), 0, bring_in, "complete", targets[0],
                    targets[-1], targets if self._fixed else (),
                ))
            return _new_tuple(LegalActions, (seat, kinds, 0, bring_in, None, 0, 0, ()))
        current = self.current_bet
        owe = current - self.bets[i]
        call = owe if owe < stack else stack
        if reach > current and self._may_raise(i):
            to = self._wager_targets(i, reach)
            if to:
                if current == 0:
                    wager = "bet"
                elif self.bet_level == 0 if not self._largest else self._completing():
                    wager = "complete"
                else:
                    wager = "raise"
                return _new_tuple(LegalActions, (
                    seat, _KINDS[owe > 0, wager], call, 0, wager, to[0], to[-1],
                    to if self._fixed else (),
                ))
        return _new_tuple(LegalActions, (seat, _KINDS[owe > 0, None], call, 0, None, 0, 0, ()))

    def _completing(self) -> bool:
        """First round, bring-in posted (or due) and nothing wagered yet: a wager completes."""
        return self.street == 0 and self.config.bring_in > 0 and self.wagers == 0

    def _may_raise(self, i: int) -> bool:
        current = self.current_bet
        if self._largest:
            # No-limit style: the seat must face at least the largest increase, and a run of
            # short all-ins smaller than it does not reopen the betting for who already acted;
            # nor is a raise offered that nobody could call.
            if not any(
                j != i and not self.folded[j] and self.bets[j] + self.stacks[j] > current
                for j in range(self.n)
            ):
                return False
            if min(current - self.bets[i], self.stacks[i]) < self.largest_increase:
                return False
            if self.short_run and self.acted[i] == self.raise_count:
                return False
        elif self.acted[i] == self.raise_count and self.acted[i] >= 0:
            return False  # only a short all-in since this seat acted: no reopening
        cap = self.config.max_raises
        made = self.wagers if self.config.cap_counts_short_all_ins else self.bets_made
        if not self._fixed or cap is None or made < cap + 1:
            return True
        if self.config.uncapped_heads_up:
            return self._heads_up()
        return False

    def _update_increments(self) -> None:
        """Fixed limit: the bet sizes of this street, after the open-pair rule (SCS 5) moved."""
        config = self.config
        if self.streets[self.street].big_bet or self.big_mode:
            self._increments = (config.big_bet,)
        elif self.open_pair:
            self._increments = (config.small_bet, config.big_bet)
        else:
            self._increments = (config.small_bet,)
        self._bet_size = self._increments[0] if len(self._increments) == 1 else 0

    def _wager_targets(self, i: int, reach: int) -> tuple[int, ...]:
        """Street totals the seat may bet, complete or raise to (all in when short)."""
        current = self.current_bet
        if self._largest:
            if self._completing():
                target = self.config.small_bet
            else:
                target = current + max(self.largest_increase, self._increments[0])
            if target <= reach:
                return (target,)
            return (reach,) if reach > current else ()
        if self._fixed:
            increments = self._increments
            if len(increments) == 1:
                target = self.bet_level + increments[0]
                if target > reach:
                    target = reach
                return (target,) if target > current else ()
            targets = [self.bet_level + inc for inc in increments]
            allowed = [t for t in targets if t <= reach]
            if len(allowed) < len(targets) and reach > current:
                allowed.append(reach)
            return tuple(sorted(set(t for t in allowed if t > current)))
        small = self.config.small_bet
        if self.bet_level == 0:
            low = small if current < small else current + small
        else:
            low = current + self.last_raise
        if self.config.structure == "pot_limit":
            owe = current - self.bets[i]
            high = current + self.pot_total() + owe
        else:
            high = reach
        high = min(high, reach)
        low = min(low, reach)
        if low <= current:
            return ()
        return (low, max(low, high))

    def _act(self, i: int, kind: str, amount: int | None, legal: LegalActions, timed: bool) -> None:
        """Carry out a checked action of seat index ``i``, emit it, and pass the turn on."""
        seat = self.seats[i]
        self._legal = None
        stacks, bets = self.stacks, self.bets
        if kind == "call":
            stack = stacks[i]
            paid = self.current_bet - bets[i]
            if paid > stack:
                paid = stack
            stack -= paid
            stacks[i] = stack
            to = bets[i] = bets[i] + paid
            self.total[i] += paid
            self.acted[i] = self.raise_count
            data: dict[str, Any] = {
                "seat": seat, "action": kind, "amount": paid, "to": to, "stack": stack,
            }
        elif kind == "check":
            self.acted[i] = self.raise_count
            stack = stacks[i]
            data = {"seat": seat, "action": kind, "to": bets[i], "stack": stack}
        elif kind == "fold":
            self.folded[i] = True
            stack = stacks[i]
            if self.current_bet <= bets[i] and self.config.deal_to_unfaced_folds:
                # Folded without facing a bet: keep dealing to the seat (SCS 12).
                self._unfaced_folds += 1
                data = {
                    "seat": seat, "action": kind, "dead_seat": True, "to": bets[i], "stack": stack,
                }
            else:
                self._stop_dealing(i)
                data = {"seat": seat, "action": kind, "to": bets[i], "stack": stack}
        elif kind == "bring_in":
            paid = self._bring_in(i, legal.bring_in)
            stack = stacks[i]
            data = {"seat": seat, "action": kind, "amount": paid, "to": bets[i], "stack": stack}
        else:
            assert amount is not None
            paid = self._wager(i, amount)
            stack = stacks[i]
            data = {"seat": seat, "action": kind, "amount": paid, "to": amount, "stack": stack}
        if stack == 0 and kind != "fold":
            data["all_in"] = True
        if timed:  # the flag follows the action's name
            flagged: dict[str, Any] = {"seat": seat, "action": kind, "timeout": True}
            flagged.update(data)
            data = flagged
        self.events.append(_new_event(Event, ("action", data, None)))

        # Pass the turn to the next seat clockwise that must act, if any; else the round ends.
        folded, acted = self.folded, self.acted
        if folded.count(False) == 1:
            self._end_round()
            return
        n = self.n
        current = self.current_bet
        raise_count = self.raise_count
        j = i
        for _ in range(n):
            j += 1
            if j == n:
                j = 0
            if folded[j] or not stacks[j]:
                continue
            if acted[j] != raise_count or bets[j] < current:
                if bets[j] >= current:
                    # Owing nothing, a seat acts only if someone else can still bet; the
                    # bring-in's option (SCS 4 alternate) only while nobody completed.
                    others = False
                    for k in range(n):
                        if k != j and not folded[k] and stacks[k]:
                            others = True
                            break
                    if not others or (acted[j] == -2 and self.bets_made):
                        continue
                self._set_turn(j)
                return
        self._end_round()

    def _stop_dealing(self, i: int) -> None:
        """A folded seat gets no more cards; its hand may go back in if the deck runs short."""
        self.receiving[i] = False
        if self.config.reuse_folded_cards:
            self.deck.set_aside(self.cards[i])

    def _put(self, i: int, chips: int) -> None:
        self.stacks[i] -= chips
        self.bets[i] += chips
        self.total[i] += chips

    def _bring_in(self, i: int, paid: int) -> int:
        """Post the bring-in (``paid`` chips, fewer when short); returns them."""
        config = self.config
        self._put(i, paid)
        # Others enter for the full bring-in, or for what a short one posted (a setting).
        full = config.short_bring_in_call == "full"
        self.current_bet = config.bring_in if full else paid
        self.bring_in_pending = False
        if config.bring_in >= config.small_bet:
            # A forced bet of a full bet opens the betting (Hoyle's five-card stud).
            self.bet_level = config.bring_in
            self.bets_made = 1
            self.raise_count += 1
        self.acted[i] = -2 if config.bring_in_may_complete_later else self.raise_count
        return paid

    def _wager(self, i: int, to: int) -> int:
        """Complete, bet or raise seat index ``i`` to the street total ``to``; returns the chips
        it adds."""
        paid = to - self.bets[i]
        self._put(i, paid)
        self.bring_in_pending = False
        self.wagers += 1
        if self._largest:
            increase = to - self.current_bet
            full = increase >= self.largest_increase
            self.largest_increase = max(self.largest_increase, increase)
            # Short all-ins in a row reopen the betting once they add up to the largest increase.
            self.short_run = 0 if self.stacks[i] else self.short_run + increase
            if self.short_run >= self.largest_increase:
                self.short_run = 0
        elif self._fixed:
            increase = to - self.bet_level
            full = increase >= min(self._increments) * self._plan.full_fraction
            if full and self.open_pair and increase >= self.config.big_bet:
                self.big_mode = True
                self._update_increments()
        elif self.bet_level == 0:
            full = to >= self.config.small_bet
            if full:
                self.last_raise = to
        else:
            full = to - self.current_bet >= self.last_raise
            if full:
                self.last_raise = to - self.current_bet
        if full:
            self.bet_level = to
            self.bets_made += 1
            self.raise_count += 1
        if self._unfaced_folds:
            # A bet is made: seats that folded unfaced stop receiving cards (SCS 12).
            self._unfaced_folds = 0
            for j in range(self.n):
                if self.folded[j] and self.receiving[j]:
                    self._stop_dealing(j)
        if to > self.current_bet:
            self.current_bet = to
        self.acted[i] = self.raise_count
        self.last_aggressor = i
        return paid

    def _end_round(self) -> None:
        self.to_act = -1
        self._legal = None
        self._return_uncalled()
        folded = self.folded
        live = []
        for j in range(self.n):
            if not folded[j]:
                live.append(j)
        if len(live) == 1:
            self._finish(live, showdown=False)
            return
        streets = self.streets
        while self.street + 1 < len(streets):
            self.street += 1
            self._reset_round()
            self._deal_street()
            self._announce()
            first = self._first_to_act()
            self.first_actor = first
            if self._fixed and streets[self.street].open_pair_option:
                self.open_pair = self.config.open_pair_big_bet and self._pair_showing(live)
                self._update_increments()
            stacks = self.stacks
            with_chips = 0
            for j in live:
                if stacks[j] > 0:
                    with_chips += 1
            if with_chips >= 2:
                self._set_turn(first)
                return
        self._showdown(live)

    def _pair_showing(self, live: list[int]) -> bool:
        """Some live seat shows a pair on its board (the open-pair rule, SCS 5)."""
        if self._known_boards:
            keys = self._board_keys
            for j in live:  # noqa: SIM110 - a loop, not a generator: no frame per call
                if keys[j] & _PAIRED:
                    return True
            return False
        up = self.up
        return any(len({c >> 2 for c in up[j]}) < len(up[j]) for j in live)

    def _return_uncalled(self) -> None:
        bets = self.bets
        high = max(bets)
        if not high:
            return
        top = bets.index(high)  # the first seat with the most in
        excess = high - sorted(bets)[-2]
        if excess > 0:
            bets[top] -= excess
            self.total[top] -= excess
            self.stacks[top] += excess
            self._emit("uncalled_returned", {"seat": self.seats[top], "amount": excess})

    # ----------------------------------------------------------------- order of play

    def _board(self, i: int) -> list[Card]:
        board = self.up[i]
        if self.common and self.config.common_card_in_order:
            board = board + self.common
        if UNKNOWN in board:  # a replayed record's unknown upcard shows nothing
            board = [c for c in board if c != UNKNOWN]
        return board

    def _first_to_act(self) -> int:
        folded, stacks = self.folded, self.stacks
        live: list[int] = []
        with_chips: list[int] = []
        for j in range(self.n):
            if not folded[j]:
                live.append(j)
                if stacks[j]:
                    with_chips.append(j)
        # "next_seat": the best board opens; all in, the next seat clockwise does.
        next_seat = self.config.all_in_opener == "next_seat"
        candidates = live if next_seat else with_chips or live
        plan = self._plan
        keys = self._board_keys
        if (
            self._known_boards
            and not (self.common and self.config.common_card_in_order)
            and all(keys)
        ):
            # Every board is its upcards, all known: values and words by rank pattern.
            boards, up = plan.boards, self.up
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
                first = self._suit_tiebreak(candidates, top)
            text = boards[keys[first]][1]
        else:
            first, text = self._first_by_boards(candidates)
        self._emit(
            "announcement", {"kind": plan.board_kind, "seat": self.seats[first], "text": text}
        )
        if not self._active(first):
            following = self._next_clockwise(first)
            return first if following < 0 else following
        return first

    def _suit_tiebreak(self, candidates: list[int], top: int) -> int:
        """Among the candidates whose boards value ``top``, the one whose best card by suit
        acts first (SCS 8, Razz 4); the first in position order on an exact tie."""
        if self._high_board:
            value, tiebreak = ev.board_value, ev.board_suit_tiebreak
        else:
            value, tiebreak = ev.razz_board_value, ev.razz_board_suit_tiebreak
        tied = [j for j in candidates if value(self._board(j)) == top]
        return max(tied, key=lambda j: tiebreak(self._board(j)))

    def _first_by_boards(self, candidates: list[int]) -> tuple[int, str]:
        """Who opens, and the dealer's words, when a board holds a common card or an unknown one."""
        by_suit = self._plan.by_suit
        if self._high_board:
            value, tiebreak = ev.board_value, ev.board_suit_tiebreak
        else:
            value, tiebreak = ev.razz_board_value, ev.razz_board_suit_tiebreak
        # Only unknown upcards (a replayed record) count as the lowest board.
        scored = [(value(board) if (board := self._board(j)) else -1, j) for j in candidates]
        top = max(scored)[0]
        tied = [j for v, j in scored if v == top]
        if len(tied) > 1 and by_suit and top >= 0:
            first = max(tied, key=lambda j: tiebreak(self._board(j)))
        else:
            first = tied[0]  # by position: the first clockwise from the dealer
        board = self._board(first)
        said = ev.describe_board(board, low=not self._high_board) if board else "an unknown board"
        return first, f"{said} {self._plan.board_text}"

    def _announce(self) -> None:
        """Dealer announcements of SCS 9: new pairs on board, and possibles if set."""
        if self.common or not self._plan.any_up[self.street]:
            return  # no new upcard this street: nothing new to announce
        razz = not self._high_board
        possibles = self.config.announce_possibles and not razz
        folded, ups, keys = self.folded, self.up, self._board_keys
        known = self._known_boards
        for j in range(self.n):
            up = ups[j]
            if folded[j] or not up or up[-1] == UNKNOWN:
                continue  # an unknown upcard (a replayed "??") announces nothing
            newest = up[-1] >> 2
            if known:  # the count of each rank is in the board key
                paired = (keys[j] >> 3 * newest + 3) & 7 == 2
            else:
                paired = len(up) >= 2 and sum(1 for c in up if c >> 2 == newest) == 2
            if paired and not (razz and newest in _FACE_RANKS):
                self._emit(
                    "announcement",
                    {
                        "kind": "pair",
                        "seat": self.seats[j],
                        "text": f"pair of {ev.RANK_PLURALS[newest]}",
                    },
                )
            if possibles and len(up) >= 3:
                self._announce_possibles(j, up)

    def _announce_possibles(self, j: int, up: list[Card]) -> None:
        if self._announced is None:
            self._announced = [set() for _ in range(self.n)]
        said = self._announced[j]
        suits = [c & 3 for c in up]
        if "flush" not in said and max(suits.count(s) for s in range(4)) >= 3:
            said.add("flush")
            self._emit(
                "announcement",
                {"kind": "possible_flush", "seat": self.seats[j], "text": "possible flush"},
            )
        ranks = {c >> 2 for c in up}
        if 12 in ranks:
            ranks.add(-1)
        if "straight" not in said and any(
            sum(1 for r in ranks if low <= r <= low + 4) >= 3 for low in range(-1, 9)
        ):
            said.add("straight")
            self._emit(
                "announcement",
                {"kind": "possible_straight", "seat": self.seats[j], "text": "possible straight"},
            )

    # ----------------------------------------------------------------- the end

    def _showdown(self, live: list[int]) -> None:
        config = self.config
        showdown = config.variant.showdown
        hands = {j: self._showdown_cards(j) for j in live}
        # A hand holding an unknown card, or too few cards (a record that shows only some),
        # cannot be valued: it never wins.
        valued = {
            j: c for j, c in hands.items()
            if len(c) >= 5 and UNKNOWN not in c and len(set(c)) == len(c)
        }
        high: list[int | None] = [None] * self.n
        low: list[int | None] | None = None
        if showdown == "razz":
            for j, cards in valued.items():
                high[j] = ev.razz_value(cards)
        else:
            for j, cards in valued.items():
                high[j] = ev.high_value(cards)
            if showdown == "high_low":
                low = [None] * self.n
                for j, cards in valued.items():
                    if config.kansas_city_low:
                        low[j] = ev.deuce_seven_low_value(cards, config.low_qualifier)
                    else:
                        low[j] = ev.low8_value(cards, config.low_qualifier)
        pots = self._pots([not f for f in self.folded])
        if config.pots_by_contenders:
            contenders = [False] * self.n
            for pot in pots:
                for values in (high, low):
                    if values is None:
                        continue
                    known = [v for j in pot.eligible if (v := values[j]) is not None]
                    for j in pot.eligible:
                        if known and values[j] == max(known):
                            contenders[j] = True
            if any(contenders):
                pots = self._pots(contenders)
        # Showdown order: the last aggressor of the final round, else who acted first.
        start = self.last_aggressor if self.last_aggressor >= 0 else self.first_actor
        if start < 0 or self.folded[start]:
            start = live[0]
        order = [(start + k) % self.n for k in range(self.n)]
        order = [j for j in order if j in hands]
        shown: list[int] = []
        for j in order:
            must_show = not shown or self.stacks[j] == 0 or self._can_win(j, shown, pots, high, low)
            if must_show:
                shown.append(j)
                data: dict[str, Any] = {
                    "seat": self.seats[j],
                    "cards": [format_card(c) for c in self.cards[j]],
                }
                if high[j] is None:
                    data["high" if showdown != "razz" else "low"] = None
                elif showdown == "razz":
                    data["low"] = ev.describe_razz(high[j])  # type: ignore[arg-type]
                else:
                    data["high"] = ev.describe_high(high[j])  # type: ignore[arg-type]
                    if low is not None:
                        lv = low[j]
                        data["low"] = None if lv is None else (
                            ev.describe_deuce_seven(lv) if config.kansas_city_low
                            else ev.describe_low8(lv)
                        )
                self._emit("showdown", data)
            else:
                self._emit("muck", {"seat": self.seats[j]})
        winners_high = [v if j in shown else None for j, v in enumerate(high)]
        winners_low = (
            None if low is None else [v if j in shown else None for j, v in enumerate(low)]
        )
        tie_rule = config.odd_chip_tie
        shares = award(
            pots, winners_high, winners_low, self._odd_chip_order, tie_rule,
            lump_odd_chips=tie_rule == "lowest_position",
        )
        self._pay(pots, shares, showdown=True)

    def _pots(self, eligible: list[bool]) -> list[Pot]:
        """Side pots among the ``eligible`` seats; dead antes (a setting) go to the main pot."""
        if not self.config.antes_dead:
            return build_pots(self.total, eligible)
        chips = [t - a for t, a in zip(self.total, self.antes, strict=True)]
        return build_pots(chips, eligible, dead=sum(self.antes))

    def _showdown_cards(self, i: int) -> list[Card]:
        """The cards that play for seat index ``i``: dealt ones, or those a record shows."""
        if self._shown is None:
            return self.cards[i] + self.common
        return list(self._shown.get(self.seats[i], ())) + self.common

    def _can_win(
        self,
        j: int,
        shown: list[int],
        pots: list[Pot],
        high: list[int | None],
        low: list[int | None] | None,
    ) -> bool:
        for pot in pots:
            if j not in pot.eligible:
                continue
            rivals = [k for k in shown if k in pot.eligible]
            mine = high[j]
            if mine is not None and all((high[k] or 0) <= mine for k in rivals):
                return True
            if low is not None and low[j] is not None:
                lj = low[j]
                assert lj is not None
                if all(low[k] is None or low[k] <= lj for k in rivals):  # type: ignore[operator]
                    return True
        return False

    def _odd_chip_order(self, i: int) -> int:
        """Between tied hands the odd chip goes to the highest card by suit (a setting:
        to the seat nearest the dealer's left)."""
        if self.config.odd_chip_tie == "lowest_position":
            return -i
        return max(self.cards[i])

    def _finish(self, live: list[int], showdown: bool) -> None:
        winner = live[0]
        pot = sum(self.total)
        pots = [_new_tuple(Pot, (pot, (winner,)))]
        self._pay(pots, [_new_tuple(Share, (0, winner, pot, "whole", ()))], showdown=False)

    def _pay(self, pots: list[Pot], shares: list[Share], showdown: bool) -> None:
        seats, stacks, events = self.seats, self.stacks, self.events
        for pot_number, position, amount, half, odd_chip_rules in shares:
            stacks[position] += amount
            data: dict[str, Any] = {
                "seat": seats[position], "pot": pot_number, "amount": amount, "half": half,
            }
            if odd_chip_rules:
                data["odd_chips"] = list(odd_chip_rules)
            events.append(_new_event(Event, ("pot_awarded", data, None)))
        ended: list[dict[str, int]] = []
        for seat, stack in zip(seats, stacks, strict=True):
            ended.append({"seat": seat, "stack": stack})
        self._paid = (pots, shares, showdown)
        self.over = True
        self.to_act = -1
        self._legal = None
        events.append(_new_event(Event, ("hand_ended", {"stacks": ended}, None)))

    def _build_result(self, pots: list[Pot], shares: list[Share], showdown: bool) -> HandResult:
        seats = self.seats
        share_data = [
            {
                "seat": seats[position],
                "pot": pot_number,
                "amount": amount,
                "half": half,
                "odd_chips": list(odd_chip_rules),
            }
            for pot_number, position, amount, half, odd_chip_rules in shares
        ]
        final: dict[int, int] = {}
        net: dict[int, int] = {}
        for seat, stack, start in zip(seats, self.stacks, self.starting, strict=True):
            final[seat] = stack
            net[seat] = stack - start
        pot_data = [
            {"amount": pot.amount, "eligible": [seats[j] for j in pot.eligible]} for pot in pots
        ]
        return HandResult(final, net, share_data, pot_data, showdown)


__all__ = ["Action", "Event", "Hand", "HandResult", "LegalActions", "format_cards"]
