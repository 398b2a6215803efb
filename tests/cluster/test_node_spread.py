"""Three node processes share the tables: nine tables made through one node run three on each,
and the ``kill -9`` of one node spreads its tables over the other two (each takes a share), as
the back office's list of nodes shows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_harness import Cluster, eventually

# On one redis-server, then on a Redis Cluster of three masters.
pytestmark = [pytest.mark.cluster, pytest.mark.parametrize("redis_kind", ["redis", "cluster"])]

CONFIG = {"variant": "seven_card_stud", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10}
SETTLE_SECONDS = 60  # gossip, leases and takeovers, on a loaded machine


@pytest.fixture
def three(
    tmp_path: Path, request: pytest.FixtureRequest, wants_postgresql: None, redis_kind: str
) -> Iterator[Cluster]:
    cluster = Cluster(tmp_path, node_ids=("A", "B", "C"), redis_cluster=redis_kind == "cluster")
    failures = request.session.testsfailed
    try:
        cluster.start()
        yield cluster
    except BaseException:
        print(cluster.logs(200))
        raise
    finally:
        if request.session.testsfailed > failures:
            print(cluster.logs(200))
        cluster.close()


async def owners(cluster: Cluster, via: str) -> dict[int, str | None]:
    return {int(t["id"]): t.get("node") for t in await cluster.lobby(via=via)}


async def test_a_killed_node_s_tables_are_spread_over_the_two_others(three: Cluster) -> None:
    cluster = three
    token = await cluster.operator_token()

    async def every_node_known() -> bool:
        listed = await cluster.request("GET", "/admin/nodes", via="A", token=token)
        return {n["node"] for n in listed} == {"A", "B", "C"}

    await eventually(every_node_known, SETTLE_SECONDS, "node A hears B and C")
    table_ids = [
        await cluster.open_table(f"spread {n}", CONFIG, seats=6, via="A") for n in range(9)
    ]

    async def placed() -> bool:
        seen = await owners(cluster, "A")
        return Counter(seen[t] for t in table_ids) == {"A": 3, "B": 3, "C": 3}

    await eventually(placed, SETTLE_SECONDS, "three tables on each node")
    orphans = {t for t, node in (await owners(cluster, "A")).items() if node == "C"}
    cluster.node("C").kill()

    async def spread() -> bool:
        seen = await owners(cluster, "A")
        return all(seen[t] in ("A", "B") for t in orphans)

    await eventually(spread, SETTLE_SECONDS, "C's tables taken over by A and B")
    seen = await owners(cluster, "B")
    assert {seen[t] for t in orphans} == {"A", "B"}, seen
    assert Counter(seen[t] for t in table_ids) in ({"A": 5, "B": 4}, {"A": 4, "B": 5}), seen

    async def c_forgotten() -> bool:
        listed = await cluster.request("GET", "/admin/nodes", via="B", token=token)
        return {n["node"] for n in listed} == {"A", "B"}

    await eventually(c_forgotten, SETTLE_SECONDS, "C no longer listed")
    audit = await cluster.request("GET", "/admin/audit?action=table.move", via="A", token=token)
    moves = [e for e in audit["entries"] if int(e["target_id"]) in orphans]
    assert len(moves) == 3 and all(
        e["before"] == {"node": "C"} and e["reason"] == "lease_expired" for e in moves
    ), moves
