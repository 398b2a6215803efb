"""The client's fallback URLs (several nodes of one cardroom): a dead first URL is passed
over, and when the server a client is connected to dies the client reconnects to the next
URL, signs in, resyncs and plays on; REST calls follow it."""

from __future__ import annotations

from pathlib import Path

import pytest
from live_server import PASSWORD, LiveServer, MakePlayer, OpenTable, free_port
from test_client_live import TIMEOUT, hands_over, play_passively

from stud_client import StudClient, TableView


def dead_url() -> str:
    """A URL nothing listens at (a node that is down)."""
    return f"http://127.0.0.1:{free_port()}"


async def test_a_dead_first_url_is_passed_over(
    make_player: MakePlayer, open_table: OpenTable, live: LiveServer
) -> None:
    table_id = await open_table()
    ann = await make_player()
    client = StudClient(dead_url(), fallback_urls=[live.url, dead_url()], token=ann.token)
    try:
        await client.connect()
        assert client.base_url == live.url and client.player == ann.player
        assert client.stats.failovers == 0  # the first connection is no failover
        assert table_id in [t.id for t in await client.tables()]  # REST goes there too
        table = await client.watch(table_id)
        assert table.seq is not None and table.view.table == table_id
    finally:
        await client.close()


async def test_no_url_answering_fails_the_connect() -> None:
    client = StudClient(dead_url(), fallback_urls=[dead_url()], request_timeout=2)
    try:
        with pytest.raises(OSError):
            await client.connect()
    finally:
        await client.close()


def test_urls_are_kept_in_order_once_each() -> None:
    client = StudClient("http://a:1/", fallback_urls=["http://b:2", "http://a:1", "https://c"])
    assert client.urls == ("http://a:1", "http://b:2", "https://c")
    assert (client.base_url, client.ws_url) == ("http://a:1", "ws://a:1/ws")


async def test_reconnects_to_the_next_url_when_its_server_dies(tmp_path: Path) -> None:
    """Two servers on one database, one at a time: the first is killed, the second started
    on another port; the clients, told of both, move to the second by themselves."""
    first, second = LiveServer(tmp_path), LiveServer(tmp_path)  # one database, two ports
    first.create_operator()
    first.start()
    clients: list[StudClient] = []
    try:
        admin = StudClient(first.url)
        clients.append(admin)
        await admin.login("boss", PASSWORD)
        table_id = await admin.create_table("fallback", {"variant": "razz"}, seats=2)
        tables = []
        for n in range(2):
            client = StudClient(
                first.url, fallback_urls=[second.url], heartbeat=0.5, backoff=(0.05, 0.3)
            )
            clients.append(client)
            await client.register(f"fallback{n}", PASSWORD)
            await client.login(f"fallback{n}", PASSWORD)
            await client.connect()
            tables.append(await client.watch(table_id))
            await tables[-1].sit(200)
        players = clients[1:]
        await play_passively(tables, hands_over(tables[0], 1))

        resyncs = [client.stats.resyncs for client in players]
        first.stop(kill=True)
        second.start()
        for client, table, before in zip(players, tables, resyncs, strict=True):

            def moved(view: TableView, client: StudClient = client, before: int = before) -> bool:
                # moved, and the view is the new server's snapshot (or later)
                return (
                    client.stats.failovers == 1
                    and client.stats.resyncs > before
                    and view.me is not None
                )

            view = await table.wait_for(moved, TIMEOUT)
            assert client.base_url == second.url
            assert table_id in [t.id for t in await client.tables()]  # REST follows
            if view.me is not None and view.me.sitting_out:  # sat out by the restart
                await table.sit_in()
        await tables[1].wait_for(lambda v: v.hand_number is not None, TIMEOUT)
        one_more = hands_over(tables[1], 1)
        await play_passively(tables, one_more)
        assert one_more()
        for client in players:
            assert client.stats.reconnects == 1 and client.stats.resyncs >= 1
            assert set(client.stats.errors) <= {"not_your_turn"}, client.stats.errors
    finally:
        for client in clients:
            await client.close()
        first.stop()
        second.stop()
    assert not first.errors(), first.log()[-5000:]
