"""A real stud server in a subprocess (``python -m server``: uvicorn, SQLite, the in-memory
bus) on a free port, as an operator runs it; it can be killed and started again on the same
port and database, which is how the client's reconnect is tested against a real restart."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import httpx

from server.logs import level_of
from stud_client import StudClient

ROOT = Path(__file__).resolve().parents[2]
OPERATOR = "boss"
SUPPORT = "helpdesk"  # a support account, where a test makes one
PASSWORD = "clients-tests"
BANKROLL = 10_000
# The fixtures of conftest.py, as types for the tests.
MakePlayer = Callable[..., Coroutine[Any, Any, StudClient]]
OpenTable = Callable[..., Coroutine[Any, Any, int]]
FAST_CLOCKS = {
    "STUD_ACTION_CLOCK_SECONDS": "5",
    "STUD_TIME_BANK_SECONDS": "0",
    "STUD_PAUSE_BETWEEN_HANDS_SECONDS": "0.05",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LiveServer:
    def __init__(self, directory: Path, **settings: str) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = directory / "server.log"
        self.env = {
            **os.environ,
            "STUD_DATABASE_URL": f"sqlite+aiosqlite:///{directory / 'cardroom.db'}",
            "STUD_PORT": str(self.port),
            "STUD_STARTING_BANKROLL": str(BANKROLL),
            "STUD_PASSWORD_TIME_COST": "1",
            "STUD_PASSWORD_MEMORY_KIB": "8",
            "STUD_PASSWORD_PARALLELISM": "1",
            # Out of reach: these tests register and log in many accounts from one address.
            "STUD_LOGIN_FAILURES_PER_ADDRESS_PER_MINUTE": "100000",
            "STUD_REGISTER_PER_ADDRESS_PER_MINUTE": "100000",
            "STUD_STARTING_GRANTS_PER_ADDRESS": "100000",
            "STUD_WS_SOCKETS_PER_ADDRESS": "100000",
            **FAST_CLOCKS,
            **settings,
        }
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[Any] | None = None

    def create_operator(self, name: str = OPERATOR, role: str = "operator") -> None:
        """A staff account (``role``: operator or support) with the tests' password."""
        subprocess.run(
            [
                sys.executable,
                "-m",
                "server",
                "create-operator",
                name,
                "--role",
                role,
                "--password-stdin",
            ],
            input=PASSWORD + "\n",
            text=True,
            env=self.env,
            cwd=ROOT,
            check=True,
            capture_output=True,
        )

    def start(self) -> None:
        self._log = self.log_path.open("a")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "server", "--log-level", "warning"],
            env=self.env,
            cwd=ROOT,
            stdout=self._log,
            stderr=self._log,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/readyz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert self.process.poll() is None, self.log()
            time.sleep(0.05)
        raise AssertionError("the server did not become ready\n" + self.log())

    def stop(self, *, kill: bool = False) -> None:
        process = self.process
        if process is None:
            return
        self.process = None
        if kill:
            process.kill()
        else:
            process.send_signal(signal.SIGINT)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if self._log is not None:
            self._log.close()

    @contextmanager
    def running(self) -> Iterator[LiveServer]:
        """Started for the block, stopped after it; a test's server must log no error."""
        self.start()
        try:
            yield self
        finally:
            self.stop()
        assert not self.errors(), self.log()[-5000:]

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""

    def errors(self) -> list[str]:
        return [
            line
            for line in self.log().splitlines()
            if "Traceback" in line or level_of(line) in ("ERROR", "CRITICAL")
        ]
