"""Several nodes, one cardroom, in one process: leases on Redis, fencing in the database,
commands routed to the running node, a dead node's table taken over and its hand resumed,
and a table that pauses while its database is away.

The tests on Redis run twice (``redis_base``): on one Redis, and on a Redis Cluster of three
masters. (tests/cluster runs the same story with real node processes, killed with SIGKILL.)
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from backends import (
    PostgresServer,
    needs_postgresql,
    needs_redis,
    redis_prefix,
    redis_url,
    until_subscribers,
)
from fakes import MemoryTableStore
from nodes import Node
from play import PASSWORDS, calling, play, seed, submit, wait_for
from server_helpers import FAST_HASHING
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from engine.views import view
from server.accounts import ledger, registry
from server.bus.memory import MemoryBus, Subscription, table_channel, table_reply_channel
from server.cardroom import supervisor
from server.cardroom.cluster import CommandRouter, RedisLeases, RemoteTable, command_channel
from server.db.models import Account, HandRecord, LiveHand, Role, TableRecord
from server.db.session import make_engine, make_sessionmaker
from server.settings import Settings
from server.store import tables
from server.store.books import check_books
from server.store.deck_seal import DeckSeal
from server.store.fencing import claim_table
from server.store.records import TableTakenOver
from server.store.table_store import DatabaseTableStore, seated_players
from server.table import absence, commands
from server.table.actor import TableActor
from server.table.ports import CommandRefused, TableSettings
from server.table.publisher import SEQ_PER_RUN

LEASE = 1.0
SEAL = DeckSeal.generate()


@pytest.fixture
def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return make_sessionmaker(engine)


# ---------------------------------------------------------------------- leases


@needs_redis
async def test_a_lease_is_one_node_s_until_it_lapses_or_is_given_back(redis_base: str) -> None:
    url = redis_url(redis_base)
    a, b = RedisLeases(url, "a", 0.5), RedisLeases(url, "b", 0.5)
    try:
        assert await a.acquire(7) and not await b.acquire(7)
        assert await a.renew(7) and not await b.renew(7)
        assert await a.holder(7) == "a"
        await b.release(7)  # not b's to give back
        assert await a.holder(7) == "a"
        await a.release(7)
        assert await b.acquire(7) and await b.holder(7) == "b"
        await asyncio.sleep(0.7)  # b stops renewing: the lease lapses
        assert await a.acquire(7)
        assert not await b.renew(7), "a lapsed lease is gone for good once another holds it"
        # A lease that vanished (Redis restarted empty) is taken again by its holder.
        await a.redis.delete(a.key(7))
        assert await a.renew(7) and await a.holder(7) == "a"
        # The same node id, restarted, does not inherit its old leases.
        again = RedisLeases(url, "a", 0.5)
        try:
            assert not await again.renew(7) and not await again.acquire(7)
        finally:
            await again.close()
    finally:
        await a.close()
        await b.close()


@needs_redis
async def test_a_lease_set_aside_for_a_node_is_that_node_s_alone_until_it_lapses(
    redis_base: str,
) -> None:
    url = redis_url(redis_base, prefix=redis_prefix())
    a, b, c = (RedisLeases(url, name, 0.5) for name in "abc")
    try:
        # A new table placed on b: set aside from nobody's, taken by b alone.
        assert await a.reserve(1, "b", ours=False)
        assert await a.holder(1) == "b", "commands find the node-to-be at once"
        assert not await a.acquire(1) and not await c.acquire(1)
        assert not await a.reserve(1, "c", ours=False), "not free any more"
        assert await b.acquire(1) and await b.holder(1) == "b"
        assert await b.renew(1)
        # a hands a table it runs over to c: only from its own lease.
        assert await a.acquire(2)
        assert not await b.reserve(2, "c", ours=True), "b does not hold it"
        assert await a.reserve(2, "c", ours=True)
        assert not await a.renew(2), "a holds it no more"
        assert await c.acquire(2) and await c.holder(2) == "c"
        # A reservation given back (c never took it): free again, for anyone.
        assert await a.reserve(3, "c", ours=False)
        assert not await a.unreserve(3, "b"), "not b's"
        assert await a.unreserve(3, "c") and await a.holder(3) is None
        assert await b.acquire(3)
        # One never taken lapses like a lease.
        assert await a.reserve(4, "c", ours=False)
        await asyncio.sleep(0.7)
        assert await b.acquire(4)
    finally:
        for leases in (a, b, c):
            await leases.close()


class Echo:
    """A table's actor that answers every command at once."""

    table_id = 7

    async def submit(self, command: commands.TableCommand) -> dict[str, Any]:
        return {"done": command.name}


