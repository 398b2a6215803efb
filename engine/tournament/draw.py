"""A tournament's seat draws: who sits where, drawn from a committed seed so that anyone can
check every draw afterwards, as they check a deck (docs/fairness.md).

When a tournament is created the server draws a secret 32-byte seed and publishes its
commitment, ``SHA-256(seed)`` in hex (:func:`engine.fair.commitment`). Every draw of the
tournament (the start, each table broken, the final table) is then a pure function of the
seed and of the draw's public inputs, its :class:`Draw`: the tournament, the round (1 for the
start, then one more for each later draw), the players drawn and the tables' free seats. The
seed is revealed once the tournament is over: a later draw takes the same seed, so revealing
it sooner would tell the seats of every table yet to break.

The method, ``stud-seat-draw/1``:

* The context is UTF-8 text: ``"stud-seat-draw/1\\n"``, ``"tournament=<id>\\n"``,
  ``"round=<n>\\n"``, then ``"player=<id>\\n"`` for each player drawn, by player id (code
  point order), then ``"table=<t> count=<c> seats=<s1>,<s2>,...\\n"`` for each table that
  takes players, by table number: how many it takes and its free seats, ascending (seats
  count from 0).
* The byte stream is stud-deck/1's: ``HMAC-SHA256(key=seed, message=context || counter)`` for
  counter = 0, 1, 2... written as 8 bytes big-endian.
* Every draw is wide: a uniform integer below ``n`` takes the stream's next 4 bytes big-endian,
  ``u``; when ``u < 2**32 - 2**32 % n`` it is ``u % n``, else the 4 bytes are dropped and the
  next 4 taken (:meth:`engine.fair.DeckStream.below_wide`).
* A shuffle (Fisher-Yates, front to back): for ``i`` from 0 to ``len - 2``, swap item ``i``
  with item ``i + below(len - i)``.
* Step 1, the tables: one card per place, the table's number ``count`` times, tables in order;
  shuffle the cards; the ``k``-th player (by id) goes to the table on the ``k``-th card. The
  places may outnumber the players (the cards left over are not used): a late entrant is
  drawn to one of the tables with the fewest players, each offering one place.
* Step 2, the seats: for each table in order, shuffle its free seats; its players, by id,
  take the shuffled seats from the front.

At the start the field sits at ``ceil(n / seats)`` tables numbered from 1, as evenly as can
be: ``n mod tables`` of them, the lowest numbered, take one player more than the others.

>>> seating = draw_seats(bytes(32), 7, ["carol", "alice", "bob"], seats_per_table=2)
>>> seating.draw.context().decode().splitlines()[:4]
['stud-seat-draw/1', 'tournament=7', 'round=1', 'player=alice']
>>> [quota.count for quota in seating.draw.quotas]
[2, 1]
>>> verify(bytes(32), seating)
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeGuard

from engine.errors import InvalidAction
from engine.fair import SEED_BYTES, DeckStream, commitment
from engine.protocol import ErrorCode

METHOD = "stud-seat-draw/1"
START_ROUND = 1
SEATS_PER_TABLE_MAX = 256
PLAYER_ID_MAX = 128


class SeatingError(InvalidAction):
    """A draw, a seating or a table layout that cannot be, naming the ``field`` at fault."""

    def __init__(self, message: str, *, field: str, code: ErrorCode | None = None) -> None:
        super().__init__(message, code=code)
        self.field = field


def check_player(player: object, *, field: str = "players") -> str:
    """A player id as a draw's context can carry it: 1 to 128 printable characters, no
    spaces (one line of the context each)."""
    if (
        not isinstance(player, str)
        or not 1 <= len(player) <= PLAYER_ID_MAX
        or not player.isprintable()
        or any(character.isspace() for character in player)
    ):
        raise SeatingError(
            f"a player id is 1 to {PLAYER_ID_MAX} printable characters without spaces, "
            f"not {player!r}",
            field=field,
        )
    return player


def check_seats_per_table(seats: object) -> int:
    if not _is_int(seats) or not 2 <= seats <= SEATS_PER_TABLE_MAX:
        raise SeatingError(
            f"a table seats 2 to {SEATS_PER_TABLE_MAX} players, not {seats!r}",
            field="seats_per_table",
            code=ErrorCode.BAD_SEAT_COUNT,
        )
    return seats


def check_seed(seed: object) -> bytes:
    if not isinstance(seed, bytes) or len(seed) != SEED_BYTES:
        raise SeatingError(
            f"a seat draw's seed is {SEED_BYTES} bytes", field="seed", code=ErrorCode.BAD_DECK
        )
    return seed


def check_round(tournament_id: object, draw_round: object) -> None:
    """A draw's identity: a tournament id (a whole number) and a round (from 1)."""
    if not _is_int(tournament_id) or tournament_id < 0:
        raise SeatingError("a tournament id is a whole number", field="tournament_id")
    if not _is_int(draw_round) or draw_round < START_ROUND:
        raise SeatingError(f"draw rounds count from {START_ROUND}", field="round")


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class TableQuota:
    """How many of a draw's players a table takes, and the free seats they are drawn into."""

    table: int
    count: int
    seats: tuple[int, ...]

    def line(self) -> str:
        return f"table={self.table} count={self.count} seats={','.join(map(str, self.seats))}"


