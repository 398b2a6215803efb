"""Buying into a running tournament, on SQLite and PostgreSQL: players enter late and
re-enter (``POST /tournaments/{id}/register`` once it runs), rebuy and take the add-on
(``/rebuy``, ``/add-on``), each taken by the tournament's director and paid in its
transaction, and the tournament is played to a winner. Checked: each purchase's money (the
buy-in to the prize pool, the fee to the house) and nothing more, a retried request paid
once, every refusal with its code and nothing debited, the entries' places and prizes, the
pool paid out exactly, the winner's chips (every chip issued), and the books."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from fastapi import FastAPI
from play import random_legal
from server_helpers import bearer, error_code, operator_token, player_token
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from test_director import act_at_tables, quick_sng, settings, tournament_tables

from engine.actions import LegalActions
from server.accounts import ledger
from server.cardroom.supervisor import Cardroom
from server.db.models import (
    Account,
    HandPlayer,
    HandRecord,
    LedgerEntry,
    TournamentFact,
    TournamentRecord,
    TournamentRequest,
)
from server.settings import Settings
from server.store.tournament_books import check_tournament
from server.tournaments import requests
from server.tournaments.directors import TournamentDirectors
from server.verify import download_tournament, verify_tournament

__all__ = ["settings"]  # the fixture, shared with the director's tests

BANKROLL = 10_000
PRICE = 110  # the buy-in (100) and the fee (10), of an entry, a rebuy and the add-on


def structure(levels: int, hands: int) -> dict[str, Any]:
    """Few chips, levels of a few hands: a tournament over in a few dozen hands."""
    ladder = [(2, 5, 10), (5, 10, 20), (10, 20, 40), (20, 40, 80), (40, 80, 160), (80, 160, 320)]
    return {
        "starting_chips": 60,
        "entries": [
            {"ante": a, "bring_in": b, "small_bet": s, "big_bet": 2 * s, "hands": hands}
            for a, b, s in ladder[:levels]
        ],
    }


# ---------------------------------------------------------------------- playing


def aggressive(legal: LegalActions, rng: random.Random) -> tuple[str, int | None]:
    """The most chips in, every time: bets and raises to the most, else calls."""
    if legal.wager is not None and legal.wager in legal.kinds:
        return legal.wager, max(legal.to_choices) if legal.to_choices else legal.max_to
    for kind in ("call", "bring_in", "check"):
        if kind in legal.kinds:
            return kind, None
    return random_legal(legal, rng)


def passive(legal: LegalActions, rng: random.Random) -> tuple[str, int | None]:
    """Out of the way: folds when it can, else the least it must."""
    for kind in ("fold", "check", "bring_in", "call"):
        if kind in legal.kinds:
            return kind, None
    return random_legal(legal, rng)


Policy = Callable[[str, LegalActions, random.Random], tuple[str, int | None]]


def duel(*fighters: str) -> Policy:
    """The fighters put every chip in against each other; the others keep out of it: the
    loser of each hand's duel (both as deep) is out of chips."""
    return lambda player, legal, rng: (aggressive if player in fighters else passive)(legal, rng)


def anything(player: str, legal: LegalActions, rng: random.Random) -> tuple[str, int | None]:
    return random_legal(legal, rng)


def quiet(player: str, legal: LegalActions, rng: random.Random) -> tuple[str, int | None]:
    """Nobody bets: a hand costs its antes and bring-in."""
    return passive(legal, rng)


@dataclass
class Table:
    """What the test knows of the tournament's tables, read off their actors."""

    seated: dict[str, int] = field(default_factory=dict)  # player -> stack
    in_hand: set[str] = field(default_factory=set)


async def look(cardroom: Cardroom, session: AsyncSession, tournament_id: int) -> Table:
    seen = Table()
    for table_id in await tournament_tables(session, tournament_id):
        actor = cardroom.actor(table_id)
        if actor is None:
            continue
        for number, seat in enumerate(actor.table.seats):
            if seat is not None:
                seen.seated[seat.player] = seat.stack + seat.pending_chips
                if actor.table.in_hand(number):
                    seen.in_hand.add(seat.player)
    return seen


