"""Collection over HTTP with real tokens, on SQLite and PostgreSQL: a table made with a rake
and a time fee, hands raked and fees collected into the house's revenue, what the players'
websockets and the hand's record show of it, the books and ``stud-server audit`` balancing,
a change of the rake taking effect at the next hand, and bad values refused."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from live import receive, serve
from play import play, seed, submit, wait_for
from server_helpers import FAST_HASHING, bearer, error_code, operator_token, player_token
from sqlalchemy import func, select, text
from websockets.asyncio.client import ClientConnection, connect

from engine.actions import LegalActions
from engine.phh import loads
from engine.phh_replay import replay
from server import cli
from server.accounts import ledger
from server.bus.memory import MemoryBus
from server.db import migrate
from server.db.models import HandPlayer, LedgerEntry
from server.db.session import make_engine, make_sessionmaker
from server.settings import Settings
from server.store import tables
from server.store.books import check_books
from server.store.deck_seal import DeckSeal
from server.store.table_store import DatabaseTableStore, seated_players, time_paid
from server.table import time_collection
from server.table.actor import TableActor
from server.table.ports import TableSettings

RAKE = {"rake_percent": 10, "rake_cap": 5, "rake_from_street": 2}


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        starting_bankroll=10_000,
        pause_between_hands_seconds=0,
        action_clock_seconds=30,
        **FAST_HASHING,
    )


@pytest.fixture
async def host(app: FastAPI) -> AsyncIterator[str]:
    async with serve(app) as address:
        yield address


def betting(legal: LegalActions, _: random.Random) -> tuple[str, int | None]:
    """Open every street with the smallest wager, and call it: two players put 41 chips each
    in a hand of fixed-limit stud at 1/2, 5/10 (antes 1, a completion to 5, then 5, 10, 10,
    10), 82 in the pot."""
    if legal.wager is not None and "call" not in legal.kinds:
        return legal.wager, legal.min_to
    for kind in ("call", "check"):
        if kind in legal.kinds:
            return kind, None
    raise AssertionError(f"no call or check in {legal}")


async def watch(host: str, token: str, table: int) -> ClientConnection:
    ws = await connect(f"ws://{host}/ws")
    assert (await receive(ws))["type"] == "hello"
    await ws.send(json.dumps({"v": 1, "type": "auth", "id": 1, "token": token}))
    await ws.send(json.dumps({"v": 1, "type": "watch", "id": 2, "table": table}))
    while True:
        frame = await receive(ws)
        if frame["type"] == "reply" and frame["result"].get("type") == "snapshot":
            return ws


async def events_until(ws: ClientConnection, kind: str, count: int = 1) -> list[dict[str, Any]]:
    """Event frames until the ``count``-th of ``kind`` (all kept, in order)."""
    seen: list[dict[str, Any]] = []
    while sum(1 for frame in seen if frame["kind"] == kind) < count:
        frame = await receive(ws)
        if frame["type"] == "event":
            seen.append(frame)
    return seen


async def test_a_raked_table_pays_the_house_and_the_books_balance(
    client: httpx.AsyncClient, app: FastAPI, settings: Settings, host: str
) -> None:
    boss = bearer(await operator_token(client, settings))
    ann = await player_token(client, "ann")
    bob = await player_token(client, "bob")
    made = await client.post(
        "/admin/tables",
        headers=boss,
        json={
            "name": "Raked",
            "config": RAKE,
            "min_buy_in": 20,
            "max_buy_in": 500,
            "time_fee": 3,
            "time_fee_period": 600,
        },
    )
    assert made.status_code == 201, made.text
    table = made.json()
    assert (table["config"]["rake_percent"], table["config"]["rake_cap"]) == (10, 5)
    assert (table["time_fee"], table["time_fee_period"]) == (3, 600)
    actor = app.state.cardroom.actor(table["id"])
    assert actor is not None and actor.settings.time_fee == 3

    screen = await watch(host, ann, table["id"])
    await submit(actor, "sit", "ann", buy_in=500, seat=0)
    await submit(actor, "sit", "bob", buy_in=500, seat=1)
    await play(actor, lambda: actor.hand_number >= 2, choose=betting)

    # The players' screens: each paid the time fee before the first hand, the rake was taken
    # before the pot was awarded, and the winner got the rest.
    seen = await events_until(screen, "hand_ended")
    fees = [frame["data"] for frame in seen if frame["kind"] == "time_collected"]
    assert fees == [{"seat": 0, "amount": 3, "stack": 497}, {"seat": 1, "amount": 3, "stack": 497}]
    kinds = [frame["kind"] for frame in seen]
    assert kinds.index("time_collected") < kinds.index("hand_started")
    [rake] = [frame["data"] for frame in seen if frame["kind"] == "rake"]
    assert rake == {"amount": 5, "pots": [5]}  # 10% of 82 is 8, capped at 5
    awards = [frame["data"]["amount"] for frame in seen if frame["kind"] == "pot_awarded"]
    assert sum(awards) == 77 and kinds.index("rake") < kinds.index("pot_awarded")
    # The second hand: the time is paid for the period, no fee.
    hand = actor.table.hand
    assert hand is not None and not hand.is_over() and sum(hand.starting) == 2 * 497 - 5

    # The hand's record shows the rake: its result, its event log, its PHH file.
    [row] = (await client.get("/admin/hands", headers=boss, params={"table": table["id"]})).json()[
        "hands"
    ]
    assert (row["pot"], row["rake"]) == (82, 5)
    record = (await client.get(f"/admin/hands/{row['id']}", headers=boss)).json()
    assert record["result"]["rake"] == 5
    assert record["result"]["pots"] == [{"amount": 82, "eligible": [0, 1], "rake": 5}]
    log = (await client.get(f"/admin/hands/{row['id']}/events", headers=boss)).json()["events"]
    assert {"kind": "rake", "data": rake, "to": None, "audience": "everyone"} in log
    phh = (await client.get(f"/admin/hands/{row['id']}/phh", headers=boss)).text
    assert "_rake = 5\n" in phh and "_rake_percent = 10.0\n" in phh and "_rake_cap = 5\n" in phh
    history = loads(phh)
    assert replay(history) == list(history.finishing_stacks or ())
    assert sum(history.finishing_stacks or ()) == sum(history.starting_stacks) - 5

    # The books: 5 raked and 6 in time fees in the house's revenue; everything balances.
    books = (await client.get("/admin/books", headers=boss)).json()
    assert books["balanced"] is True, books
    assert (books["revenue"], books["rake"]) == (11, 5)
    assert books["held"] == -books["house"]
    status, lines = await cli.audit(settings)
    assert status == 0, lines
    assert (
        "in house revenue" in lines[0]
        and "every recorded hand nets to zero after its rake" in (lines[0])
    )
    assert "(1 hand, 5 chips raked)" in lines[0]

    # A new rake, changed mid-hand: the hand in progress is raked as it was dealt, the next
    # one by the new setting (2.5% of 82 is 2, no cap).
    changed = await client.patch(
        f"/admin/tables/{table['id']}",
        headers=boss,
        json={"config": {"rake_percent": 2.5, "rake_cap": None}, "reason": "cheaper"},
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["after_hand"] is True
    assert changed.json()["table"]["config"]["rake_percent"] == 2.5
    await play(actor, lambda: actor.hand_number >= 4, choose=betting)
    seen = await events_until(screen, "rake", count=2)
    assert [frame["data"]["amount"] for frame in seen if frame["kind"] == "rake"] == [5, 2]
    books = (await client.get("/admin/books", headers=boss)).json()
    assert books["balanced"] is True and (books["revenue"], books["rake"]) == (18, 12)
    status, lines = await cli.audit(settings)
    assert status == 0, lines

    # A credit, a debit and a close (the hand in progress voided): still balanced.
    for path, amount in (("credit", 250), ("debit", 40)):
        moved = await client.post(
            f"/admin/players/bob/{path}", headers=boss, json={"amount": amount, "reason": path}
        )
        assert moved.status_code == 200, moved.text
    closed = await client.post(
        f"/admin/tables/{table['id']}/close",
        headers=boss,
        params={"void": "true"},
        json={"reason": "end of the night"},
    )
    assert closed.status_code == 200, closed.text
    await wait_for(lambda: app.state.cardroom.actor(table["id"]) is None)
    books = (await client.get("/admin/books", headers=boss)).json()
    assert books["balanced"] is True and (books["revenue"], books["rake"]) == (18, 12)
    wallets = {
        name: (await client.get("/wallet", headers=bearer(token))).json()["balance"]
        for name, token in (("ann", ann), ("bob", bob))
    }
    assert sum(wallets.values()) == 2 * 10_000 + 250 - 40 - 18  # only the house's take gone
    status, lines = await cli.audit(settings)
    assert status == 0, lines
    await screen.close()


async def test_a_rake_only_from_the_chosen_street(
    client: httpx.AsyncClient, app: FastAPI, settings: Settings
) -> None:
    """No flop, no drop: a hand won on the first street pays nothing."""
    boss = bearer(await operator_token(client, settings))
    for name in ("ann", "bob"):
        await player_token(client, name)
    made = await client.post("/admin/tables", headers=boss, json={"name": "NoDrop", "config": RAKE})
    actor = app.state.cardroom.actor(made.json()["id"])

    def folding(legal: LegalActions, rng: random.Random) -> tuple[str, int | None]:
        if "fold" in legal.kinds and "bring_in" not in legal.kinds:
            return "fold", None
        return betting(legal, rng)

    await submit(actor, "sit", "ann", buy_in=200, seat=0)
    await submit(actor, "sit", "bob", buy_in=200, seat=1)
    await play(actor, lambda: actor.hand_number >= 3, choose=folding)
    books = (await client.get("/admin/books", headers=boss)).json()
    assert books["balanced"] is True and books["revenue"] == 0 and books["rake"] == 0


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"config": {"rake_percent": -1}}, "bad_config"),
        ({"config": {"rake_percent": 100.5}}, "bad_config"),
        ({"config": {"rake_percent": 2.555}}, "bad_config"),
        ({"config": {"rake_percent": "5"}}, "bad_config"),
        ({"config": {"rake_percent": True}}, "bad_config"),
        ({"config": {"rake_cap": -1}}, "bad_config"),
        ({"config": {"rake_cap": 2.5}}, "bad_config"),
        ({"config": {"rake_from_street": 0}}, "bad_config"),
        ({"config": {"rake_from_street": 6}}, "bad_config"),  # seven-card stud has five
        ({"time_fee": -1}, "bad_request"),
        ({"time_fee": 20}, "bad_config"),  # the whole least buy-in
        ({"time_fee": 1.5}, "bad_request"),
        ({"time_fee_period": 59}, "bad_request"),
        ({"time_fee_period": 86_401}, "bad_request"),
    ],
)
async def test_bad_collection_settings_are_refused_and_change_nothing(
    client: httpx.AsyncClient, app: FastAPI, settings: Settings, body: dict[str, Any], code: str
) -> None:
    boss = bearer(await operator_token(client, settings))
    refused = await client.post(
        "/admin/tables", headers=boss, json={"name": "Bad", "min_buy_in": 20, **body}
    )
    assert refused.status_code == 400 and error_code(refused) == code, refused.text
    assert (await client.get("/admin/tables", headers=boss)).json() == []
    made = await client.post("/admin/tables", headers=boss, json={"name": "Good", "min_buy_in": 20})
    before = (await client.get("/admin/tables", headers=boss)).json()
    refused = await client.patch(f"/admin/tables/{made.json()['id']}", headers=boss, json=body)
    assert refused.status_code == 400 and error_code(refused) == code, refused.text
    assert (await client.get("/admin/tables", headers=boss)).json() == before
    actor = app.state.cardroom.actor(made.json()["id"])
    assert actor.table.config.rake_percent == 0 and actor.settings.time_fee == 0
    entries = (
        await client.get("/admin/audit", headers=boss, params={"action": "table.update"})
    ).json()["entries"]
    assert entries == []


# ---------------------------------------------------------------------- time collection


class WallClock:
    """The wall clock of time collection, moved by the test."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


