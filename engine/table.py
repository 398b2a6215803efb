"""A table across hands: seats, stacks, sitting out, leaving, table stakes.

Chips are added only between hands (table stakes): chips added during a hand
wait until it ends. A player who leaves during a hand leaves when it ends.
Who is dealt in follows SCS 2 and SCS 11: a seated player who is sitting in and
has the ante and the bring-in (or the ante alone, under the alternate rule).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.cards import Deck
from engine.errors import IllegalAction, InvalidAction
from engine.hand import Hand
from engine.variants import TableConfig


@dataclass(slots=True)
class Seat:
    player: str
    stack: int
    sitting_out: bool = False
    sit_out_next_hand: bool = False
    leaving: bool = False
    pending_chips: int = 0


class Table:
    def __init__(self, config: TableConfig, seat_count: int | None = None) -> None:
        self.config = config
        count = seat_count if seat_count is not None else config.variant.max_players
        if not 2 <= count <= config.variant.max_players:
            raise InvalidAction(
                f"{config.variant.title} seats 2 to {config.variant.max_players}",
                code="bad_seat_count",
            )
        self.seats: list[Seat | None] = [None] * count
        self.hand: Hand | None = None
        self.hands_played = 0

    # ------------------------------------------------------------------ seating

    def _seat(self, number: int) -> Seat:
        if not isinstance(number, int) or not 0 <= number < len(self.seats):
            raise InvalidAction(f"no seat {number!r} at this table", code="bad_seat")
        seat = self.seats[number]
        if seat is None:
            raise IllegalAction(f"seat {number} is empty", code="seat_empty")
        return seat

    def seat_of(self, player: str) -> int | None:
        for number, seat in enumerate(self.seats):
            if seat is not None and seat.player == player:
                return number
        return None

    def sit(self, number: int, player: str, chips: int) -> None:
        if not isinstance(number, int) or not 0 <= number < len(self.seats):
            raise InvalidAction(f"no seat {number!r} at this table", code="bad_seat")
        if self.seats[number] is not None:
            raise IllegalAction(f"seat {number} is taken", code="seat_taken")
        if self.seat_of(player) is not None:
            raise IllegalAction(f"{player} is already seated", code="already_seated")
        _check_chips(chips)
        self.seats[number] = Seat(player, chips)

    def add_chips(self, number: int, chips: int) -> None:
        """Add chips now between hands, or when the hand ends (table stakes)."""
        _check_chips(chips)
        seat = self._seat(number)
        if self.in_hand(number):
            seat.pending_chips += chips
        else:
            seat.stack += chips

    def sit_out(self, number: int, *, next_hand: bool = False) -> None:
        seat = self._seat(number)
        if next_hand and self.in_hand(number):
            seat.sit_out_next_hand = True
        else:
            seat.sitting_out = True

    def sit_in(self, number: int) -> None:
        seat = self._seat(number)
        seat.sitting_out = False
        seat.sit_out_next_hand = False

    def leave(self, number: int) -> int | None:
        """Free the seat and return its chips; during its hand, mark it to leave after."""
        seat = self._seat(number)
        if self.in_hand(number):
            seat.leaving = True
            return None
        self.seats[number] = None
        return seat.stack + seat.pending_chips

    # ------------------------------------------------------------------ hands

    def in_hand(self, number: int) -> bool:
        return self.hand is not None and not self.hand.is_over() and number in self.hand.index_of

    def needed_to_play(self) -> int:
        config = self.config
        if config.eligibility == "ante":
            return max(config.ante, 1)
        return max(config.ante + config.bring_in, 1)

    def dealt_in(self) -> list[int]:
        """The seat numbers that would be dealt the next hand, in position order."""
        need = self.needed_to_play()
        return [
            number
            for number, seat in enumerate(self.seats)
            if seat is not None and not seat.sitting_out and not seat.leaving
            and seat.stack >= need
        ]

    def start_hand(self, deck: Deck) -> Hand:
        if self.hand is not None and not self.hand.is_over():
            raise IllegalAction("a hand is in progress", code="hand_in_progress")
        if self.hand is not None:
            self.finish_hand()
        players = self.dealt_in()
        if len(players) < 2:
            raise IllegalAction("two players must be sitting in", code="not_enough_players")
        seats = [(number, self._seat(number).stack) for number in players]
        self.hand = Hand(self.config, seats, deck)
        return self.hand

    def finish_hand(self) -> list[tuple[int, str, int]]:
        """Settle the finished hand: stacks, chips added meanwhile, leavers, sit-outs.

        Returns the players who left, as (seat, player, chips taken away).
        """
        hand = self.hand
        if hand is None:
            return []
        if not hand.is_over():
            raise IllegalAction("the hand is not over", code="hand_in_progress")
        for number, stack in hand.result().stacks.items():
            seat = self.seats[number]
            assert seat is not None
            seat.stack = stack
        self.hands_played += 1
        return self._settle()

    def cancel_hand(self) -> list[tuple[int, str, int]]:
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

    def _settle(self) -> list[tuple[int, str, int]]:
        """Between hands: chips added meanwhile join the stacks, "sit out next hand" takes
        effect, and whoever asked to leave leaves."""
        departures: list[tuple[int, str, int]] = []
        for number, seat in enumerate(self.seats):
            if seat is None:
                continue
            seat.stack += seat.pending_chips
            seat.pending_chips = 0
            if seat.sit_out_next_hand:
                seat.sitting_out, seat.sit_out_next_hand = True, False
            if seat.leaving:
                departures.append((number, seat.player, seat.stack))
                self.seats[number] = None
        self.hand = None
        return departures


def _check_chips(chips: int) -> None:
    if not isinstance(chips, int) or isinstance(chips, bool) or chips <= 0:
        raise InvalidAction("chips must be a positive whole number", code="bad_amount")
