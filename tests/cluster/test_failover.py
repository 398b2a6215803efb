"""Several gateway nodes, one cardroom, and a part of it failing mid-hand.

Each scenario opens one seven-card stud table on a cluster of two nodes (A and B), seats
four players connected to different nodes (each with the other node as its fallback URL),
lets them play a couple of hands, holds the next hand once fourth street is dealt, breaks
something, lets play go on, then stops play and checks what a cardroom must guarantee:

- the hand held mid-way is recorded once, finished (not cancelled), with the very cards its
  players had seen before the break (resumed, not redealt);
- more hands are played after the break; hand numbers run 1, 2, 3... with none missing or
  doubled, and every hand's chips add up (its players end with what they started with);
- every client ends with the same table (seq, every seat's player, stack and sitting out)
  as a fresh snapshot on every live node, and with the last hand recorded as its last hand;
- the books balance to the chip: every wallet is the sum of its movements, the chips
  granted are the players' bankrolls, the table's pool is the chips in its seats, and the
  players' wallets plus their stacks are exactly their bankrolls.

The breaks: the owner node killed (kill -9; the other node takes the table over within the
lease, and the next action reaches every player within the lease and two seconds), every node
killed and started again (the next action within ten seconds), the Redis restarted (empty),
PostgreSQL frozen for three seconds. Each on one redis-server, and on a Redis Cluster of three
masters (restarted whole where the Redis is).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from cluster_harness import (
    BANKROLL,
    LEASE_SECONDS,
    Cluster,
    Gate,
    HandRow,
    Node,
    Player,
    eventually,
    table_state,
)

from stud_client import ServerError

pytestmark = pytest.mark.cluster
# Every scenario on one redis-server, then on a Redis Cluster of three masters.
ON_BOTH = pytest.mark.parametrize("redis_kind", ["redis", "cluster"])
# A Redis Cluster restarted whole is away longer than a redis-server: its masters refuse keys
# (the leases) for two seconds after they start (Redis's own wait before a restarted master
# serves). Its nodes hold leases of five seconds there, so that the tables outlive the restart
# as they do on one redis-server.
OUTLIVING = pytest.mark.node_settings({"STUD_LEASE_SECONDS": "5"})

SEATS = 4
BUY_IN = 200
CONFIG = {"variant": "seven_card_stud", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10}
HANDS_BEFORE = 2  # finished before the break
HANDS_AFTER = 2  # finished after the held hand
TAKEOVER_SECONDS = 4 * LEASE_SECONDS + 4  # "within the lease time", with room for a busy CI
# After a node's kill -9, the next action reaches every player within two leases and four
# seconds of a loaded machine: sooner than a command router's timeout (10 s), which a client
# left waiting on the dead node would take. After every node is killed and restarted (two
# processes started afresh on that machine), within twenty seconds.
RESUME_AFTER_KILL_SECONDS = 2 * LEASE_SECONDS + 4
RESUME_AFTER_RESTART_SECONDS = 20.0
# A break: it gets the cluster, the table, the id of the node that runs it and the gate's
# release, which it calls when the bots may act again. It returns the moment (monotonic) from
# which the players' wait for the next action is timed, or None.
Break = Callable[[Cluster, int, str, Callable[[], None]], Awaitable[float | None]]


@dataclass
class Played:
    """What a scenario saw, for its own checks after the common ones."""

    table_id: int
    owner: str  # the node that ran the table before the break
    held: int  # the hand held mid-way through the break
    hands: list[HandRow]
    players: list[Player]
    final: Any  # the agreed table state (cluster_harness.table_state)
    resumed: float | None  # seconds from the break until the next action reached everyone


@ON_BOTH
async def test_the_owner_node_killed_mid_hand(cluster: Cluster) -> None:
    async def kill_owner(
        cluster: Cluster, table_id: int, owner: str, release: Callable[[], None]
    ) -> float:
        killed_at = time.monotonic()
        cluster.node(owner).kill()
        release()
        survivor = cluster.others(owner)[0]

        async def taken_over() -> bool:
            return await cluster.owner(table_id, via=survivor) == survivor.id

        await eventually(
            taken_over,
            TAKEOVER_SECONDS,
            f"node {survivor.id} runs the table once {owner} is killed",
        )
        return killed_at

    played = await play_and_break(cluster, kill_owner, restart_owner=True)
    assert played.resumed is not None and played.resumed <= RESUME_AFTER_KILL_SECONDS, played
    survivor = cluster.others(played.owner)[0].id
    assert await cluster.owner(played.table_id, via=survivor) == survivor
    assert await cluster.owner(played.table_id, via=played.owner) == survivor
    for player in played.players:
        # the ones on the dead node moved to the other; everyone resynced (the seq jumped)
        if player.node == played.owner:
            assert player.client.stats.failovers >= 1, (player.name, player.client.stats)
        assert player.client.stats.resyncs >= 1, (player.name, player.client.stats)


@ON_BOTH
async def test_every_node_killed_and_restarted_mid_hand(cluster: Cluster) -> None:
    async def kill_all(
        cluster: Cluster, table_id: int, owner: str, release: Callable[[], None]
    ) -> float:
        killed_at = time.monotonic()
        for node in cluster.nodes.values():
            node.kill()
        for node in cluster.nodes.values():
            node.start()
        release()
        return killed_at

    # (A spectator's picture keeps the presence its base snapshot showed: presence changes
    # without events. A node started afresh bases its picture while the players are still
    # coming back, so it is not asked here who is away.)
    played = await play_and_break(cluster, kill_all, spectators_see_presence=False)
    assert played.resumed is not None and played.resumed <= RESUME_AFTER_RESTART_SECONDS, played


@pytest.mark.parametrize("redis_kind", ["redis", pytest.param("cluster", marks=OUTLIVING)])
async def test_redis_restarted_mid_hand(cluster: Cluster) -> None:
    async def restart_redis(
        cluster: Cluster, table_id: int, owner: str, release: Callable[[], None]
    ) -> float | None:
        await asyncio.to_thread(cluster.redis.restart)
        release()
        return None

    # (Whether a client had to resync depends on whether an event was lost while Redis was
    # down; the common checks see that every client ends with the table as it is.)
    played = await play_and_break(cluster, restart_redis)

    # one owner after the leases were wiped, and every node agrees which once the nodes have
    # told each other their tables (every third of a lease: a takeover just made may not be
    # heard of yet)
    async def agreed_owner() -> str | None:
        owners = {await cluster.owner(played.table_id, via=node) for node in cluster.nodes.values()}
        owner = owners.pop()
        return owner if not owners and owner in cluster.nodes else None

    await eventually(agreed_owner, TAKEOVER_SECONDS, "every node names the same owner")


@ON_BOTH
async def test_postgresql_paused_mid_hand(cluster: Cluster) -> None:
    async def freeze_database(
        cluster: Cluster, table_id: int, owner: str, release: Callable[[], None]
    ) -> float | None:
        cluster.proxy.pause()
        release()  # the bots act on while the table cannot write
        try:
            await asyncio.sleep(3)
        finally:
            cluster.proxy.resume()
        return None

    played = await play_and_break(cluster, freeze_database)
    for player in played.players:
        kinds = [k for k in player.kinds_seen() if k in ("table_paused", "table_unpaused")]
        if "table_paused" in kinds:  # seen paused, then seen unpaused (or resynced after)
            last_pause = len(kinds) - 1 - kinds[::-1].index("table_paused")
            assert "table_unpaused" in kinds[last_pause:] or player.client.stats.resyncs, (
                player.name,
                player.kinds_seen(),
            )


# ---------------------------------------------------------------------- the scenario


async def play_and_break(
    cluster: Cluster,
    break_: Break,
    *,
    restart_owner: bool = False,
    spectators_see_presence: bool = True,
    timeout: float = 100,
    open_table: Callable[[Cluster, Node], Awaitable[int]] | None = None,
) -> Played:
    """``open_table``: how the table is made on the first node (its id); a table of
    ``CONFIG`` unless given."""
    nodes = list(cluster.nodes.values())
    if open_table is None:
        table_id = await cluster.open_table("cluster", CONFIG, seats=SEATS, via=nodes[0])
    else:
        table_id = await open_table(cluster, nodes[0])
    gate = Gate()
    players: list[Player] = []
    tasks: list[asyncio.Task[None]] = []
    try:
        async with asyncio.timeout(timeout):
            run = secrets.token_hex(2)
            for n in range(SEATS):
                node = nodes[n % len(nodes)]
                fallbacks = [other for other in nodes if other is not node]
                try:
                    players.append(
                        await Player.join(
                            cluster,
                            f"p{n}_{run}",
                            node,
                            fallbacks,
                            table_id,
                            gate,
                            buy_in=BUY_IN,
                            seed=n,
                        )
                    )
                except ServerError as error:
                    if error.code != "unknown_table":
                        raise
                    raise AssertionError(
                        f"node {node.id} does not know table {table_id}, opened on node "
                        f"{nodes[0].id}: a client cannot play a table another node runs"
                    ) from error
            tasks = [asyncio.create_task(p.play(), name=p.name) for p in players]

            async def finished(count: int, after: int = 0) -> bool:
                _raise_failed(tasks)
                numbers = await cluster.finished_hands(table_id)
                return len([n for n in numbers if n > after]) >= count

            await eventually(
                lambda: finished(HANDS_BEFORE),
                40,
                f"{HANDS_BEFORE} hands finished before the break",
            )
            owner = await cluster.owner(table_id)
            assert owner in cluster.nodes, (
                f"GET /tables gives no owner node for table {table_id} (its 'node': "
                f"{owner!r}): the server does not say which node runs a table"
            )

            gate.arm()
            await asyncio.wait_for(gate.reached.wait(), 30)
            assert gate.view is not None and gate.view.hand_number is not None
            held = gate.view.hand_number
            seen = cards_seen(players, held)
            assert seen, "no player saw its cards of the held hand"

            broken_at = await break_(cluster, table_id, owner, gate.release)
            gate.release()
            resumed = None
            if broken_at is not None:
                resumed = await resumed_after(players, broken_at)
                print(f"the next action reached every player {resumed:.2f} s after the break")

            async def held_recorded() -> HandRow | None:
                _raise_failed(tasks)
                return next((h for h in await cluster.hands(table_id) if h.number == held), None)

            hand = await eventually(held_recorded, 40, f"hand {held} (held mid-way) recorded")
            assert hand.cancelled is None, f"hand {held} was cancelled: {hand.cancelled}"
            recorded = cards_recorded(hand)
            for seat, (up, down) in seen.items():
                assert recorded[seat][0][: len(up)] == up, (seat, up, recorded[seat])
                assert recorded[seat][1][: len(down)] == down, (seat, down, recorded[seat])

            if restart_owner:  # the killed node comes back and serves the cardroom again
                cluster.node(owner).start()
            await eventually(
                lambda: finished(HANDS_AFTER, after=held),
                40,
                f"{HANDS_AFTER} more hands finished after hand {held}",
            )
            if restart_owner:
                await asyncio.to_thread(cluster.node(owner).wait_ready)

            for player in players:
                player.stopping = True
            await asyncio.gather(*tasks)

            final = await agreed_state(cluster, table_id, players)
            for node in cluster.nodes.values() if spectators_see_presence else ():
                view = await cluster.snapshot(table_id, via=node)  # a taking-over node too
                away = [s.player for s in view.seats if s.player is not None and not s.connected]
                assert not away, f"node {node.id} shows {away} away, their clients connected"
            hands = await cluster.hands(table_id)
            await check_books(cluster, table_id, players, final)
    finally:
        gate.release()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for player in players:
            await player.close()

    numbers = [h.number for h in hands]
    assert numbers == list(range(1, len(numbers) + 1)), f"hands lost or doubled: {numbers}"
    last = {p.name: p.table.view.hand_number for p in players}
    assert set(last.values()) == {numbers[-1]}, f"last hand {numbers[-1]}; clients: {last}"
    unbalanced = [(h.number, h.chips) for h in hands if h.chips[0] != h.chips[1]]
    assert not unbalanced, f"hands whose chips do not add up (start, end): {unbalanced}"
    print(
        f"table {table_id}: run by {owner}, hand {held} held mid-way, hands "
        f"{[(h.number, h.cancelled) for h in hands]}"
    )  # shown with -rP, or on failure
    for p in players:
        s = p.client.stats
        print(
            f"  {p.name} on {p.node} -> {p.client.base_url}: reconnects {s.reconnects}, "
            f"failovers {s.failovers}, resyncs {s.resyncs}, gaps {s.gaps}, errors "
            f"{dict(s.errors)}, failed commands {dict(p.failures)}, seen {p.kinds_seen()}"
        )
    broken = {
        p.name: p.client.stats.errors["internal_error"]
        for p in players
        if p.client.stats.errors["internal_error"]
    }
    assert not broken, f"internal errors: {broken}"
    return Played(table_id, owner, held, hands, players, final, resumed)


async def resumed_after(players: list[Player], moment: float, timeout: float = 40) -> float:
    """Seconds from ``moment`` until the first action after it had reached every player."""

    async def reached() -> float | None:
        seen = [p.first_action_after(moment) for p in players]
        return max(at for at in seen if at is not None) if None not in seen else None

    return await eventually(reached, timeout, "the next action reaches every player") - moment


def _raise_failed(tasks: list[asyncio.Task[None]]) -> None:
    """A player's loop that died is a test bug (or a client one): say so at once."""
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise AssertionError(f"player {task.get_name()} stopped") from task.exception()


