"""Balancing a tournament's tables between hands: who moves where, which tables break, and when
the final table is drawn. A pure planner: given the tables as they are, the seats per table
and the players just eliminated, it says what to do; the tournament's director does it.

The rules, called at every hand boundary (and after any change to the field):

* **A player in a hand is never moved.** Only a table between hands gives players (or breaks);
  a table may take a player while it plays a hand, and the player waits in the seat for the
  next deal. When a move needs a player from a table in a hand, the plan waits for it (the
  table is in ``waiting_for``) and the call at the end of that hand makes the move.
* **Tables within one player of each other.** The running tables share the field as evenly as
  can be: ``n mod tables`` of them one player above the others. A table above its share gives
  its extra players to the tables below theirs; the shares go first to the tables that cannot
  give now (in a hand), then to the tables with the most players, so that the fewest players
  move.
* **Which player moves (stud).** The Poker Tournament Directors Association's rules, rule 10 A
  ("Balancing Tables"; 2013 edition, version 1.1 of August 11, 2013, and 2019 edition,
  version 1.0 of September 17, 2019; the 2022 edition numbers it 11): in stud-only events
  players are moved by position, the last seat to open at the short table being the seat
  filled. So the seat filled is the short table's most recently opened seat, and the player
  moved is the one in the seat of that number at the giving table; when that seat is empty,
  the next occupied seat after it, by seat number and round the table (the rule does not say;
  this is ours). A player an operator moved (``keep``) is passed over for the next occupied
  seat while the giving table has another player to give (ours: the operator's move
  stands). The table that gives is the one furthest above its share (ties: the most
  players, then the lowest number), the table that takes the one furthest below its share
  (ties: the fewest players, then the lowest number): the predetermined procedure rule 10 C
  asks for. Seats empty when the tables were drawn count as opened in seat order, before any
  seat vacated since.
* **Breaking.** When the field fits in fewer tables (``ceil(n / seats)`` of them), tables
  break: among the tables between hands, the one with the fewest players (ties: the highest
  number) first. Its players are drawn at random into the free seats the shares leave, by
  the seat draw (engine.tournament.draw, its own round), as TDA rule 9 (2019) seats the
  players of a broken table: a two-step random draw, table then seat. A table with no player
  left breaks at once.
* **The final table.** When the field fits at one table and still sits at several, the final
  table is drawn: every player, seats at random, at the lowest numbered table. It waits until
  every table is between hands; meanwhile the tables between hands are in ``hold``, not to
  deal again (a hand dealt would make the others wait one more).

**Antes across moves.** Stud has no blinds and no button: the only forced bets are the ante,
which every player dealt in posts at every hand, and the bring-in, which goes to the lowest
upcard (the highest in razz), not to a position. So no seat owes anything another seat does
not, and a move cannot skip or repeat a forced bet: the moved player simply antes at their new
table's next hand, as everyone there does. A player moves only from a table between hands,
and the table they join deals them in at its next deal (a hand it is playing was dealt
without them): they are never dealt two hands at once, and in a level they pay one ante for
each hand they are dealt, never two for one, never one for a hand they are not dealt.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from engine.protocol import ErrorCode
from engine.tournament.draw import (
    Draw,
    Seating,
    SeatingError,
    TableQuota,
    check_player,
    check_round,
    check_seats_per_table,
    check_seed,
    run_draw,
)


@dataclass(frozen=True, slots=True)
class TableSeats:
    """A running table: seat -> player, whether it is between hands, and its empty seats in
    the order they opened (the most recent last; empty seats not listed opened first, in seat
    order)."""

    seats: Mapping[int, str]
    between_hands: bool = True
    opened: tuple[int, ...] = ()


class MoveReason(StrEnum):
    BALANCE = "balance"
    BREAK = "break"
    FINAL_TABLE = "final_table"


@dataclass(frozen=True, slots=True)
class Move:
    """A player who stands up at one seat and sits at another, between hands of the table
    they leave. A plan's moves happen together: every mover stands up, then sits down."""

    player: str
    from_table: int
    from_seat: int
    to_table: int
    to_seat: int
    reason: MoveReason


@dataclass(frozen=True, slots=True)
class Plan:
    """What to do now, and the tables once it is done (eliminated players gone)."""

    tables: dict[int, TableSeats]
    moves: tuple[Move, ...] = ()
    broken: tuple[int, ...] = ()
    final_table: int | None = None
    draw: Seating | None = None
    waiting_for: frozenset[int] = field(default_factory=frozenset)
    hold: frozenset[int] = field(default_factory=frozenset)