async def test_a_node_hears_a_table_s_answers_while_it_commands_it_and_a_while_after() -> None:
    """A command's answer comes on a channel of the table's own (in its slot on a Redis
    Cluster: in line with its events): the sending node listens to it from the first command
    until ``reply_linger`` after the last, then lets go of it."""
    bus = MemoryBus()
    a = CommandRouter(bus, "a", timeout=5, retry_after=1)
    b = CommandRouter(bus, "b", timeout=5, retry_after=1)
    a.reply_linger = 1.0
    answers = table_reply_channel(Echo.table_id, "node:a")
    a.start()
    b.serve(Echo())
    try:
        await asyncio.sleep(0)  # b listens
        assert await bus.publish_heard(answers, {}) == 0
        chat = commands.Chat(player="ann", text="hi")
        assert await a.send(Echo.table_id, chat) == {"done": "chat"}
        assert a.reply_tables == {Echo.table_id}
        assert await bus.publish_heard(answers, {}) == 1
        await asyncio.sleep(0.6)
        assert await a.send(Echo.table_id, chat) == {"done": "chat"}  # kept a while longer
        await asyncio.sleep(0.6)  # past a linger since the first, not since the last
        assert a.reply_tables == {Echo.table_id}
        await wait_for(lambda: not a.reply_tables, timeout=2)
        assert await bus.publish_heard(answers, {}) == 0
    finally:
        await a.close()
        await b.close()


# ---------------------------------------------------------------------- fencing


