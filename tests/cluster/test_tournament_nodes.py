"""A tournament's director and tables on a cardroom of two node processes (A and B), and a
node dying under it.

Each test plays one sit-and-go of 24 players at tables of 8 (three tables, spread over the
two nodes by the cardroom's placement) to a winner: the players are ``StudClient``s, half
connected to each node with the other as their fallback, acting on their turns by this
module's policy (a caller, a raiser now and then, a folder now and then); the levels are
short, so that the field busts in a minute or so. What each test then checks:

- a place for each player (1 for the winner alone), prizes never rising down the places and
  summing to the prize pool, which ends at 0; each wallet is the bankroll less the buy-in and
  fee plus the prize; the books balance (the house got every fee);
- no chip lost: every hand of every table ends with the chips it began with, the hands of a
  table are numbered 1, 2, 3... with none missing or doubled, and the winner ends with every
  chip issued (24 x the starting chips);
- no player ever seated at two tables at once (the seats sampled all along);
- every table closed as the cardroom closes one: its row closed, nobody seated, no node
  runs it or lists it, its lease given back.

The faults: none (the tables on both nodes); the director's node killed mid-level (the
other node directs the tournament within the lease and two seconds); a director killed
between taking a player from a table and seating them at another (the next director's
first order for the player seats them where the killed move was taking them, and they play
on with their chips); a director killed while a table is broken (the players still in
transit seated where the journal's draw put them, the table closed by the next director, no
hand dealt there after the kill); both nodes killed and started again, with levels in
minutes (every hand dealt at the level its time gives: the clock is the journal's, not the
node's). The two kills at a point of the director's work are made by the node itself
(``tests/cluster/fault_node.py``); the players and the watch are ``tournament_players``'s.
"""

from __future__ import annotations

import asyncio
import copy
import json
import random
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from cluster_harness import (
    BANKROLL,
    LEASE_SECONDS,
    Cluster,
    Node,
    eventually,
    player_client,
)
from tournament_players import Entrant, Watch, director_of, hands_in_journal, journal

pytestmark = pytest.mark.cluster

ENTRANTS = 24
SEATS = 8
STARTING = 60
LEVELS = [  # ante, bring-in, small bet, big bet
    (2, 5, 10, 20),
    (5, 10, 20, 40),
    (10, 20, 40, 80),
    (20, 40, 80, 160),
    (40, 80, 160, 320),
    (80, 160, 320, 640),
    (160, 320, 640, 1280),
]
HANDS_PER_LEVEL = 2
MINUTES_PER_LEVEL = 0.1  # the test of both nodes restarted: six seconds a level
PLAY_SECONDS = 150  # the whole tournament, on a loaded machine
KILL_AFTER_HANDS = 3  # a kill from outside, once the journal holds this many hands
FAULTY = "tests.cluster.fault_node"


@pytest.fixture
def make_cluster(
    tmp_path: Path, request: pytest.FixtureRequest, wants_postgresql: None
) -> Iterator[Callable[..., Cluster]]:
    """Nodes A and B, started by ``make_cluster(**settings)``, every node run by the fault
    launcher (which without ``STUD_TEST_KILL_AT`` is ``python -m server``)."""
    made: list[Cluster] = []
    failures = request.session.testsfailed

    def make(**settings: str) -> Cluster:
        cluster = Cluster(tmp_path, settings=settings, module=FAULTY)
        made.append(cluster)
        cluster.start()
        return cluster

    try:
        yield make
    finally:
        for cluster in made:
            if request.session.testsfailed > failures:
                print(cluster.logs(120))
            cluster.close()