async def play_out(
    client: httpx.AsyncClient,
    cardroom: Cardroom,
    session: AsyncSession,
    tournament_id: int,
    policy: Callable[[], Policy],
    meanwhile: Callable[[], Awaitable[None]],
    *,
    timeout: float = 300.0,
) -> dict[str, Any]:
    """Act for whoever is to act at the tournament's tables, by the policy of the moment,
    until it is over; ``meanwhile()`` at every action (and every half second idle)."""
    rng = random.Random(tournament_id)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    actions, idle_since = 0, loop.time()
    while True:
        details = (await client.get(f"/tournaments/{tournament_id}")).json()
        if details["status"] == "finished":
            return details
        assert loop.time() < deadline, f"not over in time: {details}"
        await meanwhile()
        sent, acted = await act_at_tables(
            cardroom,
            session,
            tournament_id,
            lambda player, legal: policy()(player, legal, rng),
            prefix="a",
            start=actions,
        )
        actions += sent
        if not acted:
            await asyncio.sleep(0.02 if loop.time() - idle_since < 0.5 else 0.2)
        else:
            idle_since = loop.time()


# ---------------------------------------------------------------------- the money


@dataclass
class Money:
    """Each player's wallet as the test expects it, and what the pool received."""

    client: httpx.AsyncClient
    tokens: dict[str, str]
    paid: dict[str, int] = field(default_factory=dict)  # player -> purchases paid
    purchases: list[str] = field(default_factory=list)  # "entry", "rebuy", "add_on"

    def bought(self, player: str, what: str) -> None:
        self.paid[player] = self.paid.get(player, 0) + 1
        self.purchases.append(what)

    async def wallet(self, player: str) -> int:
        answer = await self.client.get("/wallet", headers=bearer(self.tokens[player]))
        balance: int = answer.json()["balance"]
        return balance

    async def check(self, player: str, prize: int = 0) -> None:
        assert await self.wallet(player) == BANKROLL - PRICE * self.paid.get(player, 0) + prize

    async def post(self, player: str, path: str, request_id: str) -> httpx.Response:
        return await self.client.post(
            path, json={"request_id": request_id}, headers=bearer(self.tokens[player])
        )

    async def refused(self, player: str, path: str, request_id: str, code: str) -> None:
        """Refused with ``code``, nothing debited."""
        before = await self.wallet(player)
        answer = await self.post(player, path, request_id)
        assert answer.status_code == 409 and error_code(answer) == code, answer.text
        assert await self.wallet(player) == before


def stop_the_director(app: FastAPI) -> None:
    """The director's task killed wherever it is: the next round takes the tournament over
    from its journal (test_director.py)."""
    directors: TournamentDirectors = app.state.directors
    for task in list(directors.running.values()):
        task.cancel()


async def hands_played(session: AsyncSession, tournament_id: int) -> int:
    tables = await tournament_tables(session, tournament_id)
    count = await session.scalar(
        select(func.count()).select_from(HandRecord).where(HandRecord.table_id.in_(tables))
    )
    await session.rollback()
    return int(count or 0)


