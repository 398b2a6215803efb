"""Nodes that share the tables, in this process on PostgreSQL + Redis: new tables spread over
the nodes wherever they are made, a node that joins takes a share of the running tables
between hands, a drained node gives every table away, a dead node's tables are spread over the
survivors; with play going on throughout, no hand voided and no chip lost.

Each runs on one Redis and on a Redis Cluster of three masters (``redis_base``). (tests/cluster
runs a node's kill -9 with real node processes.)
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from backends import PostgresServer, needs_postgresql, needs_redis, redis_prefix, redis_url
from nodes import Node
from play import seed, submit, wait_for
from server_helpers import FAST_HASHING
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from server.accounts.audit_log import AuditAction
from server.db.models import AuditEntry, HandRecord, TableRecord
from server.db.session import make_engine, make_sessionmaker
from server.settings import Settings
from server.store import tables
from server.store.books import check_books
from server.table.ports import CommandRefused

pytestmark = [needs_redis, needs_postgresql]

LEASE = 1.0
# Gossip, moves and takeovers take a few lease rounds; a loaded machine holds rounds back.
SETTLE = 20 * LEASE + 10


@pytest.fixture
async def shared(postgres_server: PostgresServer) -> AsyncIterator[tuple[str, AsyncEngine]]:
    url = postgres_server.fresh()
    engine = make_engine(url)
    yield url, engine
    await engine.dispose()


@pytest.fixture
async def make_nodes(
    shared: tuple[str, AsyncEngine], redis_base: str
) -> AsyncIterator[Callable[..., list[Node]]]:
    """Nodes named as asked, on one database and one Redis, or one Redis Cluster (not
    started)."""
    database_url, engine = shared
    sessionmaker = make_sessionmaker(engine)
    url = redis_url(redis_base, prefix=redis_prefix())
    settings = Settings(
        database_url=database_url,
        pause_between_hands_seconds=0,
        action_clock_seconds=30,
        lease_seconds=LEASE,
        **FAST_HASHING,
    )
    made: list[Node] = []

    def make(*names: str) -> list[Node]:
        more = [Node(name, url, sessionmaker, settings) for name in names]
        made.extend(more)
        return more

    yield make
    for node in made:
        if not node.down:
            await node.stop()


def running(node: Node) -> set[int]:
    return set(node.cardroom.running_tables())


def spread(nodes: list[Node]) -> dict[str, int]:
    return {node.cardroom.node_id: len(running(node)) for node in nodes}


async def know_each_other(nodes: list[Node]) -> None:
    """Until every node has heard every other tell of itself."""

    def heard() -> bool:
        return all(
            {n.cardroom.node_id for n in nodes} - {node.cardroom.node_id}
            <= {load.node for load in node.cardroom.gossip.live_nodes()}
            for node in nodes
        )

    await wait_for(heard, timeout=SETTLE)


async def new_tables(sessionmaker: async_sessionmaker[AsyncSession], count: int) -> list[int]:
    """``count`` tables of two seated-to-be players each (``p<table>a``, ``p<table>b``)."""
    made = []
    for n in range(count):
        made.append(await seed(sessionmaker, [f"p{n}a", f"p{n}b"], name=f"T{n}"))
    return made


async def record(sessionmaker: async_sessionmaker[AsyncSession], table_id: int) -> TableRecord:
    async with sessionmaker() as session:
        found = await tables.get(session, table_id=table_id)
    assert found is not None
    return found


class Croupier:
    """Players at every table, acting through one node as clients connected there would
    (their commands reach the table wherever it runs), until stopped."""

    def __init__(self, via: Node, nodes: list[Node], players: dict[int, list[str]]) -> None:
        self.via = via
        self.nodes = nodes
        self.players = players
        self.rng = random.Random(11)
        self.acted = Counter[int]()
        self._task: asyncio.Task[None] | None = None

    def actor_of(self, table_id: int) -> Any:
        for node in self.nodes:
            if not node.down and (actor := node.cardroom.actor(table_id)) is not None:
                return actor
        return None

    async def seat_everyone(self) -> None:
        for table_id, names in self.players.items():
            handle = await self.via.cardroom.table(table_id)
            assert handle is not None
            for name in names:
                await submit(handle, "sit", name, buy_in=200)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _run(self) -> None:
        while True:
            moved = False
            for table_id in self.players:
                moved = await self._act(table_id) or moved
            if not moved:
                await asyncio.sleep(0.01)

    async def _act(self, table_id: int) -> bool:
        actor = self.actor_of(table_id)
        hand = actor.table.hand if actor is not None else None
        if hand is None or hand.is_over() or hand.legal_actions().seat is None:
            return False
        legal = hand.legal_actions()
        player = actor.table.seats[legal.seat].player
        kind = next(k for k in ("check", "call", "bring_in") if k in legal.kinds)
        handle = await self.via.cardroom.table(table_id)
        assert handle is not None
        try:
            await submit(handle, "act", player, action_id=f"x{self.rng.random()}", kind=kind)
        except CommandRefused as refused:
            # The table changes nodes under the command: "try again", as a client would.
            retry = {"table_unavailable", "table_moved", "table_closed", "node_unavailable"}
            assert refused.code in {"not_your_turn", "no_hand", *retry}, refused.code
            await asyncio.sleep(0.02)
            return False
        self.acted[table_id] += 1
        return True


async def hands_voided(sessionmaker: async_sessionmaker[AsyncSession]) -> list[Any]:
    async with sessionmaker() as session:
        rows = (await session.scalars(select(HandRecord))).all()
    return [
        (row.table_id, row.number, row.result.get("reason"))
        for row in rows
        if row.result["cancelled"]
    ]


async def books_balance(sessionmaker: async_sessionmaker[AsyncSession]) -> bool:
    async with sessionmaker() as session:
        return (await check_books(session)).balanced


async def moves_audited(sessionmaker: async_sessionmaker[AsyncSession]) -> list[AuditEntry]:
    async with sessionmaker() as session:
        query = select(AuditEntry).where(AuditEntry.action == AuditAction.TABLE_MOVE.value)
        return list((await session.scalars(query)).all())


# ---------------------------------------------------------------------- placement


async def test_ten_tables_made_through_one_node_of_two_run_on_both(
    make_nodes: Callable[..., list[Node]],
) -> None:
    a, b = make_nodes("a", "b")
    await a.start()
    await b.start()
    await know_each_other([a, b])
    sessionmaker = a.cardroom.sessionmaker
    table_ids = await new_tables(sessionmaker, 10)
    for table_id in table_ids:
        opened = await a.cardroom.open_table(await record(sessionmaker, table_id))
        # Run once the call returns, here or where it went; unless a lease round (a's or b's)
        # saw it first, and is taking it still (the tables are made before they are opened).
        if opened is not None:
            assert table_id in running(a)
        else:
            await wait_for(lambda t=table_id: t in running(a) | running(b), timeout=LEASE)
    counts = spread([a, b])
    assert counts["a"] >= 3 and counts["b"] >= 3, counts
    assert counts["a"] + counts["b"] == 10
    assert running(a).isdisjoint(running(b))
    # A table placed on b is played through a: commands reach it over the bus.
    table_id = min(running(b))
    await wait_for(lambda: a.cardroom.runner(table_id) == "b", timeout=SETTLE)
    handle = await a.cardroom.table(table_id)
    assert handle is not None
    player = f"p{table_ids.index(table_id)}a"
    assert (await submit(handle, "sit", player, buy_in=100))["stack"] == 100


async def test_a_node_that_joins_takes_a_share_between_hands_with_no_hand_voided(
    make_nodes: Callable[..., list[Node]],
) -> None:
    a, b = make_nodes("a", "b")
    sessionmaker = a.cardroom.sessionmaker
    table_ids = await new_tables(sessionmaker, 6)
    await a.start()
    await wait_for(lambda: running(a) == set(table_ids), timeout=SETTLE)
    players = {t: [f"p{n}a", f"p{n}b"] for n, t in enumerate(table_ids)}
    croupier = Croupier(a, [a, b], players)
    await croupier.seat_everyone()
    croupier.start()
    await wait_for(lambda: all(croupier.acted[t] >= 3 for t in table_ids), timeout=SETTLE)

    await b.start()
    await wait_for(
        lambda: len(running(b)) == 3, timeout=SETTLE, explain=lambda: str(spread([a, b]))
    )
    moved = running(b)
    acted = {t: croupier.acted[t] for t in moved}
    # Play goes on at the moved tables, on b.
    await wait_for(lambda: all(croupier.acted[t] >= acted[t] + 6 for t in moved), timeout=SETTLE)
    await croupier.stop()
    assert spread([a, b]) == {"a": 3, "b": 3}
    assert await hands_voided(sessionmaker) == []
    assert await books_balance(sessionmaker)
    assert a.metric("stud_table_moves_total", reason="balance") == 3
    assert b.metric("stud_table_takeovers_total", reason="moved") == 3
    audited = await moves_audited(sessionmaker)
    assert sorted(int(e.target_id) for e in audited) == sorted(moved)
    assert all(e.actor == "node:b" and e.actor_id is None for e in audited)
    assert all(e.before == {"node": "a"} and e.reason == "balance" for e in audited)


async def test_a_drained_node_ends_with_no_table_and_no_chip_lost(
    make_nodes: Callable[..., list[Node]],
) -> None:
    a, b = make_nodes("a", "b")
    sessionmaker = a.cardroom.sessionmaker
    await a.start()
    await b.start()
    await know_each_other([a, b])
    table_ids = await new_tables(sessionmaker, 6)
    for table_id in table_ids:
        await a.cardroom.open_table(await record(sessionmaker, table_id))
    # Placed half on b (on a busy machine a handover b answers late leaves the table on a,
    # and the nodes even out at the next rounds).
    await wait_for(
        lambda: len(running(b)) == 3, timeout=SETTLE, explain=lambda: str(spread([a, b]))
    )
    players = {t: [f"p{n}a", f"p{n}b"] for n, t in enumerate(table_ids)}
    croupier = Croupier(a, [a, b], players)
    await croupier.seat_everyone()
    croupier.start()
    await wait_for(lambda: all(croupier.acted[t] >= 3 for t in table_ids), timeout=SETTLE)

    # Asked through a, carried out by b: its tables move to a between hands.
    report = await a.cardroom.drain_node("b", draining=True)
    assert report.draining and not report.drained
    await wait_for(lambda: not running(b), timeout=SETTLE, explain=lambda: str(spread([a, b])))

    def drained() -> bool:
        return any(r.node == "b" and r.drained for r in a.cardroom.node_reports())

    await wait_for(drained, timeout=SETTLE)
    # A drained node takes no new table: one made through it goes to a.
    extra = await seed(sessionmaker, [], name="made through b")
    assert await b.cardroom.open_table(await record(sessionmaker, extra)) is None
    assert extra in running(a) and not running(b)
    acted = dict(croupier.acted)
    await wait_for(
        lambda: all(croupier.acted[t] >= acted[t] + 4 for t in table_ids), timeout=SETTLE
    )
    assert b.metric("stud_table_moves_total", reason="drain") == 3
    # Every drain move audited (and any move that evened the nodes out at the start).
    reasons = sorted(e.reason or "" for e in await moves_audited(sessionmaker))
    assert [r for r in reasons if r != "balance"] == ["drain"] * 3
    # Undrained, it takes tables again as the nodes even out.
    report = await a.cardroom.drain_node("b", draining=False)
    assert not report.draining
    await wait_for(
        lambda: len(running(b)) >= 3, timeout=SETTLE, explain=lambda: str(spread([a, b]))
    )
    await croupier.stop()
    assert await hands_voided(sessionmaker) == []
    assert await books_balance(sessionmaker)


async def test_a_dead_node_s_tables_are_spread_over_the_two_others(
    make_nodes: Callable[..., list[Node]],
) -> None:
    a, b, c = make_nodes("a", "b", "c")
    for node in (a, b, c):
        await node.start()
    await know_each_other([a, b, c])
    sessionmaker = a.cardroom.sessionmaker
    table_ids = await new_tables(sessionmaker, 9)
    for table_id in table_ids:
        await a.cardroom.open_table(await record(sessionmaker, table_id))
    # (A lease round that saw a table before it was opened may be taking it still, or have
    # taken one a node too many: the nodes even it out between hands.)
    await wait_for(
        lambda: (
            spread([a, b, c]) == {"a": 3, "b": 3, "c": 3}
            and not any(node.cardroom.load().moving for node in (a, b, c))
        ),
        timeout=SETTLE,
        explain=lambda: str(spread([a, b, c])),
    )
    before = {entry.id for entry in await moves_audited(sessionmaker)}
    orphans = running(c)
    await c.die()

    def taken() -> bool:
        return orphans <= running(a) | running(b)

    await wait_for(taken, timeout=SETTLE, explain=lambda: str(spread([a, b])))
    assert orphans & running(a) and orphans & running(b), spread([a, b])
    assert len(running(a)) + len(running(b)) == 9
    assert running(a).isdisjoint(running(b))
    moved = [e for e in await moves_audited(sessionmaker) if e.id not in before]
    assert Counter(e.reason for e in moved) == {"lease_expired": 3}


async def test_a_table_let_go_while_it_carries_something_out_is_not_restarted(
    make_nodes: Callable[..., list[Node]], caplog: pytest.LogCaptureFixture
) -> None:
    """Letting go waits for what the actor is doing; the actor then ends because it was asked
    to, and the node must not take that for a death (and build the table again)."""
    (a,) = make_nodes("a")
    sessionmaker = a.cardroom.sessionmaker
    [table_id] = await new_tables(sessionmaker, 1)
    await a.start()
    await wait_for(lambda: running(a) == {table_id}, timeout=SETTLE)
    actor = a.cardroom.actor(table_id)
    assert actor is not None
    inside, go_on = asyncio.Event(), asyncio.Event()
    on_clock = actor._on_clock

    async def held_clock() -> None:
        inside.set()
        await go_on.wait()
        await on_clock()

    actor._on_clock = held_clock  # type: ignore[method-assign]
    handle = await a.cardroom.table(table_id)
    assert handle is not None
    sitting = asyncio.create_task(submit(handle, "sit", "p0a", buy_in=100))
    await inside.wait()  # the actor is busy
    letting_go = asyncio.create_task(a.cardroom.let_go(table_id, actor))
    await asyncio.sleep(0.05)
    assert not letting_go.done()  # it waits for the actor to finish
    go_on.set()
    assert (await sitting)["stack"] == 100
    let_go = await letting_go
    assert let_go is not None and let_go.record.id == table_id
    await asyncio.sleep(0.3)  # a restart, were one spawned, would have begun by now
    assert "actor died" not in caplog.text
    assert a.cardroom.actor(table_id) is None
    assert table_id not in running(a)
