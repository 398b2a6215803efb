"""``stud-server --workers 2``: two node processes behind one port, on a PostgreSQL database and
a Redis of the test's own (``cluster_harness``, migrated once by ``create-operator``).

- new connections land on both workers (``/readyz`` names the worker that answered);
- two players, each connected to a different worker, play hands at one table to the end (the
  commands of the one not on the table's worker travel over Redis);
- a worker killed (kill -9) is started again by the parent, its table resumes on a worker,
  play goes on, and the books balance (``GET /admin/books`` and ``stud-server audit``);
- a worker stopped (SIGSTOP: alive, answering nothing) loses its table to the other worker
  within the lease, and the parent's watchdog kills it once its heartbeat is older than
  ``STUD_WORKER_WATCHDOG_SECONDS`` and starts it again;
- SIGTERM to the parent stops every worker and the parent exits 0.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cluster_harness import (
    LEASE_SECONDS,
    Cluster,
    Gate,
    Node,
    Player,
    eventually,
    player_client,
    tail,
)
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.cluster

WORKERS = ("W-w1", "W-w2")
CONFIG = {"variant": "seven_card_stud", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10}
BUY_IN = 200
# Two processes of a busy machine share a core with the test: room for slow answers.
SETTINGS = {"STUD_DB_TIMEOUT_SECONDS": "5"}
STARTED = re.compile(r"worker (\S+) started \(pid (\d+)\)")


@pytest.fixture
def room(
    tmp_path: Path, request: pytest.FixtureRequest, wants_postgresql: None
) -> Iterator[tuple[Cluster, Node]]:
    """A cardroom with no node of its own, and ``stud-server --workers 2 --node-id W`` on it;
    the logs' tails are printed when the test fails."""
    marked = request.node.get_closest_marker("node_settings")
    cluster = Cluster(
        tmp_path, node_ids=(), settings={**SETTINGS, **(marked.args[0] if marked else {})}
    )
    failures = request.session.testsfailed
    try:
        cluster.start()
        server = Node("W", tmp_path, cluster.env, args=("--workers", "2"))
        cluster.nodes[server.id] = server
        server.start()
        server.wait_ready(60)
        yield cluster, server
    except BaseException:
        print(cluster.logs(200))
        raise
    finally:
        if request.session.testsfailed > failures:
            print(cluster.logs(200))
        cluster.close()


def worker_pids(server: Node) -> dict[str, int]:
    """Each worker's latest process, as the parent's log says."""
    return {node: int(pid) for node, pid in STARTED.findall(server.log())}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def readyz_nodes(server: Node, tries: int) -> set[str]:
    """The workers that answered ``tries`` new connections to ``/readyz``."""
    seen = set()
    for _ in range(tries):
        async with httpx.AsyncClient(timeout=10) as http:  # a new connection each time
            answer = await http.get(f"{server.url}/readyz")
        assert answer.status_code == 200, answer.text
        seen.add(answer.json()["checks"]["node"])
    return seen


async def connections(server: Node) -> dict[str, int]:
    """Each worker's open websockets, from its own ``/metrics`` (new connections until both
    workers have answered)."""
    found: dict[str, int] = {}
    for _ in range(200):
        async with httpx.AsyncClient(timeout=10) as http:
            text = (await http.get(f"{server.url}/metrics")).text
        node = count = None
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == "stud_node":
                    node = sample.labels["node"]
                elif sample.name == "stud_websocket_connections":
                    count = int(sample.value)
        assert node is not None and count is not None, text
        found[node] = count
        if len(found) == len(WORKERS):
            return found
    raise AssertionError(f"the metrics of {set(WORKERS) - set(found)} never answered")