def cards_seen(players: list[Player], hand: int) -> dict[int, tuple[list[str], list[str]]]:
    """Each seat's up and down cards in ``hand``, as its own player sees them now."""
    seen = {}
    for player in players:
        view = player.table.view
        me = view.me
        if view.hand_number == hand and me is not None and me.in_hand:
            seen[me.seat] = (list(me.up), list(me.down))
    return seen


def cards_recorded(hand: HandRow) -> dict[int, tuple[list[str], list[str]]]:
    """Each seat's up and down cards in a hand's record, in the order dealt."""
    cards: dict[int, tuple[list[str], list[str]]] = {}
    for event in hand.events:
        data = event.get("data", {})
        if event.get("kind") == "street_dealt":
            for deal in data.get("deals", ()):
                cards.setdefault(deal["seat"], ([], []))[0].extend(deal.get("up", ()))
        elif event.get("kind") == "down_cards":
            cards.setdefault(data["seat"], ([], []))[1].extend(data.get("cards", ()))
    return cards


async def agreed_state(
    cluster: Cluster, table_id: int, players: list[Player], timeout: float = 15
) -> Any:
    """The table's state once every client and a fresh snapshot on every live node agree
    on it (play has stopped: they must, soon); AssertionError with every picture if not."""
    deadline = time.monotonic() + timeout
    while True:
        states = {
            f"client {p.name} (via {p.client.base_url})": table_state(p.table.view) for p in players
        }
        for node in cluster.alive():
            states[f"snapshot via {node.id}"] = table_state(
                await cluster.snapshot(table_id, via=node)
            )
        if len(set(states.values())) == 1:
            final = next(iter(states.values()))
            seats = final[1]
            assert all(player is not None and out for _, player, _, _, out in seats), seats
            return final
        if time.monotonic() > deadline:
            lines = "\n".join(f"{who}: {state}" for who, state in states.items())
            raise AssertionError(f"the clients and the snapshots disagree:\n{lines}")
        await asyncio.sleep(0.2)


async def check_books(cluster: Cluster, table_id: int, players: list[Player], final: Any) -> None:
    books = await cluster.books()
    assert books["balanced"] and not books["mismatched"], books
    assert books["granted"] == BANKROLL * len(players), books  # operators get nothing
    stacks = sum(stack + pending for _, _, stack, pending, _ in final[1])
    assert books["tables"][str(table_id)] == {"pool": stacks, "seats": stacks}, (books, final)
    wallets = [await cluster.wallet(p.token) for p in players]
    assert sum(wallets) + stacks == BANKROLL * len(players), (wallets, stacks)
