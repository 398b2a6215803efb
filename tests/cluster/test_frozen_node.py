"""A node frozen (SIGSTOP: its sockets stay open, nothing answers): its clients find it out by
their heartbeat and go on through another node; woken after another node took its table over,
it says nothing more of that table."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Mapping
from typing import Any

import pytest
from cluster_harness import LEASE_SECONDS, Cluster, eventually

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
            # Found out by its heartbeat (the silence counted), not by a request's timeout.
            assert took < 4 * HEARTBEAT + 5, took
            assert client.stats.silences == 1, client.stats
            view = await table.wait_for(lambda v: v.me is not None, 5)
            assert view.me is not None and view.me.stack == 200
        finally:
            a.thaw()
    finally:
        await client.close()


async def test_a_node_woken_past_its_lease_publishes_nothing_for_the_table(
    cluster: Cluster,
) -> None:
    """A runs the table and is frozen; B takes the table over. A chat line sent to A while
    it stood still is read when A wakes, before its lease round finds out it lost the table:
    nothing of A's old run reaches the players after B's run began."""
    a, b = cluster.node("A"), cluster.node("B")
    table_id = await cluster.open_table("woken", CONFIG, seats=2, via=a)  # A runs it
    frames: list[dict[str, Any]] = []

    def record(frame: Mapping[str, Any]) -> bool:
        if frame.get("type") == "event" and frame.get("table") == table_id:
            frames.append(dict(frame))
        return False  # applied as usual

    on_a = StudClient(a.url, token=await cluster.register(f"wa_{secrets.token_hex(2)}", via=a))
    on_b = StudClient(
        b.url,
        token=await cluster.register(f"wb_{secrets.token_hex(2)}", via=b),
        drop_frame=record,
    )
    chatting: asyncio.Task[None] | None = None
    try:
        await on_a.connect()
        await on_b.connect()
        at_a = await on_a.watch(table_id)
        await at_a.sit(200)
        await on_b.watch(table_id)
        await at_a.chat("before")
        old_run = await eventually(lambda: _run_of(frames, "before"), 5, "the chat reached B")

        async def told_b() -> bool:
            return await cluster.owner(table_id, via=b) == a.id

        # A table a node froze before it ever told the others of it is taken over as after a
        # restart of the cardroom (nobody known to be there: no resumption to announce).
        await eventually(told_b, 4 * LEASE_SECONDS + 4, "A told B it runs the table")
        a.freeze()
        try:

            async def taken_over() -> bool:
                return await cluster.owner(table_id, via=b) == b.id

            await eventually(taken_over, 4 * LEASE_SECONDS + 4, "B runs the table")
            chatting = asyncio.create_task(at_a.chat("from the past"))  # read by A on waking

            async def sent() -> bool:  # in A's socket, unread: it sent as soon as it was noted
                assert chatting is not None
                return bool(on_a._pending) or chatting.done()  # (or it could not be sent)

            await eventually(sent, 20, "the chat line sent to A", every=0.01)
        finally:
            a.thaw()
        await asyncio.wait({chatting}, timeout=5)

        async def dropped() -> bool:  # A's lease round has dropped the table: B's, A says
            return await cluster.owner(table_id, via=a) == b.id

        await eventually(dropped, 4 * LEASE_SECONDS + 5, "A heard that B runs the table")
        new = [n for n, f in enumerate(frames) if f.get("run") != old_run]
        assert new, "B's run published nothing"
        late = [f for f in frames[new[0] :] if f.get("run") == old_run]
        assert not late, late
    finally:
        if chatting is not None:
            chatting.cancel()
            await asyncio.gather(chatting, return_exceptions=True)
        await on_a.close()
        await on_b.close()


async def _run_of(frames: list[dict[str, Any]], said: str) -> int | None:
    """The run of the table that published the chat line ``said``, once it came."""
    for frame in frames:
        if frame.get("kind") == "chat" and frame.get("data", {}).get("text") == said:
            return int(frame["run"])
    return None