def tournament_format(templates: dict[str, Any], *, minutes: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = copy.deepcopy(templates["stud-sng-9"])
    spec.update(min_entrants=ENTRANTS, max_entrants=ENTRANTS, seats_per_table=SEATS)
    length = {"minutes": MINUTES_PER_LEVEL} if minutes else {"hands": HANDS_PER_LEVEL}
    spec["structure"] = {
        "starting_chips": STARTING,
        "entries": [
            {"ante": a, "bring_in": b, "small_bet": s, "big_bet": big, **length}
            for a, b, s, big in LEVELS
        ],
    }
    return spec


@dataclass
class Played:
    """What a tournament left, for each test's own checks after the common ones."""

    tournament_id: int
    tables: dict[int, int]  # the tournament's table number -> table id
    details: dict[str, Any]
    runners: dict[int, set[str]]  # table id -> the nodes seen running it
    facts: list[dict[str, Any]]  # the journal


Fault = Callable[[Cluster, int, dict[int, int]], Coroutine[Any, Any, None]]


async def play_tournament(
    cluster: Cluster, *, minutes: bool = False, fault: Fault | None = None
) -> Played:
    token = await cluster.operator_token()

    async def both_known() -> bool:
        for via in ("A", "B"):
            listed = await cluster.request("GET", "/admin/nodes", via=via, token=token)
            if {n["node"] for n in listed} != {"A", "B"}:
                return False
        return True

    await eventually(both_known, 30, "each node hears the other")
    templates = await cluster.request("GET", "/tournaments/templates")
    made = await cluster.request(
        "POST",
        "/admin/tournaments",
        token=token,
        expect=201,
        json_body={"name": "Two nodes", "spec": tournament_format(templates, minutes=minutes)},
    )
    tournament_id = int(made["id"])
    entrants: list[Entrant] = []
    tasks: list[asyncio.Task[None]] = []
    try:
        few_at_once = asyncio.Semaphore(4)  # a loaded machine's database answers in time

        async def sign_up(n: int) -> Entrant:
            node, other = cluster.node("AB"[n % 2]), cluster.node("BA"[n % 2])
            name = f"entrant{n}"
            async with few_at_once:
                player = await cluster.register(name, via=node)
            client = player_client(node, [other], player)
            await client.connect()
            return Entrant(name, player, client, random.Random(n), node.id)

        # Accounts a few at a time; entries one after the other (they take turns on the
        # tournament's row, and the nodes' database timeout is short).
        entrants += await asyncio.gather(*(sign_up(n) for n in range(ENTRANTS)))
        for entrant in entrants:
            await cluster.request(
                "POST",
                f"/tournaments/{tournament_id}/register",
                via=entrant.node,
                token=entrant.token,
                json_body={"request_id": entrant.name},
                expect=201,
            )

        async def tables_made() -> dict[int, int] | None:
            rows = await cluster.database.fetch(
                "SELECT tournament_table, id FROM tables WHERE tournament_id = $1", tournament_id
            )
            return {r["tournament_table"]: r["id"] for r in rows} if len(rows) == 3 else None

        tables = await eventually(tables_made, 30, "the tournament starts on three tables")
        watch = Watch(cluster, sorted(tables.values()))
        tasks.append(asyncio.create_task(watch.run()))
        for entrant in entrants:
            for table_id in sorted(tables.values()):
                await entrant.watch(table_id)
        faulting: asyncio.Task[None] | None = None
        if fault is not None:
            faulting = asyncio.create_task(fault(cluster, tournament_id, tables))
            tasks.append(faulting)

        async def finished() -> dict[str, Any] | None:
            for task in tasks:
                if task.done() and task.exception() is not None:
                    raise AssertionError("a fault or the watch failed") from task.exception()
            try:
                details = await cluster.request("GET", f"/tournaments/{tournament_id}")
            except Exception:  # noqa: BLE001 - the node asked died meanwhile
                return None
            return details if details["status"] == "finished" else None

        details = await eventually(finished, PLAY_SECONDS, "the tournament plays to a winner", 0.5)
        if faulting is not None:  # it happened, and was seen to
            await asyncio.wait_for(asyncio.shield(faulting), 10)
        await check_closed(cluster, tables)
        assert watch.twice == [], f"players seated at two tables at once: {watch.twice}"
        facts = await journal(cluster, tournament_id)
        for task in tasks:
            if task.done() and task.exception() is not None:
                raise AssertionError("a fault or the watch failed") from task.exception()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for entrant in entrants:
            await entrant.close()
    for node in cluster.nodes.values():
        assert node.errors() == [], f"node {node.id} logged errors"
    played = Played(tournament_id, tables, details, watch.runners, facts)
    await check_places_and_books(cluster, played, entrants)
    await check_chips(cluster, played)
    return played


async def check_places_and_books(cluster: Cluster, played: Played, entrants: list[Entrant]) -> None:
    details = played.details
    entries = details["entries"]
    pool = ENTRANTS * details["buy_in"]
    places = sorted(e["place"] for e in entries)
    assert len(places) == ENTRANTS and places[0] == 1 and places.count(1) == 1, places
    assert places[-1] <= ENTRANTS and all(e["status"] == "out" for e in entries)
    assert sum(e["prize"] for e in entries) == pool and details["prize_pool"] == 0
    prizes = [e["prize"] for e in sorted(entries, key=lambda e: e["place"])]
    assert prizes == sorted(prizes, reverse=True) and prizes[0] > 0
    for entrant in entrants:
        (mine,) = [e for e in entries if e["player"] == entrant.name]
        expected = BANKROLL - details["buy_in"] - details["fee"] + mine["prize"]
        assert await cluster.wallet(entrant.token) == expected, (entrant.name, mine)
    books = await cluster.books()
    assert books["balanced"] and not books["mismatched"], books
    assert books["granted"] == BANKROLL * ENTRANTS, books
    house = await cluster.database.fetch("SELECT balance FROM wallets WHERE name = 'house:revenue'")
    assert [r["balance"] for r in house] == [ENTRANTS * details["fee"]], house


async def check_chips(cluster: Cluster, played: Played) -> None:
    for number, table_id in sorted(played.tables.items()):
        hands = await cluster.hands(table_id)
        numbers = [h.number for h in hands]
        assert numbers == list(range(1, len(numbers) + 1)), (number, numbers)
        for hand in hands:
            assert hand.chips[0] == hand.chips[1], (table_id, hand.number, hand.chips)
    hand_facts = [f for f in played.facts if f["kind"] == "hand"]
    for fact in hand_facts:
        data = fact["data"]
        assert sum(data["stacks"].values()) == sum(data["starting"].values()), fact
    last = hand_facts[-1]["data"]["stacks"]
    (winner,) = [e for e in played.details["entries"] if e["place"] == 1]
    assert {p: c for p, c in last.items() if c} == {winner["player"]: ENTRANTS * STARTING}


async def check_closed(cluster: Cluster, tables: dict[int, int]) -> None:
    """Every table closed the cardroom's way: row, seats, the nodes' lists, the leases."""
    ids = sorted(tables.values())

    async def all_closed() -> bool:
        rows = await cluster.database.fetch(
            "SELECT status FROM tables WHERE id = ANY($1::bigint[])", ids
        )
        return {r["status"] for r in rows} == {"closed"}

    await eventually(all_closed, 30, "every table of the tournament closed")
    seated = await cluster.database.fetch(
        "SELECT count(*) AS n FROM seats WHERE table_id = ANY($1::bigint[])", ids
    )
    assert seated[0]["n"] == 0
    token = await cluster.operator_token()

    async def unlisted() -> bool:
        for node in cluster.alive():
            live = await cluster.request("GET", "/admin/tables/live", via=node, token=token)
            if {row["id"] for row in live} & set(ids):
                return False
        return True

    await eventually(unlisted, 10, "no node lists a table of the tournament")
    redis = aioredis.from_url(cluster.redis.url)
    try:
        leases = [key async for key in redis.scan_iter(match="*lease*")]
    finally:
        await redis.aclose()
    held = [k for k in leases if any(f"{{{i}}}" in k.decode() for i in ids)]
    assert held == [], f"leases of closed tables still held: {held}"


# ---------------------------------------------------------------------- the tests


async def test_a_tournament_on_three_tables_over_two_nodes(
    make_cluster: Callable[..., Cluster],
) -> None:
    cluster = make_cluster()
    played = await play_tournament(cluster)
    assert set().union(*played.runners.values()) == {"A", "B"}, played.runners


async def test_the_director_s_node_killed_mid_level(make_cluster: Callable[..., Cluster]) -> None:
    """kill -9 of the node directing the tournament, in its first level: the other node
    directs it within the lease and two seconds, and plays it out."""
    cluster = make_cluster()
    seen: dict[str, Any] = {}

    async def kill_the_director(cluster: Cluster, tournament_id: int, _: dict[int, int]) -> None:
        async def hands() -> bool:
            return await hands_in_journal(cluster, tournament_id) >= KILL_AFTER_HANDS

        await eventually(hands, 60, f"{KILL_AFTER_HANDS} hands journaled")
        director, _until = await director_of(cluster, tournament_id)
        assert director in ("A", "B")
        killed_at = time.time()
        cluster.node(director).kill()
        seen["level"] = await level_in_play(cluster, tournament_id)
        survivor = cluster.others(director)[0].id

        async def taken_over() -> datetime | None:
            node, until = await director_of(cluster, tournament_id)
            return until if node == survivor else None

        until = await eventually(taken_over, 30, f"node {survivor} directs", every=0.05)
        seen["takeover"] = until.timestamp() - LEASE_SECONDS - killed_at

    await play_tournament(cluster, fault=kill_the_director)
    assert seen["level"] == 1, "killed mid-level: the first level"
    assert seen["takeover"] <= LEASE_SECONDS + 2, seen


async def test_a_director_killed_between_taking_a_player_away_and_seating_them(
    make_cluster: Callable[..., Cluster], tmp_path: Path
) -> None:
    """The director's node kills itself once it has taken a moving player from their table
    and before it seats them at the other: the director that takes over seats them there,
    with their chips, and nowhere else."""
    mark = tmp_path / "killed.json"
    cluster = make_cluster(STUD_TEST_KILL_AT="move", STUD_TEST_KILL_MARK=str(mark))
    killed: dict[str, Any] = {}
    played = await play_tournament(cluster, fault=killed_at_a_mark(mark, killed))
    done, left = killed["record"]["done"], killed["record"]["left"]
    removed = {o["player"] for o in done if o["order"] == "RemovePlayer"}
    transit = [o for o in left if o["order"] == "SeatPlayer" and o["player"] in removed]
    assert len(transit) == 1, killed["record"]  # exactly one player in transit
    killed["after"] = read_trace(killed["trace"])
    await check_seated_after(cluster, played, transit, killed)


async def test_a_director_killed_while_a_table_is_broken(
    make_cluster: Callable[..., Cluster], tmp_path: Path
) -> None:
    """The director's node kills itself in the middle of breaking a table (its players taken
    away, one of them seated elsewhere, the table not yet closed): the director that takes
    over seats the others where the journal's draw put them and closes the table."""
    mark = tmp_path / "killed.json"
    cluster = make_cluster(STUD_TEST_KILL_AT="break", STUD_TEST_KILL_MARK=str(mark))
    killed: dict[str, Any] = {}
    played = await play_tournament(cluster, fault=killed_at_a_mark(mark, killed))
    done, left = killed["record"]["done"], killed["record"]["left"]
    (broken,) = [o["table"] for o in left if o["order"] == "CloseTable"]
    moved = [o for o in done + left if o["order"] == "SeatPlayer"]
    assert [o["order"] for o in done].count("SeatPlayer") == 1 and len(moved) >= 2, done
    killed["after"] = read_trace(killed["trace"])
    await check_seated_after(cluster, played, moved[1:], killed)
    closes = [o for orders in killed["after"] for o in orders if o["order"] == "CloseTable"]
    assert closes[0] == {"order": "CloseTable", "table": broken}, closes
    table_id = played.tables[broken]
    assert await hands_since(cluster, killed["at"], table_id) == set(), "the broken table dealt"
    rows = await cluster.database.fetch(
        "SELECT t.closed_at, r.finished_at FROM tables t JOIN tournaments r "
        "ON r.id = t.tournament_id WHERE t.id = $1",
        table_id,
    )
    assert rows[0]["closed_at"] <= rows[0]["finished_at"], "closed by the next director"


async def test_both_nodes_killed_and_started_again(make_cluster: Callable[..., Cluster]) -> None:
    """Every node killed mid-tournament and started again: the tournament resumes from its
    journal and finishes, and its levels (in minutes) keep their schedule: every hand is dealt
    at the level the time since the start gives, also after the restart."""
    cluster = make_cluster()
    seen: dict[str, Any] = {}

    async def kill_both(cluster: Cluster, tournament_id: int, _: dict[int, int]) -> None:
        async def hands() -> bool:
            return await hands_in_journal(cluster, tournament_id) >= KILL_AFTER_HANDS

        await eventually(hands, 60, f"{KILL_AFTER_HANDS} hands journaled")
        seen["killed_at"] = time.time()
        for node in cluster.nodes.values():
            node.kill()
        for node in cluster.nodes.values():
            node.start()

    played = await play_tournament(cluster, minutes=True, fault=kill_both)
    started = next(f for f in played.facts if f["kind"] == "started")["at"]
    levels = [level[0] for level in LEVELS]
    dealt_after = 0
    for table_id in played.tables.values():
        before = started
        for hand in await hand_times(cluster, table_id):
            level = levels.index(hand["ante"])
            assert level_at(before, started) <= level <= level_at(hand["ended"], started), (
                table_id,
                hand,
                before,
            )
            dealt_after += before > seen["killed_at"]
            before = hand["ended"]
    assert dealt_after > 0, "no hand dealt after the restart"


# ---------------------------------------------------------------------- helpers of the tests


def killed_at_a_mark(mark: Path, killed: dict[str, Any]) -> Fault:
    """A fault that waits for the node killing itself (``fault_node``) and notes what it did;
    the other node directs the tournament within the lease and two seconds."""

    async def wait_for_it(cluster: Cluster, tournament_id: int, _: dict[int, int]) -> None:
        async def died() -> Node | None:
            dead = [node for node in cluster.nodes.values() if not node.alive]
            return dead[0] if dead and mark.exists() else None

        dead = await eventually(died, PLAY_SECONDS, "the director's node kills itself", 0.05)
        killed["at"] = mark.stat().st_mtime
        killed["record"] = json.loads(mark.read_text())
        killed["trace"] = mark.with_suffix(".after")
        assert killed["record"]["tournament"] == tournament_id
        survivor = cluster.others(dead.id)[0].id

        async def taken_over() -> datetime | None:
            node, until = await director_of(cluster, tournament_id)
            return until if node == survivor else None

        until = await eventually(taken_over, 30, f"node {survivor} directs", every=0.05)
        assert until.timestamp() - LEASE_SECONDS - killed["at"] <= LEASE_SECONDS + 2

    return wait_for_it


def read_trace(path: Path) -> list[list[dict[str, Any]]]:
    """The orders the directors carried out after the kill, in order (``fault_node``)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line]


async def hands_since(cluster: Cluster, at: float, table_id: int) -> set[int]:
    """The hands the table recorded after ``at`` (epoch seconds)."""
    rows = await cluster.database.fetch(
        "SELECT number FROM hands WHERE table_id = $1 AND created_at > to_timestamp($2)",
        table_id,
        at,
    )
    return {r["number"] for r in rows}


async def check_seated_after(
    cluster: Cluster,
    played: Played,
    seatings: list[dict[str, Any]],
    killed: dict[str, Any],
) -> None:
    """Each player the killed director was moving is seated by the next one where the
    journal's move put them (its first seat for them, before anything else of theirs), and
    plays their next hand with the chips they had."""
    for seating in seatings:
        player = seating["player"]
        theirs = [o for orders in killed["after"] for o in orders if o.get("player") == player]
        assert theirs and theirs[0] == seating, (seating, theirs[:3])
        rows = await cluster.database.fetch(
            "SELECT h.table_id, p.starting FROM hand_players p JOIN hands h ON h.id = p.hand_id "
            "JOIN accounts a ON a.id = p.account_id "
            "WHERE a.username = $1 AND h.created_at > to_timestamp($2) "
            "AND h.table_id = ANY($3::bigint[]) ORDER BY h.created_at LIMIT 1",
            player,
            killed["at"],
            sorted(played.tables.values()),
        )
        assert rows, f"{player} never played again"
        assert rows[0]["starting"] == seating["stack"], (seating, dict(rows[0]))


async def level_in_play(cluster: Cluster, tournament_id: int) -> int:
    """The level of the last hand dealt at any of the tournament's tables (1 first)."""
    rows = await cluster.database.fetch(
        "SELECT h.config FROM hands h JOIN tables t ON t.id = h.table_id "
        "WHERE t.tournament_id = $1 ORDER BY h.created_at DESC LIMIT 1",
        tournament_id,
    )
    config = rows[0]["config"]
    config = json.loads(config) if isinstance(config, str) else config
    return [level[0] for level in LEVELS].index(config["ante"]) + 1


async def hand_times(cluster: Cluster, table_id: int) -> list[dict[str, Any]]:
    """Each hand of the table, by number: its ante and when it ended (epoch seconds)."""
    rows = await cluster.database.fetch(
        "SELECT number, config, extract(epoch FROM created_at) AS ended FROM hands "
        "WHERE table_id = $1 ORDER BY number",
        table_id,
    )
    hands = []
    for row in rows:
        config = row["config"]
        config = json.loads(config) if isinstance(config, str) else config
        hands.append(
            {"number": row["number"], "ante": config["ante"], "ended": float(row["ended"])}
        )
    return hands


def level_at(at: float, started: float) -> int:
    """The level the schedule gives at ``at`` (0 first): levels of MINUTES_PER_LEVEL each,
    the last going on."""
    return min(int((at - started) // (MINUTES_PER_LEVEL * 60)), len(LEVELS) - 1)