async def test_a_node_that_lost_its_table_writes_nothing(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    table_id = await seed(sessionmaker, ["ann", "bob"])
    async with sessionmaker() as session, session.begin():
        old = await claim_table(session, table_id=table_id)
    stale = DatabaseTableStore(sessionmaker, seal=SEAL, fence=old)
    await stale.buy_in(table_id, "ann", 100, seat=0)
    async with sessionmaker() as session, session.begin():
        new = await claim_table(session, table_id=table_id)
    assert new == old + 1
    with pytest.raises(TableTakenOver):
        await stale.buy_in(table_id, "bob", 100, seat=1)
    with pytest.raises(TableTakenOver):
        await stale.cash_out(table_id, "ann", 100)
    await DatabaseTableStore(sessionmaker, seal=SEAL, fence=new).buy_in(table_id, "bob", 50, seat=1)
    async with sessionmaker() as session:
        assert await seated_players(session, table_id=table_id) == [(0, "ann", 100), (1, "bob", 50)]
        assert (await check_books(session)).balanced


# ---------------------------------------------------------------------- a paused database


async def test_the_table_pauses_while_the_database_is_away_and_shows_nothing_unwritten() -> None:
    store = MemoryTableStore()
    bus = MemoryBus()
    actor = TableActor(
        1,
        tables.config_from_json({}),
        bus=bus,
        store=store,
        settings=TableSettings(pause_between_hands=0.0, action_clock=30.0),
        rng_factory=lambda: random.Random(5),
    )
    events = bus.subscribe(table_channel(1))
    tries = 0
    record_action = store.record_action

    async def counted(*args: Any) -> None:
        nonlocal tries
        tries += 1
        await record_action(*args)

    store.record_action = counted  # type: ignore[method-assign]
    actor.start()
    try:
        await submit(actor, "sit", "ann", buy_in=100)
        await submit(actor, "sit", "bob", buy_in=100)
        await wait_for(lambda: actor.table.hand is not None and actor.deadline is not None)
        hand = actor.table.hand
        assert hand is not None
        legal = hand.legal_actions()
        player = actor.table.seats[legal.seat].player  # type: ignore[index,union-attr]
        deadline = actor.deadline
        drain(events)
        store.down = True
        acting = asyncio.create_task(submit(actor, "act", player, action_id="a1", kind="bring_in"))
        paused = await next_event(events)
        assert paused["kind"] == "table_paused" and paused["data"] == {"reason": "database"}
        await wait_for(lambda: tries >= 4)  # the write tried again and again, in vain
        assert not acting.done() and events.queue.empty(), "nothing shown that is not written"
        assert store.live[1].actions == []
        store.down = False
        reply = await asyncio.wait_for(acting, 5)
        assert reply["accepted"] is True
        assert store.live[1].actions[0]["kind"] == "bring_in"
        kinds = [(await next_event(events))["kind"] for _ in range(2)]
        assert kinds == ["table_unpaused", "action"]
        assert actor.paused_since is None
        assert deadline is not None
        # The pause was nobody's thinking time; the next clock starts afresh.
        await wait_for(lambda: actor.deadline is not None)
    finally:
        await actor.stop()


def drain(subscription: Subscription) -> None:
    while not subscription.queue.empty():
        subscription.queue.get_nowait()


async def next_event(subscription: Subscription) -> dict[str, Any]:
    message = await asyncio.wait_for(subscription.get(), 5)
    assert message is not None
    return message


# ---------------------------------------------------------------------- two nodes


@pytest.fixture
async def shared(postgres_server: PostgresServer) -> AsyncIterator[tuple[str, AsyncEngine]]:
    """The nodes' PostgreSQL database (SQLite is one process's database: not shared)."""
    url = postgres_server.fresh()
    engine = make_engine(url)
    yield url, engine
    await engine.dispose()


@pytest.fixture
def lease() -> float:
    """The nodes' lease (a test parametrizes ``lease`` for a longer one of its own)."""
    return LEASE


@pytest.fixture
async def nodes(
    shared: tuple[str, AsyncEngine], lease: float, redis_base: str
) -> AsyncIterator[list[Node]]:
    """Nodes a and b (not started), on the test's Redis: one Redis, or the Redis Cluster."""
    database_url, engine = shared
    sessionmaker = make_sessionmaker(engine)
    url = redis_url(redis_base, prefix=redis_prefix())
    settings = Settings(
        database_url=database_url,
        pause_between_hands_seconds=0,
        action_clock_seconds=30,
        lease_seconds=lease,
        **FAST_HASHING,
    )
    made = [Node(name, url, sessionmaker, settings) for name in ("a", "b")]
    yield made
    for node in made:
        if not node.down:
            await node.stop()


class Rounds:
    """A node's lease rounds as they end (each with its look for tables nobody runs)."""

    def __init__(self, node: Node) -> None:
        self.count = 0
        rounds = node.cardroom.lease_rounds
        open_new = rounds._open_new

        async def counted() -> None:
            try:
                await open_new()
            finally:
                self.count += 1

        rounds._open_new = counted  # type: ignore[method-assign]

    async def wait(self, count: int) -> None:
        """Until ``count`` more rounds have ended (a loaded machine may hold a few back)."""
        start = self.count
        await wait_for(lambda: self.count >= start + count, timeout=count * LEASE + 5)


def heard_of(node: Node, table_id: int) -> Any:
    """What ``node`` last heard another node tell of the table (None: nothing lately)."""
    return node.cardroom.gossip.heard.get(table_id)


async def act_through(handle: Any, actor: TableActor, rng: random.Random) -> None:
    """One legal action of whoever is to act at ``actor``'s table, sent through ``handle``."""
    hand = actor.table.hand
    if hand is None or hand.is_over() or hand.legal_actions().seat is None:
        await asyncio.sleep(0.01)
        return
    legal = hand.legal_actions()
    player = actor.table.seats[legal.seat].player  # type: ignore[index,union-attr]
    kind = (
        next(k for k in ("check", "call", "bring_in") if k in legal.kinds)
        if rng.random() < 0.8 or legal.wager is None
        else legal.wager
    )
    data: dict[str, Any] = {"action_id": f"x{rng.random()}", "kind": kind}
    if kind == legal.wager:
        data["amount"] = legal.min_to
    try:
        await submit(handle, "act", player, **data)
    except CommandRefused as refused:
        # The table moved on meanwhile, or (a busy machine: a lobby word late) the node that
        # sent the command lost sight of who runs it: "try again", as a client would.
        retry = {"table_unavailable", "table_moved"}
        assert refused.code in {"not_your_turn", "no_hand", *retry}, refused.code


@needs_redis
@needs_postgresql
async def test_a_dead_node_s_table_is_taken_over_and_its_hand_finished(
    nodes: list[Node],
) -> None:
    a, b = nodes
    sessionmaker = a.cardroom.sessionmaker
    table_id = await seed(sessionmaker, ["ann", "bob", "cat"])
    await a.start()
    await wait_for(lambda: a.cardroom.actor(table_id) is not None)
    await b.start()
    running = a.cardroom.actor(table_id)
    assert running is not None and b.cardroom.actor(table_id) is None
    # A command sent to b reaches a's actor over Redis, and its answer comes back.
    remote = await b.cardroom.table(table_id)
    assert isinstance(remote, RemoteTable)
    for player in ("ann", "bob", "cat"):
        assert (await submit(remote, "sit", player, buy_in=100))["stack"] == 100
    with pytest.raises(CommandRefused) as refused:
        await submit(remote, "sit", "ann", buy_in=100)
    assert refused.value.code == "already_seated"
    watcher = b.bus.subscribe(table_channel(table_id))
    await b.bus.wait_ready(5)
    rng = random.Random(3)
    while running.hand_number < 2 or running.recorded_actions < 3:
        await act_through(remote, running, rng)
    hand = running.table.hand
    assert hand is not None and not hand.is_over()
    # cat asks to leave when the hand ends; a's next word to the other nodes carries it.
    assert await submit(remote, "leave", "cat") == {"seat": 2, "after_hand": True}

    def told() -> bool:
        heard = heard_of(b, table_id)
        return heard is not None and heard.after_hand.get("cat", {}).get("leaving", False)

    await wait_for(told, timeout=4 * LEASE + 2)
    number, seq = running.hand_number, running.seq
    seen = {seat: view(hand.events, seat) for seat in hand.seats}
    note = await next_event(watcher)
    while note.get("seq", 0) < seq:  # every event a sent has reached b's watcher
        note = await next_event(watcher)
    await a.die()

    # b takes the table over once a's lease lapses, and deals the same hand on.
    await wait_for(lambda: b.cardroom.actor(table_id) is not None, timeout=4 * LEASE + 2)
    taken = b.cardroom.actor(table_id)
    assert taken is not None and taken.hand_number == number
    resumed = taken.table.hand
    assert resumed is not None
    assert {seat: view(resumed.events, seat) for seat in resumed.seats} == seen
    note = await next_event(watcher)
    while note["kind"] != "table_resumed":
        note = await next_event(watcher)
    assert note["data"] == {"hand": number, "node": "b", "resumed": True}
    assert note["seq"] > seq and note["seq"] >= SEQ_PER_RUN, "clients see a gap: they resync"
    assert [s["node"] for s in b.cardroom.lobby()] == ["b"]
    assert b.metric("stud_table_takeovers_total", reason="lease_expired") == 1
    assert b.metric("stud_table_takeovers_total", reason="released") == 0
    assert a.metric("stud_table_takeovers_total", reason="lease_expired") == 0
    assert a.metric("stud_bus_publish_seconds_count") > 0
    cat = taken.table.seats[2]
    assert cat is not None and cat.player == "cat" and cat.leaving
    await play(taken, lambda: taken.hand_number >= number + 1, choose=calling)
    assert taken.table.seat_of("cat") is None, "cat left when the resumed hand ended"
    async with sessionmaker() as session:
        finished = await session.scalar(
            select(HandRecord).where(HandRecord.table_id == table_id, HandRecord.number == number)
        )
        assert finished is not None and finished.result["cancelled"] is False
        assert (
            await session.scalar(
                select(func.count()).select_from(HandRecord).where(HandRecord.table_id == table_id)
            )
            >= number
        )
        assert (await check_books(session)).balanced
        assert await session.scalar(select(func.count()).select_from(LiveHand)) <= 1


@needs_redis
@needs_postgresql
@pytest.mark.parametrize("lease", [3 * LEASE])  # the command is sent well before it lapses
async def test_a_command_for_a_table_no_node_runs_is_refused_at_once_with_a_retry_hint(
    nodes: list[Node], lease: float
) -> None:
    """Between a node's death and the takeover nobody hears the table's commands: the
    sender is told at once when to try again, not left waiting for its whole timeout."""
    a, b = nodes
    table_id = await seed(a.cardroom.sessionmaker, ["ann", "bob"])
    await a.start()
    await wait_for(lambda: a.cardroom.actor(table_id) is not None)
    await b.start()
    remote = await b.cardroom.table(table_id)
    assert isinstance(remote, RemoteTable)
    assert (await submit(remote, "sit", "ann", buy_in=100))["stack"] == 100
    await a.die()
    # a's subscription is gone.
    await until_subscribers(b.bus.channel_prefix, command_channel(table_id), 0, url=b.url)
    assert b.cardroom.router.timeout >= 10
    started = asyncio.get_running_loop().time()
    with pytest.raises(CommandRefused) as refused:
        await submit(remote, "sit", "bob", buy_in=100)
    assert asyncio.get_running_loop().time() - started < b.cardroom.router.timeout / 4
    assert refused.value.code == "table_unavailable"
    assert getattr(refused.value, "retry_after", None) == pytest.approx(lease / 3)
    assert b.cardroom.actor(table_id) is None, "asked before the lease lapsed"
    # Once b runs the table, the same road reaches it: nothing was done meanwhile.
    await wait_for(lambda: b.cardroom.actor(table_id) is not None, timeout=4 * lease + 2)
    # b's actor may be up a moment before its command channel is heard: try again, as told.
    sat: dict[str, Any] = {}
    for _ in range(20):
        try:
            sat = await submit(remote, "sit", "bob", buy_in=100)
            break
        except CommandRefused as refusal:
            if refusal.code != "table_unavailable":
                raise
            await asyncio.sleep(getattr(refusal, "retry_after", None) or 0.25)
    assert sat["stack"] == 100
    taken = b.cardroom.actor(table_id)
    assert taken is not None
    assert sorted(s.player for s in taken.table.seats if s is not None) == ["ann", "bob"]


async def run_by_a_as_b_hears(a: Node, b: Node) -> int:
    """A table of ann and bob that node a runs, once node b has heard a tell of it."""
    table_id = await seed(a.cardroom.sessionmaker, ["ann", "bob"])
    await a.start()
    await wait_for(lambda: a.cardroom.actor(table_id) is not None)
    await b.start()
    await wait_for(lambda: b.cardroom.runner(table_id) == "a")
    return table_id


async def nothing() -> None:
    return None


async def die_just_after_telling(a: Node, b: Node, table_id: int, lease: float) -> None:
    """``a`` dies as ``b`` hears it tell of the table, a round before its next renewal: a
    node that renewed its leases and died before telling (a moment's window, wider on a busy
    machine) holds them up to a round past what the others know; then only a later round
    takes its tables, and these tests look at the takes between rounds."""
    told = heard_of(b, table_id).at
    await wait_for(lambda: heard_of(b, table_id).at > told, timeout=lease)
    await a.die()


def rounds_take_nothing(node: Node, monkeypatch: pytest.MonkeyPatch) -> None:
    """The node's lease rounds renew and tell, but never look for tables nobody runs: what
    it takes, it takes in a look between rounds (``LeaseRounds._until_round``)."""
    monkeypatch.setattr(node.cardroom.lease_rounds, "_open_new", nothing)


@needs_redis
@needs_postgresql
@pytest.mark.usefixtures("redis_available")
@pytest.mark.parametrize("lease", [3 * LEASE])
async def test_a_dead_node_s_table_is_taken_as_its_lease_lapses_not_at_a_later_round(
    nodes: list[Node], lease: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node that went quiet renewed its leases last just before it last told: the others
    know when they lapse and take its tables then, not up to a round later."""
    a, b = nodes
    table_id = await run_by_a_as_b_hears(a, b)
    rounds_take_nothing(b, monkeypatch)
    await die_just_after_telling(a, b, table_id, lease)
    last_heard = heard_of(b, table_id).at
    await wait_for(lambda: b.cardroom.actor(table_id) is not None, timeout=4 * lease + 5)
    taken_after_lapse = asyncio.get_running_loop().time() - (last_heard + lease)
    print(f"taken {taken_after_lapse:.2f} s after the lease lapsed")  # -rP shows it
    assert await b.leases.holder(table_id) == "b"


@needs_redis
@needs_postgresql
@pytest.mark.usefixtures("redis_available")
@pytest.mark.parametrize("lease", [3 * LEASE])
async def test_the_retry_hint_for_a_dead_node_s_table_is_when_its_lease_lapses(
    nodes: list[Node], lease: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command for a table whose node went quiet is refused with the time until its lease
    lapses and a take (at most a round): near the lapse, sooner than a round; once it has
    long lapsed with nobody taking it, a round again (no busy waiting)."""
    a, b = nodes
    table_id = await run_by_a_as_b_hears(a, b)
    remote = await b.cardroom.table(table_id)
    assert isinstance(remote, RemoteTable)
    rounds_take_nothing(b, monkeypatch)
    monkeypatch.setattr(b.cardroom.lease_rounds, "_open_lapsed", nothing)  # nor between them
    await die_just_after_telling(a, b, table_id, lease)
    await until_subscribers(b.bus.channel_prefix, command_channel(table_id), 0)
    lapse = heard_of(b, table_id).at + lease
    clock = asyncio.get_running_loop()

    async def hint_at(moment: float) -> float:
        await asyncio.sleep(max(0.0, moment - clock.time()))
        with pytest.raises(CommandRefused) as refused:
            await submit(remote, "sit", "bob", buy_in=100)
        assert refused.value.code == "table_unavailable"
        hint = getattr(refused.value, "retry_after", None)
        assert isinstance(hint, float)
        return hint

    assert await hint_at(lapse - 0.3) < lease / 3, "the lapse is nearer than a round"
    assert await hint_at(lapse + 0.5) < lease / 3, "lapsed: any moment now"
    assert await hint_at(lapse + lease / 3 + 0.5) == pytest.approx(lease / 3)
    assert b.cardroom.actor(table_id) is None


@needs_redis
@needs_postgresql
async def test_a_command_heard_by_a_frozen_node_is_refused_once_another_runs_the_table(
    nodes: list[Node],
) -> None:
    """The table's node hears the command but never answers (frozen: its sockets open,
    nothing running): the sender is refused with the retry hint as soon as the cardroom
    hears of the table's next node, not after its whole timeout; the retry plays."""
    a, b = nodes
    table_id = await run_by_a_as_b_hears(a, b)
    remote = await b.cardroom.table(table_id)
    assert isinstance(remote, RemoteTable)
    assert (await submit(remote, "sit", "ann", buy_in=100))["stack"] == 100

    async def frozen(*request: object) -> None:
        await asyncio.Event().wait()  # heard, never answered

    rounds = a.cardroom.lease_rounds.task
    assert rounds is not None
    rounds.cancel()  # a renews and tells nothing more
    a.cardroom.router._reply = frozen  # type: ignore[method-assign]
    assert b.cardroom.router.timeout >= 10
    started = asyncio.get_running_loop().time()
    with pytest.raises(CommandRefused) as refused:
        await submit(remote, "sit", "bob", buy_in=100)
    waited = asyncio.get_running_loop().time() - started
    assert refused.value.code == "table_unavailable"
    # Refused once nobody has told of the table for a lease: its lease lapses about now.
    assert 0 < getattr(refused.value, "retry_after", 0) <= LEASE / 3
    assert waited < b.cardroom.router.timeout / 2, waited  # not the whole timeout
    await wait_for(lambda: b.cardroom.actor(table_id) is not None, timeout=4 * LEASE + 2)
    taken = await b.cardroom.table(table_id)
    assert (await submit(taken, "sit", "bob", buy_in=100))["stack"] == 100


@needs_redis
@needs_postgresql
async def test_a_node_past_its_lease_publishes_nothing_more_for_the_table(
    nodes: list[Node],
) -> None:
    """A node whose lease rounds stand still (frozen, or its loop starved) while its actor
    still runs: once its lease may have passed to another node it says nothing more of the
    table, even what writes nothing the database could fence (a chat line)."""
    a, b = nodes
    table_id = await seed(a.cardroom.sessionmaker, ["ann", "bob"])
    await a.start()
    await wait_for(lambda: a.cardroom.actor(table_id) is not None)
    stale = a.cardroom.actor(table_id)
    assert stale is not None
    await b.start()
    watcher = b.bus.subscribe(table_channel(table_id))
    await b.bus.wait_ready(5)
    await submit(stale, "sit", "ann", buy_in=100)
    rounds = a.cardroom.lease_rounds.task
    assert rounds is not None
    rounds.cancel()  # a renews nothing more
    await submit(stale, "chat", "ann", text="still mine")
    said = await next_event(watcher)
    while said["kind"] != "chat":
        said = await next_event(watcher)
    assert said["run"] == stale.run_number and said["data"]["text"] == "still mine"

    await wait_for(lambda: b.cardroom.actor(table_id) is not None, timeout=4 * LEASE + 2)
    assert await submit(stale, "chat", "ann", text="am I?") == {}
    assert stale.publisher.silenced >= 1
    # What a's bus sends after the chat line reaches b after it: had a sent it, it is there.
    a.bus.publish_now(table_channel(table_id), {"type": "marker"})
    heard = []
    while (message := await next_event(watcher)).get("type") != "marker":
        heard.append(message)
    assert not [m for m in heard if m.get("run") == stale.run_number], heard


def slow_loads(monkeypatch: pytest.MonkeyPatch, seconds: float) -> Callable[[], None]:
    """Every table a node takes loads ``seconds`` slower (a cold database, a long hand to
    resume); the function returned puts the load back as it was."""
    loaded = supervisor.seed_stats

    async def slow_load(*args: Any) -> None:
        await asyncio.sleep(seconds)
        await loaded(*args)

    monkeypatch.setattr(supervisor, "seed_stats", slow_load)
    return lambda: monkeypatch.setattr(supervisor, "seed_stats", loaded)


@needs_redis
@needs_postgresql
async def test_a_table_taken_slower_than_a_lease_keeps_its_lease(
    nodes: list[Node], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lease is taken before the table is loaded: a load slower than a lease (a cold
    database, a long hand to resume) must not let it lapse, or another node starting then
    would take the table from under its first node."""
    a, b = nodes
    table_id = await seed(a.cardroom.sessionmaker, ["ann", "bob", "cat"])
    loads_again = slow_loads(monkeypatch, 1.5 * LEASE)
    await a.start()
    assert a.cardroom.actor(table_id) is not None
    loads_again()
    rounds = Rounds(b)
    await b.start()  # before a has told of the table: only the lease keeps it a's
    running = a.cardroom.actor(table_id)
    assert running is not None
    for player in ("ann", "bob", "cat"):
        await submit(running, "sit", player, buy_in=100)
    await rounds.wait(3)  # b looked for tables nobody runs, again and again
    assert a.cardroom.actor(table_id) is running and b.cardroom.actor(table_id) is None
    assert await a.leases.holder(table_id) == "a"


@needs_redis
@needs_postgresql
async def test_a_table_whose_lease_is_lost_while_it_is_taken_is_not_run(
    nodes: list[Node], monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the lease passes to another node during the load (Redis lost the key, another
    node set it), the take is given up; the table is taken again once that lease lapses."""
    a, b = nodes
    table_id = await seed(a.cardroom.sessionmaker, ["ann", "bob", "cat"])

    async def lost_meanwhile() -> None:
        while await a.leases.holder(table_id) != "a":  # a's take has begun: its lease held
            await asyncio.sleep(0.01)
        await a.leases.redis.delete(a.leases.key(table_id))
        assert await b.leases.acquire(table_id)  # b's lease, never renewed: it lapses

    loads_again = slow_loads(monkeypatch, LEASE)
    await asyncio.gather(a.start(), lost_meanwhile())
    assert a.cardroom.actor(table_id) is None
    loads_again()
    await wait_for(lambda: a.cardroom.actor(table_id) is not None, timeout=3 * LEASE)
    assert await a.leases.holder(table_id) == "a"


@needs_redis
@needs_postgresql
async def test_a_node_stopped_cleanly_hands_its_table_over_at_once(nodes: list[Node]) -> None:
    """A node that stops gives its leases back and says so: another node takes the table at
    its next round, not a lease later, and keeps its players as they were at the stop."""
    a, b = nodes
    table_id = await seed(a.cardroom.sessionmaker, ["ann", "bob", "cat"])
    await a.start()
    await wait_for(lambda: a.cardroom.actor(table_id) is not None)
    await b.start()
    running = a.cardroom.actor(table_id)
    assert running is not None
    for player in ("ann", "bob", "cat"):
        await submit(running, "sit", player, buy_in=100)
    await wait_for(lambda: running.table.hand is not None)
    # b has heard of the table from a: it is a's
    await wait_for(lambda: b.cardroom.runner(table_id) == "a", timeout=4 * LEASE + 2)
    assert b.cardroom.actor(table_id) is None
    # cat sits out (now, or once the hand ends if dealt in), and a stops before telling b
    # in its own time.
    said = await submit(running, "sit_out", "cat")
    assert said["sitting_out"] or said["after_hand"]
    number = running.hand_number
    await a.stop()

    # (Given back, not lapsed: the takeover's reason says so, however loaded the machine.)
    await wait_for(lambda: b.cardroom.actor(table_id) is not None, timeout=4 * LEASE + 2)
    taken = b.cardroom.actor(table_id)
    assert taken is not None and taken.hand_number == number
    assert b.metric("stud_table_takeovers_total", reason="released") == 1
    assert b.metric("stud_table_takeovers_total", reason="lease_expired") == 0
    cat = taken.table.seats[taken.table.seat_of("cat")]  # type: ignore[index]
    assert cat is not None and (cat.sit_out_next_hand or cat.sitting_out)


@needs_redis
@needs_postgresql
async def test_a_player_who_sat_out_during_the_hand_stays_out_of_it_on_the_next_node(
    nodes: list[Node],
) -> None:
    """cat sits out during the hand (the table acts for her at her turns, checking where a
    check is free, as she asked); the node that takes the table resumes the hand with cat
    still sitting out, so it goes on acting for her as she asked rather than putting her on
    the clock."""
    a, b = nodes
    table_id = await seed(a.cardroom.sessionmaker, ["ann", "bob", "cat"])
    await a.start()
    await wait_for(lambda: a.cardroom.actor(table_id) is not None)
    await b.start()
    running = a.cardroom.actor(table_id)
    assert running is not None
    for player in ("cat", "ann", "bob"):  # dealt in: the first two at least
        await submit(running, "sit", player, buy_in=100)
    await wait_for(lambda: running.table.hand is not None)
    hand = running.table.hand
    assert hand is not None
    seat = running.table.seat_of("cat")
    assert seat is not None and seat in hand.seats
    await submit(running, "sit_out", "cat", next_hand=False, check_when_free=True)

    def told() -> bool:  # b has heard from a who sits out
        heard = heard_of(b, table_id)
        return heard is not None and "cat" in heard.check_when_free

    await wait_for(told, timeout=4 * LEASE + 2)
    number = running.hand_number
    await a.stop()

    await wait_for(lambda: b.cardroom.actor(table_id) is not None, timeout=4 * LEASE + 2)
    taken = b.cardroom.actor(table_id)
    assert taken is not None and taken.hand_number == number
    resumed = taken.table.hand
    if resumed is not None and not resumed.is_over():
        assert absence.reason_absent(taken.table, seat) == "sitting_out"
        await wait_for(lambda: resumed.is_over() or resumed.seat_to_act() != seat)
    cat = taken.table.seats[seat]
    assert cat is not None and cat.sitting_out
    assert taken.players["cat"].check_when_free


@needs_redis
@needs_postgresql
async def test_the_live_list_of_one_node_shows_the_tables_another_runs(
    nodes: list[Node],
) -> None:
    """Node b lists a's table mid-hand from what a tells in the lobby gossip: the node,
    street, players, stacks and pot, and how long since it last moved."""
    a, b = nodes
    table_id = await seed(a.cardroom.sessionmaker, ["ann", "bob"])
    await a.start()
    await wait_for(lambda: a.cardroom.actor(table_id) is not None)
    await b.start()
    running = a.cardroom.actor(table_id)
    assert running is not None
    for player in ("ann", "bob"):
        await submit(running, "sit", player, buy_in=100)
    await wait_for(lambda: running.table.hand is not None)
    hand = running.table.hand
    assert hand is not None

    def heard() -> dict[str, Any] | None:
        rows = b.cardroom.live_tables(stuck_after=0.01)
        # (b heard of the table when it started, before the hand: wait for a's next word)
        return rows[0] if rows and rows[0]["state"] == "elsewhere" and rows[0]["in_hand"] else None

    # A round every third of a lease; a loaded machine may hold a few back.
    await wait_for(
        lambda: heard() is not None,
        timeout=4 * LEASE + 2,
        explain=lambda: f"b lists {b.cardroom.live_tables(stuck_after=0.01)}",
    )
    row = heard()
    assert row is not None and b.cardroom.actor(table_id) is None
    assert (row["id"], row["node"], row["hand_number"]) == (table_id, "a", 1)
    assert row["in_hand"] is True and row["street"] == "third"
    assert row["pot"] == hand.pot_total() > 0
    assert [(p["player"], p["stack"]) for p in row["players"]] == [
        (running.table.seats[n].player, hand.stacks[i])  # type: ignore[union-attr]
        for i, n in enumerate(hand.seats)
    ]
    assert row["seconds_since_action"] > 0 and row["stuck"] is True
    assert b.cardroom.live_tables(stuck_after=60)[0]["stuck"] is False
    own = a.cardroom.live_tables(stuck_after=60)
    assert [(r["id"], r["state"], r["node"]) for r in own] == [(table_id, "running", "a")]


@needs_redis
@needs_postgresql
async def test_a_node_started_late_names_the_node_running_each_table_at_once(
    nodes: list[Node],
) -> None:
    """A node (re)started asks the others for their tables: its lobby names who runs each
    one without waiting for their next lease round."""
    a, b = nodes
    table_id = await seed(a.cardroom.sessionmaker, ["ann", "bob"])
    await a.start()
    await wait_for(lambda: a.cardroom.actor(table_id) is not None)
    rounds = a.cardroom.lease_rounds.task
    assert rounds is not None
    rounds.cancel()  # a tells of its tables only when asked from now on
    await asyncio.sleep(0)
    await b.start()

    def named() -> Any:
        return [(line["id"], line["node"]) for line in b.cardroom.lobby()]

    await wait_for(lambda: named() == [(table_id, "a")], timeout=5 * LEASE)
    assert b.cardroom.actor(table_id) is None


# ---------------------------------------------------------------------- an operator's commands


@needs_redis
@needs_postgresql
async def test_operators_pause_void_and_close_a_table_another_node_runs(
    nodes: list[Node],
) -> None:
    """Node a runs the table; b's cardroom (what b's REST API calls) voids a hand there and
    pauses it; a dies and b takes it over still paused. Then c resumes it and asks b to close
    it after the hand in progress; b dies in that hand; c takes the table over, finishes the
    hand and closes it: everyone cashed out, the books balanced, nobody runs it again."""
    a, b = nodes
    sessionmaker = a.cardroom.sessionmaker
    table_id = await seed(sessionmaker, ["ann", "bob", "cat"])
    async with sessionmaker() as session:
        boss = await registry.register(
            session,
            passwords=PASSWORDS,
            username="boss",
            password="x" * 8,
            role=Role.OPERATOR,
            bankroll=0,
        )
        await session.commit()
    who = {"player": "boss", "operator_id": boss.id}
    await a.start()
    await wait_for(lambda: a.cardroom.actor(table_id) is not None)
    await b.start()
    running = a.cardroom.actor(table_id)
    assert running is not None
    remote = await b.cardroom.table(table_id)
    assert isinstance(remote, RemoteTable)
    for player in ("ann", "bob", "cat"):
        await submit(remote, "sit", player, buy_in=100)
    await wait_for(lambda: running.table.hand is not None and running.hand_number >= 1)
    number = running.hand_number
    voided = await remote.submit(commands.VoidHand(**who, reason="misdeal"))
    assert voided["hand"] == number and set(voided["stacks"].values()) == {100}
    await wait_for(lambda: running.hand_number == number + 1 and running.table.hand is not None)
    paused = await remote.submit(commands.PauseTable(**who, reason="maintenance"))
    assert paused == {"after_hand": True}
    with pytest.raises(CommandRefused) as twice:
        await remote.submit(commands.PauseTable(**who, reason="again"))
    assert twice.value.code == "table_already_paused"
    rng = random.Random(5)
    while running.table.hand is not None:
        await act_through(remote, running, rng)

    def told() -> bool:  # a tells the others of the pause in its next lobby word
        rows = b.cardroom.live_tables(stuck_after=60)
        return len(rows) == 1 and rows[0].get("paused_by") == "operator"

    await wait_for(told, timeout=4 * LEASE + 2)
    [row] = b.cardroom.live_tables(stuck_after=60)
    assert (row["state"], row["paused_by"], row["pause_reason"]) == (
        "elsewhere",
        "operator",
        "maintenance",
    )
    last = running.hand_number
    await a.die()

    await wait_for(lambda: b.cardroom.actor(table_id) is not None, timeout=4 * LEASE + 2)
    taken = b.cardroom.actor(table_id)
    assert taken is not None and taken.ops.paused == "maintenance"
    await asyncio.sleep(0.5)
    assert taken.hand_number == last and taken.table.hand is None, "still paused"

    c = Node("c", b.url, sessionmaker, b.cardroom.settings)
    nodes.append(c)
    await c.start()
    via_c = await c.cardroom.table(table_id)
    assert isinstance(via_c, RemoteTable)
    for player in ("ann", "bob", "cat"):  # back from the takeover: sat in again
        with contextlib.suppress(CommandRefused):
            await submit(via_c, "sit_in", player)
    await via_c.submit(commands.ResumeTable(**who, reason="maintenance over"))
    await wait_for(lambda: taken.table.hand is not None and not taken.table.hand.is_over())
    closing = await via_c.submit(commands.CloseTable(**who, reason="end of the night"))
    assert closing == {"after_hand": True, "cashed_out": {}}
    in_hand = taken.hand_number
    await b.die()

    await wait_for(lambda: c.cardroom.actor(table_id) is not None, timeout=4 * LEASE + 2)
    final = c.cardroom.actor(table_id)
    assert final is not None and final.ops.closing == "end of the night"
    assert final.hand_number == in_hand and final.table.hand is not None, "its hand resumed"
    await play(final, lambda: final.shut, choose=calling)
    await wait_for(lambda: c.cardroom.actor(table_id) is None)
    shut = await c.cardroom.table(table_id)
    assert shut is not None
    with pytest.raises(CommandRefused) as refused:
        await submit(shut, "sit", "ann", buy_in=100)
    assert refused.value.code == "table_shut"
    await Rounds(c).wait(3)  # c looked for tables nobody runs, again and again
    assert c.cardroom.actor(table_id) is None and c.cardroom.lobby() == []
    async with sessionmaker() as session:
        record = await session.get(TableRecord, table_id)
        assert record is not None and record.status == "closed"
        assert await seated_players(session, table_id=table_id) == []
        assert (await check_books(session)).balanced
        wallets = [
            await ledger.balance(session, wallet=ledger.player_wallet(account_id))
            for account_id in (
                await session.scalars(
                    select(Account.id).where(Account.username.in_(["ann", "bob", "cat"]))
                )
            ).all()
        ]
        assert sum(wallets) == 3 * 1_000, "every chip back in the wallets"
