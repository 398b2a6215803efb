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
  ``add_time`` to the level in play (below).
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
* **The prizes** are fixed (``PrizesFixed``) once nothing more can be bought (late
  registration, the rebuy period and the add-on over), from the entries and the prize pool
  then. Players out before are out at once (``Busted``: their entry is over) and placed then,
  the later out the better (players out in one hand by the chips they started it with), each
  entry its own place; after it, each is placed as they go out. The tournament is over when
  one player holds every chip and nobody out may still rebuy, which closes late registration.

The chips issued (each entry's starting chips, each rebuy's and add-on's) are
``chips_issued``: at every hand boundary the stacks and the chips bought and not yet added
hold them exactly.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from engine.errors import Refusal
from engine.protocol import ErrorCode
from engine.tournament.balance import Plan, TableSeats, plan_moves, tables_of
from engine.tournament.clock import ClockError, ClockReading, LevelClock
from engine.tournament.draw import (
    Draw,
    Seating,
    TableQuota,
    check_player,
    draw_seats,
    run_draw,
)
from engine.tournament.offers import DealDesk
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
from engine.tournament.payouts import Elimination, Finish, forfeit, payouts, places_of, winner
from engine.tournament.spec import TournamentSpec

REBUY_WAIT_SECONDS = 60.0
"""How long a player out of chips during the rebuy period may still rebuy."""


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


@dataclass(frozen=True, slots=True)
class Bust:
    """An entry out of chips before the prizes were fixed, with the chips it started its
    last hand with (how players out in one hand are placed)."""

    player: str
    entry: int
    chips_at_start: int


@dataclass(frozen=True, slots=True)
class PendingMove:
    """An operator's move waiting for the player's hand to end: to ``table`` (None: the
    director picks), at ``seat`` (None: the table's last seat to open), asked at ``asked``."""

    table: int | None
    seat: int | None
    asked: float


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
        # Late entries, re-entries, rebuys and add-ons.
        self.entrants = 0  # entries so far, re-entries included
        self.entries: dict[str, int] = {}  # each player's entries so far (the last in play)
        self.chips_issued = 0
        self.pending: dict[str, int] = {}  # chips bought during the player's hand
        self.waiting: dict[str, float] = {}  # out of chips in the rebuy period: until when
        self.busts: list[list[Bust]] = []  # out before the prizes were fixed, by hand
        self.add_ons: set[tuple[str, int]] = set()  # (player, entry)
        self.prizes_fixed = False
        self.last_table = 0  # the highest table number used
        # An operator's moves and disqualifications: waiting for a hand's end, and the chips
        # they took out of play.
        self.unbalanced_since: float | None = None  # a balancing move waits for a hand
        self.moving: dict[str, PendingMove] = {}
        self.disqualifying: dict[str, float] = {}  # player -> asked at
        self.disqualified: dict[str, int] = {}  # player -> chips removed from play
        self.forfeited = 0  # disqualified before the prizes were fixed: last places nobody's
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
        again; the players out who did not rebuy in time out for good, the prizes fixed
        once nothing more can be bought."""
        if self.over:
            return []
        orders = self._advance(at)
        orders += self._check_over()
        if self.over:
            return orders + self._deal_at_boundary(at)
        return [*orders, *self.deals.expire(at), *self._release(at)]

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

    # ------------------------------------------------------------------ entries and chips bought

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

    def _not_disqualified(self, player: str) -> None:
        if player in self.disqualified or player in self.disqualifying:
            raise Refusal(f"{player} is disqualified", code=ErrorCode.ALREADY_DISQUALIFIED)

    def _reading(self, at: float) -> ClockReading:
        return self._open_clock().read(at)

    def _still_waiting(self, at: float) -> set[str]:
        """The players out of chips who may still rebuy at ``at``."""
        if not self.spec.rebuys_open(self._clock().read(at).levels_ended):
            return set()
        return {player for player, until in self.waiting.items() if until > at}

    def _would_end(self, at: float) -> bool:
        """Whether the time alone ends the tournament: one player left with chips, and the
        time to rebuy of every player out over."""
        return len(self.stacks) <= 1 and not self._still_waiting(at)

    def _advance(self, at: float) -> list[Order]:
        """What the time alone settles: the players out who did not rebuy in time out for
        good, and the prizes fixed once nothing more can be bought."""
        reading = self._clock().read(at)
        still = self._still_waiting(at)
        orders: list[Order] = []
        for player in sorted(set(self.waiting) - still):
            del self.waiting[player]
            orders.append(Busted(player, self.entries[player]))
        if not self.prizes_fixed and not self.spec.money_open(reading.levels_ended):
            orders += self._fix_prizes()
        return orders

    def _fix_prizes(self) -> list[Order]:
        """The prizes of the field and the pool as they stand, and the players out so far
        placed: the later out, the better."""
        self.prizes = payouts(self.prize_pool, self.entrants, self.spec.payout_table)
        for place in range(self.entrants, self.entrants - self.forfeited, -1):
            self.prizes = forfeit(self.prizes, place)  # the disqualified take no place
        self.prizes_fixed = True
        orders: list[Order] = [PrizesFixed(self.prizes, self.entrants)]
        left = len(self.stacks) + sum(len(group) for group in self.busts)
        for group in self.busts:
            out = [Elimination(bust.player, bust.chips_at_start) for bust in group]
            entries = {bust.player: bust.entry for bust in group}
            orders += self._placed(out, entries, players_left=left)
            left -= len(group)
        self.busts = []
        self._check_hand_for_hand()
        return orders

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

    # ------------------------------------------------------------------ what the facts call for

    def _out(self, out: list[Elimination], at: float) -> list[Order]:
        """Players out of chips: waiting for a rebuy during the rebuy period, placed once
        the prizes are fixed, else out and placed when they are; off their tables."""
        orders: list[Order] = []
        bust = [Bust(e.player, self.entries[e.player], e.chips_at_start) for e in out]
        if self.spec.rebuys_open(self._clock().read(at).levels_ended):
            self.busts.append(bust)
            for elimination in out:
                self.waiting[elimination.player] = at + REBUY_WAIT_SECONDS
        elif self.prizes_fixed:
            orders += self._placed(out, self.entries, players_left=len(self.stacks))
        else:
            self.busts.append(bust)
            orders += [Busted(b.player, b.entry) for b in bust]
        for elimination in out:
            del self.stacks[elimination.player]
        orders += self._unseat_gone()
        self._check_hand_for_hand()
        return orders

    def _placed(
        self, out: list[Elimination], entries: dict[str, int], *, players_left: int
    ) -> list[Order]:
        prizes = self.deals.prizes_now(self.prizes)  # after a deal: the amount played for
        orders: list[Order] = []
        for finish in places_of(out, players_left=players_left, prizes=prizes):
            self.finishes.append(finish)
            orders.append(Placed(finish, entries[finish.player]))
        return orders

    def _unseat_gone(self) -> list[Order]:
        orders: list[Order] = []
        for number, state in self.tables.items():
            for seat, player in list(state.seats.items()):
                if player not in self.stacks:
                    orders.append(RemovePlayer(number, player))
                    del state.seats[seat]
                    state.opened.append(seat)
        return orders

    def _check_over(self) -> list[Order]:
        """Over when one player holds every chip and nobody out may still rebuy: the prizes
        fixed if they were not, the winner placed, the tables closed."""
        if self.over or len(self.stacks) > 1 or self.waiting or self.round_out:
            return []
        orders: list[Order] = [] if self.prizes_fixed else self._fix_prizes()
        if self.stacks:
            (last,) = self.stacks
            finish = winner(last, self.deals.prizes_now(self.prizes))
            self.finishes.append(finish)
            orders.append(Placed(finish, self.entries[last]))
        else:  # the last chips left play with a disqualified player: the best out wins
            last = min(self.finishes, key=lambda f: (f.place, f.player)).player
        self.over = True
        self.moving, self.disqualifying = {}, {}
        orders.append(Finished(last))
        for number, state in sorted(self.tables.items()):
            orders += [RemovePlayer(number, player) for player in state.seats.values()]
            orders.append(CloseTable(number))
        self.tables.clear()
        self.hand_for_hand = False
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
        """When the director must call :meth:`wake`: a break's end while tables wait, the
        end of a player's time to rebuy, a deal's offer out of time."""
        if self.over or self.clock is None:
            return None
        reading = self.clock.read(at)
        times = list(self.waiting.values())
        if self.deals.expires_at is not None:
            times.append(self.deals.expires_at)
        if reading.on_break and not reading.paused and reading.ends_at is not None:
            times.append(reading.ends_at)
        return min(times, default=None)

    def _check_hand_for_hand(self) -> None:
        """Hand for hand while the next player out reaches the money (once it is fixed)."""
        paid = sum(1 for prize in self.prizes if prize > 0)
        self.hand_for_hand = (
            self.prizes_fixed and len(self.tables) > 1 and len(self.stacks) == paid + 1
        )

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
