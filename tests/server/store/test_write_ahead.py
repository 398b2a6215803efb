"""The write-ahead of actions in groups: every action written once, in order, fenced per
table; one table refused or failing holds no other table's action back."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator

import pytest
from play import seed, wait_for
from sqlalchemy import delete, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from server.db.models import LiveAction, LiveHand, TableRecord
from server.db.session import make_sessionmaker
from server.db.types import utcnow
from server.store import write_ahead as write_ahead_module
from server.store.deck_seal import DeckSeal
from server.store.fencing import claim_table
from server.store.records import LiveHandState, TableTakenOver
from server.store.table_store import DatabaseTableStore
from server.store.write_ahead import WriteAhead

SEAL = DeckSeal.generate()


@pytest.fixture
def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return make_sessionmaker(engine)


async def open_tables(
    sessionmaker: async_sessionmaker[AsyncSession], write_ahead: WriteAhead, count: int
) -> list[tuple[int, DatabaseTableStore]]:
    """``count`` tables, each claimed (fenced) and with a hand in progress."""
    stores = []
    for n in range(count):
        table_id = await seed(sessionmaker, [f"p{n}a", f"p{n}b"], name=f"T{n}")
        async with sessionmaker() as session, session.begin():
            fence = await claim_table(session, table_id=table_id)
        store = DatabaseTableStore(sessionmaker, seal=SEAL, fence=fence, write_ahead=write_ahead)
        deck = {"order": ["As", "Kd"], "seed": None}
        players = [(0, f"p{n}a", 100), (1, f"p{n}b", 100)]
        await store.start_hand(LiveHandState(table_id, 1, deck, players))
        stores.append((table_id, store))
    return stores


async def written(sessionmaker: async_sessionmaker[AsyncSession], table_id: int) -> list[int]:
    async with sessionmaker() as session:
        rows = await session.scalars(
            select(LiveAction.action)
            .where(LiveAction.table_id == table_id)
            .order_by(LiveAction.position)
        )
        return [action["n"] for action in rows]


async def test_tables_acting_together_share_transactions(
    sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    write_ahead = WriteAhead(engine)
    stores = await open_tables(sessionmaker, write_ahead, 12)

    async def play(table_id: int, store: DatabaseTableStore) -> None:
        for position in range(10):
            await store.record_action(table_id, 1, position, {"n": position})

    await asyncio.gather(*(play(table_id, store) for table_id, store in stores))
    assert write_ahead.written == 120
    # Twelve tables acting at once: their actions go in together, far fewer transactions.
    assert write_ahead.groups <= 60
    for table_id, _ in stores:
        assert await written(sessionmaker, table_id) == list(range(10))
    await write_ahead.close()


async def test_a_table_taken_over_is_refused_and_holds_back_no_other(
    sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    write_ahead = WriteAhead(engine)
    (ours, our_store), (lost, lost_store) = await open_tables(sessionmaker, write_ahead, 2)
    async with sessionmaker() as session, session.begin():
        await claim_table(session, table_id=lost)  # another node took it
    results = await asyncio.gather(
        our_store.record_action(ours, 1, 0, {"n": 0}),
        lost_store.record_action(lost, 1, 0, {"n": 0}),
        return_exceptions=True,
    )
    assert results[0] is None
    assert isinstance(results[1], TableTakenOver)
    assert await written(sessionmaker, ours) == [0]
    assert await written(sessionmaker, lost) == []
    await write_ahead.close()


async def test_a_failing_write_holds_back_no_other_table(
    sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    """An action of a hand that is not written ahead breaks its key; the group is written
    again table by table, and the other table's action goes in."""
    write_ahead = WriteAhead(engine)
    (good, good_store), (broken, broken_store) = await open_tables(sessionmaker, write_ahead, 2)
    async with sessionmaker() as session, session.begin():
        await session.execute(delete(LiveHand).where(LiveHand.table_id == broken))
    results = await asyncio.gather(
        good_store.record_action(good, 1, 0, {"n": 0}),
        broken_store.record_action(broken, 1, 0, {"n": 0}),  # its hand is not in play
        return_exceptions=True,
    )
    assert results[0] is None
    assert isinstance(results[1], Exception) and not isinstance(results[1], TableTakenOver)
    assert await written(sessionmaker, good) == [0]
    assert await written(sessionmaker, broken) == []
    await write_ahead.close()


