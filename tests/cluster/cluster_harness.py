"""A cardroom of several gateway nodes, for tests that break it: real ``python -m server``
processes (``--node-id A``, ``B``...) on one PostgreSQL database and one Redis of the test's
own, each part of which a test may kill, restart or freeze.

- ``RedisProcess``: a ``redis-server`` on a free port, nothing saved; ``restart()`` kills it
  and starts it again, empty, on the same port. ``Cluster(..., redis_cluster=True)`` has a
  Redis Cluster of three masters instead (``tests/server/redis_cluster.py``), killed and
  started again whole.
- ``PostgresDatabase``: a database ``stud_cluster_<random>`` made on the PostgreSQL of
  ``STUD_TEST_POSTGRES_URL`` and dropped at the end (only the one it made).
- ``PausableProxy``: a TCP proxy the nodes reach PostgreSQL through; ``pause()`` freezes it
  (no byte moves either way, new connections hang) as a stopped server would, ``resume()``
  lets everything through again. The machine's shared server is never touched.
- ``Node``: one node process with its own log file (and its lease, 1.5 s unless told);
  ``start``, ``wait_ready`` (``/readyz``), ``kill`` (SIGKILL), ``stop``.
- ``server_cli``: a ``stud-server`` command (``create-operator``...) run to its end.
- ``Cluster``: all of it, migrated once (before any node starts), with an operator; and
  the HTTP and database calls the tests check a cardroom with (accounts, tables, the
  owner of a table, the books, the hands).
- ``Player`` and ``Gate``: a seated ``StudClient`` playing a simple legal policy until told
  to stop, and a way to hold every bot at a chosen point of a hand.

``bench/load.py`` starts its servers with the same parts (redis-server, database, nodes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

import asyncpg
import httpx
from sqlalchemy.engine import URL, make_url

from server.logs import level_of
from stud_bots import passive
from stud_bots.strategies import wager
from stud_client import (
    Action,
    LegalActions,
    StudClient,
    StudError,
    Table,
    TableEvent,
    TableView,
)
from tests.server.redis_cluster import LocalRedisCluster

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]
POSTGRES_URL = os.environ.get(
    "STUD_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/stud_test"
)
OPERATOR = "boss"
PASSWORD = "cluster-tests"
BANKROLL = 10_000
LEASE_SECONDS = 1.5
DB_TIMEOUT_SECONDS = 1.0
NODE_SETTINGS = {
    "STUD_STARTING_BANKROLL": str(BANKROLL),
    # Every node of one cardroom seals its decks with the same key (server/store/deck_seal.py).
    "STUD_DECK_KEY": "c3R1ZC1jbHVzdGVyLWRlY2sta2V5LTMyLWJ5dGVzISE=",
    "STUD_PASSWORD_TIME_COST": "1",
    "STUD_PASSWORD_MEMORY_KIB": "8",
    "STUD_PASSWORD_PARALLELISM": "1",
    "STUD_LOGIN_FAILURES_PER_ADDRESS_PER_MINUTE": "100000",
    "STUD_REGISTER_PER_ADDRESS_PER_MINUTE": "100000",
    "STUD_STARTING_GRANTS_PER_ADDRESS": "100000",
    "STUD_WS_SOCKETS_PER_ADDRESS": "100000",
    "STUD_ACTION_CLOCK_SECONDS": "3",
    "STUD_TIME_BANK_SECONDS": "0",
    "STUD_PAUSE_BETWEEN_HANDS_SECONDS": "0.05",
    "STUD_LEASE_SECONDS": str(LEASE_SECONDS),
    "STUD_DB_TIMEOUT_SECONDS": str(DB_TIMEOUT_SECONDS),
}
# Streets of seven-card stud from which a held hand is "mid-hand" (fourth street dealt).
AFTER_FOURTH = frozenset({"fourth", "fifth", "sixth", "seventh"})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def tail(path: Path, lines: int = 60) -> str:
    if not path.exists():
        return f"({path.name}: no log)"
    text = path.read_text(errors="replace").splitlines()[-lines:]
    return f"----- {path.name} (last {len(text)} lines) -----\n" + "\n".join(text)


def end_process(process: subprocess.Popen[Any], how: signal.Signals, timeout: float = 15) -> None:
    """Send ``how`` (SIGKILL: no goodbye), then wait; kill a process that will not go."""
    process.send_signal(how)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_async(make: Callable[[], Awaitable[T]]) -> T:
    """A coroutine run to the end on a loop of its own, in a thread (callable from sync
    fixtures, whatever loop the test runs on)."""

    async def main() -> T:
        return await make()

    with ThreadPoolExecutor(1) as worker:
        return worker.submit(asyncio.run, main()).result()


async def eventually(
    check: Callable[[], Awaitable[T | None]], timeout: float, what: str, every: float = 0.1
) -> T:
    """Call ``check`` until it returns something other than None or False; that value.
    AssertionError naming ``what`` if it never does in time."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(every)