async def seat_on(
    cluster: Cluster, server: Node, name: str, worker: str, table_id: int, gate: Gate, seed: int
) -> Player:
    """A new player whose websocket is on ``worker``, seated at the table: connections are
    made (and dropped) until the kernel gives one to that worker."""
    token = await cluster.register(name, via=server)
    for _ in range(30):
        before = await connections(server)
        client = player_client(server, [], token)
        await client.connect()
        after = await eventually(
            functools.partial(_changed, server, before),
            20,
            f"{name}'s websocket counted by a worker",
        )
        if after[worker] == before[worker] + 1:
            joined = Player.join(
                cluster,
                name,
                server,
                [],
                table_id,
                gate,
                buy_in=BUY_IN,
                seed=seed,
                token=token,
                client=client,
            )
            return await joined
        await client.close()
        await eventually(
            functools.partial(_same, server, before), 20, f"{name}'s dropped websocket uncounted"
        )
    raise AssertionError(f"30 connections, none on {worker}")


async def _changed(server: Node, before: dict[str, int]) -> dict[str, int] | None:
    now = await connections(server)
    return now if sum(now.values()) == sum(before.values()) + 1 else None


async def _same(server: Node, before: dict[str, int]) -> bool:
    return await connections(server) == before


async def started_again(server: Node, worker: str, old_pid: int) -> bool:
    """The worker runs again in a new process, which serves (its second time)."""
    pid = worker_pids(server).get(worker)
    serving = server.log().count(f"worker {worker} serves") == 2
    return pid is not None and pid != old_pid and alive(pid) and serving


async def finished(cluster: Cluster, table_id: int, count: int) -> bool:
    return len(await cluster.finished_hands(table_id)) >= count


async def stop_playing(players: list[Player], tasks: list[asyncio.Task[None]]) -> None:
    for player in players:
        player.stopping = True
    async with asyncio.timeout(60):
        await asyncio.gather(*tasks)


