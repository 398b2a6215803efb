"""What a tournament tells its players and whoever follows it: websocket frames on the bus.

Every event is derived from what the director decided, never from a timer of its own: the
orders of a journaled fact (a player seated, moved, placed; the tournament over) and the
state that fact left (``engine.tournament.run``), or the level clock, which is itself a fold
of the journal. So a director that takes a tournament over derives the same events again:
it announces the last fact of the journal once more (its events may or may not have left
before the crash), and the level in play. Each event carries a ``key``, the same whenever
the same event is derived again, and the ``fact`` it follows (the journal's seq): a client
drops a key it has seen, and an event of a fact older than the ``tournament_state`` it
holds (``server.tournaments.standing``). Only the switch of hand for hand is judged against
the state this announcer last saw (a director that took over starts from the state it
replayed), which is why ``tournament_state`` says it too.

Two audiences (``server.bus.memory``): ``tournament:{<id>}``, which any signed-in websocket
may follow (``subscribe_tournament``), and ``player:{<player>}:tournaments``, which every
signed-in websocket of that player hears. The kinds and their data: docs/protocol.md,
"Tournament events", among them a deal at the final table offered, made or withdrawn.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.tournament.clock import ClockReading
from engine.tournament.offers import DealMade, DealOffered, DealWithdrawn
from engine.tournament.run import (
    CloseTable,
    Disqualified,
    Finished,
    Order,
    Placed,
    RemovePlayer,
    SeatPlayer,
    TournamentRun,
)
from engine.tournament.spec import TournamentSpec
from engine.tournament.structure import Break, Entry, Level
from server.bus.memory import Bus, player_tournaments_channel, tournament_channel

log = logging.getLogger(__name__)

EVERYONE = None
"""A notice's audience when it is the tournament's channel."""


@dataclass(frozen=True, slots=True)
class Notice:
    """One event: its audiences (players, and :data:`EVERYONE` following the tournament), its
    kind, its data and its key (one key, whichever audience hears it)."""

    to: tuple[str | None, ...]
    kind: str
    data: dict[str, Any]
    key: str


def level_data(
    level: Level | None, number: int | None, spec: TournamentSpec | None = None
) -> dict[str, Any] | None:
    """A level's stakes as the events and ``tournament_state`` show them; a mixed
    tournament's (``spec``) its ``game`` too."""
    if level is None or number is None:
        return None
    data: dict[str, Any] = {
        "number": number,
        "ante": level.ante,
        "bring_in": level.bring_in,
        "small_bet": level.small_bet,
        "big_bet": level.big_bet,
    }
    if spec is not None and spec.mixed:
        data["game"] = spec.game_of(level)
    return data


def clock_data(reading: ClockReading, spec: TournamentSpec | None = None) -> dict[str, Any]:
    """Where the clock stands: the level (or the break), the next level, and when it comes
    (``seconds_left``, ``ends_at`` in seconds since the epoch, or ``hands_left``: a level of
    hands; all null for the last level, which goes on). A mixed tournament's levels say
    their games."""
    return {
        "level": level_data(reading.level, reading.level_number, spec),
        "on_break": reading.on_break,
        "paused": reading.paused,
        "next_level": level_data(reading.next_level, reading.level_number + 1, spec),
        "seconds_left": reading.seconds_left,
        "ends_at": reading.ends_at,
        "hands_left": reading.hands_left,
    }


def field_data(run: TournamentRun) -> dict[str, Any]:
    """The field as it stands: players left, their average stack, the tables running."""
    left = len(run.stacks)
    return {
        "players_left": left,
        "average_stack": run.chips_in_play() // left if left else 0,
        "tables": len(run.tables),
    }


