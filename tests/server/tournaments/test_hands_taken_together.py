"""The hands of a read taken together (``Director.take_new_hands``): every waiting table's
hand read once, all of them journaled in one transaction, each replayed against the run as
the hands before it left it, then every table told its orders (its permit to deal the next
hand among them) and each fact's events told.

The run's part is checked first without a server: a tournament played to a winner in reads
of every table's hand, among them hands whose table an earlier hand of the read seated a
player at (``director_hands.fact_of``: that player is in the later hand's fact with the
chips they brought), its journal checked as ``stud-verify --tournament`` checks one. Then a
sit-and-go on one node whose director is shown the tables' hands only once every waiting
table has written its own: each read taken in one commit, each table whose hand was taken
and may deal again told so, the journal fair by ``stud-verify`` and the books by
``stud-server audit``; and a director stopped in the middle of a read, which took none of its
hands (the next takes them all from the journal)."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from server_helpers import FAST_HASHING
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from test_director import run_sit_and_go

from engine.fair import commitment
from engine.tournament import journal
from engine.tournament.check import Fact, PlayedHand, Standing, check_tournament
from engine.tournament.orders import CloseTable
from engine.tournament.run import Deal, Order, SeatPlayer, TournamentRun
from engine.tournament.templates import TEMPLATES
from server import cli
from server.db.models import TournamentFact
from server.settings import Settings
from server.tournaments import director_hands
from server.tournaments.announcer import Announcer, Notice, Told
from server.tournaments.director import Director
from server.tournaments.director_hands import WrittenHand, fact_of
from server.verify import download_tournament, verify_tournament

SEED = bytes(range(32))


def play_in_reads(game: int) -> tuple[list[Fact], list[PlayedHand], TournamentRun, int]:
    """A sit-and-go of 7 at tables of 4 played to a winner, each read of the tables' hands
    (every table allowed to deal has played its next hand, to the players seated then)
    taken as the director takes one; its journal, the hands played, the run, and how many
    hands had a player seated at their table by an earlier hand of their read."""
    rng = random.Random(game)
    spec = dataclasses.replace(
        TEMPLATES["stud-sng-9"],
        min_entrants=7,
        max_entrants=7,
        seats_per_table=4,
        late_registration_levels=None,
        re_entries=0,
        rebuys=None,
    )
    pool = 7 * spec.buy_in
    run = TournamentRun(spec, tournament_id=7, seed=SEED, prize_pool=pool)
    issued = 7 * spec.structure.starting_chips
    facts: list[Fact] = []

    def take(kind: str, data: dict[str, Any], at: float) -> list[Order]:
        facts.append(Fact(len(facts) + 1, kind, at, data))
        return journal.replay(run, kind, data, at)

    take("started", {"players": [f"p{n}" for n in range(7)], "prize_pool": pool}, 0.0)
    played: list[PlayedHand] = []
    joined = 0
    for read in range(1, 1000):
        if run.over:
            break
        at = 30.0 * read
        found = []
        for number, state in sorted(run.tables.items()):
            if not state.allowed:
                continue
            chips = {p: run.stacks[p] for p in state.seats.values()}
            loser, winner = rng.sample(sorted(chips), 2)
            lost = chips[loser] if rng.random() < 0.3 else rng.randint(0, chips[loser])
            ending = {**chips, loser: chips[loser] - lost, winner: chips[winner] + lost}
            players = {p: (chips[p], ending[p]) for p in chips}
            found.append(WrittenHand(number, state.next_hand, players))
            seats = {s: (p, *players[p]) for s, p in state.seats.items()}
            played.append(PlayedHand(number, state.next_hand, seats))
        if not found:
            take("woke", {}, at)
            continue
        seated: set[tuple[int, str]] = set()
        for hand in found:
            taken = fact_of(hand, run)
            assert taken is not None  # a table stays waiting for a hand read with it
            joined += sum(1 for p in taken.stacks if (hand.table, p) in seated)
            assert all(p in taken.stacks for t, p in seated if t == hand.table)
            orders = take("hand", taken.data(), at)
            seated |= {(o.table, o.player) for o in orders if isinstance(o, SeatPlayer)}
            assert sum(run.stacks.values()) == issued  # the chips kept, fact after fact
            if run.over:
                break
    assert run.over
    return facts, played, run, joined


def test_hands_taken_in_reads_make_a_journal_that_checks_out() -> None:
    joined = 0
    for game in range(6):
        facts, played, run, seated = play_in_reads(game)
        joined += seated
        standings = [Standing(f.player, f.place, f.prize) for f in run.finishes]
        checked = check_tournament(
            run.spec,
            tournament_id=7,
            seed=SEED,
            committed=commitment(SEED),
            journal=facts,
            hands=played,
            standings=standings,
        )
        assert f"{len(played)} hands: each player sat where" in "\n".join(checked.lines)
    assert joined, "no hand of a read had a player seated by an earlier hand of it"


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        starting_bankroll=10_000,
        pause_between_hands_seconds=0,
        showdown_pause_seconds=0,
        **FAST_HASHING,
    )


def all_together() -> Callable[..., Awaitable[list[WrittenHand]]]:
    """The director's reads, shown the hands once every waiting table has written its own
    (or a second after some had): reads of several tables' hands, as at a big field."""
    read = director_hands.written
    held: list[float] = []  # since when a read found some tables' hands, not all

    async def together(
        sessionmaker: async_sessionmaker[AsyncSession],
        run: TournamentRun,
        table_ids: dict[int, int],
    ) -> list[WrittenHand]:
        loop = asyncio.get_running_loop()
        found = await read(sessionmaker, run, table_ids)
        waiting = sum(1 for state in run.tables.values() if state.allowed or state.in_hand)
        if found and len(found) < waiting:
            held[:] = held or [loop.time()]
            if loop.time() < held[0] + 1.0:
                return []
        held.clear()
        return found

    return together


