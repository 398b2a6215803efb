"""The hands of a tournament's tables as its director takes them: read from the ``hands``
and ``hand_players`` rows the tables wrote (the bus only wakes the director), each the next
hand of a table the run lets deal or has dealing.

The hands of a read are taken together (``Director.take_new_hands``), one after the other,
so each is made a fact against the run as the ones before it left it (:func:`fact_of`): a
player an earlier hand's balancing seated at its table is in it with the chips they brought,
and a hand whose table no longer waits for it is left for the next read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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

    def data(self) -> dict[str, Any]:
        """The ``hand`` fact's data in the journal."""
        return {
            "table": self.table,
            "number": self.number,
            "stacks": self.stacks,
            "starting": self.starting,
        }


@dataclass(frozen=True, slots=True)
class WrittenHand:
    """A table's hand as its rows give it: each player dealt in, with the chips they had at
    its start and at its end."""

    table: int
    number: int
    players: dict[str, tuple[int, int]]


def fact_of(hand: WrittenHand, run: TournamentRun) -> HandFact | None:
    """The hand as a fact against the run as it stands: every player seated at its table
    now (one not dealt in, seated during the hand, with their chips at both ends); None
    when its table no longer waits for it (broken by a hand taken before it)."""
    state = run.tables.get(hand.table)
    if state is None or state.next_hand != hand.number or not (state.allowed or state.in_hand):
        return None
    players, seated = hand.players, set(state.seats.values())
    stacks = {p: players[p][1] if p in players else run.stacks[p] for p in seated}
    starting = {p: players[p][0] if p in players else run.stacks[p] for p in seated}
    return HandFact(hand.table, hand.number, stacks, starting)


async def written(
    sessionmaker: async_sessionmaker[AsyncSession],
    run: TournamentRun,
    table_ids: dict[int, int],
) -> list[WrittenHand]:
    """The next hand of each running table, if it has been written, by table: two queries
    for every table together (the hands, then their players)."""
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
    found = [
        WrittenHand(waiting[(int(table_id), int(hand))], int(hand), dealt.get(int(hand_id), {}))
        for hand_id, table_id, hand in hands
    ]
    return sorted(found, key=lambda hand: hand.table)
