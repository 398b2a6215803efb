"""A tournament's start takes the node's full collection pass itself, once its tables are
opened and its players seated and before any of them deals (server/collector.py): the pass
their growth calls for is not left to fall in the first minutes of play."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from fastapi import FastAPI
from server_helpers import bearer, operator_token, player_token
from sqlalchemy.ext.asyncio import AsyncSession
from test_director import quick_sng, settings, tournament_tables

from server.cardroom.supervisor import Cardroom
from server.collector import Collector
from server.settings import Settings
from tests.server.process.test_collector import as_it_was

__all__ = ["as_it_was", "settings"]  # fixtures, shared with the collector's and director's tests


class WatchedCollector(Collector):
    """The node's collector, noting what the tables of the room were doing at each full
    pass taken on request."""

    def __init__(self, cardroom: Cardroom) -> None:
        super().__init__(thaw_seconds=3600)  # by its clock, no full pass in this test
        self.cardroom = cardroom
        self.at_settle: list[tuple[int, int, bool]] = []  # tables, players, any hand dealt

    def settle(self) -> None:
        actors = [self.cardroom.actor(table_id) for table_id in self.cardroom.running_tables()]
        tables = [actor.table for actor in actors if actor is not None]
        players = sum(seat is not None for table in tables for seat in table.seats)
        dealt = any(table.hand is not None for table in tables)
        self.at_settle.append((len(tables), players, dealt))
        super().settle()


async def test_the_start_takes_the_full_pass_before_any_table_deals(
    app: FastAPI,
    client: httpx.AsyncClient,
    settings: Settings,
    session: AsyncSession,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cardroom: Cardroom = app.state.cardroom
    node_collector = WatchedCollector(cardroom)
    node_collector.start(asyncio.get_running_loop())
    try:
        boss = await operator_token(client, settings)
        templates = (await client.get("/tournaments/templates")).json()
        made = await client.post(
            "/admin/tournaments",
            json={"name": "Settled", "spec": quick_sng(templates, 6, 4)},
            headers=bearer(boss),
        )
        assert made.status_code == 201, made.text
        tournament_id = made.json()["id"]
        with caplog.at_level("INFO", logger="server"):
            for n in range(6):
                token = await player_token(client, f"player{n}")
                registered = await client.post(
                    f"/tournaments/{tournament_id}/register",
                    json={"request_id": f"r{n}"},
                    headers=bearer(token),
                )
                assert registered.status_code == 201, registered.text
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 30
            while "started: 6 players at 2 tables" not in caplog.text:
                assert loop.time() < deadline, "the sit-and-go did not start"
                await asyncio.sleep(0.05)
        assert node_collector.at_settle == [(2, 6, False)], "one pass, seated, nothing dealt"
        assert node_collector.passes[2] == 1
        assert caplog.text.index("collector: a full pass") < caplog.text.index("started: 6")
        # Then the tables deal as ever.
        tables = await tournament_tables(session, tournament_id)
        while not all(
            (actor := cardroom.actor(table_id)) is not None and actor.table.hand is not None
            for table_id in tables
        ):
            assert loop.time() < deadline, "a table of the tournament never dealt"
            await asyncio.sleep(0.05)
    finally:
        node_collector.stop()


async def test_only_a_running_clock_takes_the_pass() -> None:
    from server import collector

    clock = Collector(thaw_seconds=3600)
    collector.settle_now()  # not started yet: CPython's passes alone
    assert clock.passes[2] == 0
    clock.start(asyncio.get_running_loop())
    collector.settle_now()
    assert clock.passes[2] == 1
    clock.stop()
    collector.settle_now()  # stopped
    assert clock.passes[2] == 1
