"""A tournament as its director runs it, pure: from the facts of play to the orders it gives.

The director (``server.tournaments``) owns the I/O: it journals each fact, tells the tables
what this module orders and pays the prizes. Everything it decides is decided here, from
the facts alone, so that a director taken over by another node replays the journal into the
same state and carries on:

* ``start``: the seat draw (``engine.tournament.draw``), each player seated with the starting
  chips, each table told the first level's stakes and allowed its first hand.
* ``hand_began`` / ``hand_ended``: a table's hand, with its players' stacks at its start and
  end. Players left with no chips are out: placed by the chips they started the hand with
  (``engine.tournament.payouts``), their prizes from the table published at the start. Then
  the tables are balanced (``engine.tournament.balance``): a player moves only from a table
  between hands, and a broken table's players and the final table are drawn at random.
* ``wake``: the clock moved on (a break ended, a pause, a deal's offer ran out of time).
* An operator's requests: ``pause`` and ``resume``; ``move`` a player, ``disqualify`` one,
  ``add_time`` to the level in play (``engine.tournament.operators``).
* ``propose_deal`` / ``accept_deal`` / ``decline_deal``: a deal at the final table
  (``engine.tournament.offers``): worked out at a hand boundary, shown, made when every
  player left accepts; the table deals no hand while one stands.

**Permits.** A tournament table deals a hand only when the director allows it (``Deal``):
that is how tables wait for moves, for a break's end, while the tournament is paused, and
hand for hand. Hand for hand starts when the next player out reaches the money (the players
left are one more than the places paid): a table then deals its next hand only once every
table has finished the current one, and the players out in one such round, at any table,
finish as if out in the same hand (by the chips each started it with).

**Stakes.** A table gets the level's stakes (``Stakes``) just before the permit of the first
hand dealt after the level changed: the hand in progress keeps its own.

**Late entries, re-entries, rebuys and the add-on** (the format's options,
``engine.tournament.spec``) are facts too: ``enter``, ``rebuy``, ``add_on``, each checked
before it changes anything (``check_entry``, ``check_rebuy``, ``check_add_on``), in
``engine.tournament.purchases``. A player out of chips during the rebuy period may rebuy
for ``REBUY_WAIT_SECONDS`` (or until the rebuy period ends, the sooner).

**The prizes** are fixed (``PrizesFixed``) once nothing more can be bought (late
registration, the rebuy period and the add-on over), from the entries and the prize pool
then. Players out before are out at once (``Busted``: their entry is over) and placed then,
the later out the better (players out in one hand by the chips they started it with), each
entry its own place; after it, each is placed as they go out. The tournament is over when
one player holds every chip and nobody out may still rebuy, which closes late registration.

The chips issued (each entry's starting chips, each rebuy's and add-on's) are
``chips_issued``: at every hand boundary the stacks and the chips bought and not yet added
hold them exactly.

**An operator's moves and disqualifications** (``engine.tournament.operators``) happen
between the player's hands; a disqualified player's chips leave play (``chips_removed``)
and they take no place and no prize.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.errors import Refusal
from engine.protocol import ErrorCode
from engine.tournament.balance import tables_of
from engine.tournament.clock import LevelClock
from engine.tournament.draw import draw_seats
from engine.tournament.operators import OperatorRequests
from engine.tournament.orders import (
    AddChips,
    Busted,
    CloseTable,
    Deal,
    Disqualified,
    Finished,
    KillHand,
    Moved,
    OpenTable,
    Order,
    Placed,
    PrizesFixed,
    RemovePlayer,
    SeatPlayer,
    Stakes,
)
from engine.tournament.payouts import Elimination
from engine.tournament.purchases import Purchases
from engine.tournament.run_state import REBUY_WAIT_SECONDS, Bust, PendingMove, RunError, TableState


class TournamentRun(OperatorRequests, Purchases):
    """The director's state after the facts so far; each method takes one fact and returns
    the orders it calls for, in the order they are to be carried out."""

    # ------------------------------------------------------------------ facts

    def start(self, players: Sequence[str], at: float) -> list[Order]:
        """The field drawn to its tables, seated with the starting chips, dealing."""
        if self.clock is not None:
            raise RunError("the tournament has started already")
        if len(players) < 2:
            raise RunError("a tournament starts with at least two players")
        seating = draw_seats(self.seed, self.tournament_id, players, self.spec.seats_per_table)
        self.draws.append(seating)
        orders: list[Order] = []
        for number, table in sorted(tables_of(seating).items()):
            self.tables[number] = TableState(seats=dict(table.seats))
        self.last_table = max(self.tables)
        chips = self.spec.structure.starting_chips
        for placement in seating.placements:
            self.stacks[placement.player] = chips
            self.entries[placement.player] = 1
            orders.append(SeatPlayer(placement.table, placement.seat, placement.player, chips))
        self.entrants = len(players)
        self.chips_issued = chips * len(players)
        self.clock = LevelClock.start(self.spec.structure, at, tables=len(self.tables))
        if not self.spec.money_open(0):  # a freezeout: its prizes are known at the start
            orders = self._fix_prizes() + orders
        self._check_hand_for_hand()
        return orders + self._release(at)

    def hand_began(self, table: int, number: int, at: float) -> list[Order]:
        state = self._table(table)
        if number != state.next_hand or not state.allowed:
            raise RunError(f"table {table} began hand {number} without its permit")
        state.in_hand, state.allowed = True, False
        self.clock = self._clock().begin_hand(at, len(self.tables))
        return []

    def hand_ended(
        self,
        table: int,
        number: int,
        stacks: Mapping[str, int],
        starting: Mapping[str, int],
        at: float,
    ) -> list[Order]:
        """A table's hand over (or cancelled, its chips back): ``stacks`` and ``starting``
        hold every player seated at the table, at the hand's end and at its start (a player
        seated during the hand, not dealt in, the same in both). The players out placed, the
        tables balanced, the next hands allowed."""
        state = self._table(table)
        if not state.in_hand or number != state.next_hand:
            raise RunError(f"table {table} ended hand {number}, which it was not playing")
        state.in_hand, state.next_hand = False, number + 1
        players = set(state.seats.values())
        if set(stacks) != players or set(starting) != players:
            raise RunError(f"table {table}'s hand {number} was not played by its players")
        if sum(stacks.values()) != sum(starting.values()):
            raise RunError(f"table {table}'s hand {number} did not keep its chips")
        self.stacks.update(stacks)
        orders: list[Order] = self._add_pending(table)
        orders += self._disqualify_at_hand_end(table, at)
        if self.over:
            return orders + self._deal_at_boundary(at)
        orders += self._advance(at)
        out = [Elimination(p, starting[p]) for p in sorted(players) if self.stacks.get(p, 1) == 0]
        orders += self._move_at_hand_end(table, at)
        if self.hand_for_hand:
            self.round_out.extend(out)
            if any(other.busy for other in self.tables.values()):
                return orders  # the round's players out are placed together, at its end
            out, self.round_out = self.round_out, []
        if out:
            orders += self._out(out, at)
        orders += self._check_over()
        orders += self._deal_at_boundary(at)
        if self.over:
            return orders
        orders += self._balance(at, [e.player for e in out])
        return orders + self._release(at)

    # ------------------------------------------------------------------ deals at the final table

    def propose_deal(
        self, player: str, method: str, played_for: int, seconds: float, at: float
    ) -> list[Order]:
        """``player`` proposes a deal; its amounts are worked out now if the final table is
        between hands, else once its hand ends (``engine.tournament.offers``)."""
        self._player_left(player)
        self._open_clock()
        tables = list(self.tables.values())
        if len(tables) != 1 or set(tables[0].seats.values()) != set(self.stacks):
            raise Refusal(
                "deals are made at the final table, once every player left sits at it",
                code=ErrorCode.NOT_FINAL_TABLE,
            )
        self.deals.propose(
            player,
            method,
            played_for,
            seconds,
            stacks=self._final_stacks(),
            prizes=self._prizes_left(),
        )
        return self._deal_at_boundary(at)

    def accept_deal(self, player: str, number: int, at: float) -> list[Order]:
        """``player`` accepts offer ``number``; the last to accept makes the deal, and the
        table deals again."""
        self._player_left(player)
        made = self.deals.accept(player, number, at)
        return [] if made is None else [made, *self._release(at)]

    def decline_deal(self, player: str, number: int, at: float) -> list[Order]:
        """``player`` declines deal ``number``: withdrawn, play goes on."""
        self._player_left(player)
        return [self.deals.decline(player, number), *self._release(at)]

    def _player_left(self, player: str) -> None:
        if player not in self.stacks:
            raise Refusal(
                f"{player} is not a player left in the tournament", code=ErrorCode.NOT_PLAYING
            )


__all__ = [
    "REBUY_WAIT_SECONDS",
    "AddChips",
    "Bust",
    "Busted",
    "CloseTable",
    "Deal",
    "Disqualified",
    "Finished",
    "KillHand",
    "Moved",
    "OpenTable",
    "Order",
    "PendingMove",
    "Placed",
    "PrizesFixed",
    "RemovePlayer",
    "RunError",
    "SeatPlayer",
    "Stakes",
    "TableState",
    "TournamentRun",
]