async def _time_table(database_url: str, players: list[str], fee: int) -> tuple[Any, Any, int]:
    engine = make_engine(database_url)
    await migrate.upgrade(engine)
    sessionmaker = make_sessionmaker(engine)
    table_id = await seed(sessionmaker, players, config=RAKE)
    return engine, sessionmaker, table_id


def _actor(
    sessionmaker: Any, table_id: int, fee: int, wall: WallClock, pause: float = 0.0
) -> TableActor:
    return TableActor(
        table_id,
        tables.config_from_json(RAKE),
        bus=MemoryBus(),
        store=DatabaseTableStore(sessionmaker, seal=DeckSeal.generate()),
        settings=TableSettings(
            min_buy_in=20,
            max_buy_in=500,
            action_clock=5.0,
            pause_between_hands=pause,
            time_fee=fee,
            time_fee_period=60.0,
        ),
        wall_clock=wall,
        rng_factory=lambda: random.Random(3),
    )


async def _fees(sessionmaker: Any) -> list[tuple[int, str | None]]:
    async with sessionmaker() as session:
        rows = await session.execute(
            select(LedgerEntry.amount, LedgerEntry.reference)
            .where(LedgerEntry.kind == ledger.EntryKind.TIME_FEE.value)
            .order_by(LedgerEntry.id)
        )
        return [(amount, reference) for amount, reference in rows.all()]


