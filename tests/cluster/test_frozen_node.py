"""A node frozen (SIGSTOP: its sockets stay open, nothing answers): its clients find it out by
their heartbeat and go on through another node."""

from __future__ import annotations

import secrets
import time

import pytest
from cluster_harness import Cluster, eventually

from stud_client import StudClient

pytestmark = pytest.mark.cluster

CONFIG = {"variant": "seven_card_stud", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10}
HEARTBEAT = 0.5


async def test_a_frozen_node_s_client_fails_over_by_its_heartbeat(cluster: Cluster) -> None:
    a, b = cluster.node("A"), cluster.node("B")
    table_id = await cluster.open_table("frozen", CONFIG, seats=2, via=b)  # B runs it
    token = await cluster.register(f"fz_{secrets.token_hex(2)}", via=a)
    client = StudClient(
        a.url,
        fallback_urls=[b.url],
        token=token,
        heartbeat=HEARTBEAT,
        request_timeout=5.0,
        backoff=(0.05, 0.5),
    )
    try:
        await client.connect()
        table = await client.watch(table_id)
        a.freeze()
        try:
            frozen_at = time.monotonic()

            async def moved() -> bool:
                return client.base_url == b.url and client.stats.failovers >= 1

            await eventually(moved, 4 * HEARTBEAT + 5, "the client left the frozen node")
            assert await table.sit(200) is not None  # through B, at once
            took = time.monotonic() - frozen_at
            print(f"the client played on through B {took:.2f} s after A froze")
            assert took < 4 * HEARTBEAT + 2, took
            assert client.stats.silences == 1, client.stats
            view = await table.wait_for(lambda v: v.me is not None, 5)
            assert view.me is not None and view.me.stack == 200
        finally:
            a.thaw()
    finally:
        await client.close()