def tables_of(seating: Seating) -> dict[int, TableSeats]:
    """The tables a start draw seats, every one between hands."""
    return {table: TableSeats(seats) for table, seats in seating.tables().items()}


def plan_moves(
    tables: Mapping[int, TableSeats],
    seats_per_table: int,
    eliminated: Iterable[str] = (),
    *,
    seed: bytes,
    tournament_id: int,
    draw_round: int,
    keep: Iterable[str] = (),
) -> Plan:
    """The moves, breaks and final table the rules ask for now (the module's docstring).

    ``draw_round`` is the round a draw made by this plan takes (a break or the final table);
    when the plan has a ``draw``, the next plan takes the round after it.
    """
    check_seed(seed)
    check_round(tournament_id, draw_round)
    work = _Layout(tables, check_seats_per_table(seats_per_table))
    for player in eliminated:
        work.eliminate(check_player(player, field="eliminated"))
    broken = [table for table in sorted(work.seats) if not work.seats[table]]
    for table in broken:
        work.close(table)
    running = sorted(work.seats)
    field_size = len(work.where)
    needed = math.ceil(field_size / work.size)
    if needed == 1 and len(running) > 1:
        return _final_table(work, running, broken, seed, tournament_id, draw_round)

    waiting: set[int] = set()
    excess = len(running) - needed
    breaking = sorted(
        (table for table in running if work.between[table]),
        key=lambda table: (len(work.seats[table]), -table),
    )[: max(excess, 0)]
    if len(breaking) < excess:
        waiting.update(table for table in running if not work.between[table])
    staying = [table for table in running if table not in breaking]
    shares, stuck = _shares(work, staying, field_size)
    waiting.update(stuck)
    moves = _balance(work, staying, shares, frozenset(keep))
    seating = None
    movers = sorted(player for table in breaking for player in work.seats[table].values())
    if movers:
        quotas = tuple(
            TableQuota(table, shares[table] - len(work.seats[table]), work.free_seats(table))
            for table in staying
            if shares[table] > len(work.seats[table])
        )
        seating = run_draw(seed, Draw(tournament_id, draw_round, tuple(movers), quotas))
        moves.extend(work.place(seating, MoveReason.BREAK))
    for table in breaking:
        work.close(table)
    return Plan(
        work.result(),
        moves=tuple(moves),
        broken=(*broken, *breaking),
        draw=seating,
        waiting_for=frozenset(waiting),
    )


def _final_table(
    work: _Layout,
    running: list[int],
    broken: list[int],
    seed: bytes,
    tournament_id: int,
    draw_round: int,
) -> Plan:
    """Every player drawn again at the lowest numbered table, once no table is in a hand."""
    playing = frozenset(table for table in running if not work.between[table])
    if playing:
        return Plan(
            work.result(),
            broken=tuple(broken),
            waiting_for=playing,
            hold=frozenset(running) - playing,
        )
    final = running[0]
    quota = TableQuota(final, len(work.where), tuple(range(work.size)))
    seating = run_draw(seed, Draw(tournament_id, draw_round, tuple(sorted(work.where)), (quota,)))
    moves = work.place(seating, MoveReason.FINAL_TABLE)
    for table in running[1:]:
        work.close(table)
    return Plan(
        work.result(),
        moves=tuple(moves),
        broken=(*broken, *running[1:]),
        final_table=final,
        draw=seating,
    )


def _shares(work: _Layout, staying: list[int], field_size: int) -> tuple[dict[int, int], set[int]]:
    """Each staying table's count once balanced, and the tables in a hand above any share
    (they keep their players until their hand ends; the others share what is left)."""
    stuck: set[int] = set()
    free = list(staying)
    if not free:
        return {}, stuck
    while True:
        left = field_size - sum(len(work.seats[table]) for table in stuck)
        base, extra = divmod(left, len(free))
        playing = [table for table in free if not work.between[table]]
        above = {table for table in playing if len(work.seats[table]) > base + 1}
        at_top = [table for table in playing if len(work.seats[table]) == base + 1]
        if not above and len(at_top) > extra:
            above = set(at_top)
        if not above:
            break
        stuck |= above
        free = [table for table in free if table not in above]
    order = sorted(
        free,
        key=lambda table: (table not in at_top, -len(work.seats[table]), table),
    )
    shares = {table: len(work.seats[table]) for table in stuck}
    shares.update({table: base + (rank < extra) for rank, table in enumerate(order)})
    return shares, stuck