def fact_notices(
    run: TournamentRun,
    table_ids: Mapping[int, int],
    *,
    seq: int,
    kind: str,
    orders: Sequence[Order],
    at: float,
) -> list[Notice]:
    """The events of one journaled fact, from its orders and the state it left: a pure
    function, so a director that took over derives the same ones (the same keys)."""
    made: list[tuple[tuple[str | None, ...], str, dict[str, Any]]] = []
    removed = {order.player: order.table for order in orders if isinstance(order, RemovePlayer)}
    closed = [order.table for order in orders if isinstance(order, CloseTable)]
    winner = next((order.winner for order in orders if isinstance(order, Finished)), None)
    over = winner is not None
    if kind == "started":
        reading = run.clock.read(at) if run.clock is not None else None
        clock = clock_data(reading, run.spec) if reading is not None else {}
        started = {**field_data(run), **clock}
        made.append(((EVERYONE, *sorted(run.stacks)), "started", started))
    for order in orders:
        if isinstance(order, SeatPlayer):
            seat = {
                "table": table_ids.get(order.table),
                "table_number": order.table,
                "seat": order.seat,
                "stack": order.stack,
            }
            if order.player in removed:
                source = removed[order.player]
                moved = {"from_table": table_ids.get(source), **seat}
                moved["final_table"] = bool(closed) and len(run.tables) == 1 and not over
                made.append(((order.player,), "moved", moved))
            else:
                made.append(((order.player,), "seated", seat))
        elif isinstance(order, Placed) and order.finish.player != winner:
            finish = order.finish
            out = {
                "player": finish.player,
                "place": finish.place,
                "prize": finish.prize,
                "tied": finish.tied,
                **field_data(run),
            }
            made.append(((EVERYONE, finish.player), "eliminated", out))
        elif isinstance(order, Disqualified):
            gone = {"player": order.player, "chips_removed": order.chips, **field_data(run)}
            made.append(((EVERYONE, order.player), "disqualified", gone))
    for order in orders:
        # A deal at the final table (``engine.tournament.offers``): shown to the players
        # left, and to whoever follows the tournament.
        if isinstance(order, DealOffered | DealMade):
            left = tuple(share.player for share in order.offer.shares)
            what = "deal_offered" if isinstance(order, DealOffered) else "deal_made"
            made.append(((EVERYONE, *left), what, order.offer.to_dict()))
        elif isinstance(order, DealWithdrawn):
            left = tuple(sorted(run.stacks))
            made.append(((EVERYONE, *left), "deal_withdrawn", order.to_dict()))
    if closed and not over and len(run.tables) == 1:
        (number,) = run.tables
        players = sorted(run.tables[number].seats.items())
        made.append(
            (
                (EVERYONE,),
                "final_table",
                {
                    "table": table_ids.get(number),
                    "table_number": number,
                    "seats": [{"seat": seat, "player": player} for seat, player in players],
                    **field_data(run),
                },
            )
        )
    if over:
        results = [
            {"player": f.player, "place": f.place, "prize": f.prize, "tied": f.tied}
            for f in sorted(run.finishes, key=lambda f: (f.place, f.player))
        ]
        done = {"winner": winner, "results": results}
        made.append(((EVERYONE, *(str(r["player"]) for r in results)), "finished", done))
    return [Notice(to, what, data, f"{seq}:{n}") for n, (to, what, data) in enumerate(made)]


def clock_notices(
    previous: int | None,
    reading: ClockReading,
    entries: Sequence[Entry],
    spec: TournamentSpec | None = None,
) -> list[Notice]:
    """The events of the clock moving from entry ``previous`` to the reading's (None: a
    director that has just taken over, which says the entry in play again): a break, the end
    of a break, a new level."""
    index = reading.entry_index
    if previous == index or index == 0:  # the first level is the start's (``started``)
        return []
    data = clock_data(reading, spec)
    if reading.on_break:
        return [Notice((EVERYONE,), "break", data, f"break:{index}")]
    notices = []
    if previous is not None and isinstance(entries[previous], Break):
        notices.append(Notice((EVERYONE,), "break_over", data, f"break_over:{previous}"))
    notices.append(Notice((EVERYONE,), "level_up", data, f"level:{index}"))
    return notices


@dataclass(frozen=True, slots=True)
class Told:
    """A fact's events, made, to publish: its notices and the fact (the journal's seq)."""

    seq: int
    notices: list[Notice]