async def test_a_retried_action_is_written_once(
    sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    write_ahead = WriteAhead(engine)
    ((table_id, store),) = await open_tables(sessionmaker, write_ahead, 1)
    await store.record_action(table_id, 1, 0, {"n": 0})
    await store.record_action(table_id, 1, 0, {"n": 0})  # the answer was lost: tried again
    await store.record_action(table_id, 1, 1, {"n": 1})
    assert await written(sessionmaker, table_id) == [0, 1]
    async with sessionmaker() as session:
        # The fence check leaves the table's token as it was.
        fence = await session.scalar(select(TableRecord.fence).where(TableRecord.id == table_id))
        assert fence == store.fence
    await write_ahead.close()


async def test_an_action_reads_back_as_it_was_written(
    sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    """On SQLite the group goes to the driver as compiled once; what it writes reads back
    through SQLAlchemy as the ORM writes it: the action's JSON, an aware UTC time."""
    write_ahead = WriteAhead(engine)
    ((table_id, store),) = await open_tables(sessionmaker, write_ahead, 1)
    before = utcnow()
    action = {"n": 0, "kind": "bet", "amount": 10, "note": "é ☃", "cards": ["As", "Kd"]}
    await store.record_action(table_id, 1, 0, action)
    async with sessionmaker() as session:
        row = await session.get(LiveAction, (table_id, 1, 0))
    assert row is not None and row.action == action
    assert row.created_at.tzinfo is not None and before <= row.created_at <= utcnow()
    await write_ahead.close()


async def test_a_database_held_by_another_writer_is_waited_for_off_the_loop(
    sessionmaker: async_sessionmaker[AsyncSession],
    engine: AsyncEngine,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SQLite: the group is written on the event loop, which must never wait for the lock:
    while another connection holds it, the group waits in the writer thread, the loop runs
    on, and the action goes in once the lock is let go. Every so many groups the log is
    checkpointed, in that thread too."""
    if engine.dialect.name != "sqlite":
        pytest.skip("SQLite's one writer")
    monkeypatch.setattr(write_ahead_module, "CHECKPOINT_EVERY", 3)
    checkpoints: list[str] = []
    checkpoint = WriteAhead._checkpoint

    def counted(self: WriteAhead) -> None:
        checkpoints.append(threading.current_thread().name)
        checkpoint(self)

    monkeypatch.setattr(WriteAhead, "_checkpoint", counted)
    write_ahead = WriteAhead(engine)
    ((table_id, store),) = await open_tables(sessionmaker, write_ahead, 1)
    for n in range(3):
        await store.record_action(table_id, 1, n, {"n": n})
    await wait_for(lambda: len(checkpoints) >= 1)  # in the writer thread, beside the loop
    assert len(checkpoints) == 1 and checkpoints[0].startswith("write-ahead")
    database = engine.url.database
    assert database is not None
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # a writer outside the node's gate
    writing = asyncio.create_task(store.record_action(table_id, 1, 3, {"n": 3}))
    started = asyncio.get_running_loop().time()
    await asyncio.sleep(0.3)  # the loop is not held: this sleep ends long before...
    # ...SQLite's busy timeout (5 s), which a loop waiting on the lock would wait through.
    assert asyncio.get_running_loop().time() - started < 5.0 / 2
    assert not writing.done()
    holder.execute("COMMIT")
    holder.close()
    await asyncio.wait_for(writing, 10)
    assert await written(sessionmaker, table_id) == [0, 1, 2, 3]
    await write_ahead.close()


@pytest.fixture
async def kept(
    sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> AsyncIterator[tuple[WriteAhead, AsyncConnection, int, DatabaseTableStore]]:
    """PostgreSQL only (the SQLite half of ``engine`` is skipped): a write-ahead that has
    written one action, the connection it keeps for its groups, the table and its store."""
    if engine.dialect.name != "postgresql":
        pytest.skip("the write-ahead keeps a connection on PostgreSQL")
    write_ahead = WriteAhead(engine)
    ((table_id, store),) = await open_tables(sessionmaker, write_ahead, 1)
    await store.record_action(table_id, 1, 0, {"n": 0})
    held = write_ahead._held
    assert held is not None
    yield write_ahead, held, table_id, store
    await write_ahead.close()


async def test_a_lost_connection_is_replaced_and_the_action_written(
    sessionmaker: async_sessionmaker[AsyncSession],
    kept: tuple[WriteAhead, AsyncConnection, int, DatabaseTableStore],
) -> None:
    """PostgreSQL: the write-ahead keeps a connection; one the database dropped (a restart,
    a killed backend) is let go and the group written on a fresh one, at once."""
    write_ahead, held, table_id, store = kept
    driver = (await held.get_raw_connection()).driver_connection
    assert driver is not None
    async with sessionmaker() as session:
        await session.execute(
            text("SELECT pg_terminate_backend(:pid)"), {"pid": driver.get_server_pid()}
        )
    await store.record_action(table_id, 1, 1, {"n": 1})
    assert write_ahead._held is not held
    assert await written(sessionmaker, table_id) == [0, 1]


async def test_the_write_ahead_s_commit_setting_never_reaches_other_writes(
    engine: AsyncEngine, kept: tuple[WriteAhead, AsyncConnection, int, DatabaseTableStore]
) -> None:
    """PostgreSQL: the write-ahead's connection does not wait for the disk at commit; a
    hand's chips, written on the pool's other connections, always do, and so does every
    connection of the pool after the write-ahead is closed."""
    write_ahead, held, _, _ = kept
    assert await held.scalar(text("SHOW synchronous_commit")) == "off"
    await held.rollback()
    await write_ahead.close()
    connections = [await engine.connect() for _ in range(engine.pool.size() + 1)]
    try:
        for connection in connections:
            assert await connection.scalar(text("SHOW synchronous_commit")) == "on"
    finally:
        for connection in connections:
            await connection.close()


async def test_an_action_s_json_comes_back_as_it_was_written(
    sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    """The columns' JSON is written by orjson, and what orjson refuses (an integer past 64
    bits) by the standard library: every action reads back the same either way."""
    write_ahead = WriteAhead(engine)
    [(table_id, store)] = await open_tables(sessionmaker, write_ahead, 1)
    plain = {"n": 0, "seat": 1, "bets": {2: 5}, "note": "é"}
    huge = {"n": 1, "seat": 0, "seed": 2**70}
    await store.record_action(table_id, 1, 0, plain)
    await store.record_action(table_id, 1, 1, huge)
    async with sessionmaker() as session:
        rows = await session.scalars(
            select(LiveAction.action)
            .where(LiveAction.table_id == table_id)
            .order_by(LiveAction.position)
        )
        assert list(rows) == [{**plain, "bets": {"2": 5}}, huge]
        if engine.dialect.name == "sqlite":  # PostgreSQL keeps JSONB, not the text
            stored = await session.scalars(
                text("SELECT action FROM live_actions WHERE table_id = :t ORDER BY position"),
                {"t": table_id},
            )
            assert list(stored)[0] == '{"n":0,"seat":1,"bets":{"2":5},"note":"é"}'
    await write_ahead.close()
