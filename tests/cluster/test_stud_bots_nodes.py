"""``stud-bots --tournament`` on a cardroom of two node processes (A and B, PostgreSQL and
Redis): the operator's sit-and-go of 9 from the shipped template (levels of two hands), its
bots spread over both nodes (each with the other as its fallback), played to a winner. The
places (1 to 9, once each), the prizes (the published payouts, summing to the prize pool),
each prize paid through the ledger to its bot's wallet, and the books (``stud-server
audit``), as on one node."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cluster_harness import OPERATOR, PASSWORD, ROOT, Cluster, eventually

pytestmark = pytest.mark.cluster

ENTRANTS = 9
BUDGET_SECONDS = 180.0


async def test_a_sit_and_go_of_bots_on_two_nodes(cluster: Cluster) -> None:
    token = await cluster.operator_token()

    async def both_known() -> bool:
        for via in ("A", "B"):
            listed = await cluster.request("GET", "/admin/nodes", via=via, token=token)
            if {n["node"] for n in listed} != {"A", "B"}:
                return False
        return True

    await eventually(both_known, 30, "each node hears the other")
    script = Path(sys.executable).with_name("stud-bots")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "stud_bots.runner"]
    done = subprocess.run(
        [
            *command,
            "--server",
            cluster.node("A").url,
            "--server",
            cluster.node("B").url,
            "--operator",
            OPERATOR,
            "--tournament",
            "new",
            "--template",
            "stud-sng-9",
            "--hands-per-level",
            "2",
            "--strategy",
            "mixed",
            "--timeout",
            str(BUDGET_SECONDS),
            "--seed",
            "5",
            "--quiet",
        ],
        env={**cluster.env, "STUD_OPERATOR_PASSWORD": PASSWORD},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=BUDGET_SECONDS + 60,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    print(json.dumps(report))
    assert report["status"] == "finished" and report["errors"] == {}, report
    assert report["bots"] == report["entrants"] == ENTRANTS
    urls = (cluster.node("A").url, cluster.node("B").url)
    assert sorted(report["servers"].items()) == [(urls[0], 5), (urls[1], 4)], report
    places = {p["player"]: (p["place"], p["prize"]) for p in report["places"]}
    assert sorted(place for place, _ in places.values()) == list(range(1, ENTRANTS + 1))
    assert places[report["winner"]][0] == 1
    paid = [prize for _, prize in sorted(places.values())]
    payouts = report["payouts"]
    assert paid[: len(payouts)] == payouts and not any(paid[len(payouts) :])
    assert sum(payouts) == report["prize_pool"] == ENTRANTS * 100

    # Both nodes ran its tables and served its bots: the details as each says them agree.
    tournament_id = report["tournament"]
    for via in ("A", "B"):
        details = await cluster.request("GET", f"/tournaments/{tournament_id}", via=via)
        assert {e["player"]: (e["place"], e["prize"]) for e in details["entries"]} == places
    prizes = await cluster.database.fetch(
        "SELECT a.username, sum(l.amount) AS paid FROM ledger_entries l"
        " JOIN wallets w ON w.id = l.credit_wallet_id"
        " JOIN accounts a ON a.id = w.account_id"
        " JOIN wallets pool ON pool.id = l.debit_wallet_id"
        " WHERE l.kind = 'prize' AND pool.name = $1 GROUP BY a.username",
        f"tournament:{tournament_id}",
    )
    assert {r["username"]: r["paid"] for r in prizes} == {
        name: prize for name, (_, prize) in places.items() if prize
    }
    books = await cluster.request("GET", "/admin/books", token=token)
    assert books["balanced"] is True, books
    chips = ENTRANTS * 1500
    assert books["tournaments"][str(tournament_id)] == {
        "issued": chips,
        "removed": 0,
        "in_play": chips,
        "pool": 0,
    }
    cluster.cli("audit")  # exit 0: the books balance end to end
