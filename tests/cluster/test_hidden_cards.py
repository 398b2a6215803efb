"""No down card reaches anyone but its owner before it is shown, and a folded or mucked hand
is never shown: checked on every frame every connection of a two-node cardroom receives.

Three tables (seven-card stud, hi-lo, razz) play at least 300 hands between bots whose
websockets are split across nodes A and B. Around them: a signed-in spectator on each node,
a second connection of one seated player per table on the node the player is not on
(watching all three tables: its own and two where it sits nowhere), a logged-out socket on
each node asking for snapshots in a loop, and clients that drop their connection mid-hand
and come back with a resync (one bot per table, and a spectator). Every frame they receive
is kept as its raw text and judged by ``card_scanner`` against the hand records the server
keeps for its operators (``GET /admin/hands/{id}/events``), never against the frames
themselves. Each player's own history of each hand (``GET /hands/{id}``, PHH included) is
judged the same way.

The scanner is checked on frames made up for it (it must find each leak planted in them),
and on the frames of the cardroom: one player's own frames, posed as a spectator's, must be
found leaking that player's down cards.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import httpx
import pytest
from card_scanner import HandTruth, Recorded, cards_in, history_leaks, scan
from cluster_harness import Cluster, Gate, Node, Player, eventually
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from stud_bots import passive
from stud_bots.strategies import wager
from stud_client import Action, LegalActions, StudClient, Table, TableView

STAKES = {"ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10}
VARIANTS = ("seven_card_stud", "seven_card_stud_hi_lo", "razz")
SEATS = 4
BUY_IN = 200
HANDS = 300  # at least, over the three tables
HANDS_PER_TABLE = 90  # at least, at each
DROPS = 3  # mid-hand disconnections of each dropping client, at least
PLAY_SECONDS = 300  # the most the hands may take
# Database timeouts and leases long enough that a busy machine never pauses a table or
# moves it: this test is about what each connection is sent, not about failures
# (``test_failover.py`` breaks things).
CALM = {
    "STUD_DB_TIMEOUT_SECONDS": "15",
    "STUD_LEASE_SECONDS": "15",
    "STUD_ACTION_CLOCK_SECONDS": "5",
}


# ---------------------------------------------------------------------- the scanner alone


def _event(seq: int, kind: str, data: dict[str, Any], *, private: bool = False) -> str:
    frame: dict[str, Any] = {"v": 1, "type": "event", "table": 7, "run": 1, "seq": seq}
    frame |= {"kind": kind, "data": data}
    if private:
        frame["private"] = True
    return json.dumps(frame)


def _snapshot(seq: int, seats: dict[str, Any]) -> str:
    result = {
        "type": "snapshot",
        "table": 7,
        "seq": seq,
        "hand_number": 1,
        "hand": {"seats": seats},
    }
    return json.dumps({"v": 1, "type": "reply", "id": 3, "result": result})


def _record(kind: str, data: dict[str, Any], to: int | None = None) -> dict[str, Any]:
    audience = "everyone" if to is None else ("ann", "bob", "cat")[to]
    if kind == "down_cards":
        data = {"seat": to, **data}
    return {"kind": kind, "data": data, "to": to, "audience": audience}


def _deals(street: str, *deals: tuple[int, list[str]]) -> dict[str, Any]:
    dealt = [{"seat": seat, "up": up, "down": 0 if up else 1} for seat, up in deals]
    return {"street": street, "deals": dealt}


# Hand 1 of table 7: ann (seat 0) holds As Ks, bob (seat 1) Qd Qc, cat (seat 2) 4h 5h, with
# 7h, 2c and 9s up (seq 5); cat folds; fourth street, 8c and 3d, is dealt at seq 10; seventh,
# ann's Jh and bob's Tc, at seq 15; bob is shown at seq 20, ann mucks.
TRUTH = HandTruth.from_events(
    7,
    1,
    [
        _record("down_cards", {"street": "third", "cards": ["As", "Ks"]}, 0),
        _record("down_cards", {"street": "third", "cards": ["Qd", "Qc"]}, 1),
        _record("down_cards", {"street": "third", "cards": ["4h", "5h"]}, 2),
        _record("street_dealt", _deals("third", (0, ["7h"]), (1, ["2c"]), (2, ["9s"]))),
        _record("action", {"seat": 2, "action": "fold"}),
        _record("street_dealt", _deals("fourth", (0, ["8c"]), (1, ["3d"]))),
        _record("down_cards", {"street": "seventh", "cards": ["Jh"]}, 0),
        _record("down_cards", {"street": "seventh", "cards": ["Tc"]}, 1),
        _record("street_dealt", _deals("seventh", (0, []), (1, []))),
        _record("showdown", {"seat": 1, "cards": ["Qd", "Qc", "2c", "3d", "Tc"]}),
        _record("muck", {"seat": 0}),
    ],
)
HAND = [
    _event(3, "hand_number", {"hand": 1}),
    _event(5, "street_dealt", _deals("third", (0, ["7h"]), (1, ["2c"]), (2, ["9s"]))),
    _event(10, "street_dealt", _deals("fourth", (0, ["8c"]), (1, ["3d"]))),
    _event(15, "street_dealt", _deals("seventh", (0, []), (1, []))),
    _event(20, "showdown", {"seat": 1, "cards": ["Qd", "Qc", "2c", "3d", "Tc"]}),
    _event(21, "muck", {"seat": 0}),
]


def _scan(*extra: Recorded, played: list[str] = HAND) -> Any:
    frames = [Recorded("spectator", None, text) for text in played]
    return scan([*frames, *extra], {(7, 1): TRUTH})


def test_the_scanner_finds_every_card_in_any_field() -> None:
    assert cards_in({"a": ["As", {"Kd": 1}], "text": "2c brings it in", "phh": "p1 sm AsKs7h"}) == {
        "As",
        "Kd",
        "2c",
        "Ks",
        "7h",
    }
    # not inside a word, a number or a hex digest
    assert cards_in(["Kings", "a2c9", "12c", "Ask", "seat 2"]) == set()


def test_the_scanner_passes_a_clean_hand_and_counts_what_it_saw() -> None:
    report = _scan(
        Recorded("ann", "ann", _event(5, "down_cards", {"cards": ["As", "Ks"]}, private=True)),
        Recorded("ann-2", "ann", _snapshot(9, {"0": {"down": ["As", "Ks"], "up": ["7h"]}})),
        Recorded("cat", "cat", _snapshot(20, {"1": {"down": ["Qd", "Qc"]}})),  # shown now
    )
    assert report.leaks == [] and report.problems == []
    assert report.own_down_seen == Counter({("ann", 7, 1): 2, ("ann-2", 7, 1): 2})
    assert report.snapshots_with_own_down == 2
    assert report.shown_seen == 3 + 2  # the showdown event and cat's snapshot of it


@pytest.mark.parametrize(
    ("frame", "card", "why"),
    [
        # another seat's down card before it is shown: to a spectator, to a player
        (Recorded("watch", None, _snapshot(19, {"1": {"down": ["Qd"]}})), "Qd", "shown only"),
        (Recorded("ann", "ann", _event(8, "chat", {"text": "bob has Qc"})), "Qc", "shown only"),
        # written with a JSON escape
        (
            Recorded("watch", None, _event(19, "chat", {"text": "Q"}).replace('"Q"', '"\\u0051d"')),
            "Qd",
            "shown only",
        ),
        # any card before its street is dealt: to anyone, to its owner
        (Recorded("watch", None, _event(8, "turn", {"x": "8c"})), "8c", "fourth street, at seq 10"),
        (
            Recorded("ann", "ann", _event(12, "down_cards", {"cards": ["Jh"]}, private=True)),
            "Jh",
            "seventh street, at seq 15",
        ),
        # a folded or a mucked hand's card, even after the hand
        (Recorded("bob", "bob", _snapshot(30, {"2": {"down": ["4h"]}})), "4h", "folded"),
        (Recorded("watch", None, _event(22, "hand_ended", {"x": "As"})), "As", "mucked"),
        # a card the hand never dealt (the deck's next card, say)
        (Recorded("cat", "cat", _event(6, "turn", {"next": "8d"})), "8d", "never dealt"),
        # a card in a frame that belongs to no table, or to no hand
        (Recorded("anon", None, json.dumps({"type": "error", "message": "Ks"})), "Ks", "no table"),
        (Recorded("anon", None, _event(2, "seat_taken", {"x": "Ks"})), "Ks", "no recorded hand"),
    ],
)
def test_the_scanner_finds_a_planted_leak(frame: Recorded, card: str, why: str) -> None:
    report = _scan(frame)
    assert [leak.card for leak in report.leaks] == [card], report.leaks
    assert why in report.leaks[0].why


def test_the_scanner_reports_frames_that_disagree_with_the_record() -> None:
    wrong = _event(20, "showdown", {"seat": 1, "cards": ["Qd", "Jc", "2c", "3d", "Tc"]})
    report = _scan(played=[*HAND[:4], wrong, HAND[5]])
    assert any("not the record's showdown" in problem for problem in report.problems)
    assert [leak.card for leak in report.leaks] == ["Jc"]  # dealt nowhere in the hand
    unshown = _scan(played=[*HAND[:4], HAND[5]])
    assert any("no frame showed seat 1" in problem for problem in unshown.problems)
    public = {**_record("down_cards", {"street": "third", "cards": ["8h"]}, 2), "to": None}
    told = HandTruth.from_events(7, 2, [public])
    assert told.misaddressed == ("8h",)
    assert any("8h to more than their seat" in p for p in scan([], {(7, 2): told}).problems)


def test_a_players_history_shows_only_what_the_player_saw() -> None:
    fair = {"events": [{"data": {"cards": ["As", "Ks", "Qd", "Qc", "2c", "7h", "9s"]}}]}
    assert history_leaks("ann", TRUTH, fair) == []
    leaked = history_leaks("bob", TRUTH, {**fair, "phh": "p3 sm 4h5h9s"})
    assert [(leak.card, leak.why) for leak in leaked] == [
        ("4h", "is a down card of seat 2"),
        ("5h", "is a down card of seat 2"),
        ("As", "is a down card of seat 0"),
        ("Ks", "is a down card of seat 0"),
    ]


# ---------------------------------------------------------------------- the cardroom


class RecordingClient(StudClient):
    """A ``StudClient`` (a bot's) that keeps the raw text of every frame it receives, after
    the handshake's ``hello``."""

    def __init__(
        self, connection: str, player: str, frames: list[Recorded], url: str, **kw: Any
    ) -> None:
        super().__init__(url, heartbeat=1.0, request_timeout=5.0, backoff=(0.05, 0.5), **kw)
        self.connection = connection
        self.recorded_player = player
        self.frames = frames
        self.received = 0

    def _on_text(self, text: str | bytes) -> None:
        raw = text if isinstance(text, str) else text.decode()
        self.received += 1
        self.frames.append(Recorded(self.connection, self.recorded_player, raw))
        super()._on_text(text)


class Watcher:
    """A bare websocket that signs in (or not), watches tables and keeps the raw text of
    every frame it receives, ``hello`` included; it folds nothing, so a dozen of them cost
    the test little. ``drop`` cuts it as a network failure would and comes back with a
    ``resync`` of every table; ``ask`` sends a message without waiting for its answer."""

    def __init__(
        self,
        connection: str,
        player: str | None,
        token: str | None,
        node: Node,
        frames: list[Recorded],
        tables: list[int],
    ) -> None:
        self.connection = connection
        self.player = player
        self.token = token
        self.url = node.url.replace("http://", "ws://") + "/ws"
        self.frames = frames
        self.tables = tables
        self.received = 0
        self.snapshots = 0
        self.drops = 0
        self._ids = 0
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._beat: asyncio.Task[None] | None = None

    async def start(self, how: str = "watch") -> None:
        self._ws = await connect(self.url, max_size=2**20)
        self._reader = asyncio.create_task(self._read(self._ws))
        if self.token is not None:
            await self.ask("auth", token=self.token)
        for table in self.tables:
            await self.ask(how, table=table)
        if self._beat is None:
            self._beat = asyncio.create_task(self._ping())

    async def ask(self, kind: str, **fields: Any) -> None:
        assert self._ws is not None
        self._ids += 1
        await self._ws.send(json.dumps({"type": kind, "id": self._ids, **fields}))

    async def drop(self) -> None:
        assert self._ws is not None and self._reader is not None
        self._ws.transport.abort()
        await self._reader
        self.drops += 1
        await self.start("resync")

    async def close(self) -> None:
        for task in (self._beat, self._reader):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if self._ws is not None:
            with contextlib.suppress(ConnectionClosed, OSError):
                await self._ws.close()

    async def _read(self, ws: ClientConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for text in ws:
                raw = text if isinstance(text, str) else text.decode()
                self.received += 1
                self.snapshots += "snapshot" in raw and '"type":"snapshot"' in raw.replace(" ", "")
                self.frames.append(Recorded(self.connection, self.player, raw))

    async def _ping(self) -> None:
        while True:
            await asyncio.sleep(5)
            with contextlib.suppress(ConnectionClosed, AssertionError):
                await self.ask("ping")


def folding(legal: LegalActions, rng: random.Random) -> Action:
    """Fold a fifth of the time when facing a bet (so that hands are folded on every
    street), bet or raise now and then, else check or call (so that many reach a showdown,
    where losing hands are mucked)."""
    roll = rng.random()
    if "fold" in legal.kinds and "check" not in legal.kinds and roll < 0.2:
        return Action("fold")
    if legal.wager is not None and legal.wager in legal.kinds and roll > 0.85:
        return wager(legal, low=True)
    return passive(legal)


def _mid_hand(view: TableView) -> bool:
    return (
        view.hand_number is not None
        and not view.hand_over
        and view.street in ("fourth", "fifth", "sixth")
    )


async def _drop_mid_hand(
    drop: Callable[[], Awaitable[None]], table: Table, stop: asyncio.Event
) -> int:
    """Drop a connection while ``table`` is on fourth street or later, every few seconds;
    how many times it did."""
    drops = 0
    while not stop.is_set():
        try:
            await table.wait_for(_mid_hand, 5)
        except TimeoutError:
            continue
        await drop()
        drops += 1
        await asyncio.sleep(random.uniform(2.0, 4.0))
    return drops


async def _drop_bot(client: StudClient) -> None:
    """Cut a bot's socket and wait until it is back (it resyncs by itself)."""
    before = client.stats.reconnects
    await client.drop_connection()
    deadline = time.monotonic() + 15
    while client.stats.reconnects == before:
        assert time.monotonic() < deadline, "a dropped client did not come back"
        await asyncio.sleep(0.05)


async def _events_settled(
    frames: list[Recorded], quiet: float = 1.0, timeout: float = 15.0
) -> None:
    """Until no table event has reached any connection for ``quiet`` seconds: play has
    stopped, and the last frames of the last hands are in. (Only the scan's thoroughness
    depends on it: past ``timeout`` the scan reads what came.)"""
    read, last = 0, time.monotonic()
    deadline = last + timeout
    while time.monotonic() < deadline:
        came = any('"type":"event"' in r.text.replace(" ", "") for r in frames[read:])
        read = len(frames)
        if came:
            last = time.monotonic()
        elif time.monotonic() - last >= quiet:
            return
        await asyncio.sleep(0.1)


async def _ask_snapshots(watcher: Watcher, stop: asyncio.Event) -> None:
    """A logged-out socket asking for snapshots of each table in turn (``resync``, and now
    and then ``watch`` again), within its message rate."""
    asked = 0
    while not stop.is_set():
        for table in watcher.tables:
            await watcher.ask("watch" if asked % 5 == 4 else "resync", table=table)
            asked += 1
            await asyncio.sleep(0.45)


async def _seat(
    cluster: Cluster, frames: list[Recorded], name: str, node: Node, table_id: int, seed: int
) -> Player:
    token = await cluster.register(name, via=node)
    others = [n.url for n in cluster.others(node.id)]
    client = RecordingClient(name, name, frames, node.url, token=token, fallback_urls=others)
    await client.connect()
    table = await client.watch(table_id)
    player = Player(name, token, node.id, client, table, Gate(), random.Random(seed), BUY_IN)
    player.policy = folding
    await table.sit(BUY_IN)
    return player


async def _get_all(
    cluster: Cluster, paths: list[tuple[str, str]], concurrency: int = 6
) -> list[Any]:
    """``GET`` each (path, token) pair, a few at a time, through node A; the bodies."""
    limit = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=cluster.node("A").url, timeout=30) as http:

        async def get(path: str, token: str) -> Any:
            async with limit:
                response = await http.get(path, headers={"Authorization": f"Bearer {token}"})
            assert response.status_code == 200, (path, response.status_code, response.text)
            return response.json()

        return await asyncio.gather(*(get(path, token) for path, token in paths))


async def _truths(cluster: Cluster, ids: list[int]) -> dict[tuple[int, int], tuple[int, HandTruth]]:
    """Every recorded hand of the tables, as the operator's record has it: by (table,
    number), its id and its truth."""
    boss = await cluster.operator_token()
    keys: dict[tuple[int, int], int] = {}
    players: dict[tuple[int, int], dict[int, str]] = {}
    for table_id in ids:
        offset: int | None = 0
        while offset is not None:
            page = await cluster.request(
                "GET", f"/admin/hands?table={table_id}&limit=200&offset={offset}", token=boss
            )
            for row in page["hands"]:
                keys[(table_id, row["number"])] = row["id"]
                players[(table_id, row["number"])] = {
                    part["seat"]: part["player"] for part in row["players"]
                }
            offset = page["next_offset"]
    records = await _get_all(cluster, [(f"/admin/hands/{i}/events", boss) for i in keys.values()])
    return {
        key: (hand_id, HandTruth.from_events(*key, record["events"], players[key]))
        for (key, hand_id), record in zip(keys.items(), records, strict=True)
    }


@pytest.mark.cluster
@pytest.mark.node_settings(CALM)
async def test_no_down_card_reaches_anyone_but_its_owner(cluster: Cluster) -> None:
    started = time.monotonic()
    nodes = [cluster.node("A"), cluster.node("B")]
    ids = [
        await cluster.open_table(
            f"hidden-{variant}", {"variant": variant, **STAKES}, seats=SEATS, via=nodes[n % 2]
        )
        for n, variant in enumerate(VARIANTS)
    ]
    frames: list[Recorded] = []
    watchers: list[Watcher] = []
    players: list[Player] = []
    tasks: list[asyncio.Task[Any]] = []  # the snapshot loops
    plays: list[asyncio.Task[None]] = []
    drops: list[asyncio.Task[int]] = []
    stop = asyncio.Event()
    try:
        # The watchers first, so that they see every hand from its first event: a
        # signed-in spectator and a logged-out socket on each node, and a spectator who
        # drops and comes back.
        for node in nodes:
            name = f"watch{node.id}"
            token = await cluster.register(name, via=node)
            watchers.append(Watcher(name, name, token, node, frames, ids))
            watchers.append(Watcher(f"anon{node.id}", None, None, node, frames, ids))
        token = await cluster.register("wanderer", via=nodes[1])
        wanderer = Watcher("wanderer", "wanderer", token, nodes[1], frames, ids)
        watchers.append(wanderer)
        for watcher in watchers:
            await watcher.start()
        seconds: list[Watcher] = []
        dropping: list[Player] = []
        for t, table_id in enumerate(ids):
            for seat in range(SEATS):
                name = f"p{t}{seat}"
                node = nodes[(seat + t) % 2]
                player = await _seat(cluster, frames, name, node, table_id, seed=10 * t + seat)
                players.append(player)
                if seat == 0:  # a second connection, on the other node, to every table
                    other = nodes[(seat + t + 1) % 2]
                    second = Watcher(f"{name}-2", name, player.token, other, frames, ids)
                    await second.start()
                    seconds.append(second)
                    watchers.append(second)
                elif seat == 1:
                    dropping.append(player)
        tasks += [asyncio.create_task(_ask_snapshots(w, stop)) for w in watchers if not w.token]
        plays += [asyncio.create_task(p.play()) for p in players]
        drops += [
            asyncio.create_task(_drop_mid_hand(partial(_drop_bot, p.client), p.table, stop))
            for p in dropping
        ]
        drops.append(asyncio.create_task(_drop_mid_hand(wanderer.drop, players[0].table, stop)))

        async def played_enough() -> bool:
            counts = [len(await cluster.finished_hands(table_id)) for table_id in ids]
            return sum(counts) >= HANDS and min(counts) >= HANDS_PER_TABLE

        await eventually(played_enough, PLAY_SECONDS, f"{HANDS} hands played", every=1.0)
        stop.set()
        for player in players:
            player.stopping = True
        async with asyncio.timeout(60):
            await asyncio.gather(*plays)
            dropped = await asyncio.gather(*drops)
            await asyncio.gather(*tasks)
        await _events_settled(frames)  # the last frames of the last hands
    finally:
        stop.set()
        for task in [*tasks, *plays, *drops]:
            task.cancel()
        await asyncio.gather(*tasks, *plays, *drops, return_exceptions=True)
        for player in players:
            await player.close()
        for watcher in watchers:
            await watcher.close()
    played_at = time.monotonic()

    # The truth: every hand as the operator's record has it; then every frame judged.
    recorded = await _truths(cluster, ids)
    truths = {key: truth for key, (_, truth) in recorded.items()}
    report = scan(frames, truths)
    assert not report.leaks, (
        "\n".join(map(str, report.leaks[:20])) + f"\n({len(report.leaks)} in all)"
    )
    assert not report.problems, report.problems[:20]

    # Each player's own history of each hand it played, PHH file included.
    tokens = {p.name: p.token for p in players}
    asked = [
        (key, name, f"/hands/{hand_id}", tokens[name])
        for key, (hand_id, truth) in recorded.items()
        for name in truth.players.values()
    ]
    histories = await _get_all(cluster, [(path, token) for _, _, path, token in asked])
    leaks = [
        leak
        for (key, name, _, _), history in zip(asked, histories, strict=True)
        for leak in history_leaks(name, truths[key], history)
    ]
    assert not leaks, "\n".join(map(str, leaks[:20]))
    scanned_at = time.monotonic()

    # Not vacuous: what was played, and what the scan saw.
    dealt = [key for key, truth in truths.items() if truth.down]
    per_variant = Counter(VARIANTS[ids.index(table)] for table, _ in dealt)
    assert len(dealt) >= HANDS and min(per_variant.values()) >= HANDS_PER_TABLE, per_variant
    folded = sum(len(t.folded & set(t.down)) for t in truths.values())
    mucked = sum(len(t.mucked) for t in truths.values())
    shown = sum(len(t.shown) for t in truths.values())
    assert folded >= 100 and mucked >= 30 and shown >= 100, (folded, mucked, shown)
    assert report.shown_seen >= shown, report.shown_seen  # each showdown is seen by many
    # The owners' connections did receive their own down cards, resyncs included: the scan
    # reads the fields they come in.
    assert report.snapshots_with_own_down > 0
    owners = [(p.name, p.name) for p in players] + [(w.connection, w.player) for w in seconds]
    for connection, owner in owners:
        theirs = {key for key, truth in truths.items() if truth.seat_of(owner) is not None}
        seen = {(t, h) for (c, t, h) in report.own_down_seen if c == connection}
        assert len(seen & theirs) >= 0.9 * len(theirs) > 0, (connection, len(seen), len(theirs))
    # The same frames, as if a spectator had received one player's: the scan finds the leak.
    first = players[0].name
    posing = [Recorded(r.connection, None, r.text) for r in frames if r.player == first]
    leaked = scan(posing, truths).leaks
    assert leaked and {leak.why.split(",")[0] for leak in leaked} == {
        f"is a down card of seat {truths[key].seat_of(first)}"
        for key in {(leak.table, leak.hand) for leak in leaked}
        if key in truths
    }
    assert min(dropped) >= DROPS, dropped
    for watcher in watchers:
        assert watcher.received > 100, (watcher.connection, watcher.received)
        if watcher.token is None:
            assert watcher.snapshots >= 20, (watcher.connection, watcher.snapshots)
    for player in players:
        assert not player.client.stats.errors.get("internal_error"), player.client.stats
    for node in nodes:
        assert not node.errors(), cluster.logs()
    print(
        f"\n{len(dealt)} hands {dict(per_variant)}; {report.frames} frames to "
        f"{len(players) + len(watchers)} connections, {report.frames_with_cards} naming cards, "
        f"{report.cards_checked} card mentions judged; {folded} folded hands, {mucked} mucked, "
        f"{shown} shown; {len(histories)} histories; drops {dropped}; snapshots to logged-out "
        f"sockets {[w.snapshots for w in watchers if w.token is None]}; play "
        f"{played_at - started:.0f} s, judging {scanned_at - played_at:.0f} s"
    )
