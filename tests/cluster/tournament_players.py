"""The players and the lookouts of the cluster's tournament tests
(``test_tournament_nodes.py``): entrants that watch every table of the tournament and act
wherever they have the turn, a watch sampling the seats and the nodes all along, and the
journal and the director's lease as the database holds them."""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cluster_harness import Cluster, eventually

from stud_client import Action, LegalActions, ServerError, StudClient, StudError, Table, TableView


def lively(legal: LegalActions, rng: random.Random) -> Action:
    """Mostly a call or a check; a raise (the least) one time in four; a fold against a bet
    one time in five."""
    roll = rng.random()
    if legal.wager is not None and legal.wager in legal.kinds and roll < 0.25:
        amount = min(legal.to_choices) if legal.to_choices else legal.min_to
        return Action(legal.wager, amount)
    if "fold" in legal.kinds and "check" not in legal.kinds and roll > 0.8:
        return Action("fold")
    for kind in ("check", "call", "bring_in"):
        if kind in legal.kinds:
            return Action(kind)
    return Action("fold")


@dataclass
class Entrant:
    """A registered player's client, watching every table of the tournament and acting at
    whichever one gives it the turn."""

    name: str
    token: str
    client: StudClient
    rng: random.Random
    node: str  # the node it signed up and connected through first
    tables: dict[int, Table] = field(default_factory=dict)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def watch(self, table_id: int) -> None:
        """The table watched, once a node runs it (a new table may be on its way to one)."""

        closed = False

        async def watched() -> Table | None:
            nonlocal closed
            try:
                return await self.client.watch(table_id)
            except ServerError as error:
                if error.code == "table_closed":  # broken before this entrant got there
                    closed = True
                    return None
                if error.code not in ("table_unavailable", "table_moved"):
                    raise
                return None

        async def watched_or_closed() -> Table | bool | None:
            table = await watched()
            return table if table is not None else (True if closed else None)

        found = await eventually(watched_or_closed, 30, f"{self.name} watches table {table_id}")
        if not isinstance(found, Table):
            return
        table = found
        self.tables[table_id] = table
        self.tasks.append(asyncio.create_task(self._play(table), name=f"{self.name}@{table_id}"))

    async def _play(self, table: Table) -> None:
        acted: int | None = None

        def my_new_turn(view: TableView) -> bool:
            return view.my_turn and view.turn_seq != acted and view.legal is not None

        while True:
            try:
                view = await table.wait_for(my_new_turn, 1.0)
            except TimeoutError:
                continue
            assert view.legal is not None
            try:
                await table.act(lively(view.legal, self.rng))
                acted = view.turn_seq
            except (StudError, TimeoutError):  # the table changing hands, the turn gone by
                await asyncio.sleep(0.1)

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.client.close()


class Watch:
    """Samples the cardroom all along: the seats (nobody at two tables at once) and which
    node runs each table."""

    def __init__(self, cluster: Cluster, table_ids: list[int]) -> None:
        self.cluster = cluster
        self.table_ids = table_ids
        self.twice: list[Any] = []
        self.runners: dict[int, set[str]] = {t: set() for t in table_ids}

    async def run(self) -> None:
        token = await self.cluster.operator_token()
        while True:
            doubled = await self.cluster.database.fetch(
                "SELECT account_id, array_agg(table_id) AS tables FROM seats "
                "WHERE table_id = ANY($1::bigint[]) GROUP BY account_id HAVING count(*) > 1",
                self.table_ids,
            )
            self.twice += [dict(row) for row in doubled]
            for node in self.cluster.alive():
                try:
                    live = await self.cluster.request(
                        "GET", "/admin/tables/live", via=node, token=token
                    )
                except Exception:  # noqa: BLE001 - a node dying meanwhile
                    continue
                for row in live:
                    if row["id"] in self.runners and row.get("state") == "running":
                        self.runners[row["id"]].add(node.id)
            await asyncio.sleep(0.1)


async def journal(cluster: Cluster, tournament_id: int) -> list[dict[str, Any]]:
    rows = await cluster.database.fetch(
        "SELECT seq, kind, at, data FROM tournament_facts WHERE tournament_id = $1 ORDER BY seq",
        tournament_id,
    )
    return [
        {
            **dict(row),
            "data": json.loads(row["data"]) if isinstance(row["data"], str) else row["data"],
        }
        for row in rows
    ]


async def hands_in_journal(cluster: Cluster, tournament_id: int) -> int:
    rows = await cluster.database.fetch(
        "SELECT count(*) AS n FROM tournament_facts WHERE tournament_id = $1 AND kind = 'hand'",
        tournament_id,
    )
    return int(rows[0]["n"])


async def director_of(cluster: Cluster, tournament_id: int) -> tuple[str | None, datetime | None]:
    rows = await cluster.database.fetch(
        "SELECT director_node, director_until FROM tournaments WHERE id = $1", tournament_id
    )
    return rows[0]["director_node"], rows[0]["director_until"]