async def check_the_end(
    session: AsyncSession, money: Money, finished: dict[str, Any], tournament_id: int
) -> None:
    """Every entry placed once, the pool paid out exactly, each wallet its purchases and its
    prize, the winner holding every chip issued, the books balanced."""
    entries = finished["entries"]
    assert all(e["status"] == "out" and e["place"] is not None for e in entries)
    assert len(entries) == money.purchases.count("entry")
    places = sorted(e["place"] for e in entries)
    assert places[0] == 1 and places.count(1) == 1 and places[-1] <= len(entries)
    pool = 100 * len(money.purchases)
    assert sum(e["prize"] for e in entries) == pool and finished["prize_pool"] == 0
    assert sum(finished["payouts"]) == pool  # the prizes of the whole field and pool
    by_place = sorted(entries, key=lambda e: e["place"])
    assert [e["prize"] for e in by_place] == sorted((e["prize"] for e in by_place), reverse=True)
    assert sum(e["rebuys"] for e in entries) == money.purchases.count("rebuy")
    assert sum(e["add_on"] for e in entries) == money.purchases.count("add_on")
    for player in money.tokens:
        prize = sum(e["prize"] for e in entries if e["player"] == player)
        await money.check(player, prize)
    # The winner's last hand: every chip issued (starting chips, rebuys, add-ons) in front
    # of them.
    (winner,) = [e["player"] for e in entries if e["place"] == 1]
    tables = await tournament_tables(session, tournament_id)
    last = await session.scalar(
        select(HandPlayer.ending)
        .join(HandRecord, HandRecord.id == HandPlayer.hand_id)
        .join(Account, Account.id == HandPlayer.account_id)
        .where(HandRecord.table_id.in_(tables), Account.username == winner)
        .order_by(HandRecord.created_at.desc(), HandRecord.id.desc())
        .limit(1)
    )
    issued = {"entry": 60, "rebuy": 60, "add_on": 120}
    assert last == sum(issued[what] for what in money.purchases)
    books = await ledger.verify_books(session)
    assert books.balanced, books.differences()
    # The audit's own count: the chips issued by the journal's facts at every hand
    # boundary, the prize pool against entries, rebuys and add-ons.
    record = await session.get(TournamentRecord, tournament_id)
    assert record is not None
    tournament_books = await check_tournament(session, record)
    assert not tournament_books.differences, tournament_books.differences
    # Checked whole afterwards, as anyone may: the draws, every hand, the places and prizes.
    verdict = verify_tournament(await download_tournament(money.client, tournament_id))
    assert verdict.fair, verdict.lines
    assert tournament_books.issued == last
    await session.rollback()


async def make(
    client: httpx.AsyncClient,
    settings: Settings,
    name: str,
    spec: dict[str, Any],
    *,
    starts_in: float | None = None,
) -> tuple[str, int]:
    """The tournament made by an operator; a scheduled one ``starts_in`` seconds after it is
    posted (the time taken from the clock then: signing in may take a while on a busy
    machine)."""
    boss = await operator_token(client, settings)
    more: dict[str, Any] = {}
    if starts_in is not None:
        more["starts_at"] = (datetime.now(UTC) + timedelta(seconds=starts_in)).isoformat()
    made = await client.post(
        "/admin/tournaments", json={"name": name, "spec": spec, **more}, headers=bearer(boss)
    )
    assert made.status_code == 201, made.text
    return boss, int(made.json()["id"])


async def wait_until_running(client: httpx.AsyncClient, tournament_id: int) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while (await client.get(f"/tournaments/{tournament_id}")).json()["status"] != "running":
        assert loop.time() < deadline, "the tournament never started"
        await asyncio.sleep(0.2)


# ---------------------------------------------------------------------- the tournaments