def _balance(
    work: _Layout, staying: list[int], shares: dict[int, int], keep: frozenset[str]
) -> list[Move]:
    """The moves by position (TDA rule 10 A, stud): the short table's last opened seat is
    filled by the player in the seat of that number at the giving table (or the next one
    round the table, passing over the players to ``keep`` while there is another)."""
    moves: list[Move] = []
    while True:
        givers = [table for table in staying if len(work.seats[table]) > shares[table]]
        if not givers:
            return moves
        giver = min(
            givers,
            key=lambda t: (shares[t] - len(work.seats[t]), -len(work.seats[t]), t),
        )
        taker = min(
            (table for table in staying if len(work.seats[table]) < shares[table]),
            key=lambda t: (len(work.seats[t]) - shares[t], len(work.seats[t]), t),
        )
        seat = work.opened[taker][-1]
        after = [(seat + step) % work.size for step in range(work.size)]
        occupied = [s for s in after if s in work.seats[giver]]
        from_seat = next((s for s in occupied if work.seats[giver][s] not in keep), occupied[0])
        player = work.seats[giver][from_seat]
        work.move(player, taker, seat)
        moves.append(Move(player, giver, from_seat, taker, seat, MoveReason.BALANCE))


class _Layout:
    """The tables as a plan changes them, checked on the way in."""

    def __init__(self, tables: Mapping[int, TableSeats], size: int) -> None:
        self.size = size
        self.seats: dict[int, dict[int, str]] = {}
        self.opened: dict[int, list[int]] = {}
        self.between: dict[int, bool] = {}
        self.where: dict[str, int] = {}
        for number, table in tables.items():
            self._read(number, table)

    def _read(self, number: int, table: TableSeats) -> None:
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            raise SeatingError(f"tables are numbered from 1, not {number!r}", field="tables")
        if not isinstance(table.between_hands, bool):
            raise SeatingError(f"table {number}: between_hands is true or false", field="tables")
        seats: dict[int, str] = {}
        for seat, player in table.seats.items():
            if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < self.size:
                raise SeatingError(
                    f"table {number}: seats are 0 to {self.size - 1}, not {seat!r}",
                    field="tables",
                    code=ErrorCode.BAD_SEAT,
                )
            check_player(player, field="tables")
            if player in self.where:
                raise SeatingError(
                    f"{player} sits at tables {self.where[player]} and {number}",
                    field="tables",
                    code=ErrorCode.ALREADY_SEATED,
                )
            self.where[player] = number
            seats[seat] = player
        empty = [seat for seat in range(self.size) if seat not in seats]
        opened = list(table.opened)
        if len(set(opened)) != len(opened) or not set(opened) <= set(empty):
            raise SeatingError(
                f"table {number}: the seats opened are empty seats, once each",
                field="tables",
                code=ErrorCode.BAD_SEAT,
            )
        self.seats[number] = dict(sorted(seats.items()))
        self.opened[number] = [seat for seat in empty if seat not in opened] + opened
        self.between[number] = table.between_hands

    def eliminate(self, player: str) -> None:
        table = self.where.pop(player, None)
        if table is None:
            raise SeatingError(
                f"{player} is not seated (or is out twice)",
                field="eliminated",
                code=ErrorCode.NOT_SEATED,
            )
        self._stand(table, player)

    def _stand(self, table: int, player: str) -> int:
        seat = next(seat for seat, sitting in self.seats[table].items() if sitting == player)
        del self.seats[table][seat]
        self.opened[table].append(seat)
        return seat

    def _sit(self, player: str, table: int, seat: int) -> None:
        self.opened[table].remove(seat)
        self.seats[table][seat] = player
        self.where[player] = table

    def move(self, player: str, table: int, seat: int) -> None:
        self._stand(self.where[player], player)
        self._sit(player, table, seat)

    def place(self, seating: Seating, reason: MoveReason) -> list[Move]:
        """A draw's players stand up together, then sit where it drew them."""
        leaving = [
            (player, self.where[player], self._stand(self.where[player], player))
            for player, _, _ in seating.placements
        ]
        moves = []
        for (player, table, seat), place in zip(leaving, seating.placements, strict=True):
            self._sit(player, place.table, place.seat)
            if (table, seat) != (place.table, place.seat):
                moves.append(Move(player, table, seat, place.table, place.seat, reason))
        return moves

    def free_seats(self, table: int) -> tuple[int, ...]:
        return tuple(sorted(self.opened[table]))

    def close(self, table: int) -> None:
        del self.seats[table], self.opened[table], self.between[table]

    def result(self) -> dict[int, TableSeats]:
        return {
            number: TableSeats(
                dict(sorted(seats.items())), self.between[number], tuple(self.opened[number])
            )
            for number, seats in sorted(self.seats.items())
        }


__all__ = ["Move", "MoveReason", "Plan", "TableSeats", "plan_moves", "tables_of"]
