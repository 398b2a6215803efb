"""One hand of stud as a pure state machine: actions in, events out.

A hand is its configuration, its seats, its deck and the actions applied to it,
so replaying those reproduces it exactly. Nothing here reads a clock or does
I/O; an absent player is the caller's business, told to the hand through
:meth:`Hand.timeout` or an ``absent`` action; or, under rule 8's tournament variant
(``TableConfig.absent_hands``), named when the hand is dealt (``absent``), and the
hand kills those hands itself once the starting hands are dealt.

Seats are the table's seat numbers; the hand keeps them in position order
(clockwise from the dealer's left), which is the order cards are dealt in.

Speed: what a configuration fixes (streets, bet sizes, the rule switches, the
bring-in order of every card) is worked out once per :class:`TableConfig`
(:mod:`engine.plan`); each seat's board is kept as a rank-pattern key as its upcards
are dealt, so who acts first and the dealer's words are dictionary lookups; and
the legal actions (:mod:`engine.betting`, their one source) are worked out once per
turn and kept, so applying an action looks it up in them. Rare cases (unknown cards
of a replayed record, common cards) take the general paths.

The hand keeps the state and moves it along; its concerns are functions of the hand
in their own modules, as legality is in :mod:`engine.betting`: the deal of a street in
:mod:`engine.deal`, the order of play and the dealer's words in :mod:`engine.order`, the
showdown, the pots paid and the :class:`~engine.showdown.HandResult` in
:mod:`engine.showdown`. They read the hand through its public port,
:class:`~engine.hand_state.HandState` (its plan, seats, cards and betting round as plain
attributes), and never import it; what they work out they return, and the hand sets its
own state from it. The betting round's state and the chips each action puts in are the
hand's own, kept by its base class (:mod:`engine.betting_round`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from engine.actions import Action, LegalActions
from engine.betting import legal_actions as _legal_actions
from engine.betting import verify as _verify
from engine.betting_round import BettingRound
from engine.cards import Card, Deck, format_cards
from engine.deal import deal_street
from engine.errors import IllegalAction, InvalidAction, NotYourTurn
from engine.events import (
    ActionTaken,
    Announcement,
    Ante,
    Event,
    HandStarted,
    SeatStack,
    Turn,
    UncalledReturned,
    new_event,
)
from engine.fair import METHOD
from engine.order import announce, bring_in_seat, first_to_act, pair_showing
from engine.plan import plan_of
from engine.protocol import ErrorCode
from engine.showdown import HandResult, Paid, build_result, finish, showdown
from engine.variants import TableConfig

_new_tuple = tuple.__new__


class Hand(BettingRound):
    """A hand in progress. Construct it to post antes and deal the first street."""

    def __init__(
        self,
        config: TableConfig,
        seats: Sequence[tuple[int, int]],
        deck: Deck,
        shown: Mapping[int, Sequence[Card]] | None = None,
        *,
        absent: Collection[int] = (),
    ) -> None:
        """``shown``: for a replayed record (PHH), the cards each seat tabled at the showdown;
        only those play there, as the record cannot say more. None: every dealt card plays.

        ``absent``: the seats whose players are away when the hand is dealt, under rule 8's
        tournament variant (``absent_hands="killed_after_starting_hands"``): their hands are
        killed once every player has the starting hand (:meth:`_kill_absent`). The hand's
        ``hand_started`` says who they were, so it replays from its record."""
        n = len(seats)
        if n < 2:
            raise IllegalAction(
                "a hand needs at least two players", code=ErrorCode.NOT_ENOUGH_PLAYERS
            )
        numbers: list[int] = []
        starting: list[int] = []
        for number, stack in seats:
            numbers.append(number)
            starting.append(stack)
        if len(set(numbers)) != n:
            raise InvalidAction("a seat may play once per hand", code=ErrorCode.BAD_SEATS)
        away = set(absent)
        if away and config.absent_hands != "killed_after_starting_hands":
            raise InvalidAction(
                "absent hands are dealt and killed only under the tournament rule "
                "(absent_hands='killed_after_starting_hands')",
                code=ErrorCode.BAD_SEATS,
            )
        if not away <= set(numbers):
            raise InvalidAction("an absent seat must be dealt in", code=ErrorCode.BAD_SEATS)
        for stack in starting:
            if not isinstance(stack, int) or stack <= 0:
                raise InvalidAction("every player needs chips", code=ErrorCode.BAD_SEATS)
        plan = self.plan = plan_of(config)
        if n > config.variant.max_players or n * len(plan.faces[0]) > deck.dealable():
            raise IllegalAction("too many players for one deck", code=ErrorCode.TOO_MANY_PLAYERS)
        self.config = config
        self.deck = deck
        self.streets = plan.streets
        self._fixed = plan.fixed
        self._largest = plan.largest
        self.n = n
        self.seats: list[int] = numbers
        self.index_of: dict[int, int] = dict(zip(numbers, range(n), strict=True))
        self.absent: tuple[int, ...] = tuple(s for s in numbers if s in away)
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
        self._paid: Paid | None = None  # pots, shares, the rake of each pot, showdown
        self.shown = shown  # a replayed record's tabled cards (engine.showdown)
        self.antes: list[int] = [0] * n  # antes posted (dead money under TableConfig.antes_dead)
        # Each seat's upcards as a rank-pattern key (engine.plan.BOARD_STEP); known while every
        # upcard is a known card (a replayed record may deal "??").
        self.board_keys: list[int] = [0] * n
        self.known_boards = True
        self._unfaced_folds = 0  # folded seats still dealt to (SCS 12) until a bet is made
        # Fixed limit: the bet sizes of this street, and its one size (0 while there are two).
        self.increments: tuple[int, ...] = plan.increments[0]
        self.bet_size = self.increments[0]
        self._reset_round()
        self._start()

    # ----------------------------------------------------------------- queries

    def is_over(self) -> bool:
        return self.over

    def result(self) -> HandResult:
        """Built when first asked for: a hand played out for its events alone never needs it."""
        if self._result is None:
            if self._paid is None:
                raise IllegalAction("the hand is not over", code=ErrorCode.HAND_IN_PROGRESS)
            self._result = build_result(self, *self._paid)
        return self._result

    def seat_to_act(self) -> int | None:
        return None if self.to_act < 0 else self.seats[self.to_act]

    def pot_total(self) -> int:
        return sum(self.total)

    def legal_actions(self) -> LegalActions:
        """Who acts and what they may do: worked out once per turn (engine.betting), kept."""
        if self._legal is None:
            self._legal = _legal_actions(self)
        return self._legal

    def possibles_said(self, i: int) -> set[str]:
        """The possibles the dealer has announced on seat index ``i``'s board, each said once
        a hand (engine.order adds to it); kept only for a table that announces them."""
        if self._announced is None:
            self._announced = [set() for _ in range(self.n)]
        return self._announced[i]

    # ----------------------------------------------------------------- inputs

    def apply(self, action: Action, *, absent: bool = False) -> list[Event]:
        """Apply one seat's action; an illegal or malformed one raises and changes nothing.

        ``absent``: the table took the action for a player gone from the hand, their turn
        played at once and never announced (the ``action`` event says so; :func:`announced`
        leaves the turn out of what is told)."""
        seat, kind, amount = action
        legal = self._legal or self.legal_actions()
        # The usual action is named as it stands in the turn's legal actions: the seat to act,
        # a kind on offer, and no amount, or one of the wager's street totals in fixed limit.
        # Anything else (a wager's default, a named call, every refusal) is judged in full.
        wager = legal.wager
        if (
            seat == legal.seat
            and kind in legal.kinds
            and (
                kind != wager
                if amount is None
                else kind == wager and type(amount) is int and amount in legal.to_choices
            )
        ):
            checked = amount
        else:
            checked = _verify(self, legal, seat, kind, amount)
        events = self.events
        mark = len(events)
        same = type(action) is Action and checked == amount
        self.actions.append(action if same else _new_tuple(Action, (seat, kind, checked)))
        self._act(self.to_act, kind, checked, legal, False, absent)
        return events[mark:]

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

    def _start(self) -> None:
        config = self.config
        entries = tuple(
            [
                _new_tuple(SeatStack, (seat, stack))
                for seat, stack in zip(self.seats, self.stacks, strict=True)
            ]
        )
        fair = self.deck.fair  # a provably fair deck's commitment, client seeds and method
        proof = (
            (fair.commitment, fair.client_seeds, None if fair.method == METHOD else fair.method)
            if fair is not None
            else (None, (), None)
        )
        self._emit(new_event(HandStarted, (*self.plan.started, entries, *proof, self.absent)))
        by_position = config.ante_by_position
        if by_position is not None and len(by_position) != self.n:
            raise InvalidAction(
                "ante_by_position needs one ante per player", code=ErrorCode.BAD_SEATS
            )
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
                events.append(new_event(Ante, (seats[i], paid, stack == paid)))
            if config.trim_antes:
                # No one can match an ante above the second-highest: the excess goes back.
                cutoff = sorted(antes)[-2]
                for i in range(self.n):
                    excess = antes[i] - cutoff
                    if excess > 0:
                        antes[i] -= excess
                        total[i] -= excess
                        stacks[i] += excess
                        self._emit(new_event(UncalledReturned, (seats[i], excess)))
        if not deal_street(self)[1]:
            self.known_boards = False
        self._start_first_round()

    # ----------------------------------------------------------------- betting rounds

    def _start_first_round(self) -> None:
        config = self.config
        designated = self.bring_in_seat = self.first_actor = bring_in_seat(self)
        if self.absent and self._kill_absent(designated):
            self._pass_turn(designated)  # the absent bring-in posted: the next seat acts on it
            return
        if config.bring_in == 0 or self._active_count() < 2:
            # No forced bet (Hoyle's no-ante game), or nobody left to bet against: the
            # designated seat simply opens; all in for the ante (or its hand killed), the
            # next seat opens instead.
            live = self.is_active(designated)
            self._open_round(designated if live else self.next_clockwise(designated))
            return
        if self.stacks[designated] == 0 and config.all_in_opener == "next_seat":
            # All in for the ante: the next seat clockwise must bring in or complete.
            self._emit(
                Announcement(
                    "bring_in_all_in",
                    self.seats[designated],
                    "all in for the ante; the next player brings it in",
                )
            )
            designated = self.next_clockwise(designated)
            self.bring_in_seat = designated
        elif self.stacks[designated] == 0:
            # All in for the ante: the next seat acts as if the bring-in had been posted
            # (SCS 11 alternate, Robert's 4).
            self.current_bet = config.bring_in
            self._emit(
                Announcement(
                    "bring_in_all_in",
                    self.seats[designated],
                    "all in for the ante; the next player acts on the bring-in",
                )
            )
            self._open_round(self.next_clockwise(designated))
            return
        self.bring_in_pending = True
        self._set_turn(designated)

    def _kill_absent(self, designated: int) -> bool:
        """Rule 8's tournament variant (Robert's 8, cardroom rule 8): every player has the
        starting hand and the antes are in; an absent player who has the low card has the
        bring-in taken from the stack (SCS 10), then each absent player's hand is killed,
        ante and bring-in left in the pot, in position order; the last hand is never killed
        (every player away: it takes the pot). Returns whether the bring-in was posted.
        Told as the table's actions for players gone from the hand (``absent``)."""
        config = self.config
        index_of, stacks, seats = self.index_of, self.stacks, self.seats
        posted = False
        if (
            self.seats[designated] in self.absent
            and config.bring_in
            and stacks[designated]
            and self._active_count() >= 2
        ):
            stack = stacks[designated]
            paid = self._bring_in(designated, config.bring_in if config.bring_in < stack else stack)
            stack = stacks[designated]
            data: tuple[Any, ...] = (
                seats[designated],
                "bring_in",
                paid,
                self.bets[designated],
                stack,
                stack == 0,
                False,
                False,
                True,
            )
            self._emit(new_event(ActionTaken, data))
            posted = True
        for seat in self.absent:
            if self.folded.count(False) == 1:
                break
            i = index_of[seat]
            self.folded[i] = True
            self._stop_dealing(i)
            data = (seat, "fold", None, self.bets[i], stacks[i], False, False, False, True)
            self._emit(new_event(ActionTaken, data))
        return posted

    def _open_round(self, first: int) -> None:
        if first < 0 or self._active_count() < 2:
            self._end_round()
            return
        self._set_turn(first)

    def _set_turn(self, i: int) -> None:
        """Seat index ``i`` is to act: its legal actions, kept for the turn, and the ``turn``
        event showing them."""
        self.to_act = i
        legal = self._legal = _legal_actions(self)
        self.events.append(new_event(Turn, legal))

    def _act(
        self,
        i: int,
        kind: str,
        amount: int | None,
        legal: LegalActions,
        timed: bool,
        absent: bool = False,
    ) -> None:
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
            event: tuple[Any, ...] = (seat, kind, paid, to, stack, stack == 0, timed, False, absent)
        elif kind == "check":
            self.acted[i] = self.raise_count
            stack = stacks[i]
            event = (seat, kind, None, bets[i], stack, stack == 0, timed, False, absent)
        elif kind == "fold":
            self.folded[i] = True
            stack = stacks[i]
            if self.current_bet <= bets[i] and self.config.deal_to_unfaced_folds:
                # Folded without facing a bet: keep dealing to the seat (SCS 12).
                self._unfaced_folds += 1
                event = (seat, kind, None, bets[i], stack, False, timed, True, absent)
            else:
                self._stop_dealing(i)
                event = (seat, kind, None, bets[i], stack, False, timed, False, absent)
        elif kind == "bring_in":
            paid = self._bring_in(i, legal.bring_in)
            stack = stacks[i]
            event = (seat, kind, paid, bets[i], stack, stack == 0, timed, False, absent)
        else:
            assert amount is not None
            paid = self._wager(i, amount)
            stack = stacks[i]
            event = (seat, kind, paid, amount, stack, stack == 0, timed, False, absent)
        self.events.append(new_event(ActionTaken, event))
        self._pass_turn(i)

    def _pass_turn(self, i: int) -> None:
        """Pass the turn from seat index ``i`` to the next seat clockwise that must act, if
        any; else the round ends."""
        folded, acted, stacks, bets = self.folded, self.acted, self.stacks, self.bets
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
            paid = finish(self, live)
        else:
            streets = self.streets
            while self.street + 1 < len(streets):
                self.street += 1
                self._reset_round()
                dealt = len(self.events)
                common, known = deal_street(self)
                if not known:
                    self.known_boards = False
                announce(self, common)
                first = first_to_act(self, dealt)
                self.first_actor = first
                if self._fixed and streets[self.street].open_pair_option:
                    self.open_pair = self.config.open_pair_big_bet and pair_showing(self, live)
                    self._update_increments()
                stacks = self.stacks
                with_chips = 0
                for j in live:
                    if stacks[j] > 0:
                        with_chips += 1
                if with_chips >= 2:
                    self._set_turn(first)
                    return
            paid = showdown(self, live)
        # The pots are paid (engine.showdown): the hand is over, its result built from
        # ``paid`` when asked for.
        self._paid = paid
        self.over = True


__all__ = ["Action", "Event", "Hand", "HandResult", "LegalActions", "format_cards"]