async def test_time_is_collected_once_a_period_and_survives_a_restart(database_url: str) -> None:
    engine, sessionmaker, table_id = await _time_table(database_url, ["ann", "bob"], 4)
    wall = WallClock()
    actor = _actor(sessionmaker, table_id, 4, wall)
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=200, seat=0)
        await submit(actor, "sit", "bob", buy_in=200, seat=1)
        await play(actor, lambda: actor.hand_number >= 2, choose=betting)
        first = await _fees(sessionmaker)
        assert first == [
            (4, f"table:{table_id} hand:1 player:ann"),
            (4, f"table:{table_id} hand:1 player:bob"),
        ]
        await play(actor, lambda: actor.hand_number >= 3, choose=betting)
        assert len(await _fees(sessionmaker)) == 2  # the period is paid
        wall.now += 61
        await play(actor, lambda: actor.hand_number >= 4, choose=betting)
        # The hand in progress is the fourth: a new period, each pays again before it.
        assert [ref for _, ref in await _fees(sessionmaker)][2:] == [
            f"table:{table_id} hand:4 player:ann",
            f"table:{table_id} hand:4 player:bob",
        ]
        hand = actor.table.hand
        assert hand is not None and sum(hand.starting) == 400 - 16 - 5 * 3  # fees, rake
    finally:
        await actor.stop()

    # The paid periods are in the seats' rows: a table built again (a restart, another node)
    # charges nobody twice for a period, and charges again once it is over.
    async with sessionmaker() as session:
        paid = await time_paid(session, table_id=table_id)
        assert paid == {"ann": wall.now + 60, "bob": wall.now + 60}
        seats = await seated_players(session, table_id=table_id)
    again = _actor(sessionmaker, table_id, 4, wall)
    again.restore(seats, hand_number=4, sitting_out=set(), time_paid=paid)
    assert _fees_due(again) == {}
    wall.now += 60
    assert _fees_due(again) == {0: 4, 1: 4}

    # The books hold: the fees and the rake are in the house's revenue, nothing else moved.
    async with sessionmaker() as session:
        check = await check_books(session)
        assert check.balanced, check.differences()
        assert check.books.revenue == 16 + check.ledger_rake
        assert check.hands_rake == check.ledger_rake == 15
    status, lines = await cli.audit(Settings(database_url=database_url, **FAST_HASHING))
    assert status == 0, lines
    await engine.dispose()


