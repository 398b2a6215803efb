"""``GET /metrics`` on a real app played over real websockets, and the JSON log lines."""

from __future__ import annotations

import asyncio
import gc
import io
import json
import logging
import sys
import weakref
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from live import receive, serve
from prometheus_client.parser import text_string_to_metric_families
from server_helpers import FAST_HASHING, bearer, error_code, operator_token, player_token
from websockets.asyncio.client import ClientConnection, connect

from engine.cards import Deck, parse_cards
from engine.variants import TableConfig, find_variant
from server import logs
from server.app import create_app
from server.bus.memory import MemoryBus
from server.db import migrate
from server.db.session import make_engine
from server.metrics import Metrics
from server.settings import Settings
from server.table.actor import TableActor
from server.table.commands import Act, Sit
from server.table.loop import Lifecycle
from server.table.ports import TableSettings
from tests.server.fakes import MemoryTableStore

# Heads-up, seat 0 gets As Ks / 7h, seat 1 Qd Qc / 2c (and brings in).
TOP = parse_cards("AsQdKsQc7h2c9h3c5d9cJh4dKd6s")
STACKED = TOP + [card for card in range(52) if card not in TOP]


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(database_url=database_url, pause_between_hands_seconds=0, **FAST_HASHING)


def scrape_text(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape, by name and labels."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def scrape(client: httpx.AsyncClient) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = await client.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return scrape_text(response.text)


def value(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, have), v in samples.items() if n == name and wanted <= have)


async def hello(host: str) -> ClientConnection:
    ws = await connect(f"ws://{host}/ws")
    assert (await receive(ws))["type"] == "hello"
    return ws


async def request(ws: ClientConnection, frame: dict[str, Any]) -> dict[str, Any]:
    """Send a frame; its answer (the events before it skipped)."""
    await ws.send(json.dumps(frame))
    while True:
        answer = await receive(ws)
        if answer["type"] in ("reply", "error") and answer.get("id") == frame.get("id"):
            return answer


