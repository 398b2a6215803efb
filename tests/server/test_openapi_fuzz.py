"""Every HTTP endpoint fuzzed from the server's own OpenAPI schema (schemathesis): whatever
is sent, by an operator or by nobody, the answer is never a 5xx, and it is one JSON error
shape when it is a refusal. The cardroom runs for real (SQLite, its lifespan on) in a thread."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.generation import GenerationMode
from server_helpers import FAST_HASHING, PASSWORD, bearer

from server import cli
from server.app import create_app
from server.cli import create_operator
from server.db import migrate
from server.db.session import make_engine
from server.settings import Settings

EXAMPLES = 25  # per operation and caller: bounded, so CI stays quick


async def _migrate(url: str) -> None:
    engine = make_engine(url)
    await migrate.upgrade(engine)
    await engine.dispose()


@pytest.fixture(scope="module")
def cardroom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    """A served cardroom: its base URL, an operator's token, its settings."""
    path: Path = tmp_path_factory.mktemp("fuzz") / "fuzz.db"
    config = Settings(database_url=f"sqlite+aiosqlite:///{path}", **FAST_HASHING)
    asyncio.run(_migrate(config.database_url))
    asyncio.run(create_operator(config, "boss", lambda: PASSWORD))
    server = uvicorn.Server(
        uvicorn.Config(create_app(config), host="127.0.0.1", port=0, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    login = httpx.post(f"{url}/auth/login", json={"username": "boss", "password": PASSWORD})
    token = str(login.json()["access_token"])
    try:
        yield Fuzzed(url, token, config)
    finally:
        server.should_exit = True
        thread.join(20)


@dataclass(frozen=True)
class Fuzzed:
    url: str
    token: str
    settings: Settings


class _Troubles(logging.Handler):
    """Every log record of the server that is an error or carries a traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or record.levelno >= logging.ERROR:
            self.records.append(record)


def _check(label: str, response: Any) -> None:
    assert response.status_code < 500, (label, response.status_code, response.text)
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, (label, body)


def _fuzz(operation: Any, mode: GenerationMode, url: str, token: str) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def fuzz(case: Any) -> None:
        _check(operation.label, case.call(base_url=url, headers=bearer(token)))
        _check(operation.label, case.call(base_url=url))

    fuzz()


@pytest.mark.parametrize("mode", list(GenerationMode), ids=lambda mode: mode.value)
def test_no_answer_is_a_server_error(cardroom: Fuzzed, mode: GenerationMode) -> None:
    """Valid inputs (positive) and inputs the schema forbids (negative), for every operation,
    sent as an operator and as nobody. An operation with nothing to get wrong (no parameter,
    no body) has no negative input."""
    url, token = cardroom.url, cardroom.token
    troubles = _Troubles()
    loggers = [logging.getLogger(), logging.getLogger("uvicorn")]  # uvicorn's stay its own
    for logger in loggers:
        logger.addHandler(troubles)
    try:
        fuzzed = _fuzz_all(url, token, mode)
    finally:
        for logger in loggers:
            logger.removeHandler(troubles)
    assert any(label.startswith("POST /admin/") for label in fuzzed), fuzzed
    # No traceback, and no chip moved but through the ledger: the books still balance.
    assert not troubles.records, [troubles.format(record) for record in troubles.records[:3]]
    status, lines = asyncio.run(cli.audit(cardroom.settings))
    assert status == 0, lines


def _fuzz_all(url: str, token: str, mode: GenerationMode) -> list[str]:
    api = schemathesis.openapi.from_url(f"{url}/openapi.json")
    fuzzed = []
    for result in api.get_all_operations():
        operation = result.ok()
        try:
            _fuzz(operation, mode, url, token)
        except Unsatisfiable:
            if mode is GenerationMode.POSITIVE:
                raise
            continue
        fuzzed.append(operation.label)
    return fuzzed
