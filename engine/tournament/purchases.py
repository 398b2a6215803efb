"""What players buy from a running tournament, a part of its director's state
(``engine.tournament.run``).

**Late entries, re-entries, rebuys and the add-on** (the format's options,
``engine.tournament.spec``) are facts too, each checked before it changes anything
(``check_entry``, ``check_rebuy``, ``check_add_on``: a :class:`Refusal` with its code):

* ``enter``: a late entry, or a re-entry of a player out, during late registration: the
  starting chips, seated at a table with the fewest players (drawn among the ties, a seat
  draw of its own round), a new table opened when every table is full; dealt in from that
  table's next hand.
* ``rebuy`` and ``add_on``: chips bought. They are added between the player's hands: at once
  when the player's table is between hands (``AddChips``), else when its hand ends, before
  it deals again. A player out of chips during the rebuy period leaves the table and may
  rebuy for ``REBUY_WAIT_SECONDS`` (or until the rebuy period ends, the sooner): seated again
  like a late entrant, or else out from the hand they went broke in.
"""

from __future__ import annotations

from engine.errors import Refusal
from engine.protocol import ErrorCode
from engine.tournament.clock import ClockReading
from engine.tournament.draw import Draw, TableQuota, check_player, run_draw
from engine.tournament.orders import AddChips, OpenTable, Order, SeatPlayer
from engine.tournament.run_state import RunState, TableState


