"""``stud-server --workers N`` without a cardroom: what is refused, and a supervisor whose
workers cannot start. (Workers serving on PostgreSQL and Redis: tests/cluster/test_workers.py.)"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from failing_worker import never_starts

from server import cli, workers
from server.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
POSTGRES = "postgresql+asyncpg://nobody@127.0.0.1:1/none"  # never reached: refused before


def stud_server(
    *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", *args],
        input=stdin,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_several_workers_on_sqlite_are_refused_with_status_2(tmp_path: Path) -> None:
    database = tmp_path / "stud.db"
    done = stud_server("--workers", "2", "--database-url", f"sqlite:///{database}")
    assert done.returncode == 2, done.stderr
    assert "--workers 2 needs PostgreSQL and Redis" in done.stderr
    assert "SQLite has one writer process" in done.stderr
    assert not database.exists()  # refused before anything was made
    assert not (tmp_path / "stud.db.deck-key").exists()


def test_the_environment_asks_for_workers_too(tmp_path: Path) -> None:
    done = stud_server(
        "--database-url", f"sqlite:///{tmp_path / 'stud.db'}", env={"STUD_WORKERS": "3"}
    )
    assert done.returncode == 2 and "--workers 3 needs PostgreSQL" in done.stderr


def test_several_workers_without_redis_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("REDIS_URL", "STUD_REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    assert cli.main(["--workers", "2", "--database-url", POSTGRES]) == 2
    settings = Settings(database_url=POSTGRES, redis_url=None, workers=2)
    refusal = workers.refusal(settings)
    assert refusal is not None and "needs Redis" in refusal and "in-memory bus" in refusal


def test_what_workers_are_allowed_and_named() -> None:
    one = Settings(database_url="sqlite:///x.db", workers=1)
    assert workers.refusal(one) is None  # one worker: the single process of old
    cardroom = Settings(database_url=POSTGRES, redis_url="redis://r", workers=4, node_id="n")
    assert workers.refusal(cardroom) is None
    each = workers.worker_settings(cardroom.model_copy(update={"demo": True}))
    assert [w.node_id for w in each] == ["n-w1", "n-w2", "n-w3", "n-w4"]
    assert [w.demo for w in each] == [True, False, False, False]  # demo tables opened once
    assert {w.workers for w in each} == {1} and {w.port for w in each} == {cardroom.port}
    long_name = cardroom.model_copy(update={"node_id": "x" * 62})
    assert "too long" in (workers.refusal(long_name) or "")
    with pytest.raises(SystemExit) as exit_:
        cli.build_parser().parse_args(["--workers", "0"])
    assert exit_.value.code == 2


def test_other_commands_ignore_the_workers(tmp_path: Path) -> None:
    done = stud_server(
        "create-operator",
        "boss",
        "--password-stdin",
        stdin="a-long-password\n",
        env={
            "STUD_WORKERS": "2",
            "STUD_DATABASE_URL": f"sqlite:///{tmp_path / 'stud.db'}",
            "STUD_PASSWORD_TIME_COST": "1",
            "STUD_PASSWORD_MEMORY_KIB": "8",
            "STUD_PASSWORD_PARALLELISM": "1",
        },
    )
    assert done.returncode == 0, done.stderr
    assert "operator boss created" in done.stdout


def test_workers_that_keep_failing_to_start_stop_the_server(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = Settings(
        host="127.0.0.1", port=0, database_url=POSTGRES, redis_url="redis://r", workers=2
    )
    supervisor = workers.Supervisor(
        settings, "info", max_start_failures=3, first_pause_seconds=0.05, target=never_starts
    )
    started = time.monotonic()
    with caplog.at_level(logging.INFO, logger="stud_server.workers"):
        assert supervisor.run() == 1
    assert time.monotonic() - started < 60
    failed = [r.getMessage() for r in caplog.records if "failed to start with" in r.message]
    assert len(failed) >= 3 and all("status 3" in line for line in failed), failed
    assert any("failed to start 3 times in a row: stopping" in r.message for r in caplog.records)
    assert all(w.process is None for w in supervisor.workers)
    pauses = [r.getMessage() for r in caplog.records if "restarts in" in r.message]
    assert "restarts in 0.1 s" in " ".join(pauses)  # the pause doubles: 0.05, then 0.1


def test_a_port_taken_by_another_program_stops_the_start(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = Settings(
            host="127.0.0.1", port=port, database_url=POSTGRES, redis_url="redis://r", workers=2
        )
        supervisor = workers.Supervisor(settings, "info", target=never_starts)
        with caplog.at_level(logging.INFO, logger="stud_server.workers"):
            assert supervisor.run() == 1
    assert f"cannot listen on 127.0.0.1:{port}" in caplog.text
    assert supervisor.workers == []  # none was started
