"""A tournament's results and standing, for the back office: its journal replayed (on any
node, as a director taking over would: ``Director.read_journal``) into the places and
prizes, the chips of each player, the tables, the clock, and the tournament's totals.

While it runs it is the standing at this instant (the level and its time left, the players
left and their chips at their last hand's end, the moves and disqualifications waiting for a
hand); once over, the results (the winner's chips are every chip still in play). Its totals
keep the chips' books: ``chips_issued`` = ``chips_in_play`` + ``chips_removed`` (the chips
of disqualified players, out of play), at every hand boundary.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.tournament.clock import ClockReading
from engine.tournament.run import TournamentRun
from engine.tournament.structure import Level
from server.accounts import ledger
from server.bus.memory import Bus
from server.db.models import EntryStatus, TableRecord, TournamentEntry
from server.store.deck_seal import DeckSeal
from server.table import commands as cmd
from server.tournaments import registry
from server.tournaments.director import Director

DISQUALIFIED = "disqualified"


class _ReadOnly:
    """A journal read for its results tells no table anything (nor publishes a thing)."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus

    async def open_table(self, record: TableRecord) -> Any:
        raise RuntimeError("reading a tournament's results opens no table")

    async def submit(self, table_id: int, command: cmd.TableCommand) -> dict[str, Any]:
        raise RuntimeError("reading a tournament's results commands no table")


def entry_status(entry: TournamentEntry) -> str:
    """An entry's status as shown: ``disqualified`` for an entry out, settled with no place
    (a disqualified player: placed nowhere, paid nothing more; an entry out before the
    prizes are fixed has neither place nor prize until they are)."""
    if entry.status == EntryStatus.OUT and entry.place is None and entry.prize is not None:
        return DISQUALIFIED
    return str(entry.status)


async def results(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    seal: DeckSeal,
    bus: Bus,
    *,
    tournament_id: int,
    clock: Callable[[], float] = time.time,
) -> dict[str, Any]:
    """The tournament's results (or standing while it runs): see the module."""
    record = await registry.get(session, tournament_id=tournament_id)
    # The journal first: a fact and the entries it settles are written together, so the
    # entries read after are at least as new as the journal.
    director = Director(
        tournament_id=tournament_id, tables=_ReadOnly(bus), sessionmaker=sessionmaker, seal=seal
    )
    await director.read_journal()
    run = director.run
    await session.rollback()  # a fresh read (the record's, above, may be older)
    record = await registry.get(session, tournament_id=tournament_id)
    entries = [
        (entry, name)
        for entry, name in await registry.entries(session, tournament_id=tournament_id)
        if entry.status in registry.ACTIVE or entry.status == EntryStatus.OUT
    ]
    pool = (
        run.prize_pool
        if run is not None
        else await ledger.balance(session, wallet=ledger.tournament_pool(tournament_id))
    )
    standings = [_standing(entry, name, run) for entry, name in entries]
    standings.sort(key=_order)
    chips = {"issued": 0, "in_play": 0, "removed": 0}
    if run is not None:
        chips = {
            "issued": run.chips_issued,
            "in_play": run.chips_in_play(),
            "removed": run.chips_removed,
        }
    return {
        "tournament_id": record.id,
        "name": record.name,
        "status": record.status,
        "started_at": record.started_at,
        "finished_at": record.finished_at,
        "entries": len(entries),
        "players": len({name for _, name in entries}),
        "prize_pool": pool,
        "prizes_paid": sum(entry.prize or 0 for entry, _ in entries),
        "payouts": list(run.prizes) if run is not None else [],
        "chips": chips,
        "players_left": len(run.stacks) if run is not None else len(entries),
        "disqualified": sorted(run.disqualified) if run is not None else [],
        "clock": _clock(run, clock()) if run is not None and not run.over else None,
        "tables": _tables(run, director.table_ids) if run is not None else [],
        "waiting": _waiting(run) if run is not None else {"moves": [], "disqualifications": []},
        "standings": standings,
    }


def _standing(entry: TournamentEntry, name: str, run: TournamentRun | None) -> dict[str, Any]:
    status = entry_status(entry)
    chips = 0
    if run is not None and (status == EntryStatus.PLAYING or entry.place == 1):
        chips = run.stacks.get(name, 0)  # the winner's: every chip left in play
    return {
        "player": name,
        "entry": entry.number,
        "status": status,
        "place": entry.place,
        "prize": entry.prize,
        "chips": chips,
        "chips_removed": run.disqualified.get(name) if run is not None else None,
    }


def _order(standing: dict[str, Any]) -> tuple[int, int, str]:
    """Players still in by chips, then the places, best first; the disqualified last."""
    if standing["status"] == EntryStatus.PLAYING:
        return (0, -int(standing["chips"]), standing["player"])
    if standing["place"] is not None:
        return (1, int(standing["place"]), standing["player"])
    return (2, 0, standing["player"])


def _level(level: Level | None) -> dict[str, int] | None:
    if level is None:
        return None
    return {
        "ante": level.ante,
        "bring_in": level.bring_in,
        "small_bet": level.small_bet,
        "big_bet": level.big_bet,
    }


def _clock(run: TournamentRun, now: float) -> dict[str, Any] | None:
    if run.clock is None:
        return None
    reading: ClockReading = run.clock.read(now)
    return {
        "level": reading.level_number,
        "on_break": reading.on_break,
        "paused": reading.paused,
        "stakes": _level(reading.level),
        "next_stakes": _level(reading.next_level),
        "game": run.spec.game_of(reading.level) if reading.level is not None else None,
        "next_game": run.spec.game_of(reading.next_level) if reading.next_level else None,
        "seconds_left": reading.seconds_left,
        "hands_left": reading.hands_left,
        "hand_for_hand": run.hand_for_hand,
    }


def _tables(run: TournamentRun, table_ids: dict[int, int]) -> list[dict[str, Any]]:
    return [
        {
            "number": number,
            "table_id": table_ids.get(number),
            "dealing": state.busy,
            "players": [
                {"seat": seat, "player": player, "chips": run.stacks.get(player, 0)}
                for seat, player in sorted(state.seats.items())
            ],
        }
        for number, state in sorted(run.tables.items())
    ]


def _waiting(run: TournamentRun) -> dict[str, list[Any]]:
    return {
        "moves": [
            {"player": player, "table": move.table, "seat": move.seat}
            for player, move in sorted(run.moving.items())
        ],
        "disqualifications": sorted(run.disqualifying),
    }
