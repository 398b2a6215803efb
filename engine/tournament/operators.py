"""An operator's requests to a running tournament, a part of its director's state
(``engine.tournament.run``): ``pause`` and ``resume`` the clock, ``add_time`` to the level in
play, ``move`` a player, ``disqualify`` one. Each is refused (a :class:`Refusal` with its
code) before it changes anything.

**An operator's moves and disqualifications** happen between the player's hands: at once
when their table is between hands, else when its hand ends (the table deals again only
after). A move keeps the player's chips and seats them in an empty seat, never twice; a
disqualified player's chips leave play (``chips_removed``), they take no place and no prize,
and the place they would have taken now is nobody's: its prize goes to the places above it
(``engine.tournament.payouts.forfeit``; before the prizes are fixed, the field's last
places, one for each). Until their hand ends the table plays it for them (``KillHand``):
killed at their turn, as an absent player's. A disqualified player may not enter again nor
buy chips.
"""

from __future__ import annotations

import contextlib

from engine.errors import Refusal
from engine.protocol import ErrorCode
from engine.tournament.clock import ClockError
from engine.tournament.orders import (
    CloseTable,
    Disqualified,
    KillHand,
    Moved,
    Order,
    RemovePlayer,
    SeatPlayer,
)
from engine.tournament.payouts import forfeit
from engine.tournament.run_state import PendingMove, RunState


