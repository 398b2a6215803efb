"""Where a tournament stands, for one player: the ``tournament_state`` a websocket gets when it
subscribes to a tournament (and again whenever it asks).

It is read from the journal, not asked of the director: each node keeps, for the tournaments
its websockets follow, a :class:`Follower`, a director that only reads. It folds the journal's
facts (``tournament_facts``) into the same ``engine.tournament.run`` state the director holds,
catching up on the facts written since it last looked, and tells nothing to any table. So the
state is there on every node, whether the tournament's director runs here, elsewhere, or is
being taken over, and it says what the journal says: a player learns their table from it after
a reconnect, whatever events were lost meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.tournament import journal
from engine.tournament.run import TournamentRun
from server.db.models import (
    Account,
    EntryStatus,
    TournamentEntry,
    TournamentFact,
    TournamentStatus,
)
from server.store.deck_seal import DeckSeal
from server.tournaments import registry
from server.tournaments.announcer import clock_data, field_data
from server.tournaments.director import REPLAY_SLICE, Director, Tables

ACTIVE = (EntryStatus.REGISTERED, EntryStatus.PLAYING)
"""An entry still in the tournament (``registry.ACTIVE``)."""
PAID = (EntryStatus.REGISTERED, EntryStatus.PLAYING, EntryStatus.OUT)
"""An entry that counts in the field (not taken back, not refunded)."""
LATEST = 20  # the places a running tournament's state lists: the latest settled
KEPT = 64  # tournaments a node keeps followers for (the least recently asked go first)


class Follower(Director):
    """A director that only reads: its journal folded, never a table told (it has no play)."""

    async def catch_up(self) -> None:
        """The facts journaled since the last one folded."""
        async with self.sessionmaker() as session:
            if self.run is None:
                record = await registry.get(session, tournament_id=self.tournament_id)
                self.spec = registry.spec_of(record)
                self.table_ids = await self._table_ids(session)
            facts = list(
                (
                    await session.scalars(
                        select(TournamentFact)
                        .where(
                            TournamentFact.tournament_id == self.tournament_id,
                            TournamentFact.seq > self.seq,
                        )
                        .order_by(TournamentFact.seq)
                    )
                ).all()
            )
            seed = await self._seed(session) if self.run is None and facts else b""
        for count, fact in enumerate(facts, 1):
            if count % REPLAY_SLICE == 0:
                await asyncio.sleep(0)  # a long journal is not folded in one go
            if self.run is None:
                assert self.spec is not None
                self.run = TournamentRun(
                    self.spec,
                    tournament_id=self.tournament_id,
                    seed=seed,
                    prize_pool=int(fact.data["prize_pool"]),
                )
            if fact.kind not in journal.RECORD_KINDS:  # a record: its fact made it again
                self._replay(fact)
            self.seq = fact.seq
        if self.run is not None and not set(self.run.tables) <= set(self.table_ids):
            # A table made since the ids were read (a late entry's, a takeover's): read again.
            async with self.sessionmaker() as session:
                self.table_ids = await self._table_ids(session)

    async def _seed(self, session: AsyncSession) -> bytes:
        record = await registry.get(session, tournament_id=self.tournament_id)
        sealed = self.seal.open_bound(record.draw_seed, registry.draw_binding(record.id))
        return bytes.fromhex(sealed["seed"])


def player_data(
    run: TournamentRun, table_ids: dict[int, int], player: str | None
) -> dict[str, Any] | None:
    """The player's part: playing (their table, seat, stack and rank by chips among the
    players left), out (their place and prize) or the winner (the same), disqualified (the
    chips that left play with them); None when they hold no entry in play."""
    if player is None:
        return None
    for finish in run.finishes:  # out, or the winner
        if finish.player == player:
            return {
                "status": "winner" if player in run.stacks else "out",
                "place": finish.place,
                "prize": finish.prize,
                "tied": finish.tied,
            }
    if player in run.disqualified:  # out with no place: their chips left play
        return {"status": "disqualified", "chips_removed": run.disqualified[player]}
    if player not in run.stacks:
        return None
    stack = run.stacks[player]
    found: dict[str, Any] = {"status": "playing", "stack": stack}
    found.update(table=None, table_number=None, seat=None)
    for number, table in run.tables.items():
        for seat, sitting in table.seats.items():
            if sitting == player:
                found.update(table=table_ids.get(number), table_number=number, seat=seat)
    found["rank"] = 1 + sum(1 for other in run.stacks.values() if other > stack)
    return found


def results_data(run: TournamentRun, latest: int | None = None) -> list[dict[str, Any]]:
    """The places settled (only the ``latest`` so many, if given), the best first."""
    finishes = run.finishes if latest is None else run.finishes[-latest:]
    return [
        {"player": f.player, "place": f.place, "prize": f.prize, "tied": f.tied}
        for f in sorted(finishes, key=lambda f: (f.place, f.player))
    ]


@dataclass(frozen=True, slots=True)
class Seating:
    """A running tournament's tables as its journal has them: who sits where, each with their
    chips at their last hand's end (``GET /tournaments/{id}``)."""

    tables: list[dict[str, Any]]  # number, table_id, seats: seat, player, stack
    stacks: dict[str, int]  # every player still in
    where: dict[str, tuple[int | None, int, int]]  # player -> table id, number, seat


