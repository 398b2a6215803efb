"""The betting round of a hand: its state, reset each street, and the chips each action puts
in, the part of :class:`~engine.hand.Hand` that counts (``Hand`` is a ``BettingRound``).

The hand decides whose turn it is and what comes next (:mod:`engine.hand`); this class keeps
what the round's rules read (:mod:`engine.betting`, the one source of legality): the amount
each seat must reach, the last full bet or raise and the count of those that reopen the
betting, the bring-in still to post, fixed limit's bet sizes (the open-pair rule, SCS 5),
pot and no limit's last full raise, the ``largest_increase`` rule's short all-ins, and, as a
round ends, the uncalled chips back to their owner. Plain attributes and methods of the one
hand object, for speed, as the hand's are.
"""

from __future__ import annotations

from engine.actions import LegalActions
from engine.cards import Card, Deck
from engine.events import Event, UncalledReturned, new_event
from engine.plan import Plan
from engine.variants import Street, TableConfig


class BettingRound:
    """A hand's betting round and the chips it moves; the hand sets these fields as it starts."""

    config: TableConfig
    plan: Plan
    deck: Deck
    streets: tuple[Street, ...]
    n: int
    seats: list[int]
    stacks: list[int]
    total: list[int]
    folded: list[bool]
    receiving: list[bool]
    cards: list[list[Card]]
    events: list[Event]
    street: int
    increments: tuple[int, ...]
    bet_size: int
    _fixed: bool
    _largest: bool
    _unfaced_folds: int
    _legal: LegalActions | None

    # ----------------------------------------------------------------- the round

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
        self.increments = self.plan.increments[self.street]
        self.bet_size = self.increments[0]  # fixed limit: the one size, 0 while there are two

    def is_active(self, i: int) -> bool:
        """Seat index ``i`` is in the hand with chips."""
        return not self.folded[i] and self.stacks[i] > 0

    def _active_count(self) -> int:
        folded, stacks = self.folded, self.stacks
        count = 0
        for i in range(self.n):
            if not folded[i] and stacks[i]:
                count += 1
        return count

    def next_clockwise(self, start: int) -> int:
        """The next active seat index clockwise of ``start``, -1 for none."""
        n = self.n
        for step in range(1, n + 1):
            j = (start + step) % n
            if self.is_active(j):
                return j
        return -1

    def _update_increments(self) -> None:
        """Fixed limit: the bet sizes of this street, after the open-pair rule (SCS 5) moved."""
        config = self.config
        if self.streets[self.street].big_bet or self.big_mode:
            increments: tuple[int, ...] = (config.big_bet,)
        elif self.open_pair:
            increments = (config.small_bet, config.big_bet)
        else:
            increments = (config.small_bet,)
        self.increments = increments
        self.bet_size = increments[0] if len(increments) == 1 else 0

    # ----------------------------------------------------------------- chips in

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
            full = increase >= min(self.increments) * self.plan.full_fraction
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

    def _return_uncalled(self) -> None:
        bets = self.bets
        high = max(bets)
        if not high:
            return
        top = bets.index(high)  # the first seat with the most in
        if self.folded[top]:
            return  # a killed hand's forced bet is forfeited (rule 8), never returned
        excess = high - sorted(bets)[-2]
        if excess > 0:
            bets[top] -= excess
            self.total[top] -= excess
            self.stacks[top] += excess
            self._emit(new_event(UncalledReturned, (self.seats[top], excess)))

    def _emit(self, event: Event) -> None:
        self.events.append(event)

    # ----------------------------------------------------------------- folded hands

    def _stop_dealing(self, i: int) -> None:
        """A folded seat gets no more cards; its hand may go back in if the deck runs short."""
        self.receiving[i] = False
        if self.config.reuse_folded_cards:
            self.deck.set_aside(self.cards[i])


__all__ = ["BettingRound"]