async def test_the_hands_of_a_read_are_taken_in_one_commit_and_every_table_dealt_again(
    app: FastAPI,
    client: httpx.AsyncClient,
    settings: Settings,
    session: AsyncSession,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(director_hands, "written", all_together())
    told: list[Order] = []
    carry_out = Director.carry_out

    async def telling(self: Director, orders: list[Order]) -> None:
        told.extend(orders)
        await carry_out(self, orders)

    reads: list[tuple[int, int]] = []  # each read: the hands it took, the commits it made
    take_hands = Director._take_hands

    async def counting(self: Director, found: list[WrittenHand]) -> None:
        made, commits = self.sessionmaker, []

        def counted() -> AsyncSession:
            session = made()
            commit = session.commit

            async def commit_counted() -> None:
                commits.append(1)
                await commit()

            session.commit = commit_counted  # type: ignore[method-assign]
            return session

        before = self.seq
        told.clear()
        self.sessionmaker = counted  # type: ignore[assignment]
        try:
            await take_hands(self, found)
        finally:
            self.sessionmaker = made
        async with made() as reading:
            hands = (
                await reading.scalars(
                    select(TournamentFact.data).where(
                        TournamentFact.tournament_id == self.tournament_id,
                        TournamentFact.seq > before,
                        TournamentFact.kind == "hand",
                    )
                )
            ).all()
        reads.append((len(hands), len(commits)))
        run = self._run()
        for hand in hands:  # each table taken that may deal again was let deal
            state = run.tables.get(int(hand["table"]))
            if state is not None and state.allowed:
                assert Deal(int(hand["table"]), state.next_hand) in told, (hand, told)

    monkeypatch.setattr(Director, "carry_out", telling)
    monkeypatch.setattr(Director, "_take_hands", counting)
    tournament_id = await run_sit_and_go(app, client, settings, session, players=9, seats=3)

    assert all(commits == 1 for _, commits in reads), reads
    assert max(hands for hands, _ in reads) >= 2, reads
    document = await download_tournament(client, tournament_id)
    verdict = verify_tournament(document)
    assert verdict.fair, verdict.lines
    status, lines = await cli.audit(settings)
    assert status == 0, lines


async def test_a_director_stopped_mid_read_took_none_of_its_hands(
    app: FastAPI,
    client: httpx.AsyncClient,
    settings: Settings,
    session: AsyncSession,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Stopped with a later hand of a read settled, before the commit: the next director
    finds the journal where the read began (none of its hands taken), takes them again,
    and the tournament plays out with every hand once and its journal fair."""
    settle = Director._settle
    stopped: list[int] = []  # the journal's last fact when the director stopped
    loaded: list[int] = []  # the journal's last fact as the next director loaded it

    async def stopping(
        self: Director, session: AsyncSession, fact: TournamentFact, orders: list[Order]
    ) -> int:
        last = await settle(self, session, fact, orders)
        if not stopped and fact.kind == "hand" and fact.seq > self.seq + 1:
            stopped.append(self.seq)
            raise RuntimeError("the node stopped here")
        return last

    load = Director.load

    async def loading(self: Director) -> None:
        await load(self)
        if stopped and not loaded:
            loaded.append(self.seq)

    monkeypatch.setattr(director_hands, "written", all_together())
    monkeypatch.setattr(Director, "_settle", stopping)
    monkeypatch.setattr(Director, "load", loading)
    tournament_id = await run_sit_and_go(app, client, settings, session, players=9, seats=3)

    assert stopped, "no read took several hands"
    assert loaded == stopped
    verdict = verify_tournament(await download_tournament(client, tournament_id))
    assert verdict.fair, verdict.lines


async def test_a_director_stopped_before_telling_a_read_has_its_events_told_by_the_next(
    app: FastAPI,
    client: httpx.AsyncClient,
    settings: Settings,
    session: AsyncSession,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Stopped once a read of several hands is written and its orders carried out, before
    any of its events left: the director that takes over tells them all (the facts of its
    journal's last seconds), under the keys they were made with; and the tournament's end is
    told before its last table closes."""
    published: list[str] = []  # every event's key, in the order it went on the bus
    publish = Announcer.publish

    async def recording(self: Announcer, notices: Sequence[Notice], seq: int) -> None:
        published.extend(notice.key for notice in notices)
        await publish(self, notices, seq)

    dropped: list[Told] = []  # the stopped read's events, never told by its director
    steps: list[str] = []  # the end: told, and tables closed, in the order done
    deliver = Director.deliver

    async def stopping(self: Director, orders: list[Order], told: list[Told]) -> None:
        several = len(told) >= 2 and any(each.notices for each in told)
        if not dropped and several and not self._run().over:
            await self.carry_out(orders)
            dropped.extend(told)
            raise RuntimeError("the node stopped here")
        if self._run().over:
            steps.extend(f"told {n.kind}" for each in told for n in each.notices)
            steps.extend("closed" for order in orders if isinstance(order, CloseTable))
        await deliver(self, orders, told)

    monkeypatch.setattr(director_hands, "written", all_together())
    monkeypatch.setattr(Announcer, "publish", recording)
    monkeypatch.setattr(Director, "deliver", stopping)
    tournament_id = await run_sit_and_go(app, client, settings, session, players=9, seats=3)

    assert dropped, "no read took several hands"
    keys = [notice.key for each in dropped for notice in each.notices]
    assert keys and set(keys) <= set(published), (keys, published)
    assert steps.index("told finished") < steps.index("closed"), steps
    verdict = verify_tournament(await download_tournament(client, tournament_id))
    assert verdict.fair, verdict.lines