class Purchases(RunState):
    """What players buy from a running tournament: entries, rebuys and the add-on."""

    # ------------------------------------------------------------------ requests

    def check_entry(self, player: str, at: float) -> None:
        """Refused (nothing changed) unless ``player`` may enter now: late registration
        open, not in already, a re-entry left, the field not full."""
        check_player(player)  # a name a seat draw can carry
        reading = self._reading(at)
        self._not_disqualified(player)
        if player in self.stacks or player in self._still_waiting(at):
            raise Refusal(f"{player} is in the tournament", code=ErrorCode.ALREADY_REGISTERED)
        if not self.spec.late_registration_open(reading.levels_ended):
            raise Refusal("late registration is over", code=ErrorCode.REGISTRATION_CLOSED)
        if self._would_end(at):
            raise Refusal("one player holds every chip", code=ErrorCode.TOURNAMENT_OVER)
        used = self.entries.get(player, 0)
        if used and not self.spec.may_re_enter(used, reading.levels_ended):
            raise Refusal(
                f"{player} has used the {self.spec.re_entries} re-entries this tournament has",
                code=ErrorCode.RE_ENTRIES_USED,
            )
        if self.entrants >= self.spec.max_entrants:
            raise Refusal(
                f"the field is full ({self.spec.max_entrants} entries)",
                code=ErrorCode.TOURNAMENT_FULL,
            )

    def enter(self, player: str, at: float) -> list[Order]:
        """A late entry (or a re-entry): the buy-in to the pool, the starting chips, a seat at
        a table with the fewest players."""
        self.check_entry(player, at)
        orders = self._advance(at)
        self.entries[player] = self.entries.get(player, 0) + 1
        self.entrants += 1
        self.prize_pool += self.spec.buy_in
        chips = self.spec.structure.starting_chips
        self.chips_issued += chips
        orders += self._seat_new(player, chips)
        return orders + self._balance(at, []) + self._release(at)

    def check_rebuy(self, player: str, at: float) -> None:
        """Refused (nothing changed) unless ``player`` may rebuy now: the rebuy period, in
        the tournament (or out of chips and still in time), at most the starting chips
        (those bought and not yet added counted)."""
        reading = self._reading(at)
        self._not_disqualified(player)
        if not self.spec.rebuys_open(reading.levels_ended):
            raise Refusal("no rebuys now", code=ErrorCode.REBUYS_CLOSED)
        if player in self.waiting and player not in self._still_waiting(at):
            raise Refusal(f"{player}'s time to rebuy is over", code=ErrorCode.REBUYS_CLOSED)
        if player not in self.stacks and player not in self.waiting:
            raise Refusal(f"{player} is not in the tournament", code=ErrorCode.NOT_REGISTERED)
        stack = self.stacks.get(player, 0) + self.pending.get(player, 0)
        if not self.spec.may_rebuy(stack, reading.levels_ended):
            raise Refusal(
                f"{player} holds {stack} chips, more than the "
                f"{self.spec.structure.starting_chips} a rebuy allows",
                code=ErrorCode.STACK_TOO_BIG,
            )

    def rebuy(self, player: str, at: float) -> list[Order]:
        """A rebuy's chips: added between the player's hands, or, for a player out of chips,
        with a seat at a table with the fewest players."""
        self.check_rebuy(player, at)
        orders = self._advance(at)
        assert self.spec.rebuys is not None  # checked
        chips = self.spec.rebuys.chips
        self.prize_pool += self.spec.buy_in
        self.chips_issued += chips
        if player not in self.waiting:
            return orders + self._add_chips(player, chips)
        del self.waiting[player]
        entry = self.entries[player]
        self.busts = [
            [b for b in group if (b.player, b.entry) != (player, entry)] for group in self.busts
        ]
        self.busts = [group for group in self.busts if group]
        orders += self._seat_new(player, chips)
        return orders + self._balance(at, []) + self._release(at)

    def check_add_on(self, player: str, at: float) -> None:
        """Refused (nothing changed) unless ``player`` may take the add-on now: its time, in
        the tournament, not taken yet with this entry."""
        reading = self._reading(at)
        self._not_disqualified(player)
        if not self.spec.add_on_open(reading.levels_ended):
            raise Refusal("no add-on now", code=ErrorCode.ADD_ON_CLOSED)
        if self._would_end(at):
            raise Refusal("one player holds every chip", code=ErrorCode.TOURNAMENT_OVER)
        if player not in self.stacks:
            raise Refusal(f"{player} is not in the tournament", code=ErrorCode.NOT_REGISTERED)
        if (player, self.entries[player]) in self.add_ons:
            raise Refusal(f"{player} has taken the add-on", code=ErrorCode.ADD_ON_TAKEN)

    def add_on(self, player: str, at: float) -> list[Order]:
        self.check_add_on(player, at)
        orders = self._advance(at)
        assert self.spec.rebuys is not None and self.spec.rebuys.add_on_chips is not None
        chips = self.spec.rebuys.add_on_chips
        self.add_ons.add((player, self.entries[player]))
        self.prize_pool += self.spec.buy_in
        self.chips_issued += chips
        return orders + self._add_chips(player, chips)

    # ------------------------------------------------------------------ their steps

    def _not_disqualified(self, player: str) -> None:
        if player in self.disqualified or player in self.disqualifying:
            raise Refusal(f"{player} is disqualified", code=ErrorCode.ALREADY_DISQUALIFIED)

    def _reading(self, at: float) -> ClockReading:
        return self._open_clock().read(at)

    def _would_end(self, at: float) -> bool:
        """Whether the time alone ends the tournament: one player left with chips, and the
        time to rebuy of every player out over."""
        return len(self.stacks) <= 1 and not self._still_waiting(at)

    def _add_chips(self, player: str, chips: int) -> list[Order]:
        """Chips bought: added now if the player's table is between hands, else when its
        hand ends."""
        table = next(n for n, state in self.tables.items() if player in state.seats.values())
        if self.tables[table].busy:
            self.pending[player] = self.pending.get(player, 0) + chips
            return []
        self.stacks[player] += chips
        return [AddChips(table, player, chips, self.stacks[player])]

    def _add_pending(self, table: int) -> list[Order]:
        """The chips the table's players bought during its hand, added as it ends."""
        orders: list[Order] = []
        for player in sorted(self.tables[table].seats.values()):
            chips = self.pending.pop(player, 0)
            if chips:
                self.stacks[player] += chips
                orders.append(AddChips(table, player, chips, self.stacks[player]))
        return orders

    def _seat_new(self, player: str, chips: int) -> list[Order]:
        """``player`` seated with ``chips`` at a table with the fewest players, drawn among
        the ties (a seat draw of its own round), a new table opened when every one is full."""
        size = self.spec.seats_per_table
        orders: list[Order] = []
        room = [n for n, state in self.tables.items() if len(state.seats) < size]
        if not room:
            self.last_table += 1
            self.tables[self.last_table] = TableState(seats={})
            orders.append(OpenTable(self.last_table))
            room = [self.last_table]
        fewest = min(len(self.tables[n].seats) for n in room)
        quotas = tuple(
            TableQuota(n, 1, tuple(s for s in range(size) if s not in self.tables[n].seats))
            for n in sorted(room)
            if len(self.tables[n].seats) == fewest
        )
        seating = run_draw(self.seed, Draw(self.tournament_id, self.draw_round, (player,), quotas))
        self.draws.append(seating)
        self.draw_round += 1
        ((_, number, seat),) = seating.placements
        state = self.tables[number]
        state.seats[seat] = player
        if seat in state.opened:
            state.opened.remove(seat)
        self.stacks[player] = chips
        self._check_hand_for_hand()
        return [*orders, SeatPlayer(number, seat, player, chips)]