class OperatorRequests(RunState):
    """An operator's requests to a running tournament, each a fact of its journal."""

    # ------------------------------------------------------------------ the clock

    def pause(self, at: float) -> list[Order]:
        """The clock stops; no table deals another hand until :meth:`resume` (the hands in
        play are played out)."""
        clock = self._open_clock()
        if clock.paused:
            raise Refusal("the tournament is paused already", code=ErrorCode.TOURNAMENT_PAUSED)
        self.clock = clock.pause(at)
        return []

    def resume(self, at: float) -> list[Order]:
        clock = self._open_clock()
        if not clock.paused:
            raise Refusal("the tournament is not paused", code=ErrorCode.TOURNAMENT_NOT_PAUSED)
        self.clock = clock.resume(at)
        return self.wake(at)

    def add_time(self, seconds: float, at: float) -> list[Order]:
        """The level (or break) in play lasts ``seconds`` longer."""
        clock = self._open_clock()
        if not seconds > 0:
            raise Refusal("the time added must be above 0")  # bad_request
        try:
            self.clock = clock.add_time(at, seconds)
        except ClockError as error:
            raise Refusal(
                f"no time added: {error.reason}", code=ErrorCode.LEVEL_NOT_TIMED
            ) from error
        return []

    # ------------------------------------------------------------------ moves and disqualifications

    def move(self, player: str, table: int | None, seat: int | None, at: float) -> list[Order]:
        """An operator's move of ``player`` to ``table`` and ``seat`` (None: the director
        picks the table, fewest players first; the table's last seat to open): now if their
        table is between hands, else when its hand ends. Refused, nothing changed, when it
        cannot be made now."""
        self._open_clock()
        source = self._playing(player)
        if player in self.moving:
            raise Refusal(f"{player}'s move waits for their hand", code=ErrorCode.MOVE_PENDING)
        to_table, to_seat = self._move_target(source, table, seat)
        if self.tables[source].busy:
            self.moving[player] = PendingMove(table, seat, at)
            return []
        orders = self._move_now(player, source, to_table, to_seat, 0.0)
        if not self.tables[source].seats:  # its last player: it breaks
            del self.tables[source]
            orders.append(CloseTable(source))
        return orders + self._release(at)

    def disqualify(self, player: str, at: float) -> list[Order]:
        """``player`` out, their chips out of play: now if their table is between hands,
        else when its hand ends (the table plays it for them meanwhile). A player out of
        chips waiting to rebuy is disqualified at once (with none)."""
        self._open_clock()
        if player in self.waiting and player not in self.disqualified:
            return self._disqualify_waiting(player, at)
        source = self._playing(player, chips_needed=False)
        self.moving.pop(player, None)
        if self.tables[source].busy:
            self.disqualifying[player] = at
            return [KillHand(source, player)]
        orders = self._disqualify_now(player, at)
        if self.over:
            return orders + self._deal_at_boundary(at)
        return orders + self._balance(at, []) + self._release(at)

    def _playing(self, player: str, *, chips_needed: bool = True) -> int:
        """The table of a player still in (with chips, for a move), or a refusal."""
        if player in self.disqualifying or player in self.disqualified:
            raise Refusal(f"{player} is disqualified", code=ErrorCode.ALREADY_DISQUALIFIED)
        chips = self.stacks.get(player)
        if chips is None or (chips_needed and chips == 0):
            raise Refusal(
                f"{player} is not playing in this tournament", code=ErrorCode.NOT_IN_TOURNAMENT
            )
        return next(n for n, state in self.tables.items() if player in state.seats.values())

    def _move_target(self, source: int, table: int | None, seat: int | None) -> tuple[int, int]:
        """Where a move seats its player now (see :meth:`move`), or a refusal."""
        size = self.spec.seats_per_table
        if table is None:
            if seat is not None:
                raise Refusal("a seat is named with its table", code=ErrorCode.BAD_SEAT)
            takers = [
                (len(state.seats), number)
                for number, state in self.tables.items()
                if number != source and self._free_seats(number)
            ]
            if not takers:
                raise Refusal("no other table has a free seat", code=ErrorCode.TABLE_FULL)
            table = min(takers)[1]
        elif table not in self.tables:
            raise Refusal(
                f"the tournament runs no table {table}", code=ErrorCode.UNKNOWN_TOURNAMENT_TABLE
            )
        elif table == source:
            raise Refusal(f"the player sits at table {table}", code=ErrorCode.ALREADY_SEATED)
        free = self._free_seats(table)
        if seat is None:
            if not free:
                raise Refusal(f"table {table} is full", code=ErrorCode.TABLE_FULL)
            return table, free[-1]
        if not 0 <= seat < size:
            raise Refusal(f"seats are 0 to {size - 1}", code=ErrorCode.BAD_SEAT)
        if seat not in free:
            raise Refusal(f"seat {seat} of table {table} is taken", code=ErrorCode.SEAT_TAKEN)
        return table, seat

    def _free_seats(self, number: int) -> list[int]:
        """A table's empty seats in the order they opened, the last to open last (seats
        empty since the draw first, in seat order), less those a waiting move holds."""
        state = self.tables[number]
        held = {m.seat for m in self.moving.values() if m.table == number}
        empty = [s for s in range(self.spec.seats_per_table) if s not in state.seats]
        order = [s for s in empty if s not in state.opened] + state.opened
        return [s for s in order if s not in held]

    def _move_now(
        self, player: str, source: int, table: int, seat: int, waited: float
    ) -> list[Order]:
        state, target = self.tables[source], self.tables[table]
        (from_seat,) = [s for s, sitting in state.seats.items() if sitting == player]
        del state.seats[from_seat]
        state.opened.append(from_seat)
        target.seats[seat] = player
        if seat in target.opened:
            target.opened.remove(seat)
        self.moved_by_operator.add(player)
        return [
            RemovePlayer(source, player),
            SeatPlayer(table, seat, player, self.stacks[player]),
            Moved(player, source, table, "operator", waited),
        ]

    def _move_at_hand_end(self, table: int, at: float) -> list[Order]:
        """The moves that waited for ``table``'s hand: to the seat asked if still free, else
        the table's last to open, else where the director picks (no seat: they stay); a
        player left with no chips is out, not moved."""
        orders: list[Order] = []
        for player in sorted(self.tables[table].seats.values()):
            pending = self.moving.pop(player, None)
            if pending is None or self.stacks[player] == 0:
                continue
            target = None
            for to_table, to_seat in ((pending.table, pending.seat), (pending.table, None)):
                with contextlib.suppress(Refusal):
                    target = self._move_target(table, to_table, to_seat)
                    break
            with contextlib.suppress(Refusal):
                target = target or self._move_target(table, None, None)
            if target is None:
                continue
            orders += self._move_now(player, table, *target, waited=at - pending.asked)
        return orders

    def _disqualify_at_hand_end(self, table: int, at: float) -> list[Order]:
        orders: list[Order] = []
        for player in sorted(self.tables[table].seats.values()):
            if player in self.disqualifying and not self.over:
                del self.disqualifying[player]
                orders += self._disqualify_now(player, at)
        return orders

    def _disqualify_now(self, player: str, at: float) -> list[Order]:
        """Out with no place: the place they would take now is nobody's (its prize to the
        places above; before the prizes are fixed, the field's last place), their chips out
        of play."""
        if self.prizes_fixed:
            self.prizes = forfeit(self.prizes, len(self.stacks))
        else:
            self.forfeited += 1
        chips = self.stacks.pop(player)
        self.disqualified[player] = chips
        self.round_out = [e for e in self.round_out if e.player != player]
        orders = self._unseat_gone()
        orders.append(Disqualified(player, chips))
        orders += self.deals.withdraw("disqualified")  # a deal's players are the players left
        self._check_hand_for_hand()
        if self.stacks and self.round_out and not self.hand_for_hand:
            out, self.round_out = self.round_out, []  # no bubble left: its round is over
            orders += self._out(out, at)
        return orders + self._check_over()

    def _disqualify_waiting(self, player: str, at: float) -> list[Order]:
        """A player out of chips who might have rebought: out with no place, nothing to
        remove from play; their entry is not placed with the others out before the prizes
        were fixed."""
        del self.waiting[player]
        entry = self.entries[player]
        self.busts = [
            [b for b in group if (b.player, b.entry) != (player, entry)] for group in self.busts
        ]
        self.busts = [group for group in self.busts if group]
        self.forfeited += 1  # the prizes are not fixed during the rebuy period
        self.disqualified[player] = 0
        orders: list[Order] = [Disqualified(player, 0)]
        orders += self._check_over()
        if self.over:
            return orders + self._deal_at_boundary(at)
        return orders + self._release(at)

    @property
    def chips_removed(self) -> int:
        """Chips taken out of play with disqualified players."""
        return sum(self.disqualified.values())