async def test_metrics_count_what_the_players_did(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    app.state.cardroom.deck_factory = lambda: Deck(order=STACKED)
    boss = await operator_token(client, settings)
    tokens = {name: await player_token(client, name) for name in ("ann", "bob")}
    created = await client.post(
        "/admin/tables",
        headers=bearer(boss),
        json={"name": "Heads-up", "seats": 2, "min_buy_in": 100, "max_buy_in": 500},
    )
    assert created.status_code == 201, created.text
    table = created.json()["id"]
    before = await scrape(client)
    assert value(before, "stud_websocket_connections") == 0
    assert (
        value(before, "stud_tables", state="idle") + value(before, "stud_tables", state="busy") == 1
    )
    async with serve(app) as host:
        ann, bob = await hello(host), await hello(host)
        for ws, name, seat in ((ann, "ann", 0), (bob, "bob", 1)):
            await request(ws, {"type": "auth", "id": 1, "token": tokens[name]})
            sat = await request(
                ws, {"type": "sit", "id": 2, "table": table, "seat": seat, "buy_in": 200}
            )
            assert sat["type"] == "reply", sat
        act = {"type": "act", "table": table}
        refused = await request(ann, {**act, "id": 3, "action_id": "a1", "kind": "bring_in"})
        assert refused["code"] == "not_your_turn"
        brought = await request(bob, {**act, "id": 3, "action_id": "b1", "kind": "bring_in"})
        assert brought["result"]["accepted"] is True
        folded = await request(ann, {**act, "id": 4, "action_id": "a2", "kind": "fold"})
        assert folded["result"]["accepted"] is True
        unknown = await request(ann, {"type": "shuffle_up", "id": 5})
        assert unknown["code"] == "unknown_type"

        during = await scrape(client)
        assert value(during, "stud_websocket_connections") == 2
        assert value(during, "stud_hands_finished_total") == 1
        assert value(during, "stud_actions_total", kind="bring_in") == 1
        assert value(during, "stud_actions_total", kind="fold") == 1
        assert value(during, "stud_command_seconds_count", command="act") == 3
        assert value(during, "stud_command_seconds_count", command="sit") == 2
        assert value(during, "stud_command_seconds_sum", command="act") > 0
        assert value(during, "stud_command_seconds_bucket", command="act", le="+Inf") == 3
        # A table's refusal counts at the table and at the websocket that sent it on; the
        # websocket's own only there.
        assert value(during, "stud_refusals_total", code="not_your_turn", source="table") == 1
        assert value(during, "stud_refusals_total", code="not_your_turn", source="websocket") == 1
        assert value(during, "stud_refusals_total", code="unknown_type", source="websocket") == 1
        assert value(during, "stud_refusals_total", code="unknown_type", source="table") == 0
        assert value(during, "stud_db_write_seconds_count", write="buy_in") == 2
        assert value(during, "stud_db_write_seconds_count", write="record_action") == 2
        assert value(during, "stud_db_write_seconds_count", write="save_hand") == 1
        assert value(during, "stud_db_write_seconds_count", write="start_hand") >= 1
        assert value(during, "stud_tables") == 1
        assert value(during, "stud_tables_paused") == 0
        assert value(during, "stud_table_takeovers_total") == 0
        await ann.close()
        await bob.close()
        for _ in range(200):
            if value(await scrape(client), "stud_websocket_connections") == 0:
                break
            await asyncio.sleep(0.01)
        assert value(await scrape(client), "stud_websocket_connections") == 0


async def test_metrics_may_be_for_staff_only(database_url: str) -> None:
    settings = Settings(database_url=database_url, metrics_public=False, **FAST_HASHING)
    engine = make_engine(settings.database_url)
    await migrate.upgrade(engine)
    await engine.dispose()
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://stud.test") as client:
            anonymous = await client.get("/metrics")
            assert anonymous.status_code == 401 and error_code(anonymous) == "not_authenticated"
            player = await client.get("/metrics", headers=bearer(await player_token(client)))
            assert player.status_code == 403 and error_code(player) == "not_operator"
            staff = await client.get(
                "/metrics", headers=bearer(await operator_token(client, settings))
            )
            assert staff.status_code == 200
            assert "stud_websocket_connections" in staff.text


def test_every_app_has_its_own_registry() -> None:
    first, second = create_app(Settings()), create_app(Settings())
    assert first.state.metrics.registry is not second.state.metrics.registry
    first.state.metrics.hands_finished.inc()
    assert (
        value(
            scrape_text(first.state.metrics.exposition(None)[0].decode()),
            "stud_hands_finished_total",
        )
        == 1
    )
    assert (
        value(
            scrape_text(second.state.metrics.exposition(None)[0].decode()),
            "stud_hands_finished_total",
        )
        == 0
    )


def test_garbage_collections_are_timed_without_keeping_the_app_alive() -> None:
    metrics = Metrics()
    gc.collect()
    samples = scrape_text(metrics.exposition(None)[0].decode())
    assert value(samples, "stud_gc_pause_seconds_count", generation="2") >= 1
    assert value(samples, "stud_gc_pause_seconds_sum", generation="2") > 0
    assert value(samples, "stud_gc_pause_seconds_bucket", generation="2", le="+Inf") >= 1
    gone = weakref.ref(metrics)
    del metrics, samples
    gc.collect()
    assert gone() is None


def test_openmetrics_when_the_scraper_asks() -> None:
    body, content_type = Metrics().exposition("application/openmetrics-text; version=1.0.0")
    assert content_type.startswith("application/openmetrics-text")
    assert body.endswith(b"# EOF\n")


# ---------------------------------------------------------------------- a table's log lines


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """What the root logger writes, as ``--log-format json`` writes it."""
    out = io.StringIO()
    handler = logs.handler("json")
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(out)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield out
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


async def test_a_table_logs_its_id_and_hand_and_counts_its_pause(json_lines: io.StringIO) -> None:
    store = MemoryTableStore()
    actor = TableActor(
        7,
        TableConfig(variant=find_variant("seven_card_stud")),
        bus=MemoryBus(),
        store=store,
        settings=TableSettings(min_buy_in=20, max_buy_in=500, pause_between_hands=0.0),
        deck_factory=lambda: Deck(order=STACKED),
    )
    actor.metrics.watch_tables(lambda: [actor], states=(state.value for state in Lifecycle))
    logging.getLogger("server").info("not a table's line")
    actor.start()
    try:
        await actor.submit(Sit(player="ann", buy_in=200, seat=0))
        await actor.submit(Sit(player="bob", buy_in=200, seat=1))
        assert actor.hand_number == 1
        store.down = True  # the database stops answering: the table pauses
        acting = asyncio.create_task(
            actor.submit(Act(player="bob", action_id="b1", kind="bring_in"))
        )
        for _ in range(500):
            if actor.paused:
                break
            await asyncio.sleep(0.01)
        samples = scrape_text(actor.metrics.exposition(None)[0].decode())
        assert value(samples, "stud_tables_paused") == 1
        assert value(samples, "stud_tables", state="busy") == 1
        store.down = False
        assert (await acting)["accepted"] is True
        assert (
            value(scrape_text(actor.metrics.exposition(None)[0].decode()), "stud_tables_paused")
            == 0
        )
    finally:
        await actor.stop()
    lines = [json.loads(line) for line in json_lines.getvalue().splitlines()]
    assert all({"time", "level", "logger", "message"} <= line.keys() for line in lines)
    outside = next(line for line in lines if line["message"] == "not a table's line")
    assert "table" not in outside and "hand" not in outside
    paused = next(line for line in lines if "paused" in line["message"])
    assert paused["logger"] == "server.table.journal" and paused["level"] == "WARNING"
    assert paused["table"] == 7 and paused["hand"] == 1
    back = next(line for line in lines if "database is back" in line["message"])
    assert back["table"] == 7 and back["hand"] == 1 and back["level"] == "INFO"
    assert back["time"].endswith("+00:00")


def test_a_json_line_carries_the_exception() -> None:
    formatter = logs.JsonFormatter()
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord(
            "server.x", logging.ERROR, __file__, 1, "failed %s", ("here",), sys.exc_info()
        )
    line = json.loads(formatter.format(record))
    assert line["message"] == "failed here" and line["level"] == "ERROR"
    assert "ValueError: boom" in line["exception"]
