"""The real services the server tests run on: SQLite and PostgreSQL, memory and Redis.

Every test that takes the ``database_url`` fixture (through ``settings``, ``engine``,
``session``, ``app``...) runs once per database of ``STUD_TEST_DATABASES`` (default
``sqlite,postgresql``). On PostgreSQL the run makes one database, migrates it once, and
empties it back to its migrated state before each test (``PostgresServer.fresh``). A
missing service fails the tests that need it, loudly: leave ``postgresql`` out of
``STUD_TEST_DATABASES`` (or set ``STUD_TEST_REDIS_URL`` empty) to run without it on purpose.

- ``STUD_TEST_POSTGRES_URL``: the database the tests connect to, to make theirs (default
  ``postgresql+asyncpg://postgres@127.0.0.1:5432/stud_test``, made if missing); a run's own
  databases are named ``stud_test_<run>_<n>`` and dropped at its end.
- ``STUD_TEST_REDIS_URL``: the Redis of the bus tests (default ``redis://127.0.0.1:6379/0``);
  each test keeps to a channel prefix of its own.

Every test that takes the ``redis_base`` fixture runs twice: on that Redis (``[redis]``), and
on a Redis Cluster of three masters the run starts itself (``[cluster]``: ``redis_cluster``,
``redis_cluster.py``; it needs only the ``redis-server`` and ``redis-cli`` binaries), the bus
on sharded pub/sub and the leases spread over the masters.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import secrets
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import pytest
import redis
import redis.asyncio
from redis_cluster import LocalRedisCluster, free_port
from sqlalchemy import pool
from sqlalchemy.engine import make_url

from server.bus.redis_url import split_url
from server.db import migrate
from server.db.models import Base
from server.db.session import make_engine

T = TypeVar("T")
# The fixtures conftest takes in.
__all__ = ["database_url", "postgres_server", "redis_available", "redis_base", "redis_cluster"]

DATABASES = [
    name.strip()
    for name in os.environ.get("STUD_TEST_DATABASES", "sqlite,postgresql").split(",")
    if name.strip()
]
POSTGRES_URL = os.environ.get(
    "STUD_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/stud_test"
)
REDIS_URL = os.environ.get("STUD_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
REDIS_BACKENDS = ["redis", "cluster"]  # see redis_base

needs_postgresql = pytest.mark.skipif(
    "postgresql" not in DATABASES, reason="STUD_TEST_DATABASES leaves PostgreSQL out"
)
needs_redis = pytest.mark.skipif(not REDIS_URL, reason="STUD_TEST_REDIS_URL is empty")


def run_async(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to the end on a loop of its own, in a thread: callable from sync
    fixtures whatever loop the test itself runs on."""

    async def main() -> T:
        return await make()

    with ThreadPoolExecutor(1) as worker:
        return worker.submit(asyncio.run, main()).result()


# ---------------------------------------------------------------------- PostgreSQL