# ---------------------------------------------------------------------- Redis


class _Process:
    """A child process writing to its own log file: started, stopped (``stop_signal``) or
    killed."""

    stop_signal = signal.SIGTERM

    def __init__(self, log_path: Path) -> None:
        self.port = free_port()
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[Any] | None = None

    def _launch(self, args: list[str], banner: str | None = None, **popen: Any) -> None:
        self._log = self.log_path.open("a")
        if banner is not None:
            self._log.write(banner + "\n")
            self._log.flush()
        self.process = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT, **popen)

    def kill(self) -> None:
        """SIGKILL: no goodbye."""
        self._end(signal.SIGKILL)

    def freeze(self) -> None:
        """SIGSTOP: the process stands still, its sockets open (as a stalled host's would)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        """SIGCONT: it goes on from where it stood, unaware of the time that passed."""
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        self._end(self.stop_signal)

    def _end(self, how: signal.Signals) -> None:
        process, self.process = self.process, None
        if process is not None:
            end_process(process, how)
        if self._log is not None:
            self._log.close()
            self._log = None


class RedisProcess(_Process):
    """A redis-server of the test's own (the machine's shared Redis is never restarted).
    Killed, every key (the leases) is gone with it."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory / "redis.log")
        self.directory = directory

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None, "redis-server is not installed (apt-get install redis-server)"
        self._launch(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
            ]
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ping():
                return
            assert self.process is not None and self.process.poll() is None, tail(self.log_path)
            time.sleep(0.02)
        raise AssertionError(
            f"redis-server did not start on port {self.port}\n" + tail(self.log_path)
        )

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def restart(self) -> None:
        self.kill()
        self.start()


# ---------------------------------------------------------------------- PostgreSQL


