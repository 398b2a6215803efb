from __future__ import annotations

import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from server_helpers import FAST_HASHING, PASSWORD, end_process
from sqlalchemy.ext.asyncio import AsyncSession
from websockets.sync.client import connect

from server import cli, logs
from server.accounts import registry
from server.db.models import Role
from server.settings import Settings


def test_flags_override_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUD_PORT", "9000")
    monkeypatch.setenv("STUD_DATABASE_URL", "sqlite:///env.db")
    args = cli.build_parser().parse_args(
        ["--port", "9100", "--database-url", "sqlite:///flag.db", "--redis-url", "redis://r"]
    )
    settings = cli.settings_from(args)
    assert (settings.port, settings.database_url) == (9100, "sqlite+aiosqlite:///flag.db")
    assert settings.redis_url == "redis://r" and settings.demo is False
    assert cli.settings_from(cli.build_parser().parse_args(["--demo"])).demo is True
    assert cli.settings_from(cli.build_parser().parse_args([])).port == 9000


def test_the_log_format_comes_from_the_flag_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert cli.settings_from(cli.build_parser().parse_args([])).log_format == "text"
    monkeypatch.setenv("STUD_LOG_FORMAT", "json")
    assert cli.settings_from(cli.build_parser().parse_args([])).log_format == "json"
    flag = cli.build_parser().parse_args(["--log-format", "text"])
    assert cli.settings_from(flag).log_format == "text"
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["--log-format", "xml"])


def test_help_names_every_flag() -> None:
    help_text = " ".join(cli.build_parser().format_help().split())
    assert "--demo also open a demo table of each main variant" in help_text
    assert "--redis-url REDIS_URL Redis for the bus between nodes" in help_text
    assert "create-operator" in help_text


async def test_create_operator_new_then_again(settings: Settings, session: AsyncSession) -> None:
    asked: list[bool] = []

    def ask() -> str:
        asked.append(True)
        return PASSWORD

    assert await cli.create_operator(settings, "boss", ask) == "operator boss created"
    assert await cli.create_operator(settings, "BOSS", ask) == "boss is already an operator"
    assert asked == [True]  # the password is asked for a new account only
    boss = await registry.find_by_username(session, username="boss")
    assert boss is not None and boss.role == "operator"


async def test_create_operator_refuses_a_weak_password(settings: Settings) -> None:
    with pytest.raises(SystemExit, match="at least 8"):
        await cli.create_operator(settings, "boss", lambda: "short")
    with pytest.raises(SystemExit, match="needs a password"):
        await cli.create_operator(settings, "boss", lambda: None)
    with pytest.raises(SystemExit, match="most common"):
        await cli.create_operator(settings, "boss", lambda: "Password1")
    with pytest.raises(SystemExit, match="only spaces"):
        await cli.create_operator(settings, "boss", lambda: " " * 12)
    with pytest.raises(SystemExit, match="reserved for the house"):
        await cli.create_operator(settings, "house-boss", lambda: PASSWORD)


def test_create_operator_takes_a_role() -> None:
    parse = cli.build_parser().parse_args
    assert parse(["create-operator", "boss"]).role == "operator"
    assert parse(["create-operator", "sue", "--role", "support"]).role == "support"
    with pytest.raises(SystemExit):
        parse(["create-operator", "ann", "--role", "player"])


async def test_create_operator_makes_and_moves_support_accounts(
    settings: Settings, session: AsyncSession
) -> None:
    def ask() -> str:
        return PASSWORD

    support = Role.SUPPORT
    assert await cli.create_operator(settings, "sue", ask, support) == "support sue created"
    again = "sue is already a support account"
    assert await cli.create_operator(settings, "Sue", ask, support) == again
    promoted = "sue is now an operator (was support)"
    assert await cli.create_operator(settings, "sue", ask) == promoted
    demoted = "sue is now a support account (was operator)"
    assert await cli.create_operator(settings, "sue", ask, support) == demoted
    sue = await registry.find_by_username(session, username="sue")
    assert sue is not None and sue.role == "support"
    with pytest.raises(ValueError, match="not a staff role"):
        await cli.create_operator(settings, "ann", ask, Role.PLAYER)


