"""Fixtures of the cluster tests: a fresh cardroom of two node processes (``A``, ``B``) on a
Redis and a PostgreSQL database of the test's own (see ``cluster_harness``). The Redis is one
redis-server, or a Redis Cluster of three masters where a module parametrizes ``redis_kind``
(``test_failover``, ``test_node_spread``: every scenario on both).

They need PostgreSQL (``STUD_TEST_POSTGRES_URL``) and the ``redis-server`` binary, and fail
loudly without them, as the server tests do; leaving ``postgresql`` out of
``STUD_TEST_DATABASES`` skips them on purpose. ``-m "not cluster"`` leaves them out.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from cluster_harness import Cluster


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "cluster: starts node processes, a redis-server and a PostgreSQL database"
    )
    config.addinivalue_line(
        "markers", "node_settings(settings): the nodes' environment over NODE_SETTINGS"
    )


DATABASES = [
    name.strip() for name in os.environ.get("STUD_TEST_DATABASES", "sqlite,postgresql").split(",")
]
FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call":
        item.stash[FAILED] = report.failed
    return report


@pytest.fixture
def wants_postgresql() -> None:
    """Every cardroom here runs on PostgreSQL: left out only when asked to (the README)."""
    if "postgresql" not in DATABASES:
        pytest.skip("STUD_TEST_DATABASES leaves PostgreSQL out")


@pytest.fixture
def redis_kind() -> str:
    """The nodes' Redis: ``redis`` (one redis-server) unless a module parametrizes it with
    ``cluster`` too (a Redis Cluster of three masters)."""
    return "redis"


@pytest.fixture
def cluster(
    tmp_path: Path, request: pytest.FixtureRequest, wants_postgresql: None, redis_kind: str
) -> Iterator[Cluster]:
    """Nodes A and B, ready, each with its own log under the test's tmp_path; every log's
    tail is printed when the test fails. A test's ``node_settings`` mark changes the nodes'
    settings."""
    marked = request.node.get_closest_marker("node_settings")
    cluster = Cluster(
        tmp_path,
        settings=marked.args[0] if marked else None,
        redis_cluster=redis_kind == "cluster",
    )
    try:
        cluster.start()
        yield cluster
    except BaseException:
        print(cluster.logs())
        raise
    finally:
        if request.node.stash.get(FAILED, False):
            print(cluster.logs())
        cluster.close()