def _fees_due(actor: TableActor) -> dict[int, int]:
    """The fees the table would take before its next deal (seat -> fee)."""
    return time_collection.fees_due(
        actor.table,
        fee=actor.settings.time_fee,
        period=actor.settings.time_fee_period,
        now=actor.wall_clock(),
        paid_until=lambda player: actor.players[player].time_paid_until,
    ).fees


async def test_a_stack_that_cannot_pay_the_time_fee_sits_out(database_url: str) -> None:
    engine, sessionmaker, table_id = await _time_table(database_url, ["ann", "bob", "cat"], 18)
    actor = _actor(sessionmaker, table_id, 18, WallClock(), pause=0.5)  # all three sit first
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=200, seat=0)
        await submit(actor, "sit", "bob", buy_in=200, seat=1)
        # 20 chips: the fee of 18 would leave less than a hand's ante and bring-in (3).
        await submit(actor, "sit", "cat", buy_in=20, seat=2)
        await wait_for(lambda: actor.table.hand is not None)
        hand = actor.table.hand
        assert hand is not None and hand.seats == [0, 1]
        assert hand.starting == [182, 182]
        cat = actor.table.seats[2]
        assert cat is not None and cat.sitting_out and cat.stack == 20
        assert sorted(ref or "" for _, ref in await _fees(sessionmaker)) == [
            f"table:{table_id} hand:1 player:ann",
            f"table:{table_id} hand:1 player:bob",
        ]
    finally:
        await actor.stop()
    await engine.dispose()


async def test_the_audit_finds_a_hand_whose_rake_was_changed(
    client: httpx.AsyncClient, app: FastAPI, settings: Settings, database_url: str
) -> None:
    boss = bearer(await operator_token(client, settings))
    for name in ("ann", "bob"):
        await player_token(client, name)
    made = await client.post("/admin/tables", headers=boss, json={"name": "R", "config": RAKE})
    actor = app.state.cardroom.actor(made.json()["id"])
    await submit(actor, "sit", "ann", buy_in=300, seat=0)
    await submit(actor, "sit", "bob", buy_in=300, seat=1)
    await play(actor, lambda: actor.hand_number >= 2, choose=betting)
    await wait_for(lambda: actor.table.hand is not None and not actor.table.hand.is_over())
    sessionmaker = app.state.cardroom.sessionmaker
    async with sessionmaker() as session, session.begin():
        await session.execute(text("UPDATE hands SET rake = rake + 1 WHERE number = 1"))
        nets = await session.scalar(select(func.sum(HandPlayer.ending - HandPlayer.starting)))
        assert nets == -5
    status, lines = await cli.audit(settings)
    assert status == 1
    assert lines[0].endswith(
        "its players end with 1 chip more than they started with after a rake of 6"
    ), lines
    assert lines[1] == (
        "the recorded hands raked 6 chips, but the ledger moved 5 chips of rake to house:revenue"
    )
