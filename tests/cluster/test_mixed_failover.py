"""A mixed table on two nodes, its owner killed (kill -9) in the middle of a rotation: the
other node takes the table over, finishes the hand held mid-way under its game, and deals on
at the same game and count. Every recorded hand is of the game the rotation schedules for
it (``engine.rotation.positions``) and keeps its place in the rotation; the lobby of either
node lists the rotation. The failover's own checks (hand
numbers, cards, chips, books) are ``test_failover``'s."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from cluster_harness import Cluster, Node, eventually
from test_failover import BUY_IN, SEATS, TAKEOVER_SECONDS, play_and_break

from engine.rotation import Position, Rotation, positions

pytestmark = pytest.mark.cluster

MIX: dict[str, Any] = {
    "games": [
        {"variant": "seven_card_stud"},
        {"variant": "razz"},
        {"variant": "seven_card_stud_hi_lo"},
    ],
    "hands": 2,  # hands 1-2 stud, 3-4 razz, 5-6 hi-lo: the held hand (3) is razz's first
    "stakes": {"ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
}


async def open_mix(cluster: Cluster, via: Node) -> int:
    body = await cluster.request(
        "POST",
        "/admin/tables",
        via=via,
        token=await cluster.operator_token(),
        expect=201,
        json_body={"name": "mix", "rotation": MIX, "seats": SEATS, "min_buy_in": BUY_IN},
    )
    return int(body["id"])


async def kill_owner(
    cluster: Cluster, table_id: int, owner: str, release: Callable[[], None]
) -> float:
    killed_at = time.monotonic()
    cluster.node(owner).kill()
    release()
    survivor = cluster.others(owner)[0]

    async def taken_over() -> bool:
        return await cluster.owner(table_id, via=survivor) == survivor.id

    await eventually(taken_over, TAKEOVER_SECONDS, f"{survivor.id} runs the table")
    return killed_at


async def test_the_owner_killed_mid_rotation_the_other_node_deals_the_same_game_and_count(
    cluster: Cluster,
) -> None:
    played = await play_and_break(cluster, kill_owner, restart_owner=True, open_table=open_mix)
    table_id = played.table_id
    rows = await cluster.database.fetch(
        "SELECT number, rotation, config FROM hands WHERE table_id = $1 ORDER BY number",
        table_id,
    )
    started = {
        h.number: h.events[0]["data"] for h in played.hands if h.events[0]["kind"] == "hand_started"
    }
    rotation = Rotation.from_dict(MIX)
    scheduled = positions(rotation, [len(started[row["number"]]["seats"]) for row in rows])
    assert played.held >= 3 and len(rows) >= played.held + 2
    for row, position in zip(rows, scheduled, strict=True):
        game = rotation.games[position.game].variant.name
        number = row["number"]
        assert started[number]["variant"] == game, (number, started[number]["variant"], game)
        assert Position.from_dict(_json(row["rotation"])) == position, number
        assert _json(row["config"])["variant"] == game, number
    last = rows[-1]["number"]
    for node in cluster.nodes.values():
        line = next(t for t in await cluster.lobby(via=node) if t["id"] == table_id)
        assert [g["variant"] for g in line["rotation"]["games"]] == [
            g["variant"] for g in MIX["games"]
        ]
    print(f"table {table_id}: held hand {played.held}, hands 1..{last} each of its game")


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value
