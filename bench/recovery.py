"""How long play stops when the node running a table dies: kill -9 mid-hand, until the next
action reaches every player.

Each fault starts the cluster of ``tests/cluster`` afresh (two node processes, their own
Redis, a PostgreSQL database of its own) with the production lease (``--lease-seconds``, 5 s
by default), opens a table, seats four players (two on each node, each with the other node as its
fallback), plays two hands, holds the next once fourth street is dealt, then kills the node
running it (``kill -9``) and lets play go on. It reports, from the kill:

- ``taken``: when the surviving node says it runs the table (polled every 50 ms);
- ``resumed``: when the first action after the kill has reached every player;

then starts the killed node again and checks what the cluster tests check (the held hand
finished, not voided; hands numbered without a gap; every chip accounted for). The target is
``resumed`` within the lease and two seconds.

    python bench/recovery.py [--faults 6] [--lease-seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "cluster")]

from cluster_harness import Cluster  # noqa: E402
from test_failover import play_and_break  # noqa: E402


async def fault(cluster: Cluster, lease: float) -> tuple[float, float, str]:
    """One kill -9 of the node running a fresh table, at a moment drawn over a lease round
    (how long before the kill the node last renewed its leases varies from fault to fault):
    (taken, resumed, node killed)."""
    taken: list[float] = []
    killed: list[str] = []

    async def kill_owner(
        cluster: Cluster, table_id: int, owner: str, release: Callable[[], None]
    ) -> float:
        await asyncio.sleep(random.uniform(0, lease / 3))
        killed_at = time.monotonic()
        cluster.node(owner).kill()
        release()
        survivor = cluster.others(owner)[0]
        killed.append(owner)
        while await cluster.owner(table_id, via=survivor) != survivor.id:
            await asyncio.sleep(0.05)
        taken.append(time.monotonic() - killed_at)
        return killed_at

    played = await play_and_break(cluster, kill_owner, restart_owner=True)
    assert played.resumed is not None
    return taken[0], played.resumed, killed[0]


async def main(options: argparse.Namespace) -> None:
    lease = options.lease_seconds
    results = []
    for number in range(1, options.faults + 1):
        with tempfile.TemporaryDirectory(prefix="stud-recovery-") as directory:
            cluster = Cluster(Path(directory), settings={"STUD_LEASE_SECONDS": str(lease)})
            try:
                await asyncio.to_thread(cluster.start)
                taken, resumed, node = await fault(cluster, lease)
            finally:
                await asyncio.to_thread(cluster.close)
        results.append((taken, resumed))
        print(
            f"fault {number}: node {node} killed; taken over after {taken:.2f} s, "
            f"play resumed after {resumed:.2f} s",
            flush=True,
        )
    for name, values in (("taken", [r[0] for r in results]), ("resumed", [r[1] for r in results])):
        print(
            f"{name}: min {min(values):.2f} s, median {statistics.median(values):.2f} s, "
            f"max {max(values):.2f} s"
        )
    worst = max(r[1] for r in results)
    verdict = "holds" if worst <= lease + 2 else "misses"
    print(f"lease {lease:g} s: the worst resume {worst:.2f} s {verdict} lease + 2 s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", type=int, default=6, help="kills, one table each")
    parser.add_argument("--lease-seconds", type=float, default=5.0, help="the nodes' lease")
    asyncio.run(main(parser.parse_args()))