async def test_late_entries_and_a_re_entry_play_to_a_winner(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    templates = (await client.get("/tournaments/templates")).json()
    spec = {**quick_sng(templates, 3, 8), "kind": "scheduled", "payout_table": "scheduled"}
    spec.update(min_entrants=3, max_entrants=20, late_registration_levels=2, re_entries=1)
    spec["structure"] = structure(levels=5, hands=6)
    names = ["pl0", "pl1", "pl2", "late1", "late2"]
    money = Money(client, {name: await player_token(client, name) for name in names})
    boss, tournament_id = await make(client, settings, "Late", spec, starts_in=3)
    path = f"/tournaments/{tournament_id}"
    for name in names[:3]:
        answer = await money.post(name, f"{path}/register", f"{name}-1")
        assert answer.status_code == 201, answer.text
        money.bought(name, "entry")
    cardroom: Cardroom = app.state.cardroom
    await wait_until_running(client, tournament_id)

    # A player with less than an entry costs, and one suspended: refused, nothing debited.
    broke = Money(client, {"broke": await player_token(client, "broke")})
    debit = await client.post(
        "/admin/players/broke/debit",
        json={"amount": BANKROLL - PRICE + 1, "reason": "a test"},
        headers=bearer(boss),
    )
    assert debit.status_code == 200, debit.text
    await broke.refused("broke", f"{path}/register", "b1", "insufficient_funds")
    assert await broke.wallet("broke") == PRICE - 1
    await player_token(client, "barred")
    await suspended_before_the_director_takes_it(client, app, session, boss, tournament_id)
    await money.refused("pl0", f"{path}/register", "pl0-again", "already_registered")

    state: dict[str, Any] = {"phase": "late entry", "re_entered": ""}

    async def meanwhile() -> None:
        if state["phase"] == "late entry":  # level 1: a late entrant
            answer = await money.post("late1", f"{path}/register", "late1-1")
            assert answer.status_code == 201, answer.text
            assert answer.json()["number"] == 1 and answer.json()["status"] == "playing"
            money.bought("late1", "entry")
            again = await money.post("late1", f"{path}/register", "late1-1")
            assert again.status_code == 200 and again.json()["number"] == 1  # paid once
            await money.check("late1")
            state["phase"] = "duel"
            stop_the_director(app)  # taken over with its late entry in the journal
            return
        if state["phase"] == "duel":  # the first player out of chips enters again
            entries = (await client.get(path)).json()["entries"]
            out = [e for e in entries if e["status"] == "out"]
            if not out:
                return
            (first,) = out
            assert first["place"] is None  # placed once late registration is over
            player = first["player"]
            answer = await money.post(player, f"{path}/register", f"{player}-2")
            assert answer.status_code == 201, answer.text
            assert answer.json()["number"] == 2
            money.bought(player, "entry")
            await money.check(player)
            state.update(phase="play", re_entered=player)
            return
        if state["phase"] == "play" and await hands_played(session, tournament_id) > 14:
            # Two levels of 6 hands on one table are over: late registration too.
            await money.refused("late2", f"{path}/register", "late2-1", "registration_closed")
            state["phase"] = "closed"

    def policy() -> Policy:
        """A duel until someone is out; then quiet hands (nobody out) until late
        registration is over; then anything."""
        phase = state["phase"]
        return duel("pl0", "pl1") if phase == "duel" else quiet if phase == "play" else anything

    finished = await play_out(client, cardroom, session, tournament_id, policy, meanwhile)
    assert state["phase"] == "closed", state
    await check_the_end(session, money, finished, tournament_id)
    numbers = sorted(e["number"] for e in finished["entries"] if e["player"] == state["re_entered"])
    assert numbers == [1, 2]
    dealt = await session.scalar(  # the late entrant was dealt in, as everyone
        select(func.count())
        .select_from(HandPlayer)
        .join(Account, Account.id == HandPlayer.account_id)
        .where(Account.username == "late1")
    )
    assert dealt
    after = await money.post("late2", f"{path}/register", "late2-2")
    assert after.status_code == 409 and error_code(after) == "registration_closed"


async def suspended_before_the_director_takes_it(
    client: httpx.AsyncClient,
    app: FastAPI,
    session: AsyncSession,
    boss: str,
    tournament_id: int,
) -> None:
    """An entry filed by a player suspended before the director takes it: refused
    ``account_suspended``, nothing debited (the API refuses a suspended player's token
    first)."""
    suspended = await client.post(
        "/admin/players/barred/suspend", json={"reason": "a test"}, headers=bearer(boss)
    )
    assert suspended.status_code == 200, suspended.text
    barred = await session.scalar(select(Account).where(Account.username == "barred"))
    assert barred is not None
    rows = await session.scalar(select(func.count()).select_from(LedgerEntry))
    request, _ = await requests.file(  # as the API filed it a moment before
        session,
        tournament_id=tournament_id,
        kind="enter",
        data={"player": "barred"},
        asked_by="barred",
        request_id="barred-1",
    )
    await session.commit()
    await requests.wake(app.state.cardroom.bus, tournament_id)
    taken = await requests.outcome(app.state.cardroom.sessionmaker, request.id, timeout=30)
    refusal = requests.refusal_of(taken)
    assert refusal is not None and refusal.code == "account_suspended"
    assert await session.scalar(select(func.count()).select_from(LedgerEntry)) == rows
    assert await ledger.balance(session, wallet=ledger.player_wallet(barred.id)) == BANKROLL
    await session.rollback()


async def test_rebuys_and_the_add_on_play_to_a_winner(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    templates = (await client.get("/tournaments/templates")).json()
    spec = quick_sng(templates, 3, 8)
    spec["rebuys"] = {"levels": 2, "chips": 60, "add_on_chips": 120}
    spec["structure"] = structure(levels=5, hands=6)
    boss, tournament_id = await make(client, settings, "Rebuys", spec)
    path = f"/tournaments/{tournament_id}"
    names = ["pl0", "pl1", "pl2", "outsider"]
    money = Money(client, {name: await player_token(client, name) for name in names})
    await money.refused("pl0", f"{path}/rebuy", "early", "tournament_not_started")
    for name in names[:3]:
        answer = await money.post(name, f"{path}/register", f"{name}-1")
        assert answer.status_code == 201, answer.text
        money.bought(name, "entry")
    cardroom: Cardroom = app.state.cardroom
    await wait_until_running(client, tournament_id)
    await money.refused("outsider", f"{path}/rebuy", "o1", "not_registered")
    await money.refused("pl2", f"{path}/add-on", "too-soon", "add_on_closed")

    state: dict[str, Any] = {"phase": "in a hand", "rebuys": 0, "add_ons": set()}
    counter = iter(range(10_000))

    async def rebuy(player: str) -> httpx.Response:
        answer = await money.post(player, f"{path}/rebuy", f"{player}-rb{next(counter)}")
        if answer.status_code == 200:
            assert answer.json()["status"] == "done"
            assert answer.json()["outcome"]["chips"] == 60
            money.bought(player, "rebuy")
            state["rebuys"] += 1
        return answer

    async def meanwhile() -> None:
        seen = await look(cardroom, session, tournament_id)
        if state["phase"] == "in a hand":  # bought in a hand: added when it ends
            if "pl2" not in seen.in_hand:
                return
            answer = await money.post("pl2", f"{path}/rebuy", "pl2-in-hand")
            assert answer.status_code == 200, answer.text
            money.bought("pl2", "rebuy")
            state["rebuys"] += 1
            again = await money.post("pl2", f"{path}/rebuy", "pl2-in-hand")
            assert again.json()["id"] == answer.json()["id"]  # the same request, paid once
            mine = f"{path}/requests/{answer.json()['id']}"
            read = await client.get(mine, headers=bearer(money.tokens["pl2"]))
            assert read.status_code == 200 and read.json() == answer.json()
            theirs = await client.get(mine, headers=bearer(money.tokens["pl0"]))
            assert theirs.status_code == 404 and error_code(theirs) == "unknown_request"
            await money.check("pl2")
            await money.refused("pl2", f"{path}/rebuy", "pl2-more", "stack_too_big")
            state["phase"] = "duel"
            stop_the_director(app)  # taken over with chips bought not yet added
            return
        hands = await hands_played(session, tournament_id)
        playing = [
            e["player"]
            for e in (await client.get(path)).json()["entries"]
            if e["status"] == "playing"
        ]
        if hands < 12:  # the rebuy period: who is out of chips rebuys
            for player in playing:
                if player not in seen.seated:
                    answer = await rebuy(player)
                    assert answer.status_code == 200 or error_code(answer) in (
                        "rebuys_closed",
                        "not_registered",
                    ), answer.text
                    if answer.status_code == 200 and state["phase"] == "duel":
                        state["phase"] = "rebought"
            return
        for player in playing:  # the add-on's level: everyone takes it, once
            if player in state["add_ons"] or player not in seen.seated:
                continue
            answer = await money.post(player, f"{path}/add-on", f"{player}-addon")
            if answer.status_code == 409:  # not yet, too late, or out of chips since the look
                assert error_code(answer) in (
                    "add_on_closed",
                    "not_registered",
                    "tournament_over",
                ), answer.text
                continue
            assert answer.status_code == 200 and answer.json()["outcome"]["chips"] == 120
            money.bought(player, "add_on")
            if not state["add_ons"]:
                stop_the_director(app)
            state["add_ons"].add(player)
            state["phase"] = "added on"
            await money.refused(player, f"{path}/add-on", f"{player}-addon2", "add_on_taken")
            await money.refused(player, f"{path}/rebuy", f"{player}-late", "rebuys_closed")

    def policy() -> Policy:
        """A duel until someone out of chips rebuys; then quiet hands (nobody out) until
        the add-on is taken; then anything."""
        phase = state["phase"]
        return duel("pl0", "pl1") if phase == "duel" else quiet if phase == "rebought" else anything

    finished = await play_out(client, cardroom, session, tournament_id, policy, meanwhile)
    assert state["phase"] == "added on" and state["rebuys"] >= 2, state
    assert state["add_ons"], "nobody took the add-on"
    del money.tokens["outsider"]
    await check_the_end(session, money, finished, tournament_id)
    facts = list(
        (
            await session.scalars(
                select(TournamentFact.kind).where(TournamentFact.tournament_id == tournament_id)
            )
        ).all()
    )
    assert facts.count("rebought") == state["rebuys"]
    assert facts.count("added_on") == len(state["add_ons"])
    refused = await session.scalar(
        select(func.count())
        .select_from(TournamentRequest)
        .where(
            TournamentRequest.tournament_id == tournament_id, TournamentRequest.fact_seq.is_(None)
        )
    )
    assert refused and refused >= 4  # the refusals above, each with nothing paid
    await session.rollback()


async def test_a_full_field_and_a_re_entry_too_many_are_refused_with_nothing_debited(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    templates = (await client.get("/tournaments/templates")).json()
    spec = {**quick_sng(templates, 3, 8), "kind": "scheduled", "payout_table": "scheduled"}
    spec.update(min_entrants=3, max_entrants=4, late_registration_levels=2, re_entries=0)
    spec["structure"] = structure(levels=5, hands=20)
    names = ["pl0", "pl1", "pl2", "late1", "late2"]
    money = Money(client, {name: await player_token(client, name) for name in names})
    _, tournament_id = await make(client, settings, "Full", spec, starts_in=3)
    path = f"/tournaments/{tournament_id}"
    for name in names[:3]:
        answer = await money.post(name, f"{path}/register", f"{name}-1")
        assert answer.status_code == 201, answer.text
    await wait_until_running(client, tournament_id)
    answer = await money.post("late1", f"{path}/register", "late1-1")
    assert answer.status_code == 201, answer.text
    await money.refused("late2", f"{path}/register", "late2-1", "tournament_full")

    cardroom: Cardroom = app.state.cardroom
    seen: dict[str, str] = {}

    async def meanwhile() -> None:
        if seen:
            return
        out = [e for e in (await client.get(path)).json()["entries"] if e["status"] == "out"]
        if out:  # no re-entry in this format (and the field is full)
            player = out[0]["player"]
            await money.refused(player, f"{path}/register", f"{player}-2", "re_entries_used")
            seen["out"] = player

    finished = await play_out(
        client, cardroom, session, tournament_id, lambda: duel("pl0", "pl1"), meanwhile
    )
    assert seen, "nobody was out before the end"
    assert len(finished["entries"]) == 4 and sum(e["prize"] for e in finished["entries"]) == 400
    for name in names:
        prize = sum(e["prize"] for e in finished["entries"] if e["player"] == name)
        assert await money.wallet(name) == BANKROLL - (PRICE if name != "late2" else 0) + prize
    books = await ledger.verify_books(session)
    assert books.balanced, books.differences()
