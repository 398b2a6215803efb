"""The director's state (``engine.tournament.run``), and the steps its facts share.

``RunState`` holds what the facts so far left: the tables as the director knows them
(``TableState``: seats, the next hand, a permit given), the stacks at each table's last hand
boundary, the clock, the entries and chips bought, the players out and placed, and what
waits for a hand's end. Its steps are those every kind of fact takes: the time's
(players out who did not rebuy in time out for good, the prizes fixed once nothing more can
be bought), the players out placed, the tables balanced, the permits given, the tournament
over; and ``wake``, the time passed on. The other facts are in ``engine.tournament.run``
(play, deals), ``engine.tournament.operators`` (an operator's requests) and
``engine.tournament.purchases`` (entries and chips bought), each a part of ``TournamentRun``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from engine.tournament.balance import Plan, TableSeats, plan_moves
from engine.tournament.clock import LevelClock
from engine.tournament.draw import Seating
from engine.tournament.offers import DealDesk
from engine.tournament.orders import (
    Busted,
    CloseTable,
    Deal,
    Finished,
    Moved,
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


class RunState:
    """The director's state after the facts so far, and the steps every kind of fact
    shares (``engine.tournament.run`` puts the facts together in ``TournamentRun``)."""

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
        # The tables the balancing waits for (a hand in play) or holds (the final table's
        # draw): since when, unbroken. A move's wait counts from its own table's.
        self.waiting_since: dict[int, float] = {}
        # An operator's moves and disqualifications: waiting for a hand's end, and the chips
        # they took out of play.
        self.moving: dict[str, PendingMove] = {}
        self.disqualifying: dict[str, float] = {}  # player -> asked at
        self.disqualified: dict[str, int] = {}  # player -> chips removed from play
        self.forfeited = 0  # disqualified before the prizes were fixed: last places nobody's
        self.moved_by_operator: set[str] = set()  # balancing moves another while it can

    # ------------------------------------------------------------------ the time

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

    def _still_waiting(self, at: float) -> set[str]:
        """The players out of chips who may still rebuy at ``at``."""
        if not self.spec.rebuys_open(self._clock().read(at).levels_ended):
            return set()
        return {player for player, until in self.waiting.items() if until > at}

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

    # ------------------------------------------------------------------ a deal's amounts

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
        since = self.waiting_since
        orders = self._carry_out(plan, waited=lambda table: at - since.get(table, at))
        self.waiting_since = {table: since.get(table, at) for table in plan.waiting_for | plan.hold}
        return orders

    def _carry_out(self, plan: Plan, *, waited: Callable[[int], float]) -> list[Order]:
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
                Moved(
                    move.player,
                    move.from_table,
                    move.to_table,
                    move.reason.value,
                    waited(move.from_table),
                )
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