def test_create_operator_role_support_from_the_command_line(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key, value in FAST_HASHING.items():
        monkeypatch.setenv(f"STUD_{key.upper()}", str(value))
    command = ["--database-url", database_url, "create-operator", "sue", "--role", "support"]
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{PASSWORD}\n"))
    assert cli.main([*command, "--password-stdin"]) == 0
    assert cli.main(command) == 0
    assert cli.main(["--database-url", database_url, "create-operator", "sue"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "support sue created",
        "sue is already a support account",
        "sue is now an operator (was support)",
    ]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def stud_server() -> str:
    found = shutil.which("stud-server", path=str(Path(sys.executable).parent))
    assert found, "stud-server is not installed: pip install -e '.[dev]'"
    return found


@pytest.fixture
def server_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("STUD_")}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    env.update({f"STUD_{key.upper()}": str(value) for key, value in FAST_HASHING.items()})
    return env


@pytest.fixture
def running(
    stud_server: str, server_env: dict[str, str], tmp_path: Path
) -> Iterator[tuple[str, str]]:
    """A real ``stud-server`` on a free port, with an operator made by its CLI."""
    url = f"sqlite:///{tmp_path / 'e2e.db'}"
    made = subprocess.run(
        [stud_server, "--database-url", url, "create-operator", "boss", "--password-stdin"],
        input=f"{PASSWORD}\n",
        env=server_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    # One line out: the migrations applied first are no news to whoever makes an operator.
    assert (made.stdout, made.stderr) == ("operator boss created\n", "")
    support = subprocess.run(
        [stud_server, "--database-url", url, "create-operator", "sue"]
        + ["--role", "support", "--password-stdin"],
        input=f"{PASSWORD}\n",
        env=server_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert support.returncode == 0, support.stderr
    assert "support sue created" in support.stdout

    port = _free_port()
    log_path = tmp_path / "server.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [
                stud_server,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--database-url",
                url,
                "--demo",
            ],
            env=server_env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, log_path.read_text()
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)
        yield base, str(log_path)
    finally:
        end_process(process)


def test_the_real_server_over_http(running: tuple[str, str]) -> None:
    base, log_path = running
    with httpx.Client(base_url=base, timeout=10) as http:
        assert http.get("/healthz").json()["status"] == "ok"
        assert http.get("/readyz").status_code == 200
        registered = http.post("/auth/register", json={"username": "alice", "password": PASSWORD})
        assert registered.status_code == 201, registered.text
        login = http.post("/auth/login", json={"username": "boss", "password": PASSWORD})
        headers = {"Authorization": f"Bearer {login.json()['access_token']}"}
        table = http.post(
            "/admin/tables", headers=headers, json={"name": "Razz", "config": {"variant": "razz"}}
        )
        assert table.status_code == 201, table.text
        names = {t["name"]: t["variant"] for t in http.get("/tables").json()}
        # The support account made by the CLI reads the back office and changes nothing.
        login = http.post("/auth/login", json={"username": "sue", "password": PASSWORD})
        sue = {"Authorization": f"Bearer {login.json()['access_token']}"}
        assert http.get("/admin/books", headers=sue).json()["balanced"] is True
        refused = http.post("/admin/tables", headers=sue, json={"name": "Sue's"})
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "not_operator"
    # --demo opened a table of each main variant next to the operator's.
    assert names == {
        "Razz": "razz",
        "Demo: seven-card stud": "seven_card_stud",
        "Demo: stud hi-lo": "seven_card_stud_hi_lo",
        "Demo: razz": "razz",
    }, Path(log_path).read_text()


def test_the_real_server_logs_no_token_and_names_no_server(running: tuple[str, str]) -> None:
    """A token in a URL (a websocket's ``?token=``, a page's query) reaches no log line;
    answers carry a Permissions-Policy and no ``server`` header, the websocket's too."""
    base, log_path = running
    with httpx.Client(base_url=base, timeout=10) as http:
        login = http.post("/auth/login", json={"username": "boss", "password": PASSWORD})
        token = login.json()["access_token"]
        page = http.get("/tables", params={"token": token})
        assert page.status_code == 200
        for answer in (login, page, http.get("/"), http.get("/no/such/route")):
            assert "server" not in answer.headers, answer.headers
            assert "camera=()" in answer.headers["permissions-policy"]
    ws_url = base.replace("http://", "ws://") + f"/ws?token={token}"
    with connect(ws_url, open_timeout=10) as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "hello"
        assert ws.response is not None and "server" not in ws.response.headers
    deadline = time.monotonic() + 10
    while '"WebSocket /ws" [accepted]' not in Path(log_path).read_text():
        assert time.monotonic() < deadline, Path(log_path).read_text()
        time.sleep(0.1)
    written = Path(log_path).read_text()
    assert '"GET /tables HTTP/1.1" 200' in written  # the access log is on, without the query
    assert token not in written and "token=" not in written
    # Every line, uvicorn's included, is stamped with its time (UTC) and names its level.
    stamped = [logs.TEXT_LINE.fullmatch(line) for line in written.splitlines()]
    assert all(stamped), [
        line for line, ok in zip(written.splitlines(), stamped, strict=True) if not ok
    ]
    times = [datetime.fromisoformat(found["time"]) for found in stamped if found]
    assert times == sorted(times) and times[-1] - times[0] < timedelta(minutes=5)


def test_the_real_server_writes_json_lines_and_counts_its_play(
    stud_server: str, server_env: dict[str, str], tmp_path: Path
) -> None:
    """``--log-format json``: every line the process writes is a JSON object, uvicorn's own
    too; the demo tables' house bots play, and ``/metrics`` counts it."""
    port = _free_port()
    log_path = tmp_path / "server.log"
    env = {**server_env, "STUD_DEMO_THINK_SECONDS": "0.01"}
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [stud_server, "--port", str(port), "--database-url", f"sqlite:///{tmp_path / 'j.db'}"]
            + ["--demo", "--log-format", "json"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        hands = 0.0
        while hands < 1:
            assert process.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
            try:
                scraped = httpx.get(f"{base}/metrics", timeout=1)
            except httpx.TransportError:
                continue
            assert scraped.status_code == 200
            hands = sum(
                sample.value
                for family in text_string_to_metric_families(scraped.text)
                for sample in family.samples
                if sample.name == "stud_hands_finished_total"
            )
    finally:
        end_process(process)
    lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]
    assert lines and all({"time", "level", "logger", "message"} <= line.keys() for line in lines)
    assert any(line["logger"].startswith("uvicorn") for line in lines)