class Announcer:
    """A director's voice: the events of each fact and of the clock, published on the bus.
    A failure to publish is logged, never the director's end (the events are a courtesy: the
    journal and the tables are the truth, and ``tournament_state`` reads them)."""

    def __init__(self, bus: Bus, tournament_id: int) -> None:
        self.bus = bus
        self.tournament_id = tournament_id
        self.entry: int | None = None  # the clock entry announced last
        self.hand_for_hand: bool | None = None

    def told(
        self,
        run: TournamentRun,
        table_ids: Mapping[int, int],
        *,
        seq: int,
        kind: str,
        orders: Sequence[Order],
        at: float,
    ) -> Told:
        """The events of the fact ``seq``, then of the clock, made from the state it left
        (``run`` now): a fact taken with others (the hands of a read, taken together) has
        them made as it is replayed, and published once every order of them is carried out
        (:meth:`tell`)."""
        try:
            notices = fact_notices(run, table_ids, seq=seq, kind=kind, orders=orders, at=at)
        except Exception:  # noqa: BLE001 - never the director's end (see the class)
            log.exception("tournament %s: fact %s's events were not made", self.tournament_id, seq)
            return Told(seq, [])
        if kind == "started":
            self.entry = 0  # the start says the first level
            self.hand_for_hand = False
        if self.hand_for_hand is not None and run.hand_for_hand != self.hand_for_hand:
            notices.append(
                Notice(
                    (EVERYONE,),
                    "hand_for_hand",
                    {"on": run.hand_for_hand, **field_data(run)},
                    f"{seq}:h",
                )
            )
        self.hand_for_hand = run.hand_for_hand
        return Told(seq, [*notices, *self._clock_notices(run, at)])

    async def tell(self, told: Told) -> None:
        """A fact's events, made by :meth:`told`, published."""
        await self.publish(told.notices, told.seq)

    async def clock(self, run: TournamentRun, *, seq: int, at: float) -> None:
        """A new level or a break (or its end) since the last look, if the clock moved."""
        await self.publish(self._clock_notices(run, at), seq)

    def _clock_notices(self, run: TournamentRun, at: float) -> list[Notice]:
        if run.clock is None or run.over:
            return []
        if self.hand_for_hand is None:
            self.hand_for_hand = run.hand_for_hand
        try:
            reading = run.clock.read(at)
            notices = clock_notices(self.entry, reading, run.spec.structure.entries, run.spec)
        except Exception:  # noqa: BLE001 - never the director's end (see the class)
            log.exception("tournament %s: the clock's events were not made", self.tournament_id)
            return []
        self.entry = reading.entry_index
        return notices

    async def publish(self, notices: Sequence[Notice], seq: int) -> None:
        for notice in notices:
            frame = self.frame(notice, seq)
            for to in notice.to:
                channel = (
                    tournament_channel(self.tournament_id)
                    if to is EVERYONE
                    else player_tournaments_channel(to)
                )
                try:
                    await self.bus.publish(channel, frame)
                except Exception:  # noqa: BLE001 - a courtesy lost; the director goes on
                    log.exception("tournament %s: an event was not published", self.tournament_id)

    def frame(self, notice: Notice, seq: int) -> dict[str, Any]:
        return tournament_frame(self.tournament_id, notice.kind, notice.data, notice.key, seq)


def tournament_frame(
    tournament_id: int, kind: str, data: dict[str, Any], key: str, fact: int
) -> dict[str, Any]:
    """A tournament event as the websocket sends it."""
    return {
        "type": "tournament_event",
        "tournament": tournament_id,
        "fact": fact,
        "key": key,
        "kind": kind,
        "data": data,
    }


async def announce_entry(
    bus: Bus,
    *,
    tournament_id: int,
    player: str,
    kind: str,
    entrants: int,
    max_entrants: int,
    key: str,
) -> None:
    """A registration (``registered``) or an entry taken back (``unregistered``), told to
    the player and to everyone following the tournament, once it is committed."""
    frame = tournament_frame(
        tournament_id,
        kind,
        {"player": player, "entrants": entrants, "max_entrants": max_entrants},
        key,
        0,
    )
    try:
        await bus.publish(tournament_channel(tournament_id), frame)
        await bus.publish(player_tournaments_channel(player), frame)
    except Exception:  # noqa: BLE001 - the entry is made; the event is a courtesy
        log.exception("tournament %s: an entry's event was not published", tournament_id)
