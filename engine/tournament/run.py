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
* ``propose_deal`` / ``accept_deal`` / ``decline_deal``: a deal at the final table
  (``engine.tournament.offers``): worked out at a hand boundary, shown, made when every
  player left accepts; the table deals no hand while one stands.
* An operator's requests: ``pause`` and ``resume``; ``move`` a player, ``disqualify`` one,
  ``add_time`` to the level in play (below).

**Permits.** A tournament table deals a hand only when the director allows it (``Deal``):
that is how tables wait for moves, for a break's end, while the tournament is paused, and
hand for hand. Hand for hand starts when the next player out reaches the money (the players
left are one more than the places paid): a table then deals its next hand only once every
table has finished the current one, and the players out in one such round, at any table,
finish as if out in the same hand (by the chips each started it with).

**Stakes.** A table gets the level's stakes (``Stakes``) just before the permit of the first
hand dealt after the level changed: the hand in progress keeps its own.

**An operator's moves and disqualifications** happen between the player's hands: at once
when their table is between hands, else when its hand ends (the table deals again only
after). A move keeps the player's chips and seats them in an empty seat, never twice; a
disqualified player's chips leave play (``chips_removed``), they take no place and no prize,
and the place they would have taken now is nobody's: its prize goes to the places above it
(``engine.tournament.payouts.forfeit``). Until their hand ends the table plays it for them
(``KillHand``): killed at their turn, as an absent player's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from engine.errors import Refusal
from engine.protocol import ErrorCode
from engine.tournament.balance import Plan, TableSeats, plan_moves, tables_of
from engine.tournament.clock import ClockError, LevelClock
from engine.tournament.draw import Seating, draw_seats
from engine.tournament.offers import DealDesk, DealMade, DealOffered, DealWithdrawn
from engine.tournament.payouts import Elimination, Finish, forfeit, payouts, places_of, winner
from engine.tournament.spec import TournamentSpec
from engine.tournament.structure import Level

# ---------------------------------------------------------------------- the orders


@dataclass(frozen=True, slots=True)
class SeatPlayer:
    """Seat ``player`` at ``table`` with ``stack`` tournament chips."""

    table: int
    seat: int
    player: str
    stack: int


@dataclass(frozen=True, slots=True)
class RemovePlayer:
    """Take ``player`` from ``table`` between their hands (out, or moving on)."""

    table: int
    player: str


@dataclass(frozen=True, slots=True)
class Stakes:
    """The stakes of ``table``'s next hand."""

    table: int
    level: Level


@dataclass(frozen=True, slots=True)
class Deal:
    """``table`` may deal its hand ``number``."""

    table: int
    number: int


@dataclass(frozen=True, slots=True)
class CloseTable:
    """``table`` has no player left: it closes."""

    table: int


@dataclass(frozen=True, slots=True)
class Placed:
    """A player's finish: out (or the winner), their place and prize."""

    finish: Finish


@dataclass(frozen=True, slots=True)
class Finished:
    """The tournament is over: ``winner`` holds every chip."""

    winner: str


@dataclass(frozen=True, slots=True)
class Moved:
    """A player moved between tables: ``reason`` is ``balance``, ``break``, ``final_table``
    or ``operator``; ``waited`` the seconds since the tables fell out of balance (an
    operator's move: since it was asked), a hand in play holding it up."""

    player: str
    from_table: int
    to_table: int
    reason: str
    waited: float


@dataclass(frozen=True, slots=True)
class KillHand:
    """``player``, disqualified during their hand at ``table``: the table plays it for them
    (a forced bring-in, else a fold at their turn) and they may not sit in again; the
    director takes them away when it ends."""

    table: int
    player: str


@dataclass(frozen=True, slots=True)
class Disqualified:
    """``player`` is out of the tournament with no place and no prize; ``chips`` left play."""

    player: str
    chips: int


Order = (
    SeatPlayer
    | RemovePlayer
    | Stakes
    | Deal
    | CloseTable
    | Placed
    | Finished
    | DealOffered
    | DealMade
    | DealWithdrawn
    | Moved
    | KillHand
    | Disqualified
)


