"""What a director that takes over tells the tables first: the orders that make them match the
state its journal gives. Each player at the table and seat the state says, with the chips it
says (anyone else taken away: a player out, or one the state has at another seat); the tables
it no longer runs closed; the chips bought and not yet added; each table's stakes, its permit
to deal, and the hands of players being disqualified killed. Each order is harmless when
already carried out, so a director that took over from one that did part of them repeats
them safely."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.tournament.run import (
    CloseTable,
    Deal,
    KillHand,
    Order,
    RemovePlayer,
    SeatPlayer,
    Stakes,
    TournamentRun,
)
from server.db.models import Account, SeatRecord, TableRecord, TableStatus
from server.tournaments import purchases


async def orders(
    sessionmaker: async_sessionmaker[AsyncSession],
    run: TournamentRun,
    tournament_id: int,
    table_ids: dict[int, int],
    at: float,
) -> list[Order]:
    """The orders that make the tournament's tables (``table_ids``: number -> table id) what
    ``run`` says at ``at``, read against their seat and table rows."""
    async with sessionmaker() as session:
        seated = await _seated(session, table_ids)
        still_open = await _open_tables(session, tournament_id)
    wanted = {
        player: (number, seat)
        for number, state in run.tables.items()
        for seat, player in state.seats.items()
    }
    found: list[Order] = [
        RemovePlayer(number, player)
        for player, (number, seat) in sorted(seated.items())
        if wanted.get(player) != (number, seat)
    ]
    found += [
        SeatPlayer(number, seat, player, run.stacks[player])
        for player, (number, seat) in sorted(wanted.items())
        if seated.get(player) != (number, seat)
    ]
    found += [CloseTable(number) for number in still_open if number not in run.tables]
    in_place = {p: where for p, where in seated.items() if wanted.get(p) == where}
    async with sessionmaker() as session:
        found += await purchases.chips_not_added(session, run, table_ids, in_place)
    level = run.clock.read(at).level if run.clock is not None else None
    for number, state in sorted(run.tables.items()):
        if state.stakes is not None and level is not None:
            found.append(Stakes(number, level))
        if state.allowed:
            found.append(Deal(number, state.next_hand))
        found += [
            KillHand(number, player)
            for player in sorted(state.seats.values())
            if player in run.disqualifying
        ]
    return found


async def _seated(session: AsyncSession, table_ids: dict[int, int]) -> dict[str, tuple[int, int]]:
    """Where the tournament's players sit now, by the tables' seat rows."""
    numbers = {table_id: number for number, table_id in table_ids.items()}
    rows = await session.execute(
        select(Account.username, SeatRecord.table_id, SeatRecord.seat)
        .join(Account, Account.id == SeatRecord.account_id)
        .where(SeatRecord.table_id.in_(list(numbers)))
    )
    return {name: (numbers[table_id], int(seat)) for name, table_id, seat in rows.all()}


async def _open_tables(session: AsyncSession, tournament_id: int) -> list[int]:
    """The numbers of the tournament's tables not closed yet, by their rows."""
    numbers = await session.scalars(
        select(TableRecord.tournament_table).where(
            TableRecord.tournament_id == tournament_id,
            TableRecord.status == TableStatus.OPEN.value,
        )
    )
    return sorted(int(number) for number in numbers.all() if number)