class PostgresServer:
    """Databases made (and dropped) by this test run only: all named ``stud_test_<run>_*``."""

    def __init__(self, url: str) -> None:
        self.url = make_url(url)
        self.run = f"stud_test_{secrets.token_hex(4)}"
        self._numbers = itertools.count(1)
        self._shared: str | None = None  # the run's migrated database (see fresh)
        self._seed: list[tuple[str, list[str], list[tuple[Any, ...]]]] = []
        self._serials: list[tuple[str, str]] = []
        self._made: set[str] = set()
        self._lock = threading.Lock()

    def url_of(self, database: str) -> str:
        return self.url.set(database=database).render_as_string(hide_password=False)

    def _dsn(self, database: str | None = None) -> str:
        """The URL as asyncpg reads it (no ``+asyncpg``)."""
        url = self.url.set(drivername="postgresql")
        if database is not None:
            url = url.set(database=database)
        return url.render_as_string(hide_password=False)

    async def _admin(self, *statements: str) -> None:
        try:
            try:
                connection = await asyncpg.connect(self._dsn(), timeout=10)
            except asyncpg.InvalidCatalogNameError:
                # No test database yet (.ci/run makes it): make it from the default one.
                maker = await asyncpg.connect(self._dsn("postgres"), timeout=10)
                try:
                    await maker.execute(f'CREATE DATABASE "{self.url.database}"')
                finally:
                    await maker.close()
                connection = await asyncpg.connect(self._dsn(), timeout=10)
        except (OSError, asyncpg.PostgresError) as error:
            raise RuntimeError(
                f"PostgreSQL at {self.url.render_as_string()} is not reachable ({error}): start "
                "it, point STUD_TEST_POSTGRES_URL at one, or leave postgresql out of "
                "STUD_TEST_DATABASES"
            ) from error
        try:
            for statement in statements:
                await connection.execute(statement)
        finally:
            await connection.close()

    def create(self) -> str:
        """A new empty database; its name."""
        name = f"{self.run}_{next(self._numbers)}"
        run_async(lambda: self._admin(f'CREATE DATABASE "{name}"'))
        self._made.add(name)
        return name

    def drop(self, name: str) -> None:
        assert name in self._made, f"{name} is not ours to drop"
        run_async(lambda: self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        self._made.discard(name)

    def fresh(self) -> str:
        """The URL of the run's migrated database, emptied back to what the migrations left.

        One database a run, migrated once; before each test every table is emptied, the
        migrations' own rows (the house wallet) put back and the id sequences restarted:
        milliseconds, where a ``CREATE DATABASE`` a test took a few hundred.
        """
        with self._lock:
            if self._shared is None:
                name = self.create()
                run_async(lambda: self._migrate(name))
                self._shared = name
        run_async(lambda: self._reset(self._shared or ""))
        return self.url_of(self._shared)

    async def _migrate(self, name: str) -> None:
        engine = make_engine(self.url_of(name), poolclass=pool.NullPool)
        try:
            await migrate.upgrade(engine)
        finally:
            await engine.dispose()
        connection = await asyncpg.connect(self._dsn(name), timeout=10)
        try:
            for table in Base.metadata.sorted_tables:
                rows = await connection.fetch(f"SELECT * FROM {table.name}")
                if rows:
                    self._seed.append((table.name, list(rows[0].keys()), [tuple(r) for r in rows]))
            self._serials = [
                (row["table_name"], row["column_name"])
                for row in await connection.fetch(
                    "SELECT table_name, column_name FROM information_schema.columns "
                    "WHERE table_schema = current_schema() AND table_name <> 'alembic_version' "
                    "AND (column_default LIKE 'nextval(%' OR is_identity = 'YES')"
                )
            ]
        finally:
            await connection.close()

    async def _reset(self, name: str) -> None:
        connection = await asyncpg.connect(self._dsn(name), timeout=10)
        try:
            # A connection the last test left open must not hold a lock on a table.
            await connection.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            async with connection.transaction():
                for table in reversed(Base.metadata.sorted_tables):
                    await connection.execute(f"DELETE FROM {table.name}")
                for table_name, columns, rows in self._seed:
                    await connection.copy_records_to_table(
                        table_name, records=rows, columns=columns
                    )
                for table_name, column in self._serials:
                    await connection.execute(
                        f"SELECT setval(pg_get_serial_sequence('{table_name}', '{column}'), "
                        f"COALESCE(MAX({column}), 0) + 1, false) FROM {table_name}"
                    )
        finally:
            await connection.close()

    def drop_all(self) -> None:
        for name in sorted(self._made):
            with contextlib.suppress(Exception):
                self.drop(name)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The run's PostgreSQL server; every database the run made is dropped at its end."""
    server = PostgresServer(POSTGRES_URL)
    try:
        yield server
    finally:
        server.drop_all()


@pytest.fixture(params=DATABASES)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database for one test: a SQLite file, or a migrated PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'stud.db'}"
        return
    assert request.param == "postgresql", f"no test database {request.param!r}"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    yield server.fresh()