@dataclass(frozen=True, slots=True)
class PendingMove:
    """An operator's move waiting for the player's hand to end: to ``table`` (None: the
    director picks), at ``seat`` (None: the table's last seat to open), asked at ``asked``."""

    table: int | None
    seat: int | None
    asked: float


# ---------------------------------------------------------------------- the state


@dataclass(slots=True)
class TableState:
    """A running table as the director knows it."""

    seats: dict[int, str]
    opened: list[int] = field(default_factory=list)  # empty seats, most recently opened last
    next_hand: int = 1  # the number of the next hand it deals
    in_hand: bool = False
    allowed: bool = False  # a permit for ``next_hand`` was given and not yet used
    stakes: int | None = None  # the clock entry whose stakes it has

    @property
    def busy(self) -> bool:
        """Playing a hand, or allowed to deal one: its hand may have begun unheard of (the
        director hears of a hand once it is written), so it gives no player until it ends."""
        return self.in_hand or self.allowed


class RunError(ValueError):
    """A fact that does not fit the tournament's state (a bug or a forged journal)."""


class TournamentRun:
    """The director's state after the facts so far; each method takes one fact and returns
    the orders it calls for, in the order they are to be carried out."""

    def __init__(
        self, spec: TournamentSpec, *, tournament_id: int, seed: bytes, prize_pool: int
    ) -> None:
        self.spec = spec
        self.tournament_id = tournament_id
        self.seed = seed
        self.prize_pool = prize_pool
        self.tables: dict[int, TableState] = {}
        self.stacks: dict[str, int] = {}  # every player still in, at their last hand's end
        self.prizes: tuple[int, ...] = ()
        self.finishes: list[Finish] = []
        self.clock: LevelClock | None = None
        self.draw_round = 2  # the start's draw is round 1
        self.draws: list[Seating] = []
        self.hand_for_hand = False
        self.round_out: list[Elimination] = []  # hand for hand: the round's players out
        self.hold: frozenset[int] = frozenset()
        self.over = False
        self.deals = DealDesk()
        self.unbalanced_since: float | None = None  # a balancing move waits for a hand
        # An operator's requests: waiting for a hand's end, and the chips they took out.
        self.chips_issued = 0
        self.moving: dict[str, PendingMove] = {}
        self.disqualifying: dict[str, float] = {}  # player -> asked at
        self.disqualified: dict[str, int] = {}  # player -> chips removed from play
        self.moved_by_operator: set[str] = set()  # balancing moves another while it can

    # ------------------------------------------------------------------ facts

    def start(self, players: Sequence[str], at: float) -> list[Order]:
        """The field drawn to its tables, seated with the starting chips, dealing."""
        if self.clock is not None:
            raise RunError("the tournament has started already")
        if len(players) < 2:
            raise RunError("a tournament starts with at least two players")
        seating = draw_seats(self.seed, self.tournament_id, players, self.spec.seats_per_table)
        self.draws.append(seating)
        self.prizes = payouts(self.prize_pool, len(players), self.spec.payout_table)
        orders: list[Order] = []
        for number, table in sorted(tables_of(seating).items()):
            self.tables[number] = TableState(seats=dict(table.seats))
        chips = self.spec.structure.starting_chips
        self.chips_issued += chips * len(players)
        for placement in seating.placements:
            self.stacks[placement.player] = chips
            orders.append(SeatPlayer(placement.table, placement.seat, placement.player, chips))
        self.clock = LevelClock.start(self.spec.structure, at, tables=len(self.tables))
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
        orders = self._disqualify_at_hand_end(table, at)
        if self.over:
            return orders
        out = [Elimination(p, starting[p]) for p in sorted(players) if self.stacks.get(p) == 0]
        orders += self._move_at_hand_end(table, at)
        if self.hand_for_hand:
            self.round_out.extend(out)
            if any(other.busy for other in self.tables.values()):
                return orders  # the round's players out are placed together, at its end
            out, self.round_out = self.round_out, []
        if out:
            orders += self._place(out)
        orders += self._deal_at_boundary(at)
        if self.over:
            return orders
        orders += self._balance(at, [e.player for e in out])
        return orders + self._release(at)

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

    def wake(self, at: float) -> list[Order]:
        """The time passed on: a break over, a deal's offer out of time, tables allowed
        again."""
        if self.over:
            return []
        return [*self.deals.expire(at), *self._release(at)]

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

    def _deal_at_boundary(self, at: float) -> list[Order]:
        """A proposal's amounts shown once no hand is in play (or the proposal dropped, the
        tournament over)."""
        if self.over:
            return [*self.deals.drop()]
        if self.deals.proposal is None or any(t.busy for t in self.tables.values()):
            return []
        return [self.deals.show(self._final_stacks(), self._prizes_left(), at)]

    def _final_stacks(self) -> dict[str, int]:
        """The players left, in the final table's seat order, with their chips."""
        (table,) = self.tables.values()
        return {player: self.stacks[player] for _, player in sorted(table.seats.items())}

    def _prizes_left(self) -> tuple[int, ...]:
        """The prizes still to pay, first place first, one a player left at most."""
        return self.deals.prizes_now(self.prizes)[: len(self.stacks)]

    def _player_left(self, player: str) -> None:
        if player not in self.stacks:
            raise Refusal(
                f"{player} is not a player left in the tournament", code=ErrorCode.NOT_PLAYING
            )

    # ------------------------------------------------------------------ an operator's requests

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
        else when its hand ends (the table plays it for them meanwhile)."""
        self._open_clock()
        source = self._playing(player, chips_needed=False)
        self.moving.pop(player, None)
        if self.tables[source].busy:
            self.disqualifying[player] = at
            return [KillHand(source, player)]
        orders = self._disqualify_now(player)
        if self.over:
            return orders
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
                orders += self._disqualify_now(player)
        return orders

    def _disqualify_now(self, player: str) -> list[Order]:
        """Out with no place: the place they would take now is nobody's (its prize to the
        places above), their chips out of play."""
        self.prizes = forfeit(self.prizes, len(self.stacks))
        chips = self.stacks.pop(player)
        self.disqualified[player] = chips
        self.round_out = [e for e in self.round_out if e.player != player]
        orders: list[Order] = []
        for number, state in self.tables.items():
            for seat, sitting in list(state.seats.items()):
                if sitting == player:
                    orders.append(RemovePlayer(number, player))
                    del state.seats[seat]
                    state.opened.append(seat)
        orders.append(Disqualified(player, chips))
        orders += self.deals.withdraw("disqualified")  # a deal's players are the players left
        self._check_hand_for_hand()
        if len(self.stacks) > 1 and self.round_out and not self.hand_for_hand:
            out, self.round_out = self.round_out, []  # no bubble left: its round is over
            return orders + self._place(out)
        return orders + self._end_if_won()

    @property
    def chips_removed(self) -> int:
        """Chips taken out of play with disqualified players."""
        return sum(self.disqualified.values())

    # ------------------------------------------------------------------ what the facts call for

    def _place(self, out: list[Elimination]) -> list[Order]:
        players_left = len(self.stacks)
        prizes = self.deals.prizes_now(self.prizes)  # after a deal: the amount played for
        orders: list[Order] = []
        for finish in places_of(out, players_left=players_left, prizes=prizes):
            self.finishes.append(finish)
            orders.append(Placed(finish))
            del self.stacks[finish.player]
        for number, state in self.tables.items():
            for seat, player in list(state.seats.items()):
                if player not in self.stacks:
                    orders.append(RemovePlayer(number, player))
                    del state.seats[seat]
                    state.opened.append(seat)
        orders += self._end_if_won()
        self._check_hand_for_hand()
        return orders

    def _end_if_won(self) -> list[Order]:
        """One player left (or none: the last chips left play with a disqualified player,
        and the best of the players out last took first place): the tournament is over."""
        if len(self.stacks) > 1:
            return []
        orders: list[Order] = []
        if self.stacks:
            (last,) = self.stacks
            finish = winner(last, self.deals.prizes_now(self.prizes))
            self.finishes.append(finish)
            orders.append(Placed(finish))
        else:
            last = next(f.player for f in self.finishes if f.place == 1)
        self.over = True
        self.round_out, self.moving, self.disqualifying = [], {}, {}
        orders.append(Finished(last))
        for number, state in sorted(self.tables.items()):
            orders += [RemovePlayer(number, player) for player in state.seats.values()]
            orders.append(CloseTable(number))
        self.tables.clear()
        return orders

    def _balance(self, at: float, out: list[str]) -> list[Order]:
        layout = {
            number: TableSeats(dict(state.seats), not state.busy, tuple(state.opened))
            for number, state in self.tables.items()
        }
        plan = plan_moves(
            layout,
            self.spec.seats_per_table,
            (),
            seed=self.seed,
            tournament_id=self.tournament_id,
            draw_round=self.draw_round,
            keep=self.moved_by_operator,
        )
        self.hold = plan.hold
        since = at if self.unbalanced_since is None else self.unbalanced_since
        self.unbalanced_since = since if plan.waiting_for else None
        return self._carry_out(plan, waited=at - since)

    def _carry_out(self, plan: Plan, *, waited: float) -> list[Order]:
        if plan.draw is not None:
            self.draws.append(plan.draw)
            self.draw_round += 1
        removes: list[Order] = []
        seats: list[Order] = []
        for move in plan.moves:
            removes.append(RemovePlayer(move.from_table, move.player))
            seats.append(
                SeatPlayer(move.to_table, move.to_seat, move.player, self.stacks[move.player])
            )
            seats.append(
                Moved(move.player, move.from_table, move.to_table, move.reason.value, waited)
            )
        closes: list[Order] = [CloseTable(number) for number in plan.broken]
        for number, state in list(self.tables.items()):
            if number not in plan.tables:
                del self.tables[number]
                continue
            after = plan.tables[number]
            state.seats = dict(after.seats)
            state.opened = list(after.opened)
        return removes + seats + closes

    def _release(self, at: float) -> list[Order]:
        """Permits for the tables that may deal now, each after its level's stakes."""
        reading = self._clock().read(at)
        if reading.paused or reading.level is None or self.deals.standing:
            return []
        if self.hand_for_hand and any(state.busy for state in self.tables.values()):
            return []
        orders: list[Order] = []
        for number, state in sorted(self.tables.items()):
            if state.in_hand or state.allowed or number in self.hold or len(state.seats) < 2:
                continue
            if state.stakes != reading.entry_index:
                orders.append(Stakes(number, reading.level))
                state.stakes = reading.entry_index
            orders.append(Deal(number, state.next_hand))
            state.allowed = True
        return orders

    def next_wake(self, at: float) -> float | None:
        """When the director must call :meth:`wake`: a break's end while tables wait, a
        deal's offer out of time."""
        if self.over or self.clock is None:
            return None
        reading = self.clock.read(at)
        due = [self.deals.expires_at]
        if reading.on_break and not reading.paused:
            due.append(reading.ends_at)
        return min((when for when in due if when is not None), default=None)

    def _check_hand_for_hand(self) -> None:
        """Hand for hand while the next player out reaches the money."""
        paid = sum(1 for prize in self.prizes if prize > 0)
        self.hand_for_hand = len(self.tables) > 1 and len(self.stacks) == paid + 1

    # ------------------------------------------------------------------ reading

    def _table(self, number: int) -> TableState:
        if number not in self.tables:
            raise RunError(f"table {number} is not running in this tournament")
        return self.tables[number]

    def _open_clock(self) -> LevelClock:
        """The clock of a tournament still playing (the director refuses requests to one
        over before they come here)."""
        if self.over:
            raise RunError("the tournament is over")
        return self._clock()

    def _clock(self) -> LevelClock:
        if self.clock is None:
            raise RunError("the tournament has not started")
        return self.clock

    def chips_in_play(self) -> int:
        """Every chip of the tournament, at the last hand boundary each table reached."""
        return sum(self.stacks.values())
