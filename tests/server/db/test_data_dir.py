"""The embedded default's data directory (server/db/data_dir.py), as an operator meets it: a
real ``stud-server`` started in a checkout of the repository keeps its database and deck key
in one owner-only directory that git leaves out, and says so when its key is open to others."""

from __future__ import annotations

import doctest
import logging
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import FAST_HASHING, PASSWORD, end_process

from server.db import data_dir
from server.db.session import make_engine
from server.settings import Settings
from server.store.deck_seal import load_seal, new_key_text

REPO = Path(__file__).resolve().parents[3]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git repository holding this project's .gitignore, committed: what a demo runs in."""
    root = tmp_path / "checkout"
    root.mkdir()
    shutil.copy(REPO / ".gitignore", root / ".gitignore")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for command in (["init", "-q"], ["add", ".gitignore"], ["commit", "-q", "-m", "ignore"]):
        subprocess.run([*git, *command], cwd=root, check=True, capture_output=True)
    return root


@pytest.fixture
def server_env() -> dict[str, str]:
    """No server setting from this machine (the tests' deck key among them): the defaults."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STUD_")}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    env.update({f"STUD_{key.upper()}": str(value) for key, value in FAST_HASHING.items()})
    return env


class Server:
    """``stud-server`` started in ``cwd`` with the default settings, until :meth:`stop`."""

    def __init__(self, cwd: Path, env: dict[str, str], *args: str) -> None:
        found = shutil.which("stud-server", path=str(Path(sys.executable).parent))
        assert found, "stud-server is not installed: pip install -e '.[dev]'"
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = cwd.parent / f"server-{self.port}.log"
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                [found, "--port", str(self.port), *args],
                cwd=cwd,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 60
        while True:
            assert self.process.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, self.log.read_text()
            try:
                if httpx.get(f"{self.base}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)

    def stop(self) -> str:
        end_process(self.process)
        return self.log.read_text()


@pytest.fixture
def started(checkout: Path, server_env: dict[str, str]) -> Iterator[list[Server]]:
    servers: list[Server] = []
    yield servers
    for server in servers:
        if server.process.poll() is None:
            server.stop()


def test_a_demo_run_keeps_its_files_owner_only_in_one_directory_git_ignores(
    checkout: Path, server_env: dict[str, str], started: list[Server]
) -> None:
    server = Server(checkout, server_env, "--demo")
    started.append(server)
    with httpx.Client(base_url=server.base, timeout=10) as http:
        made = http.post("/auth/register", json={"username": "ann", "password": PASSWORD})
        assert made.status_code == 201, made.text
    data = checkout / "stud-data"
    written = sorted(path.name for path in data.iterdir())
    assert {"stud.db", "stud.db.deck-key", "stud.db-wal", "stud.db-shm"} <= set(written)
    assert _mode(data) == 0o700
    for path in data.iterdir():
        assert _mode(path) == 0o600, path.name
    assert sorted(path.name for path in checkout.iterdir()) == [".git", ".gitignore", "stud-data"]
    log = server.stop()
    assert "open to other users" not in log and "older version" not in log
    status = subprocess.run(
        ["git", "status", "--porcelain", "--ignored"],
        cwd=checkout,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert status == ["!! stud-data/"], status  # nothing to commit, the data left out


def test_git_ignores_a_database_named_by_url_its_key_and_compose_settings(checkout: Path) -> None:
    written = [
        "cardroom.db",
        "cardroom.db-wal",
        "cardroom.db-shm",
        "cardroom.db-journal",
        "cardroom.db.deck-key",
        "elsewhere/stud-data/stud.db",
        ".env",  # docker-compose.yml's deck key
    ]
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", *written],
        cwd=checkout,
        capture_output=True,
        text=True,
    )
    assert ignored.stdout.split() == written, ignored.stderr
    kept = subprocess.run(["git", "check-ignore", "server/store/deck_seal.py"], cwd=checkout)
    assert kept.returncode == 1  # not ignored: the code is committed


def test_a_key_file_open_to_others_is_warned_about_at_start(
    checkout: Path, server_env: dict[str, str], started: list[Server]
) -> None:
    first = Server(checkout, server_env)
    started.append(first)
    assert "open to other users" not in first.stop()
    key = checkout / "stud-data" / "stud.db.deck-key"
    key.chmod(0o644)
    again = Server(checkout, server_env)
    started.append(again)
    log = again.stop()
    warning = "the deck key file stud-data/stud.db.deck-key is open to other users (mode 644)"
    assert log.count(warning) == 1, log  # once, though the start reads the key twice
    assert key.read_text().strip()  # the key is still the one it was: used, not replaced


def test_an_older_versions_database_in_the_working_directory_is_pointed_out(
    checkout: Path, server_env: dict[str, str]
) -> None:
    (checkout / "stud.db").write_bytes(b"")
    found = shutil.which("stud-server", path=str(Path(sys.executable).parent))
    assert found
    done = subprocess.run(
        [found, "migrate"], cwd=checkout, env=server_env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "stud.db is an older version's database" in done.stderr
    assert "stud-data/stud.db" in done.stderr
    again = subprocess.run(
        [found, "migrate"], cwd=checkout, env=server_env, capture_output=True, text=True
    )
    assert "older version" not in again.stderr  # said while the new default is not made


def test_the_data_directory_is_a_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("STUD_DATABASE_URL", raising=False)
    monkeypatch.setenv("STUD_DATA_DIR", str(tmp_path / "cardroom"))
    settings = Settings()
    assert settings.database_url == f"sqlite+aiosqlite:///{tmp_path / 'cardroom' / 'stud.db'}"
    monkeypatch.delenv("STUD_DATA_DIR")
    assert Settings().database_url == "sqlite+aiosqlite:///stud-data/stud.db"
    assert doctest.testmod(data_dir).failed == 0


async def test_a_sqlite_file_named_by_url_is_made_owner_only_with_its_directory(
    tmp_path: Path,
) -> None:
    path = tmp_path / "deep" / "er" / "cardroom.db"
    engine = make_engine(f"sqlite+aiosqlite:///{path}")
    try:
        async with engine.begin() as connection:
            await connection.exec_driver_sql("CREATE TABLE t (x INTEGER)")
            assert _mode(path.with_name("cardroom.db-wal")) == 0o600  # SQLite's, as the file
    finally:
        await engine.dispose()
    assert _mode(path) == 0o600 and _mode(path.parent) == 0o700
    existing = tmp_path / "theirs.db"
    existing.write_bytes(b"")
    existing.chmod(0o640)
    await make_engine(f"sqlite+aiosqlite:///{existing}").dispose()
    assert _mode(existing) == 0o640  # an operator's own file is left as it is


def test_a_key_file_setting_open_to_others_is_warned_about_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    key_file = tmp_path / "deck.key"
    key_file.write_text(new_key_text() + "\n")
    key_file.chmod(0o604)
    url = "postgresql+asyncpg://nobody@127.0.0.1/none"
    with caplog.at_level(logging.WARNING, logger="server.store.deck_seal"):
        load_seal(url, key_file=str(key_file))
        load_seal(url, key_file=str(key_file))
    warnings = [r.getMessage() for r in caplog.records if "open to other users" in r.getMessage()]
    assert len(warnings) == 1 and "(mode 604)" in warnings[0], warnings
    caplog.clear()
    private = tmp_path / "private.key"
    private.write_text(new_key_text())
    private.chmod(0o600)
    with caplog.at_level(logging.WARNING, logger="server.store.deck_seal"):
        load_seal(url, key_file=str(private))
    assert not caplog.records