# ---------------------------------------------------------------------- Redis


@pytest.fixture(scope="session")
def redis_available() -> str:
    """The test Redis, checked once: a missing Redis fails its tests with this message."""
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=5)
    try:
        client.ping()
    except redis.RedisError as error:
        raise RuntimeError(
            f"Redis at {REDIS_URL} is not reachable ({error}): start it, point "
            "STUD_TEST_REDIS_URL at one, or set it empty to leave the Redis tests out"
        ) from error
    finally:
        client.close()
    return REDIS_URL


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRedisCluster]:
    """The run's Redis Cluster (three masters, no replicas), started when a test first asks
    for it and stopped at the run's end. Tests keep apart by channel prefix, as on one Redis."""
    cluster = LocalRedisCluster(tmp_path_factory.mktemp("redis-cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(params=REDIS_BACKENDS)
def redis_base(request: pytest.FixtureRequest) -> str:
    """The URL of the Redis a test's bus and leases run on (give it to ``redis_url``), once
    per backend: the machine's Redis, then the run's Redis Cluster (``?cluster=yes``)."""
    if request.param == "redis":
        url: str = request.getfixturevalue("redis_available")
        return url
    assert request.param == "cluster", f"no Redis backend {request.param!r}"
    cluster: LocalRedisCluster = request.getfixturevalue("redis_cluster")
    return cluster.url


def redis_prefix() -> str:
    return f"stud-test-{secrets.token_hex(4)}:"


def redis_url(base: str = REDIS_URL, prefix: str | None = None) -> str:
    """``base`` with a channel prefix (a new one by default): tests sharing one Redis never
    hear each other."""
    return f"{base}{'&' if '?' in base else '?'}channel_prefix={prefix or redis_prefix()}"


async def redis_subscribers(prefix: str, *channels: str, url: str = REDIS_URL) -> list[int]:
    """How many Redis connections listen to each of these channels of a bus on ``prefix``
    (PUBSUB NUMSUB; on a cluster PUBSUB SHARDNUMSUB, asked of each channel's master)."""
    target = split_url(url)
    names = [prefix + channel for channel in channels]
    if not target.cluster:
        client = redis.asyncio.Redis.from_url(target.url)
        try:
            return [int(count) for _, count in await client.pubsub_numsub(*names)]
        finally:
            await client.aclose()
    cluster = redis.asyncio.RedisCluster.from_url(target.url)
    try:
        await cluster.initialize()
        counts = []
        for name in names:
            master = cluster.get_node_from_key(name)
            ((_, count),) = await cluster.execute_command(
                "PUBSUB SHARDNUMSUB", name, target_nodes=master
            )
            counts.append(int(count))
        return counts
    finally:
        await cluster.aclose()


async def until_subscribers(
    prefix: str, channel: str, count: int, *, url: str = REDIS_URL, timeout: float = 10.0
) -> None:
    """Until Redis counts ``count`` connections listening to ``channel`` (a SUBSCRIBE or an
    UNSUBSCRIBE, or a connection's end, has reached it), polling PUBSUB NUMSUB."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (found := (await redis_subscribers(prefix, channel, url=url))[0]) != count:
        assert loop.time() < deadline, f"Redis counts {found} listening to {channel}, not {count}"
        await asyncio.sleep(0.01)


class RedisServer:
    """A redis-server of the test's own on a free port, to stop and start at will (the
    machine's shared Redis is never restarted)."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None, "redis-server is not installed (apt-get install redis-server)"
        self.process = subprocess.Popen(
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
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2),
            ):
                return
            time.sleep(0.02)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None

    def command(self, *args: Any) -> str:
        return subprocess.run(
            ["redis-cli", "-p", str(self.port), *map(str, args)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
