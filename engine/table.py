"""A table across hands: seats, stacks, sitting out, leaving, the waiting list, table stakes.

Chips are added only between hands (table stakes): chips added during a hand
wait until it ends. A player who leaves during a hand leaves when it ends.
Who is dealt in follows SCS 2 and SCS 11: a seated player who is sitting in and
has the ante and the bring-in (or the ante alone, under the alternate rule).

The seating policy lives here too, pure like the rest of the engine: the buy-in
range, the waiting list (a freed seat is offered to the first waiting player,
and held for them until the server's clock says the offer ran out). Each change
returns the table events that tell everyone about it; the server publishes them.

A tournament table (``Table(..., tournament=True)``) seats by other rules: its
director seats players with their tournament stacks and takes them away between
hands (a move, a table broken); nobody buys in, waits for a seat or leaves with
chips (a player who leaves is sat out); a player sitting out is dealt in all the
same, blinded off (antes and bring-ins posted, the hand killed by rule 8's
tournament variant) until they come back or are out of chips; anyone with chips
is dealt in, all in for what they hold; a new level's stakes take effect at the
next hand (:meth:`Table.set_stakes`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from engine.cards import Deck
from engine.errors import ConfigError, IllegalAction, InvalidAction
from engine.events import Event
from engine.hand import Hand
from engine.protocol import ErrorCode
from engine.table_events import (
    ChipsAdded,
    SatIn,
    SatOut,
    SeatLeft,
    SeatOffered,
    SeatOfferExpired,
    SeatTaken,
    TimeCollected,
    WaitingList,
)
from engine.table_seats import (
    DISQUALIFIED,
    Bust,
    Departure,
    Seat,
    SeatingRules,
    SeatOffer,
    Transfer,
)
from engine.variants import TableConfig


class Table:
    def __init__(
        self,
        config: TableConfig,
        seat_count: int | None = None,
        rules: SeatingRules | None = None,
        *,
        tournament: bool = False,
    ) -> None:
        """``tournament``: a tournament table for its whole life (see the module's docstring).
        A flag of the table, not of its :class:`SeatingRules`, since those change between
        hands (:meth:`reconfigure`) and a table's chips may never change from money to
        tournament chips or back."""
        self.tournament = tournament
        _check_tournament_config(config, tournament)
        self.config = config
        self.rules = rules or SeatingRules()
        count = seat_count if seat_count is not None else config.variant.max_players
        if not 2 <= count <= config.variant.max_players:
            raise InvalidAction(
                f"{config.variant.title} seats 2 to {config.variant.max_players}",
                code=ErrorCode.BAD_SEAT_COUNT,
            )
        self.seats: list[Seat | None] = [None] * count
        self.hand: Hand | None = None
        self.hands_played = 0
        self.waiting: list[str] = []
        self.offer: SeatOffer | None = None
        # Players an operator removes (player -> why), until their ``seat_left`` says so.
        self.removals: dict[str, str] = {}
        # The players the last hand left without chips (cleared when the next one starts).
        self.busts: list[Bust] = []

    # ------------------------------------------------------------------ restoring

    def restore(
        self,
        seats: Iterable[tuple[int, str, int]],
        *,
        sitting_out: set[str] | None = None,
        waiting: Iterable[str] = (),
    ) -> None:
        """Seat the players a store kept (seat, player, chips) on an empty table, and its
        waiting list. ``sitting_out``: who sits out (None: everyone)."""
        for number, player, chips in seats:
            out = sitting_out is None or player in sitting_out
            self.seats[number] = Seat(player, chips, sitting_out=out)
        self.waiting = list(waiting)

    def resume_hand(self, hand: Hand) -> None:
        """Put a hand dealt again from its record back in play: its players sit in with the
        chips they began it with; chips bought meanwhile wait for its end."""
        for i, number in enumerate(hand.seats):
            seat = self._seat(number)
            start = hand.starting[i]
            if seat.stack < start:
                raise IllegalAction(
                    f"seat {number} holds {seat.stack} chips, not {start}", code=ErrorCode.BAD_SEATS
                )
            seat.pending_chips = seat.stack - start
            seat.stack = start
            seat.sitting_out = False
        self.hand = hand

    def keep_wishes(
        self, player: str, *, leaving: bool, sit_out_next_hand: bool, sitting_out: bool = False
    ) -> None:
        """What a player in the hand in progress asked for its end, and whether they sat out
        during it (a resumed hand keeps it)."""
        number = self.seat_of(player)
        if number is None or not self.in_hand(number):
            return
        seat = self._seat(number)
        seat.leaving = leaving
        seat.sit_out_next_hand = sit_out_next_hand
        seat.sitting_out = sitting_out

    # ------------------------------------------------------------------ new rules

    def check_seat_count(self, count: int) -> None:
        """Refuse a seat count that would remove a seat in use: taken, or offered."""
        used = sorted(
            {n for n, seat in enumerate(self.seats) if seat is not None and n >= count}
            | ({self.offer.seat} if self.offer is not None and self.offer.seat >= count else set())
        )
        if used:
            raise IllegalAction(
                f"{count} seats would remove seat{'s' * (len(used) > 1)} "
                f"{', '.join(map(str, used))}, in use",
                code=ErrorCode.SEATS_IN_USE,
            )

    def reconfigure(self, config: TableConfig, seat_count: int, rules: SeatingRules) -> None:
        """New rules, seat count and seating policy, between hands (the next hand is dealt
        under them); refused, changing nothing, during a hand or when a seat in use would go."""
        if self.hand is not None and not self.hand.is_over():
            raise IllegalAction("a hand is in progress", code=ErrorCode.HAND_IN_PROGRESS)
        if not 2 <= seat_count <= config.variant.max_players:
            raise InvalidAction(
                f"{config.variant.title} seats 2 to {config.variant.max_players}",
                code=ErrorCode.BAD_SEAT_COUNT,
            )
        self.check_seat_count(seat_count)
        _check_tournament_config(config, self.tournament)
        self.config = config
        self.rules = rules
        self.seats = self.seats[:seat_count] + [None] * (seat_count - len(self.seats))

    # ------------------------------------------------------------------ seating

    def _seat(self, number: int) -> Seat:
        if not isinstance(number, int) or not 0 <= number < len(self.seats):
            raise InvalidAction(f"no seat {number!r} at this table", code=ErrorCode.BAD_SEAT)
        seat = self.seats[number]
        if seat is None:
            raise IllegalAction(f"seat {number} is empty", code=ErrorCode.SEAT_EMPTY)
        return seat

    def seat_of(self, player: str) -> int | None:
        for number, seat in enumerate(self.seats):
            if seat is not None and seat.player == player:
                return number
        return None

    def seated(self, player: str) -> int:
        """The player's seat number; refused when they have none."""
        number = self.seat_of(player)
        if number is None:
            raise IllegalAction("you have no seat at this table", code=ErrorCode.NOT_SEATED)
        return number

    def choose_seat(self, player: str, chips: int, seat: int | None = None) -> int:
        """The seat ``player`` may take with ``chips`` (any free one when ``seat`` is None):
        the buy-in range and the waiting list decide. Raises when they may not; changes
        nothing (the buy-in is paid, then :meth:`sit`). A tournament table takes no buy-in:
        its director seats players (:meth:`seat_player`)."""
        self._refuse_at_tournament("buy in")
        rules = self.rules
        if not isinstance(chips, int) or isinstance(chips, bool):
            raise InvalidAction("buy_in must be a whole number of chips", code=ErrorCode.BAD_AMOUNT)
        if not rules.min_buy_in <= chips <= rules.max_buy_in:
            raise IllegalAction(
                f"buy in between {rules.min_buy_in} and {rules.max_buy_in}",
                code=ErrorCode.BAD_BUY_IN,
            )
        if self.seat_of(player) is not None:
            raise IllegalAction("you are already seated here", code=ErrorCode.ALREADY_SEATED)
        free = [n for n, s in enumerate(self.seats) if s is None]
        if self.offer is not None and self.offer.player != player:
            free = [n for n in free if n != self.offer.seat]
        elif self.waiting and self.offer is None and player not in self.waiting[:1]:
            free = []  # the waiting list comes first
        if seat is None:
            if not free:
                raise IllegalAction(
                    "no free seat; join the waiting list", code=ErrorCode.TABLE_FULL
                )
            return free[0]
        if not isinstance(seat, int) or not 0 <= seat < len(self.seats):
            raise InvalidAction(f"no seat {seat!r} at this table", code=ErrorCode.BAD_SEAT)
        if self.seats[seat] is not None:
            raise IllegalAction(f"seat {seat} is taken", code=ErrorCode.SEAT_TAKEN)
        if seat not in free:
            raise IllegalAction(
                f"seat {seat} is offered to another player", code=ErrorCode.SEAT_RESERVED
            )
        return seat

    def sit(self, number: int, player: str, chips: int) -> list[Event]:
        if not isinstance(number, int) or not 0 <= number < len(self.seats):
            raise InvalidAction(f"no seat {number!r} at this table", code=ErrorCode.BAD_SEAT)
        if self.seats[number] is not None:
            raise IllegalAction(f"seat {number} is taken", code=ErrorCode.SEAT_TAKEN)
        if self.seat_of(player) is not None:
            raise IllegalAction(f"{player} is already seated", code=ErrorCode.ALREADY_SEATED)
        _check_chips(chips)
        self.seats[number] = Seat(player, chips)
        if player in self.waiting:
            self.waiting.remove(player)
        if self.offer is not None and self.offer.player == player:
            self.offer = None
        return [SeatTaken(seat=number, player=player, stack=chips)]

    def check_add_chips(self, number: int, chips: int) -> None:
        """Refuse chips that are not a positive amount or would pass the buy-in's top (at a
        tournament table, the director adds a rebuy's chips: :meth:`add_chips`)."""
        self._refuse_at_tournament("add chips")
        if not isinstance(chips, int) or isinstance(chips, bool) or chips <= 0:
            raise InvalidAction("amount must be a positive whole number", code=ErrorCode.BAD_AMOUNT)
        seat = self._seat(number)
        room = self.rules.max_buy_in - seat.stack - seat.pending_chips
        if chips > room:
            allowed = f"1 to {room} chips" if room > 0 else "no chips"
            raise IllegalAction(
                f"you may add {allowed}: at most {self.rules.max_buy_in} on the table",
                code=ErrorCode.BAD_BUY_IN,
            )

    def add_chips(self, number: int, chips: int) -> list[Event]:
        """Add chips now between hands, or when the hand ends (table stakes)."""
        _check_chips(chips)
        seat = self._seat(number)
        later = self.in_hand(number)
        if later:
            seat.pending_chips += chips
        else:
            seat.stack += chips
        return [ChipsAdded(seat=number, amount=chips, after_hand=later)]

    def collect_time(self, number: int, fee: int) -> list[Event]:
        """Take the house's time fee from the seat's stack, between hands (when it is due is
        the server's clock's business). Refused, changing nothing, beyond the stack."""
        _check_chips(fee)
        seat = self._seat(number)
        if self.in_hand(number):
            raise IllegalAction("a hand is in progress", code=ErrorCode.HAND_IN_PROGRESS)
        if fee > seat.stack:
            raise IllegalAction(
                f"seat {number} holds fewer than {fee} chips", code=ErrorCode.BAD_AMOUNT
            )
        seat.stack -= fee
        return [TimeCollected(seat=number, amount=fee, stack=seat.stack)]

    def sit_out(self, number: int, *, next_hand: bool = False, busted: bool = False) -> list[Event]:
        """``busted``: the table sits the player out, short of chips (until chips are added)."""
        seat = self._seat(number)
        if next_hand and self.in_hand(number):
            seat.sit_out_next_hand = True
        else:
            seat.sitting_out = True
        return [SatOut(seat=number, after_hand=seat.sit_out_next_hand, busted=busted)]

    def sit_in(self, number: int) -> list[Event]:
        """Refused a disqualified tournament player (their hand in play is killed; the
        director takes them away when it ends)."""
        seat = self._seat(number)
        if self.tournament and seat.removed == DISQUALIFIED:
            raise IllegalAction(
                f"seat {number}'s player is disqualified from the tournament",
                code=ErrorCode.DISQUALIFIED,
            )
        seat.sitting_out = False
        seat.sit_out_next_hand = False
        return [SatIn(seat=number)]

    def leave(self, number: int, *, removed: str | None = None) -> int | None:
        """Free the seat and return its chips; during its hand, mark it to leave after.
        ``removed``: an operator removes the player, and why (the events say so).

        Refused at a tournament table while the seat holds chips: they are tournament
        chips, never paid out (the player sits out instead, :meth:`leave_tournament`;
        the director takes a player away with :meth:`give_up_player`)."""
        seat = self._seat(number)
        if self.tournament and seat.stack + seat.pending_chips > 0:
            raise IllegalAction(
                f"seat {number} holds tournament chips: no leaving with them (sit out instead)",
                code=ErrorCode.CHIPS_IN_PLAY,
            )
        if removed is not None:
            seat.removed = self.removals[seat.player] = removed
        if self.in_hand(number):
            seat.leaving = True
            return None
        self.seats[number] = None
        return seat.stack + seat.pending_chips

    def left(self, departure: Departure) -> list[Event]:
        """The seat's player is gone with their chips: say so, and offer the seat."""
        return [
            SeatLeft(
                seat=departure.seat,
                player=departure.player,
                cashed_out=departure.chips,
                removed=self.removals.pop(departure.player, None),
            ),
            *self.offer_free_seat(),
        ]

    # ------------------------------------------------------------------ tournaments

    def leave_tournament(self, number: int, *, removed: str | None = None) -> list[Event]:
        """A tournament player asks to leave: no leaving with chips, so they sit out now,
        blinded off until they sit in again or are out of chips (a hand in progress is
        played for them as for anyone sitting out). ``removed``: an operator's removal, and
        why; a disqualified player (``DISQUALIFIED``) may not sit in again."""
        self._require_tournament("sits a leaving player out")
        if removed is not None:
            self._seat(number).removed = removed
        return self.sit_out(number)

    def seat_player(
        self, number: int, player: str, stack: int, *, sitting_out: bool = False
    ) -> list[Event]:
        """The director seats a player with their tournament stack (the draw, a move, a
        table broken): no buy-in range. ``sitting_out``: they were away, and stay so."""
        self._require_tournament("seats players with their tournament stacks")
        events = self.sit(number, player, stack)
        if sitting_out:
            events += self.sit_out(number)
        return events

    def give_up_player(self, number: int) -> tuple[Transfer, list[Event]]:
        """The director takes the seat's player away with their chips, to seat them at
        another table; refused, changing nothing, while they are in the hand in progress
        (players move between hands only)."""
        self._require_tournament("gives players up to other tables")
        seat = self._seat(number)
        if self.in_hand(number):
            raise IllegalAction(
                f"seat {number} is in the hand in progress: players move between hands",
                code=ErrorCode.HAND_IN_PROGRESS,
            )
        chips = seat.stack + seat.pending_chips
        self.seats[number] = None
        event = SeatLeft(seat=number, player=seat.player, cashed_out=chips, removed="moved")
        return Transfer(seat.player, chips, seat.sitting_out), [event]

    def set_stakes(self, *, ante: int, bring_in: int, small_bet: int, big_bet: int) -> None:
        """A new level: the next hand is dealt at these stakes, the hand in progress keeps its
        own (it holds its configuration). Refused, changing nothing, when they cannot be
        played (:class:`TableConfig`'s checks). The level's news is the director's to tell."""
        self.config = replace(
            self.config, ante=ante, bring_in=bring_in, small_bet=small_bet, big_bet=big_bet
        )

    def _require_tournament(self, what: str) -> None:
        if not self.tournament:
            raise IllegalAction(f"only a tournament table {what}")

    def _refuse_at_tournament(self, what: str) -> None:
        if self.tournament:
            raise IllegalAction(
                f"a tournament table's seats are its director's: you cannot {what} here",
                code=ErrorCode.TOURNAMENT_TABLE,
            )

    # ------------------------------------------------------------------ the waiting list

    def join_waiting_list(self, player: str) -> tuple[int, list[Event]]:
        """The player's place on the list (1 first), and what changed."""
        self._refuse_at_tournament("join a waiting list")
        if self.seat_of(player) is not None:
            raise IllegalAction("you are already seated here", code=ErrorCode.ALREADY_SEATED)
        events: list[Event] = []
        if player not in self.waiting:
            self.waiting.append(player)
            events.append(WaitingList(waiting=tuple(self.waiting)))
        events += self.offer_free_seat()
        return self.waiting.index(player) + 1, events

    def leave_waiting_list(self, player: str) -> list[Event]:
        if player not in self.waiting:
            return []
        self.waiting.remove(player)
        return [WaitingList(waiting=tuple(self.waiting))]

    def offer_free_seat(self) -> list[Event]:
        """Hold the first free seat for the first waiting player, if there are both."""
        if self.offer is not None or not self.waiting:
            return []
        free = [n for n, s in enumerate(self.seats) if s is None]
        if not free:
            return []
        self.offer = SeatOffer(self.waiting[0], free[0])
        return [
            SeatOffered(
                player=self.offer.player, seat=self.offer.seat, seconds=self.rules.offer_seconds
            )
        ]

    def expire_offer(self) -> list[Event]:
        """The offered seat was not taken in time: its player is off the list, the next
        one is offered a seat."""
        if self.offer is None:
            return []
        player = self.offer.player
        self.offer = None
        if player in self.waiting:
            self.waiting.remove(player)
        return [SeatOfferExpired(player=player), *self.offer_free_seat()]

    # ------------------------------------------------------------------ hands

    def in_hand(self, number: int) -> bool:
        return self.hand is not None and not self.hand.is_over() and number in self.hand.index_of

    def needed_to_play(self) -> int:
        """SCS 11; at a tournament table any chips (nobody can add to a short stack)."""
        config = self.config
        if self.tournament:
            return 1
        if config.eligibility == "ante":
            return max(config.ante, 1)
        return max(config.ante + config.bring_in, 1)

    def dealt_in(self) -> list[int]:
        """The seat numbers that would be dealt the next hand, in position order (at a
        tournament table, those sitting out too: they are blinded off)."""
        need = self.needed_to_play()
        present = not self.tournament
        return [
            number
            for number, seat in enumerate(self.seats)
            if seat is not None
            and not (present and seat.sitting_out)
            and not seat.leaving
            and seat.stack >= need
        ]

    def start_hand(self, deck: Deck) -> Hand:
        if self.hand is not None and not self.hand.is_over():
            raise IllegalAction("a hand is in progress", code=ErrorCode.HAND_IN_PROGRESS)
        if self.hand is not None:
            self.finish_hand()
        players = self.dealt_in()
        if len(players) < 2:
            raise IllegalAction("two players must be sitting in", code=ErrorCode.NOT_ENOUGH_PLAYERS)
        seats = [(number, self._seat(number).stack) for number in players]
        # Rule 8's tournament variant: the hand kills the hands of players away at the deal.
        killed = self.config.absent_hands == "killed_after_starting_hands"
        absent = [n for n in players if killed and self._seat(n).sitting_out]
        self.hand = Hand(self.config, seats, deck, absent=absent)
        self.busts = []
        return self.hand

    def finish_hand(self) -> list[Departure]:
        """Settle the finished hand: stacks, chips added meanwhile, leavers, sit-outs.

        Returns the players who left.
        """
        hand = self.hand
        if hand is None:
            return []
        if not hand.is_over():
            raise IllegalAction("the hand is not over", code=ErrorCode.HAND_IN_PROGRESS)
        for number, stack in hand.result().stacks.items():
            seat = self.seats[number]
            assert seat is not None
            seat.stack = stack
        self.hands_played += 1
        departures = self._settle()
        self.busts = [
            Bust(number, seat.player, start)
            for number, start in zip(hand.seats, hand.starting, strict=True)
            if (seat := self.seats[number]) is not None and seat.stack == 0
        ]
        return departures

    def sit_out_busted(self) -> list[Event]:
        """Between hands: a player whose stack no longer covers a hand sits out until chips
        are added."""
        need = self.needed_to_play()
        events: list[Event] = []
        for number, seat in enumerate(self.seats):
            if seat is not None and not seat.sitting_out and seat.stack < need:
                seat.sitting_out = True
                events.append(SatOut(seat=number, after_hand=False, busted=True))
        return events

    def cancel_hand(self) -> list[Departure]:
        """Void the hand in progress: each seat gets back the chips it began the hand with,
        then the table settles as after any hand. Returns who left, as finish_hand does."""
        hand = self.hand
        if hand is None:
            return []
        for i, number in enumerate(hand.seats):
            seat = self.seats[number]
            if seat is not None:
                seat.stack = hand.starting[i]
        return self._settle()

    def _settle(self) -> list[Departure]:
        """Between hands: chips added meanwhile join the stacks, "sit out next hand" takes
        effect, and whoever asked to leave leaves."""
        departures: list[Departure] = []
        for number, seat in enumerate(self.seats):
            if seat is None:
                continue
            seat.stack += seat.pending_chips
            seat.pending_chips = 0
            if seat.sit_out_next_hand:
                seat.sitting_out, seat.sit_out_next_hand = True, False
            if seat.leaving:
                departures.append(Departure(number, seat.player, seat.stack))
                self.seats[number] = None
        self.hand = None
        return departures


def _check_tournament_config(config: TableConfig, tournament: bool) -> None:
    if tournament and config.absent_hands != "killed_after_starting_hands":
        raise ConfigError(
            "a tournament table kills an absent player's hand once the starting hands are "
            "dealt: absent_hands='killed_after_starting_hands'"
        )


def _check_chips(chips: int) -> None:
    if not isinstance(chips, int) or isinstance(chips, bool) or chips <= 0:
        raise InvalidAction("chips must be a positive whole number", code=ErrorCode.BAD_AMOUNT)


__all__ = [
    "DISQUALIFIED",
    "Bust",
    "Departure",
    "Seat",
    "SeatOffer",
    "SeatingRules",
    "Table",
    "Transfer",
]