async def close(players: list[Player], tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for player in players:
        await player.close()


async def test_two_workers_share_the_port_and_a_table_then_stop_on_sigterm(
    room: tuple[Cluster, Node],
) -> None:
    cluster, server = room
    # Kernel-spread new connections: both workers answer within a few dozen.
    assert await readyz_nodes(server, 40) == set(WORKERS)

    table_id = await cluster.open_table("across", CONFIG, seats=2, via=server)
    gate = Gate()
    players = [
        await seat_on(cluster, server, f"player{n}", worker, table_id, gate, seed=n)
        for n, worker in enumerate(WORKERS)
    ]
    tasks = [asyncio.create_task(p.play()) for p in players]
    try:
        await eventually(lambda: finished(cluster, table_id, 2), 60, "two hands finished")
        await stop_playing(players, tasks)
        owner = await cluster.owner(table_id, via=server)
        assert owner in WORKERS  # the other player's commands crossed over Redis
        hands = await cluster.hands(table_id)
        assert [h.number for h in hands] == list(range(1, len(hands) + 1))
        assert all(h.cancelled is None and h.chips[0] == h.chips[1] for h in hands), hands
        assert all(not p.failures for p in players), [p.failures for p in players]
        books = await cluster.books(via=server)
        assert books["balanced"], books
    finally:
        await close(players, tasks)

    pids = worker_pids(server)
    assert sorted(pids) == list(WORKERS) and all(alive(pid) for pid in pids.values())
    process = server.process
    assert process is not None
    process.send_signal(signal.SIGTERM)
    assert process.wait(60) == 0, tail(server.log_path)
    server.process = None
    assert not any(alive(pid) for pid in pids.values())
    log = server.log()
    assert "every worker stopped" in log and "did not stop in time" not in log
    assert log.count("Application shutdown complete") == len(WORKERS)
    assert not server.errors(), tail(server.log_path)
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{server.url}/healthz", timeout=2)


async def test_a_killed_worker_is_started_again_and_its_table_resumes(
    room: tuple[Cluster, Node],
) -> None:
    cluster, server = room
    table_id = await cluster.open_table("survivor", CONFIG, seats=2, via=server)
    gate = Gate()
    players = [
        await seat_on(cluster, server, f"killed{n}", worker, table_id, gate, seed=n)
        for n, worker in enumerate(WORKERS)
    ]
    tasks = [asyncio.create_task(p.play()) for p in players]
    try:
        await eventually(lambda: finished(cluster, table_id, 1), 60, "a hand finished")
        owner = await cluster.owner(table_id, via=server)
        assert owner in WORKERS
        killed = worker_pids(server)[owner]
        os.kill(killed, signal.SIGKILL)
        done = len(await cluster.finished_hands(table_id))

        await eventually(
            lambda: started_again(server, owner, killed), 60, f"worker {owner} started again"
        )
        assert not alive(killed)
        await eventually(
            lambda: finished(cluster, table_id, done + 2), 60, "two more hands after the kill"
        )
        assert await readyz_nodes(server, 40) == set(WORKERS)  # both serve again
        await stop_playing(players, tasks)
        hands = await cluster.hands(table_id)
        assert [h.number for h in hands] == list(range(1, len(hands) + 1))
        assert all(h.chips[0] == h.chips[1] for h in hands), hands
        books = await cluster.books(via=server)
        assert books["balanced"], books
        assert "the books balance" in cluster.cli("audit")
    finally:
        await close(players, tasks)
    log = server.log()
    assert f"worker {owner} (pid {killed}) died with status -9" in log
    assert log.count(f"worker {owner} serves") == 2


WATCHDOG_SECONDS = 3.0
# The table runs on the other worker within the lease (and a round); a loaded machine's
# slowness aside: a gross bound, as for a node's kill -9 (tests/cluster/test_failover.py).
TAKEN_WITHIN_SECONDS = 2 * LEASE_SECONDS + 4


@pytest.mark.node_settings({"STUD_WORKER_WATCHDOG_SECONDS": str(WATCHDOG_SECONDS)})
async def test_a_stopped_worker_loses_its_table_and_the_watchdog_starts_it_again(
    room: tuple[Cluster, Node],
) -> None:
    cluster, server = room
    table_id = await cluster.open_table("frozen", CONFIG, seats=2, via=server)
    gate = Gate()
    players = [
        await seat_on(cluster, server, f"frozen{n}", worker, table_id, gate, seed=n)
        for n, worker in enumerate(WORKERS)
    ]
    tasks = [asyncio.create_task(p.play()) for p in players]
    try:
        await eventually(lambda: finished(cluster, table_id, 1), 60, "a hand finished")
        owner = await cluster.owner(table_id, via=server)
        assert owner in WORKERS
        other = next(w for w in WORKERS if w != owner)
        stopped = worker_pids(server)[owner]
        done = len(await cluster.finished_hands(table_id))
        stopped_at = time.monotonic()
        os.kill(stopped, signal.SIGSTOP)

        async def taken_over() -> bool:
            try:
                return await cluster.owner(table_id, via=server) == other
            except httpx.TransportError:  # the kernel gave the connection to the stopped one
                return False

        await eventually(taken_over, TAKEN_WITHIN_SECONDS, f"worker {other} runs the table")
        taken_after = time.monotonic() - stopped_at

        await eventually(
            lambda: started_again(server, owner, stopped),
            60,
            f"worker {owner} killed by the watchdog, started again",
        )
        assert not alive(stopped)
        await eventually(
            lambda: finished(cluster, table_id, done + 2), 60, "two more hands after the stop"
        )
        await stop_playing(players, tasks)
        hands = await cluster.hands(table_id)
        assert [h.number for h in hands] == list(range(1, len(hands) + 1))
        assert all(h.chips[0] == h.chips[1] for h in hands), hands
        books = await cluster.books(via=server)
        assert books["balanced"], books
    finally:
        await close(players, tasks)
    log = server.log()
    assert f"worker {owner} (pid {stopped}) has not beaten its heartbeat" in log
    assert f"worker {owner} (pid {stopped}) died with status -9" in log
    print(f"the table ran on worker {other} {taken_after:.1f} s after the stop")
