"""``stud-bots --tournament`` on a cardroom of two node processes (A and B, PostgreSQL and
Redis): the operator's sit-and-go of 9 from the shipped template (levels of two hands), its
bots spread over both nodes (each with the other as its fallback), played to a winner. The
places (1 to 9; shared only by equal stacks out in one hand), the prizes (the published
payouts, summing to the prize pool), each prize paid through the ledger to its bot's wallet,
and the books (``stud-server audit``), as on one node."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from cluster_harness import OPERATOR, PASSWORD, Cluster, eventually

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients"))
from stud_bots_run import check_report_places, report_of, run_stud_bots  # noqa: E402

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
    done = run_stud_bots(
        [
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
        timeout=BUDGET_SECONDS + 60,
        env=cluster.env,
        password=PASSWORD,
    )
    report = report_of(done)
    assert report["status"] == "finished" and report["errors"] == {}, report
    # Spread over both nodes (5 and 4 at first; a bot may have failed over since).
    assert set(report["servers"]) == {cluster.node("A").url, cluster.node("B").url}, report
    places = check_report_places(report, ENTRANTS)

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