class PostgresDatabase:
    """``stud_cluster_<random>`` on the test PostgreSQL: made by ``create``, dropped by
    ``drop`` (which drops nothing it did not make)."""

    def __init__(self, base_url: str = POSTGRES_URL) -> None:
        self.base: URL = make_url(base_url)
        self.name = f"stud_cluster_{secrets.token_hex(4)}"
        self.created = False

    @property
    def host(self) -> str:
        return self.base.host or "127.0.0.1"

    @property
    def port(self) -> int:
        return self.base.port or 5432

    def url(self, *, host: str | None = None, port: int | None = None) -> str:
        """The SQLAlchemy URL of the database (through ``host``:``port`` if given)."""
        url = self.base.set(drivername="postgresql+asyncpg", database=self.name)
        if host is not None:
            url = url.set(host=host, port=port)
        return url.render_as_string(hide_password=False)

    def _dsn(self, database: str | None) -> str:
        url = self.base.set(drivername="postgresql")
        if database is not None:
            url = url.set(database=database)
        return url.render_as_string(hide_password=False)

    async def _admin(self, statement: str) -> None:
        try:
            try:
                connection = await asyncpg.connect(self._dsn(None), timeout=10)
            except asyncpg.InvalidCatalogNameError:  # no stud_test yet: use the default one
                connection = await asyncpg.connect(self._dsn("postgres"), timeout=10)
        except (OSError, asyncpg.PostgresError) as error:
            raise RuntimeError(
                f"PostgreSQL at {self.base.render_as_string()} is not reachable ({error}): "
                "start it, point STUD_TEST_POSTGRES_URL at one, or leave postgresql out of "
                "STUD_TEST_DATABASES"
            ) from error
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    def create(self) -> None:
        run_async(lambda: self._admin(f'CREATE DATABASE "{self.name}"'))
        self.created = True

    def drop(self) -> None:
        if not self.created:
            return
        run_async(lambda: self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'))
        self.created = False

    async def fetch(self, query: str, *args: Any) -> list[asyncpg.Record]:
        """Rows of a query on the database itself (never through the proxy)."""
        connection = await asyncpg.connect(self._dsn(self.name), timeout=10)
        try:
            rows: list[asyncpg.Record] = await connection.fetch(query, *args, timeout=10)
            return rows
        finally:
            await connection.close()


class PausableProxy:
    """A TCP proxy on a free port of 127.0.0.1 in front of ``upstream``, run by an event loop
    in a thread of its own. ``pause()``: from its return no byte moves either way and a new
    connection is accepted but never answered, as if the server were frozen; ``resume()``
    lets everything go on where it stopped."""

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = 0
        self.connections = 0  # accepted so far
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._flowing: asyncio.Event | None = None
        self._serving: set[asyncio.Task[Any]] = set()

    @property
    def paused(self) -> bool:
        return self._flowing is not None and not self._flowing.is_set()

    def start(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="pg-proxy", daemon=True)
        self._thread.start()
        self._call(self._start())

    def pause(self) -> None:
        self._call(self._set_flowing(False))

    def resume(self) -> None:
        self._call(self._set_flowing(True))

    def stop(self) -> None:
        loop, self._loop = self._loop, None
        if loop is None:
            return
        asyncio.run_coroutine_threadsafe(self._stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        assert self._thread is not None
        self._thread.join(10)
        loop.close()

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        assert self._loop is not None, "the proxy is not running"
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(10)

    async def _start(self) -> None:
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _set_flowing(self, flowing: bool) -> None:
        assert self._flowing is not None
        if flowing:
            self._flowing.set()
        else:
            self._flowing.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self._flowing is not None
        task = asyncio.current_task()
        assert task is not None
        self._serving.add(task)
        self.connections += 1
        upstream: asyncio.StreamWriter | None = None
        try:
            await self._flowing.wait()  # a frozen server answers nobody
            up_reader, upstream = await asyncio.open_connection(*self.upstream)
            await asyncio.gather(self._pipe(reader, upstream), self._pipe(up_reader, writer))
        except OSError:
            pass
        finally:
            for end in (writer, upstream):
                if end is not None:
                    end.close()
            self._serving.discard(task)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self._flowing is not None
        try:
            while data := await reader.read(65536):
                await self._flowing.wait()
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()  # the other way ends too: its reader sees the end

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._serving):
            task.cancel()
        await asyncio.gather(*self._serving, return_exceptions=True)
        await self._server.wait_closed()
        for _ in range(3):  # let the closed transports finish closing
            await asyncio.sleep(0)


# ---------------------------------------------------------------------- nodes


class Node(_Process):
    """``python -m server --node-id ID --port P`` with its own log file; stopped as by
    Ctrl-C, killed with no lease given back."""

    stop_signal = signal.SIGINT

    def __init__(
        self,
        node_id: str,
        directory: Path,
        env: Mapping[str, str],
        log_level: str = "info",
        lease_seconds: float | None = None,
        args: Sequence[str] = (),
        module: str = "server",
    ) -> None:
        """``lease_seconds``: the node's lease (None: ``STUD_LEASE_SECONDS`` of ``env``);
        ``args``: more flags (``--workers 2``); ``module``: what ``python -m`` runs (a test's
        own launcher of the server, ``tests.cluster.fault_node``)."""
        super().__init__(directory / f"node-{node_id}.log")
        self.id = node_id
        # Unbuffered, so the log a failed test prints holds everything the node said.
        self.env = {**env, "PYTHONUNBUFFERED": "1"}
        self.lease_seconds = (
            lease_seconds
            if lease_seconds is not None
            else float(self.env.get("STUD_LEASE_SECONDS", LEASE_SECONDS))
        )
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_level = log_level
        self.args = tuple(args)
        self.module = module

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        assert not self.alive, f"node {self.id} runs already"
        self._launch(
            [
                sys.executable,
                "-m",
                self.module,
                "--node-id",
                self.id,
                "--port",
                str(self.port),
                "--lease-seconds",
                str(self.lease_seconds),
                "--log-level",
                self.log_level,
                *self.args,
            ],
            banner=f"===== node {self.id} starting on port {self.port}",
            env=self.env,
            cwd=ROOT,
        )

    def wait_ready(self, timeout: float = 30) -> None:
        """Until ``GET /readyz`` answers 200; the log's tail if the node dies or never does."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            assert self.process is not None and self.process.poll() is None, (
                f"node {self.id} exited with {self.process and self.process.returncode}\n"
                + tail(self.log_path)
            )
            time.sleep(0.05)
        raise AssertionError(f"node {self.id} was not ready in {timeout} s\n" + tail(self.log_path))

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def errors(self) -> list[str]:
        return [
            line
            for line in self.log().splitlines()
            if "Traceback" in line or level_of(line) in ("ERROR", "CRITICAL")
        ]


def server_cli(env: Mapping[str, str], *args: str, stdin: str | None = None) -> str:
    """``stud-server ARGS`` (as ``python -m server``) with ``env``; its output. AssertionError
    with everything it said if it fails."""
    done = subprocess.run(
        [sys.executable, "-m", "server", *args],
        input=stdin,
        text=True,
        env=dict(env),
        cwd=ROOT,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, f"stud-server {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done.stdout


# ---------------------------------------------------------------------- the cluster


@dataclass(frozen=True, slots=True)
class HandRow:
    """A recorded hand of a table (``hands`` table): finished, or cancelled."""

    id: int
    number: int
    cancelled: str | None  # the reason, if cancelled
    events: list[dict[str, Any]]
    chips: tuple[int, int]  # sums of its players' starting and ending chips


class Cluster:
    """Redis, a database behind a pausable proxy, and node processes sharing them."""

    def __init__(
        self,
        directory: Path,
        node_ids: Sequence[str] = ("A", "B"),
        settings: Mapping[str, str] | None = None,
        *,
        redis_cluster: bool = False,
        module: str = "server",
    ) -> None:
        """``settings``: environment of the nodes over ``NODE_SETTINGS``; ``redis_cluster``:
        the nodes share a Redis Cluster of three masters, not one redis-server; ``module``:
        what each node runs (``python -m``)."""
        self.directory = directory
        self.settings = dict(settings or {})
        self.redis: RedisProcess | LocalRedisCluster = (
            LocalRedisCluster(directory / "redis-cluster", log_path=directory / "redis.log")
            if redis_cluster
            else RedisProcess(directory)
        )
        self.database = PostgresDatabase()
        self.proxy = PausableProxy(self.database.host, self.database.port)
        self.node_ids = tuple(node_ids)
        self.module = module
        self.nodes: dict[str, Node] = {}
        self.env: dict[str, str] = {}
        self._operator_token: str | None = None

    # -------------------------------------------------------------- life

    def start(self) -> None:
        self.redis.start()
        self.database.create()
        self.proxy.start()
        self.env = {
            **os.environ,
            **NODE_SETTINGS,
            **self.settings,
            "STUD_DATABASE_URL": self.database.url(host="127.0.0.1", port=self.proxy.port),
            "STUD_REDIS_URL": self.redis.url,
        }
        # Migrate once, before any node starts (a node migrates too, but finds nothing to
        # do): ``create-operator`` upgrades the database first, which spares a ``migrate``
        # process (seconds of imports on a busy machine).
        self.cli("create-operator", OPERATOR, "--password-stdin", stdin=PASSWORD + "\n")
        self.nodes = {
            node_id: Node(node_id, self.directory, self.env, module=self.module)
            for node_id in self.node_ids
        }
        for node in self.nodes.values():
            node.start()
        for node in self.nodes.values():
            node.wait_ready()

    def close(self) -> None:
        """Everything down, the database dropped; each step whatever the others did."""
        steps: list[Callable[[], None]] = [
            *(node.stop for node in self.nodes.values()),
            self.proxy.resume if self.proxy.paused else (lambda: None),
            self.proxy.stop,
            self.redis.stop,
            self.database.drop,
        ]
        failures = []
        for step in steps:
            try:
                step()
            except Exception as error:  # noqa: BLE001 - the others must still run
                failures.append(f"{step}: {error!r}")
        assert not failures, failures

    def cli(self, *args: str, stdin: str | None = None) -> str:
        return server_cli(self.env, *args, stdin=stdin)

    def node(self, node_id: str) -> Node:
        return self.nodes[node_id]

    def alive(self) -> list[Node]:
        return [node for node in self.nodes.values() if node.alive]

    def others(self, node_id: str) -> list[Node]:
        return [node for node in self.nodes.values() if node.id != node_id]

    def logs(self, lines: int = 60) -> str:
        """The tail of every log: for failure messages."""
        paths = [node.log_path for node in self.nodes.values()] + [self.redis.log_path]
        return "\n".join(tail(path, lines) for path in paths)

    # -------------------------------------------------------------- HTTP

    def _via(self, via: Node | str | None) -> Node:
        if isinstance(via, Node):
            return via
        if via is not None:
            return self.nodes[via]
        alive = self.alive()
        assert alive, "no node is running"
        return alive[0]

    async def request(
        self,
        method: str,
        path: str,
        *,
        via: Node | str | None = None,
        token: str | None = None,
        json_body: Any = None,
        expect: int | None = 200,
    ) -> Any:
        node = self._via(via)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx.AsyncClient(base_url=node.url, timeout=15) as http:
            response = await http.request(method, path, json=json_body, headers=headers)
        if expect is not None:
            assert response.status_code == expect, (
                f"{method} {path} on node {node.id}: {response.status_code} {response.text}"
            )
        return response.json() if response.content else None

    async def register(self, name: str, *, via: Node | str | None = None) -> str:
        """A new player account (granted the bankroll); its token."""
        await self.request(
            "POST",
            "/auth/register",
            via=via,
            expect=201,
            json_body={"username": name, "password": PASSWORD},
        )
        return await self.login(name, via=via)

    async def login(
        self, name: str, password: str = PASSWORD, *, via: Node | str | None = None
    ) -> str:
        body = await self.request(
            "POST", "/auth/login", via=via, json_body={"username": name, "password": password}
        )
        return str(body["access_token"])

    async def operator_token(self) -> str:
        if self._operator_token is None:
            self._operator_token = await self.login(OPERATOR)
        return self._operator_token

    async def open_table(
        self,
        name: str,
        config: Mapping[str, Any],
        *,
        seats: int,
        via: Node | str | None = None,
        **limits: int,
    ) -> int:
        """``POST /admin/tables``; the new table's id."""
        body = await self.request(
            "POST",
            "/admin/tables",
            via=via,
            token=await self.operator_token(),
            expect=201,
            json_body={"name": name, "config": dict(config), "seats": seats, **limits},
        )
        return int(body["id"])

    async def lobby(self, *, via: Node | str | None = None) -> list[dict[str, Any]]:
        tables: list[dict[str, Any]] = await self.request("GET", "/tables", via=via)
        return tables

    async def owner(self, table_id: int, *, via: Node | str | None = None) -> str | None:
        """The node that runs the table, as ``GET /tables`` on ``via`` says (its ``node``)."""
        for entry in await self.lobby(via=via):
            if entry["id"] == table_id:
                node = entry.get("node")
                return None if node is None else str(node)
        raise AssertionError(f"GET /tables on {self._via(via).id} does not list table {table_id}")

    async def books(self, *, via: Node | str | None = None) -> dict[str, Any]:
        books: dict[str, Any] = await self.request(
            "GET", "/admin/books", via=via, token=await self.operator_token()
        )
        return books

    async def wallet(self, token: str, *, via: Node | str | None = None) -> int:
        return int((await self.request("GET", "/wallet", via=via, token=token))["balance"])

    async def snapshot(self, table_id: int, *, via: Node | str | None = None) -> TableView:
        """A fresh spectator's view of the table through ``via``: its snapshot."""
        async with StudClient(self._via(via).url, heartbeat=None) as spectator:
            await spectator.connect()
            table = await spectator.watch(table_id)
            return table.view

    # -------------------------------------------------------------- the database

    async def hands(self, table_id: int) -> list[HandRow]:
        """Every recorded hand of the table, by number (read from the database itself)."""
        rows = await self.database.fetch(
            "SELECT h.id, h.number, h.result, h.events, "
            "COALESCE(SUM(p.starting), 0) AS starting, COALESCE(SUM(p.ending), 0) AS ending "
            "FROM hands h LEFT JOIN hand_players p ON p.hand_id = h.id "
            "WHERE h.table_id = $1 GROUP BY h.id ORDER BY h.number, h.id",
            table_id,
        )
        hands = []
        for row in rows:
            result = _json(row["result"])
            cancelled = result.get("cancelled") if isinstance(result, dict) else None
            hands.append(
                HandRow(
                    id=row["id"],
                    number=row["number"],
                    cancelled=None if not cancelled else str(cancelled),
                    events=list(_json(row["events"])),
                    chips=(int(row["starting"]), int(row["ending"])),
                )
            )
        return hands

    async def finished_hands(self, table_id: int) -> list[int]:
        return [hand.number for hand in await self.hands(table_id) if hand.cancelled is None]


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


# ---------------------------------------------------------------------- players


class Gate:
    """Holds every bot, on its turn, once the hand has reached one of ``streets``: the hand
    stays where it is (on the action clock) while a test breaks something under it."""

    def __init__(self) -> None:
        self.streets: frozenset[str] = frozenset()
        self.reached = asyncio.Event()
        self.view: TableView | None = None  # the held bot's view
        self._open = asyncio.Event()
        self._open.set()

    def arm(self, streets: Iterable[str] = AFTER_FOURTH) -> None:
        self.streets = frozenset(streets)
        self.reached.clear()
        self.view = None
        self._open.clear()

    def release(self) -> None:
        self.streets = frozenset()
        self._open.set()

    async def pass_(self, view: TableView) -> None:
        """Called by a bot about to act: waits while the gate holds this point."""
        if not self._open.is_set() and view.street in self.streets:
            if self.view is None:
                self.view = view
            self.reached.set()
            await self._open.wait()


def player_client(node: Node, fallbacks: Sequence[Node], token: str) -> StudClient:
    """A client as the players of these tests have: quick heartbeats and reconnects."""
    return StudClient(
        node.url,
        fallback_urls=[n.url for n in fallbacks],
        token=token,
        heartbeat=1.0,
        request_timeout=5.0,
        backoff=(0.05, 0.5),
    )


def choose(legal: LegalActions, rng: random.Random) -> Action:
    """Check or call mostly; now and then the least bet or raise; rarely a fold."""
    roll = rng.random()
    if legal.wager is not None and legal.wager in legal.kinds and roll < 0.12:
        return wager(legal, low=True)
    if "fold" in legal.kinds and "check" not in legal.kinds and roll > 0.96:
        return Action("fold")
    return passive(legal)


@dataclass
class Player:
    """A seated client playing ``choose`` on every turn until ``stop``; then it sits out
    (after the hand it is in) and returns."""

    name: str
    token: str
    node: str  # the node it connected to first
    client: StudClient
    table: Table
    gate: Gate
    rng: random.Random
    buy_in: int
    stopping: bool = False
    policy: Callable[[LegalActions, random.Random], Action] = choose  # what it does on its turn
    failures: Counter[str] = field(default_factory=Counter)  # commands that failed, by code
    seen: list[TableEvent] = field(default_factory=list)  # events outside the hands
    acted_at: list[float] = field(default_factory=list)  # when each action reached it
    _watcher: asyncio.Task[None] | None = None

    @classmethod
    async def join(
        cls,
        cluster: Cluster,
        name: str,
        node: Node,
        fallbacks: Sequence[Node],
        table_id: int,
        gate: Gate,
        *,
        buy_in: int,
        seed: int,
        token: str | None = None,
        client: StudClient | None = None,
    ) -> Player:
        """A new account (or ``token``'s) seated at the table, on a new connection (or on
        ``client``, connected with ``token``)."""
        if token is None:
            token = await cluster.register(name, via=node)
        if client is None:
            client = player_client(node, fallbacks, token)
            await client.connect()
        table = await client.watch(table_id)
        player = cls(name, token, node.id, client, table, gate, random.Random(seed), buy_in)
        player._watcher = asyncio.create_task(player._watch(), name=f"watch-{name}")
        await table.sit(buy_in)
        return player

    async def _watch(self) -> None:
        stream = self.table.events()
        try:
            async for event in stream:
                if event.kind == "action":
                    self.acted_at.append(time.monotonic())
                if event.kind in (
                    "table_paused",
                    "table_unpaused",
                    "table_resumed",
                    "hand_cancelled",
                    "table_restarted",
                    "snapshot",
                ):
                    self.seen.append(event)
        finally:
            await stream.aclose()

    def first_action_after(self, moment: float) -> float | None:
        """When the first action after ``moment`` (monotonic) reached this player."""
        return next((at for at in self.acted_at if at > moment), None)

    def kinds_seen(self) -> list[str]:
        return [event.kind for event in self.seen]

    def _done(self, view: TableView) -> bool:
        me = view.me
        return self.stopping and (
            me is None
            or (me.sitting_out and (not me.in_hand or view.hand_over or view.hand_number is None))
        )

    async def play(self) -> None:
        acted: int | None = None  # the turn acted on
        asked_out = False
        next_sit_in = 0.0

        def wanted(view: TableView) -> bool:
            return (
                self._done(view)
                or (view.my_turn and view.turn_seq != acted)
                or (view.me is not None and view.me.sitting_out and not self.stopping)
            )

        while True:
            if self.stopping and not asked_out:
                asked_out = await self._try(self.table.sit_out(next_hand=True)) is not None
            try:
                view = await self.table.wait_for(wanted, 0.5)
            except TimeoutError:
                me = self.table.view.me
                if (
                    self.stopping
                    and me is not None
                    and not (me.sitting_out or me.sit_out_next_hand)
                ):
                    # The table does not show the sit-out asked for (a node that took the
                    # table over had not heard of it): ask again.
                    asked_out = False
                continue
            if self._done(view):
                return
            me = view.me
            if me is not None and me.sitting_out and not self.stopping:
                if time.monotonic() >= next_sit_in:  # sat out: broke, or by a restart
                    next_sit_in = time.monotonic() + 1.0
                    if me.stack + me.pending_chips < view.stakes.needed_to_play:
                        await self._try(self.table.add_chips(self.buy_in))
                    await self._try(self.table.sit_in())
                else:
                    await asyncio.sleep(0.1)
                continue
            if view.my_turn and view.turn_seq != acted and view.legal is not None:
                await self.gate.pass_(view)
                if await self._try(self.table.act(self.policy(view.legal, self.rng))) is not None:
                    acted = view.turn_seq
                else:
                    await asyncio.sleep(0.2)  # the table may be changing hands: look again

    async def _try(self, command: Awaitable[T]) -> T | None:
        """The command's answer, or None if it failed (counted by code)."""
        try:
            return await command
        except StudError as error:
            self.failures[getattr(error, "code", type(error).__name__)] += 1
            return None
        except TimeoutError:
            self.failures["timeout"] += 1
            return None

    async def close(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            await asyncio.gather(self._watcher, return_exceptions=True)
        await self.client.close()


def table_state(view: TableView) -> tuple[Any, ...]:
    """What every client of a quiet table, and a fresh snapshot of it, must agree on: the
    sequence and every seat's player, stack, chips waiting and sitting out. (Not the hand
    number: a snapshot between hands has none, a client keeps the last one it saw.)"""
    return (
        view.seq,
        tuple((s.seat, s.player, s.stack, s.pending_chips, s.sitting_out) for s in view.seats),
    )