def seating_of(run: TournamentRun, table_ids: dict[int, int]) -> Seating:
    tables, where = [], {}
    for number, table in sorted(run.tables.items()):
        seats = []
        for seat, player in sorted(table.seats.items()):
            seats.append({"seat": seat, "player": player, "stack": run.stacks.get(player, 0)})
            where[player] = (table_ids.get(number), number, seat)
        tables.append({"number": number, "table_id": table_ids.get(number), "seats": seats})
    return Seating(tables, dict(run.stacks), where)


class Standings:
    """This node's followers of tournaments, and the ``tournament_state`` built from them."""

    def __init__(
        self,
        *,
        tables: Tables,
        sessionmaker: async_sessionmaker[AsyncSession],
        seal: DeckSeal,
        clock: Callable[[], float] = time.time,
        kept: int = KEPT,
    ) -> None:
        self.tables = tables
        self.sessionmaker = sessionmaker
        self.seal = seal
        self.clock = clock
        self.kept = kept
        self._followers: OrderedDict[int, tuple[Follower, asyncio.Lock]] = OrderedDict()

    async def state(self, tournament_id: int, player: str | None) -> dict[str, Any]:
        """The tournament as it stands, and ``player``'s part in it (``unknown_tournament``
        when there is no such tournament)."""
        async with self.sessionmaker() as session:
            record = await registry.get(session, tournament_id=tournament_id)
            counted = ACTIVE if record.status == TournamentStatus.REGISTERING else PAID
            entrants = await session.scalar(
                select(func.count())
                .select_from(TournamentEntry)
                .where(
                    TournamentEntry.tournament_id == tournament_id,
                    TournamentEntry.status.in_([status.value for status in counted]),
                )
            )
            mine = list(
                (
                    await session.scalars(
                        select(TournamentEntry.status)
                        .join(Account, Account.id == TournamentEntry.account_id)
                        .where(
                            TournamentEntry.tournament_id == tournament_id,
                            Account.username == player,
                        )
                    )
                ).all()
            )
            await session.commit()
        spec = registry.spec_of(record)
        state: dict[str, Any] = {
            "type": "tournament_state",
            "tournament": tournament_id,
            "name": record.name,
            "status": record.status,
            "fact": 0,
            "entrants": int(entrants or 0),
            "max_entrants": spec.max_entrants,
            "seats_per_table": spec.seats_per_table,
            "starting_chips": spec.structure.starting_chips,
        }
        registered = EntryStatus.REGISTERED in mine
        if record.status not in (TournamentStatus.RUNNING, TournamentStatus.FINISHED):
            state["you"] = {"status": "registered"} if registered else None
            return state
        follower = await self._follow(tournament_id)
        run = follower.run
        if run is None:  # running, its start not journaled yet: a moment
            state["you"] = {"status": "registered"} if set(mine) & set(ACTIVE) else None
            return state
        state["fact"] = follower.seq
        state.update(field_data(run))
        state["hand_for_hand"] = run.hand_for_hand
        if run.clock is not None and not run.over:
            state.update(clock_data(run.clock.read(self.clock()), run.spec))
        state["you"] = player_data(run, follower.table_ids, player)
        state["results"] = results_data(run, None if run.over else LATEST)
        return state

    async def seating(self, tournament_id: int) -> Seating | None:
        """A running tournament's tables and stacks, read from its journal (None before
        its start is journaled)."""
        follower = await self._follow(tournament_id)
        if follower.run is None:
            return None
        return seating_of(follower.run, follower.table_ids)

    async def _follow(self, tournament_id: int) -> Follower:
        kept = self._followers.get(tournament_id)
        if kept is None:
            follower = Follower(
                tournament_id=tournament_id,
                tables=self.tables,
                sessionmaker=self.sessionmaker,
                seal=self.seal,
                clock=self.clock,
            )
            kept = (follower, asyncio.Lock())
            self._followers[tournament_id] = kept
            while len(self._followers) > self.kept:
                self._followers.popitem(last=False)
        self._followers.move_to_end(tournament_id)
        follower, lock = kept
        async with lock:
            await follower.catch_up()
        return follower