@dataclass(frozen=True, slots=True)
class Draw:
    """Everything that decides a draw but the seed; public before the draw and after it."""

    tournament_id: int
    round: int
    players: tuple[str, ...]
    quotas: tuple[TableQuota, ...]

    method = METHOD

    def __post_init__(self) -> None:
        check_round(self.tournament_id, self.round)
        for player in self.players:
            check_player(player)
        if list(self.players) != sorted(set(self.players)):
            raise SeatingError("a draw's players go once each, by id", field="players")
        tables = [quota.table for quota in self.quotas]
        if any(not _is_int(table) or table < 1 for table in tables) or tables != sorted(
            set(tables)
        ):
            raise SeatingError("a draw's tables go once each, numbered from 1", field="quotas")
        for quota in self.quotas:
            seats = list(quota.seats)
            if any(not _is_int(seat) or seat < 0 for seat in seats) or seats != sorted(set(seats)):
                raise SeatingError(
                    f"table {quota.table}'s free seats go once each, ascending from 0",
                    field="quotas",
                    code=ErrorCode.BAD_SEAT,
                )
            if not _is_int(quota.count) or not 1 <= quota.count <= len(seats):
                raise SeatingError(
                    f"table {quota.table} takes 1 to {len(seats)} players (its free seats)",
                    field="quotas",
                    code=ErrorCode.TABLE_FULL,
                )
        if sum(quota.count for quota in self.quotas) < len(self.players):
            raise SeatingError("the tables offer a place to every player drawn", field="quotas")

    def context(self) -> bytes:
        lines = [METHOD, f"tournament={self.tournament_id}", f"round={self.round}"]
        lines.extend(f"player={player}" for player in self.players)
        lines.extend(quota.line() for quota in self.quotas)
        return ("\n".join(lines) + "\n").encode()


class Placement(NamedTuple):
    """Where a draw sat a player."""

    player: str
    table: int
    seat: int


