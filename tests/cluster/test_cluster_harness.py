"""The cluster harness itself, on what any server of this repository does: two node
processes on one database and one Redis become ready, share the accounts, and a table
plays on one node with the books balanced; the proxy freezes and thaws PostgreSQL, the
Redis restarts on its port, a node is killed and started again."""

from __future__ import annotations

import asyncio
import time

import asyncpg
import httpx
import pytest
from cluster_harness import BANKROLL, Cluster, Gate, Player, eventually

pytestmark = pytest.mark.cluster


async def test_two_nodes_share_the_accounts_and_a_table_plays(cluster: Cluster) -> None:
    a, b = cluster.node("A"), cluster.node("B")
    for node in (a, b):
        assert (await cluster.request("GET", "/healthz", via=node))["status"] == "ok"
    # an account made on A signs in on B: one database
    token = await cluster.register("shared", via=a)
    assert await cluster.login("shared", via=b) != token
    assert await cluster.wallet(token, via=b) == BANKROLL

    table_id = await cluster.open_table("harness", {"variant": "razz"}, seats=2, via=a)
    gate = Gate()
    players = [
        await Player.join(cluster, f"harness{n}", a, [b], table_id, gate, buy_in=200, seed=n)
        for n in range(2)
    ]
    tasks = [asyncio.create_task(p.play()) for p in players]
    try:
        async with asyncio.timeout(40):
            await eventually(lambda: _at_least(cluster, table_id, 2), 30, "two hands finished")
            for player in players:
                player.stopping = True
            await asyncio.gather(*tasks)
        hands = await cluster.hands(table_id)
        assert [h.number for h in hands] == list(range(1, len(hands) + 1))
        assert all(h.chips[0] == h.chips[1] for h in hands), hands
        down = [e for e in hands[0].events if e["kind"] == "down_cards"]
        assert down, "the hand record holds the down cards"
        snapshot = await cluster.snapshot(table_id, via=a)
        assert all(p.table.view.seq == snapshot.seq for p in players)
        books = await cluster.books(via=b)
        assert books["balanced"], books
        assert books["granted"] == BANKROLL * 3  # shared, harness0, harness1
        chips = books["tables"][str(table_id)]
        stacks = sum(s.stack + s.pending_chips for s in snapshot.seats)
        assert chips == {"pool": stacks, "seats": stacks}
        wallets = [await cluster.wallet(p.token, via=b) for p in players]
        assert sum(wallets) + stacks == 2 * BANKROLL
        assert all(not p.client.stats.errors.get("internal_error") for p in players)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for player in players:
            await player.close()
    assert not a.errors() and not b.errors(), cluster.logs()


async def _at_least(cluster: Cluster, table_id: int, count: int) -> bool:
    return len(await cluster.finished_hands(table_id)) >= count


async def test_the_parts_break_and_mend(cluster: Cluster) -> None:
    # PostgreSQL through the proxy: frozen, then answering again
    dsn = cluster.database.url(host="127.0.0.1", port=cluster.proxy.port).replace(
        "postgresql+asyncpg", "postgresql"
    )
    connection = await asyncpg.connect(dsn, timeout=5)
    try:
        assert await connection.fetchval("SELECT 1") == 1
        cluster.proxy.pause()
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await connection.fetchval("SELECT 2", timeout=0.5)
        with pytest.raises(TimeoutError):
            await asyncpg.connect(dsn, timeout=0.5)  # a new connection hangs as well
        assert time.monotonic() - started < 5
        cluster.proxy.resume()
    finally:
        connection.terminate()  # (a query timed out: the connection is not to be reused)
    again = await asyncpg.connect(dsn, timeout=5)
    try:
        assert await again.fetchval("SELECT 3") == 3
    finally:
        await again.close()
    await eventually(lambda: _ready(cluster, "A"), 10, "node A ready after the thaw")

    # Redis: killed and started again, empty, on its port
    port = cluster.redis.port
    await asyncio.to_thread(cluster.redis.restart)
    assert cluster.redis.port == port and cluster.redis.ping()

    # a node: killed, then back
    b = cluster.node("B")
    b.kill()
    assert not b.alive
    with pytest.raises(httpx.TransportError):
        await cluster.request("GET", "/healthz", via=b)
    b.start()
    await asyncio.to_thread(b.wait_ready)
    assert (await cluster.request("GET", "/healthz", via=b))["status"] == "ok"


async def _ready(cluster: Cluster, node: str) -> bool:
    response = await cluster.request("GET", "/readyz", via=node, expect=None)
    return bool(response) and response.get("status") == "ok"
