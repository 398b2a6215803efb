"""Every HTTP endpoint fuzzed from the server's own OpenAPI schema (schemathesis): whatever
is sent, by an operator or by nobody, the answer is never a 5xx, and it is one JSON error
shape when it is a refusal. The cardroom runs for real (SQLite, its lifespan on) in a thread."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections import Counter
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
from server.workers import node_config

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
    # Served as a node serves (its HTTP protocol: a request it cannot parse is refused in
    # the JSON shape too).
    node = config.model_copy(update={"host": "127.0.0.1", "port": 0})
    server = uvicorn.Server(node_config(create_app(config), node, "warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    token = _login(url)
    # A table to find: the fuzzing's table ids start low, so its operations meet a real one.
    table = httpx.post(f"{url}/admin/tables", headers=bearer(token), json={"name": "Fuzzed"})
    assert table.status_code == 201, table.text
    try:
        yield Fuzzed(url, token, config)
    finally:
        server.should_exit = True
        thread.join(20)


def test_a_request_the_server_cannot_parse_is_refused_in_the_json_shape(cardroom: Fuzzed) -> None:
    host, port = cardroom.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(b"GET /tables HTTP/1.1\r\nHost: x\r\nBad Header: \x01\r\n\r\n")
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 "), answer
    assert b"content-type: application/json" in head.lower(), answer
    refusal = json.loads(body)
    assert refusal["error"]["code"] == "bad_request" and refusal["error"]["message"], refusal


def _login(url: str) -> str:
    login = httpx.post(f"{url}/auth/login", json={"username": "boss", "password": PASSWORD})
    assert login.status_code == 200, login.text
    return str(login.json()["access_token"])


def _signed_in(url: str, token: str) -> str:
    """The operator's token, or a new one when the fuzzing revoked it (a logout)."""
    if httpx.get(f"{url}/admin/tables", headers=bearer(token)).status_code == 200:
        return token
    return _login(url)


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


def _check(label: str, response: Any) -> int:
    assert response.status_code < 500, (label, response.status_code, response.text)
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, (label, body)
    return int(response.status_code)


def _fuzz(operation: Any, mode: GenerationMode, url: str, token: str) -> Counter[int]:
    """The operator's answers, by status."""
    answers: Counter[int] = Counter()

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def fuzz(case: Any) -> None:
        answers[_check(operation.label, case.call(base_url=url, headers=bearer(token)))] += 1
        _check(operation.label, case.call(base_url=url))

    fuzz()
    return answers


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
    # The operator's token opened the back office: its calls were judged, not refused at
    # the door; and, each body typed in the schema, valid ones were built and taken.
    admin = {label: answers for label, answers in fuzzed.items() if " /admin" in label}
    assert admin and all(not set(answers) <= {401, 403} for answers in admin.values()), admin
    # No traceback, and no chip moved but through the ledger: the books still balance.
    assert not troubles.records, [troubles.format(record) for record in troubles.records[:3]]
    status, lines = asyncio.run(cli.audit(cardroom.settings))
    assert status == 0, lines


def _fuzz_all(url: str, token: str, mode: GenerationMode) -> dict[str, Counter[int]]:
    """Each operation fuzzed: the operator's answers to it, by status."""
    api = schemathesis.openapi.from_url(f"{url}/openapi.json")
    fuzzed = {}
    # A logout revokes the operator's token: the logouts go last, and the token is checked
    # (signed in again if need be) before each operation, so the back office is fuzzed as
    # an operator, not refused at its door.
    operations = sorted(
        (result.ok() for result in api.get_all_operations()),
        key=lambda operation: "/auth/logout" in operation.label,
    )
    for operation in operations:
        token = _signed_in(url, token)
        try:
            fuzzed[operation.label] = _fuzz(operation, mode, url, token)
        except Unsatisfiable:
            if mode is GenerationMode.POSITIVE:
                raise
            continue
    return fuzzed