@dataclass(frozen=True, slots=True)
class Seating:
    """A draw made: its inputs, the commitment to its seed, and each player's place, in the
    draw's player order."""

    draw: Draw
    commitment: str
    placements: tuple[Placement, ...]

    def tables(self) -> dict[int, dict[int, str]]:
        """Table -> seat -> player."""
        tables: dict[int, dict[int, str]] = {quota.table: {} for quota in self.draw.quotas}
        for player, table, seat in self.placements:
            tables[table][seat] = player
        return {table: dict(sorted(seats.items())) for table, seats in tables.items()}

    def record(self) -> dict[str, Any]:
        """JSON-ready, for the tournament's journal and its verifier (no seed)."""
        return {
            "method": METHOD,
            "tournament": self.draw.tournament_id,
            "round": self.draw.round,
            "commitment": self.commitment,
            "players": list(self.draw.players),
            "tables": [
                {"table": quota.table, "count": quota.count, "seats": list(quota.seats)}
                for quota in self.draw.quotas
            ],
            "placements": [list(placement) for placement in self.placements],
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Seating:
        if record.get("method") != METHOD:
            raise SeatingError(f"a seat draw's method is {METHOD}", field="method")
        try:
            draw = Draw(
                record["tournament"],
                record["round"],
                tuple(record["players"]),
                tuple(
                    TableQuota(entry["table"], entry["count"], tuple(entry["seats"]))
                    for entry in record["tables"]
                ),
            )
            placements = tuple(Placement(*entry) for entry in record["placements"])
            seed_commitment = record["commitment"]
        except (KeyError, TypeError) as error:
            raise SeatingError(f"a seat draw record lacks {error}", field="record") from None
        if not isinstance(seed_commitment, str):
            raise SeatingError("a commitment is hex text", field="commitment")
        return cls(draw, seed_commitment, placements)


def start_quotas(players: int, seats_per_table: int) -> tuple[TableQuota, ...]:
    """The start's tables: as few as seat the field, as even as can be, the lowest numbered
    taking the odd players."""
    check_seats_per_table(seats_per_table)
    if not _is_int(players) or players < 1:
        raise SeatingError(
            "a draw seats at least one player", field="players", code=ErrorCode.NOT_ENOUGH_PLAYERS
        )
    tables = math.ceil(players / seats_per_table)
    base, extra = divmod(players, tables)
    every_seat = tuple(range(seats_per_table))
    return tuple(
        TableQuota(number, base + (number <= extra), every_seat) for number in range(1, tables + 1)
    )


def draw_seats(
    seed: bytes, tournament_id: int, players: Iterable[str], seats_per_table: int
) -> Seating:
    """The start's draw (round 1): the field at the fewest tables, within one player."""
    field = sorted(check_player(player) for player in players)
    if len(set(field)) != len(field):
        raise SeatingError("a player is drawn once", field="players", code=ErrorCode.ALREADY_SEATED)
    quotas = start_quotas(len(field), seats_per_table)
    return run_draw(seed, Draw(tournament_id, START_ROUND, tuple(field), quotas))


def run_draw(seed: bytes, draw: Draw) -> Seating:
    """The draw ``stud-seat-draw/1`` makes of these inputs with this seed."""
    stream = DeckStream(check_seed(seed), draw.context())
    cards = [quota.table for quota in draw.quotas for _ in range(quota.count)]
    _shuffle(stream, cards)
    drawn: dict[int, list[str]] = {quota.table: [] for quota in draw.quotas}
    for player, table in zip(draw.players, cards, strict=False):  # places left over unused
        drawn[table].append(player)
    places: dict[str, Placement] = {}
    for quota in draw.quotas:
        seats = list(quota.seats)
        _shuffle(stream, seats)
        for player, seat in zip(drawn[quota.table], seats, strict=False):
            places[player] = Placement(player, quota.table, seat)
    return Seating(draw, commitment(seed), tuple(places[player] for player in draw.players))


def verify(seed: bytes, seating: Seating) -> bool:
    """Whether the revealed seed is the one committed and draws exactly this seating."""
    if not isinstance(seed, bytes) or len(seed) != SEED_BYTES:
        return False
    if commitment(seed) != seating.commitment:
        return False
    return run_draw(seed, seating.draw).placements == seating.placements


def _shuffle(stream: DeckStream, items: list[Any]) -> None:
    for i in range(len(items) - 1):
        j = i + stream.below_wide(len(items) - i)
        items[i], items[j] = items[j], items[i]


__all__ = [
    "METHOD",
    "PLAYER_ID_MAX",
    "SEATS_PER_TABLE_MAX",
    "START_ROUND",
    "Draw",
    "Placement",
    "Seating",
    "SeatingError",
    "TableQuota",
    "check_player",
    "check_round",
    "check_seats_per_table",
    "check_seed",
    "draw_seats",
    "run_draw",
    "start_quotas",
    "verify",
]
