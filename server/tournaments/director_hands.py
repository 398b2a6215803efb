"""The hands of a tournament's tables as its director takes them: read from the ``hands``
and ``hand_players`` rows the tables wrote (the bus only wakes the director), each the next
hand of a table the run lets deal or has dealing.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.tournament.run import TournamentRun
from server.db.models import Account, HandPlayer, HandRecord


@dataclass(frozen=True, slots=True)
class HandFact:
    """A hand of a tournament table, as the director takes it."""

    table: int
    number: int
    stacks: dict[str, int]
    starting: dict[str, int]


async def next_hands(
    sessionmaker: async_sessionmaker[AsyncSession],
    run: TournamentRun,
    table_ids: dict[int, int],
) -> list[HandFact]:
    """The next hand of each running table, if it has been written: two queries for
    every table together (the hands, then their players)."""
    waiting = {
        (table_ids[number], state.next_hand): number
        for number, state in sorted(run.tables.items())
        if state.allowed or state.in_hand
    }
    if not waiting:
        return []
    async with sessionmaker() as session:
        hands = (
            await session.execute(
                select(HandRecord.id, HandRecord.table_id, HandRecord.number).where(
                    # One statement whatever the count (its pairs bound as one parameter):
                    # compiled once, not once a wake for each table's terms.
                    tuple_(HandRecord.table_id, HandRecord.number).in_(list(waiting))
                )
            )
        ).all()
        if not hands:
            return []
        rows = await session.execute(
            select(HandPlayer.hand_id, Account.username, HandPlayer.starting, HandPlayer.ending)
            .join(Account, Account.id == HandPlayer.account_id)
            .where(HandPlayer.hand_id.in_([hand_id for hand_id, _, _ in hands]))
        )
        dealt: dict[int, dict[str, tuple[int, int]]] = {}
        for hand_id, name, start, end in rows.all():
            dealt.setdefault(int(hand_id), {})[name] = (int(start), int(end))
    found = []
    for hand_id, table_id, hand in hands:
        number = waiting[(int(table_id), int(hand))]
        players = dealt.get(int(hand_id), {})
        seated = set(run.tables[number].seats.values())
        stacks = {p: players[p][1] if p in players else run.stacks[p] for p in seated}
        starting = {p: players[p][0] if p in players else run.stacks[p] for p in seated}
        found.append(HandFact(number, int(hand), stacks, starting))
    return sorted(found, key=lambda hand: hand.table)
