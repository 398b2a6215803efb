"""A scheduled tournament of bots played to a winner, and the registration burst before it.

Starts a server of its own (as ``bench/load.py``: the embedded SQLite default, or PostgreSQL
and Redis), makes ``--entrants`` bot accounts, creates a scheduled stud tournament through
the admin API (tables of 8, short levels: ``--level-minutes`` of fixed-limit stud's ladder,
``engine.tournament.templates.LADDER``), and then:

- **the registration burst**: every entrant registers at once (``POST
  /tournaments/{id}/register``): registrations a second, and each one's latency, p50/p99;
- **the start**: the entrants connect (``bench/tournament_bots.py``, ``--workers``
  processes), the start is set a few seconds on, and the director draws the field and opens
  the tables: the time from the start to the first hand dealt and to the last table's first;
- **the play, to a winner**: the time to it and the hands dealt (the journal's); the action
  latency at the clients (from an ``act`` sent to the ``action`` event it caused), over the
  whole run, over its first two minutes and its worst minute; the event loop's lag (a
  ``ping`` every 0.25 s); the server's CPU and garbage collections (``/metrics``);
- **each minute, whose latency it was**: beside the bots' p99, the node's loop (the ping's
  p99), the bots' own loop (how late their processes ran a timer), the node's CPU and the
  bots', and the share of the node's ``act`` commands answered 50 ms or more after entering
  their table's inbox (over 1%, the node alone puts the minute over the target); the node's
  full collections from its log (when, over what heap, how long) and the bots' own passes;
- **the balancing**: the moves by reason, and how long each waited from the balancing first
  waiting for (or holding) the table the player left (the journal replayed:
  ``engine.tournament.journal``): in seconds and in hands that table dealt meanwhile (done
  within one hand: at most 1); and the pauses between two hands of a table as its players
  saw them, past the table's own pause (2 s, from the director's permit): how long the
  director held a table up, apart from the holds the rules make (the final table's draw,
  hand-for-hand, a break);
- **the director's CPU**: its task's own CPU time on the event loop
  (``stud_tournament_director_cpu_seconds_total``), per hand.

    python bench/tournament.py [--entrants 1000] [--backend sqlite|postgresql]
                               [--level-minutes 1] [--think 0.1,0.6] [--workers 2]
                               [--json PATH] [--stalls MS]

The targets it checks: p99 action latency under ``--p99-ms`` (50 ms) in every minute, and no
table held up by the director longer than the pause between hands.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "cluster")]

import load  # noqa: E402
from load import (  # noqa: E402
    OPERATOR,
    PASSWORD,
    Cardroom,
    Probe,
    ProcessSample,
    ServerCounts,
    Workers,
    bot_account,
    login,
    percentile,
    post_when_free,
)
from tournament_bots import EntrantSpec, TournamentStats, worker_main  # noqa: E402

from engine.tournament import journal  # noqa: E402
from engine.tournament.orders import Deal, Moved  # noqa: E402
from engine.tournament.run import TournamentRun  # noqa: E402
from engine.tournament.spec import TournamentSpec  # noqa: E402
from engine.tournament.templates import LADDER  # noqa: E402
from server.tournaments.director import REPLAY_SLICE  # noqa: E402

SEATS = 8
PAUSE = 2.0  # the tables' pause between hands (the server's default)
START_AFTER = 5.0  # seconds from the entrants connected to the scheduled start


@dataclass(frozen=True)
class Options:
    entrants: int
    backend: str
    level_minutes: float
    starting_chips: int
    think: tuple[float, float]
    workers: int
    burst_connections: int
    p99_ms: float
    json_path: Path | None
    stall_ms: float
    timeout_minutes: float
    minutes: float | None = None  # stop after this much play, winner or not
    burst_only: bool = False  # the registration burst, and no play
    thaw_seconds: float | None = None  # the node's collector (STUD_COLLECTOR_THAW_SECONDS)


def tournament_format(options: Options) -> dict[str, Any]:
    """A scheduled seven-card stud freezeout of ``options.entrants`` on tables of 8."""
    return {
        "kind": "scheduled",
        "variant": "seven_card_stud",
        "betting": "fixed_limit",
        "seats_per_table": SEATS,
        "structure": {
            "starting_chips": options.starting_chips,
            "entries": [
                {
                    "ante": a,
                    "bring_in": b,
                    "small_bet": s,
                    "big_bet": big,
                    "minutes": options.level_minutes,
                }
                for a, b, s, big in LADDER
            ],
        },  # fmt: skip
        "buy_in": 10,
        "fee": 1,
        "min_entrants": 2,
        "max_entrants": options.entrants,
        "payout_table": "scheduled",
    }


# ---------------------------------------------------------------------- the entrants


@dataclass(frozen=True)
class Burst:
    """The registration burst: every entrant at once."""

    entrants: int
    seconds: float
    per_second: float
    p50_ms: float | None
    p99_ms: float | None
    failures: int
    shed: dict[str, int]  # 503 answers by code, each tried again after its Retry-After
    dropped: int  # connections the server closed under a request, tried again


async def register_all(
    base: str, tournament: int, tokens: dict[str, str], connections: int
) -> Burst:
    """Every entrant's ``register`` sent at once, over up to ``connections`` connections; a
    503 tried again after its ``Retry-After``, a connection lost under it at once (the same
    ``request_id``: registration is idempotent). Each latency from its first try."""
    latencies: list[float] = []
    failures = 0
    shed: Counter[str] = Counter()
    dropped = 0
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(timeout=120, limits=limits) as burst:

        async def register(name: str, token: str) -> None:
            nonlocal failures, dropped
            sent = time.perf_counter()
            for _ in range(100):
                try:
                    response = await burst.post(
                        f"{base}/tournaments/{tournament}/register",
                        json={"request_id": f"bench-{name}"},
                        headers={"Authorization": f"Bearer {token}"},
                    )
                except (httpx.ReadError, httpx.RemoteProtocolError, httpx.ConnectError):
                    dropped += 1
                    continue
                if response.status_code != 503:
                    break
                shed[str(response.json().get("error", {}).get("code"))] += 1
                await asyncio.sleep(float(response.headers.get("retry-after", "1")))
            latencies.append(time.perf_counter() - sent)
            if response.status_code not in (200, 201):
                failures += 1
                if failures <= 3:
                    print(f"  registration refused: {response.text}", file=sys.stderr)

        started = time.perf_counter()
        await asyncio.gather(*(register(name, token) for name, token in tokens.items()))
        took = time.perf_counter() - started
    return Burst(
        entrants=len(tokens),
        seconds=took,
        per_second=len(tokens) / took,
        p50_ms=ms(percentile(latencies, 0.5)),
        p99_ms=ms(percentile(latencies, 0.99)),
        failures=failures,
        shed=dict(shed),
        dropped=dropped,
    )


# ---------------------------------------------------------------------- the follower


class Follower:
    """One signed-in websocket following the tournament: when it started, its field as the
    players leave, hand-for-hand on and off, and its end (wall-clock times)."""

    def __init__(self, url: str, token: str, tournament: int) -> None:
        self.url, self.token, self.tournament = url, token, tournament
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self.winner: str | None = None
        self.players_left: int | None = None
        self.tables: int | None = None
        self.level: int | None = None
        self.hand_for_hand: list[tuple[float, bool]] = []
        self.finished = asyncio.Event()

    async def run(self) -> None:
        async with connect(self.url, compression=None, ping_interval=20, max_size=2**24) as ws:
            await ws.recv()  # hello
            await ws.send(orjson.dumps({"type": "auth", "id": 1, "token": self.token}).decode())
            await ws.send(
                orjson.dumps(
                    {"type": "subscribe_tournament", "id": 2, "tournament": self.tournament}
                ).decode()
            )
            beat = asyncio.create_task(self._beat(ws))
            try:
                await self._follow(ws)
            finally:
                beat.cancel()

    async def _beat(self, ws: Any) -> None:
        """The heartbeat docs/protocol.md asks of a client (a follower says nothing else)."""
        while True:
            await asyncio.sleep(10)
            await ws.send(orjson.dumps({"type": "ping", "id": 0}).decode())

    async def _follow(self, ws: Any) -> None:
        if True:
            async for raw in ws:
                frame = orjson.loads(raw)
                if frame.get("type") == "tournament_event":
                    self._event(frame["kind"], frame["data"])
                if self.finished.is_set():
                    return

    def _event(self, kind: str, data: dict[str, Any]) -> None:
        now = time.time()
        self.players_left = data.get("players_left", self.players_left)
        self.tables = data.get("tables", self.tables)
        if isinstance(data.get("level"), dict):
            self.level = data["level"].get("number")
        if kind == "started":
            self.started_at = now
        elif kind == "hand_for_hand":
            self.hand_for_hand.append((now, bool(data["on"])))
        elif kind == "finished":
            self.finished_at = now
            self.winner = data.get("winner")
            self.finished.set()


# ---------------------------------------------------------------------- the figures


@dataclass(frozen=True)
class MoveFigures:
    by_reason: dict[str, int]
    waited_p50_s: float | None
    waited_p99_s: float | None
    waited_max_s: float | None
    hands_waited: dict[int, int]  # hands the table left dealt meanwhile: moves
    replay_s: float  # the whole journal replayed, as a director taking over replays it
    longest_slice_ms: float  # the longest REPLAY_SLICE facts of it (one turn of its loop)


def journal_figures(
    record: dict[str, Any], spec: dict[str, Any], tournament: int
) -> tuple[MoveFigures, set[tuple[int, int]]]:
    """The tournament's journal replayed (``engine.tournament.journal``): its moves, how long
    each waited (seconds, and the hands the table the player left dealt since the balancing
    first waited for it); and the hands each table was let deal as the hand before it was taken
    (table number, hand), not held back by the rules (the final table's draw waiting for the
    other tables, hand-for-hand, a break)."""
    facts = record["journal"]
    run = TournamentRun(
        TournamentSpec.from_dict(spec),
        tournament_id=tournament,
        seed=bytes.fromhex(record["draw"]["seed"]),
        prize_pool=int(facts[0]["data"]["prize_pool"]),
    )
    hands_at: dict[int, list[float]] = {}
    moves: list[tuple[Moved, float]] = []
    at_once: set[tuple[int, int]] = set()
    replay, longest, slice_began = 0.0, 0.0, time.perf_counter()
    for count, fact in enumerate(facts, 1):
        if count % REPLAY_SLICE == 0:
            longest = max(longest, time.perf_counter() - slice_began)
            slice_began = time.perf_counter()
        if fact["kind"] in journal.RECORD_KINDS:
            continue
        began = time.perf_counter()
        orders = journal.replay(run, fact["kind"], fact["data"], float(fact["at"]))
        replay += time.perf_counter() - began
        if fact["kind"] == "hand":
            table, number = int(fact["data"]["table"]), int(fact["data"]["number"])
            hands_at.setdefault(table, []).append(float(fact["at"]))
            if Deal(table, number + 1) in orders:
                at_once.add((table, number + 1))
        moves += [(order, float(fact["at"])) for order in orders if isinstance(order, Moved)]
    waits = [move.waited for move, _ in moves]
    hands: Counter[int] = Counter()
    for move, at in moves:
        since = at - move.waited
        hands[sum(1 for t in hands_at.get(move.from_table, []) if since < t <= at)] += 1
    figures = MoveFigures(
        by_reason=dict(Counter(move.reason for move, _ in moves)),
        waited_p50_s=percentile(waits, 0.5),
        waited_p99_s=percentile(waits, 0.99),
        waited_max_s=max(waits, default=None),
        hands_waited=dict(sorted(hands.items())),
        replay_s=replay,
        longest_slice_ms=max(longest, time.perf_counter() - slice_began) * 1000,
    )
    return figures, at_once


def pauses_past(
    pauses: Sequence[tuple[int, int, float, bool, float]],
    numbers: dict[int, int],
    at_once: set[tuple[int, int]],
) -> tuple[list[float], list[float]]:
    """Each pause between two hands of a table past the table's own (seconds; one per table
    and hand, the least any of its players saw): those of hands let deal at once (the
    director's own delay), and those the rules held back. A tournament table's pause runs
    from its director's permit for the next hand, which comes after the hand's end (so not
    the longer one after a showdown): what passes beyond it is the director's."""
    least: dict[tuple[int, int], float] = {}
    for table, hand, pause, _, _ in pauses:
        least[(table, hand)] = min(pause, least.get((table, hand), pause))
    director: list[float] = []
    held: list[float] = []
    for (table, hand), pause in least.items():
        past = pause - PAUSE
        (director if (numbers.get(table), hand) in at_once else held).append(past)
    return director, held


def by_minute(latencies: Sequence[tuple[float, float]], start: float) -> list[float | None]:
    """The p99 latency of each minute from ``start`` (seconds)."""
    minutes: dict[int, list[float]] = {}
    for at, latency in latencies:
        minutes.setdefault(max(0, int((at - start) // 60)), []).append(latency)
    return [percentile(minutes.get(m, []), 0.99) for m in range(max(minutes, default=-1) + 1)]


START_LINE = re.compile(
    r"tournament \d+ started: (?P<players>\d+) players at (?P<tables>\d+) tables; the fact "
    r"written in (?P<written>[\d.]+) s, the tables opened in (?P<opened>[\d.]+) s, the players "
    r"seated in (?P<seated>[\d.]+) s, told in (?P<told>[\d.]+) s, the node's heap settled in "
    r"(?P<settled>[\d.]+) s, the tables let deal in (?P<permitted>[\d.]+) s"
)


def start_steps(log: str) -> dict[str, float] | None:
    """The director's start, step by step, as its node logged it (seconds)."""
    found = START_LINE.search(log)
    if found is None:
        return None
    return {name: float(value) for name, value in found.groupdict().items()}


FULL_PASS_LINE = re.compile(
    r"^(?P<at>\S+) INFO server\.collector: collector: a full pass over a heap of "
    r"(?P<blocks>\d+) blocks \((?P<before>\d+) after the last one\) found (?P<found>\d+) "
    r"objects unreachable in (?P<ms>\d+) ms",
    re.MULTILINE,
)


def full_passes(log: str, started_at: float) -> list[dict[str, float]]:
    """The node's collector's full passes (server/collector.py), as it logged them: when,
    in seconds from the tournament's start (negative: before it), over how big a heap, how
    long."""
    return [
        {
            "at_s": datetime.fromisoformat(found["at"]).timestamp() - started_at,
            "blocks": int(found["blocks"]),
            "blocks_before": int(found["before"]),
            "found": int(found["found"]),
            "ms": float(found["ms"]),
        }
        for found in FULL_PASS_LINE.finditer(log)
    ]


def ms(value: float | None) -> float | None:
    return None if value is None else value * 1000


def metric_sum(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total


# ---------------------------------------------------------------------- the run


def acts_answered(text: str) -> tuple[float, float]:
    """The node's ``act`` commands answered so far, and those answered within 50 ms of
    entering their table's inbox (``stud_command_seconds``)."""
    return (
        metric_sum(text, "stud_command_seconds_count", command="act"),
        metric_sum(text, "stud_command_seconds_bucket", command="act", le="0.05"),
    )


@dataclass
class Minutes:
    """Each minute of play as the machine spent it (from the first look after the start,
    the last minute whole or not): the node's CPU and the bots' (in % of one core), the
    p99 of the probe's pings (how long a frame waited for the node's event loop), and the
    share of the node's ``act`` commands answered 50 ms or more after entering their table's
    inbox (over 1%: the node alone puts that minute's p99 over 50 ms), beside the bots' p99
    of the same minute: what of an action's latency was the node's."""

    node: list[int]
    bots: list[int]
    probe: Probe
    metrics_url: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    round_trips: list[float] = field(default_factory=list)
    last: tuple[ProcessSample, ProcessSample, tuple[float, float]] | None = None

    async def take(self, http: httpx.AsyncClient) -> None:
        acts = acts_answered((await http.get(self.metrics_url)).text)
        now = (ProcessSample.take(self.node), ProcessSample.take(self.bots), acts)
        trips = self.probe.take()
        self.round_trips += trips
        if self.last is not None and not trips:
            return  # a sliver with no ping in it (the run ended just after a minute's look)
        if self.last is not None:
            node, bots, (total, within) = self.last
            seconds = now[0].at - node.at
            answered = acts[0] - total
            self.rows.append(
                {
                    "node_cpu_percent": (now[0].cpu_seconds - node.cpu_seconds) / seconds * 100,
                    "bots_cpu_percent": (now[1].cpu_seconds - bots.cpu_seconds) / seconds * 100,
                    "ping_p99_ms": ms(percentile(trips, 0.99)),
                    "node_acts_over_50ms_percent": (
                        (answered - (acts[1] - within)) / answered * 100 if answered else None
                    ),
                }
            )
        self.last = now


async def play(options: Options, room: Cardroom) -> dict[str, Any]:
    node = room.nodes[0]
    base, ws_url = node.url, node.url.replace("http://", "ws://") + "/ws"
    figures: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=120) as http:
        operator = {"Authorization": f"Bearer {await login(http, base, OPERATOR, PASSWORD)}"}
        gate = asyncio.Semaphore(8)

        async def account(name: str) -> tuple[str, str]:
            async with gate:
                return name, await bot_account(http, base, name)

        names = [f"t{i:05d}" for i in range(options.entrants)]
        tokens = dict(await asyncio.gather(*(account(n) for n in [*names, "follower"])))
        follower_token = tokens.pop("follower")
        spec = tournament_format(options)
        body = {
            "name": f"bench {options.entrants}",
            "spec": spec,
            "starts_at": (datetime.now(UTC) + timedelta(hours=1)).isoformat(),
        }
        made = await post_when_free(http, f"{base}/admin/tournaments", body, headers=operator)
        made.raise_for_status()
        tournament = int(made.json()["id"])

        burst = await register_all(base, tournament, tokens, options.burst_connections)
        figures["registration"] = asdict(burst)
        print(
            f"registration burst: {burst.entrants} in {burst.seconds:.1f} s, "
            f"{burst.per_second:.0f}/s, p50 {num(burst.p50_ms)} ms, p99 {num(burst.p99_ms)} ms"
            + (f", {burst.failures} refused" if burst.failures else "")
            + (f"; shed (tried again) {burst.shed}" if burst.shed else "")
            + (f"; connections lost (tried again) {burst.dropped}" if burst.dropped else ""),
            flush=True,
        )
        if options.burst_only:
            return figures

        workers = Workers(options.workers, options.think, target=worker_main)
        try:
            specs = [
                EntrantSpec(name, token, base, tournament, seed)
                for seed, (name, token) in enumerate(tokens.items())
            ]
            shares = [specs[i :: options.workers] for i in range(options.workers)]
            answers = await workers.ask([("add", share) for share in shares])
            failed = [line for answer in answers for line in answer[1]]
            for line in failed[:5]:
                print(f"  entrant not connected: {line}", file=sys.stderr)
            figures["not_connected"] = len(failed)
            figures.update(
                await run_tournament(
                    options, room, http, workers, operator, tournament, follower_token, ws_url
                )
            )
        finally:
            workers.stop()
        figures["moves"] = figures["hands"] = None
        at_once = None
        if figures["to_winner_s"] is not None:  # the record is published once it is over
            record = (await http.get(f"{base}/tournaments/{tournament}/record")).json()
            moves, at_once = journal_figures(record, spec, tournament)
            figures["moves"] = asdict(moves)
            figures["hands"] = sum(1 for fact in record["journal"] if fact["kind"] == "hand")
        node_log = room.nodes[0].log_path.read_text(errors="replace")
        figures["start_steps"] = start_steps(node_log)
        figures["full_passes"] = full_passes(node_log, figures["started_at"])
        seen = figures.pop("pauses_seen")
        numbers = figures.pop("table_numbers")
        if at_once is None:  # no journal: every pause counted as the director's
            at_once = {(numbers.get(table), hand) for table, hand, *_ in seen}
        director, held = pauses_past(seen, numbers, at_once)
        figures.update(
            pauses_past_s=sorted(director),
            held_back_past_s=sorted(held),
            pauses=len(director),
            held_up_p99_ms=ms(percentile(director, 0.99)),
            held_up_max_ms=ms(max(director, default=None)),
            held_up_over_pause=sum(1 for past in director if past > PAUSE),
            held_by_rules=len(held),
            held_by_rules_max_s=max(held, default=None),
        )
    return figures


async def run_tournament(
    options: Options,
    room: Cardroom,
    http: httpx.AsyncClient,
    workers: Workers,
    operator: dict[str, str],
    tournament: int,
    follower_token: str,
    ws_url: str,
) -> dict[str, Any]:
    node = room.nodes[0]
    follower = Follower(ws_url, follower_token, tournament)
    following = asyncio.create_task(follower.run())
    probe = Probe([ws_url])
    probe.start()
    counts_before = await ServerCounts.scrape(http, room.nodes)
    starts_at = datetime.now(UTC) + timedelta(seconds=START_AFTER)
    answer = await http.patch(
        f"{node.url}/admin/tournaments/{tournament}",
        json={"starts_at": starts_at.isoformat()},
        headers=operator,
    )
    answer.raise_for_status()
    start = starts_at.timestamp()
    before = ProcessSample.take(room.pids())
    deadline = time.monotonic() + START_AFTER + options.timeout_minutes * 60
    bots = [process.pid for process in workers.processes if process.pid is not None]
    minutes_spent = Minutes(room.pids(), bots, probe, f"{node.url}/metrics")
    next_minute: float | None = None
    while not follower.finished.is_set():
        if options.minutes is not None and time.time() - start >= options.minutes * 60:
            break
        if following.done():
            raise RuntimeError(f"the follower stopped: {following.exception()!r}")
        if time.monotonic() > deadline:
            raise RuntimeError("the tournament did not finish in time")
        await asyncio.sleep(10)
        if follower.started_at is not None and next_minute is None:
            await minutes_spent.take(http)
            next_minute = time.time() + 60
        elif next_minute is not None and time.time() >= next_minute:
            await minutes_spent.take(http)
            next_minute += 60
        elapsed = time.time() - start
        print(
            f"  {elapsed:6.0f} s: {follower.players_left} players left at {follower.tables} "
            f"tables, level {follower.level}",
            flush=True,
        )
    after = ProcessSample.take(room.pids())
    counts = (await ServerCounts.scrape(http, room.nodes)).since(counts_before)
    metrics = (await http.get(f"{node.url}/metrics")).text
    if next_minute is not None:
        await minutes_spent.take(http)  # the last minute, whole or not
    reports: list[TournamentStats] = [
        answer[1] for answer in await workers.ask([("report",)] * len(workers.pipes))
    ]
    round_trips = minutes_spent.round_trips + probe.take()
    await probe.stop()
    following.cancel()
    assert follower.started_at is not None
    ended = follower.finished_at or time.time()
    latencies = [pair for stats in reports for pair in stats.latencies]
    minutes = by_minute(latencies, follower.started_at)
    loop_lags = by_minute(
        [pair for stats in reports for pair in stats.loop_lags], follower.started_at
    )
    collections = [pair for stats in reports for pair in stats.collections]
    first_two = [lat for at, lat in latencies if at - follower.started_at < 120]
    first_hands: dict[int, float] = {}
    for stats in reports:
        for table, at in stats.first_hands.items():
            first_hands[table] = min(at, first_hands.get(table, at))
    numbers: dict[int, int] = {}
    for stats in reports:
        numbers.update(stats.numbers)
    errors: Counter[str] = Counter()
    trouble: Counter[str] = Counter()
    for stats in reports:
        errors.update(stats.errors)
        trouble.update(stats.trouble)
    director_cpu = metric_sum(metrics, "stud_tournament_director_cpu_seconds_total")
    return {
        "started_at": follower.started_at,
        "started_after_s": follower.started_at - start,
        "first_hand_after_s": min(first_hands.values(), default=start) - start,
        "last_first_hand_after_s": max(first_hands.values(), default=start) - start,
        "tables_at_start": len(first_hands),
        "to_winner_s": None if follower.finished_at is None else ended - follower.started_at,
        "played_s": ended - follower.started_at,
        "players_left": follower.players_left,
        "winner": follower.winner,
        "acts_timed": len(latencies),
        "p50_ms": ms(percentile([lat for _, lat in latencies], 0.5)),
        "p99_ms": ms(percentile([lat for _, lat in latencies], 0.99)),
        "first_two_minutes_p99_ms": ms(percentile(first_two, 0.99)),
        "worst_minute_p99_ms": ms(max((m for m in minutes if m is not None), default=None)),
        "minutes_p99_ms": [ms(m) for m in minutes],
        "minutes_spent": minutes_spent.rows,
        "bots_loop_lag_p99_ms": [ms(m) for m in loop_lags],
        "bots_collections_over_10ms": len(collections),
        "bots_collection_max_ms": ms(max((took for _, took in collections), default=None)),
        "minutes_over_target": sum(
            1 for m in minutes if m is not None and m * 1000 >= options.p99_ms
        ),
        "ping_p99_ms": ms(percentile(round_trips, 0.99)),
        "ping_max_ms": ms(max(round_trips, default=None)),
        "pauses_seen": [p for stats in reports for p in stats.pauses],
        "table_numbers": numbers,
        "server_cpu_percent": (after.cpu_seconds - before.cpu_seconds)
        / (after.at - before.at)
        * 100,
        "server_actions": counts.actions,
        "server_hands": counts.hands,
        "gc_count": int(counts.gc_count),
        "gc_total_ms": counts.gc_seconds * 1000,
        "gc_longest_under_ms": ms(counts.longest_gc_bound()),
        "director_cpu_s": director_cpu,
        "moves_by_metrics": {
            reason: metric_sum(metrics, "stud_tournament_moves_total", reason=reason)
            for reason in ("balance", "break", "final_table")
        },
        "bots_cpu_s": sum(stats.cpu_seconds for stats in reports),
        "errors": dict(errors),
        "trouble": dict(trouble),
        "disconnects": sum(stats.disconnects for stats in reports),
        "late_bots": sum(stats.timeouts for stats in reports),
        "tables_sat_at": sum(stats.seated for stats in reports),
    }


def num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def summary(figures: dict[str, Any], options: Options) -> list[str]:
    f = figures
    moves = f["moves"]
    hands = f["hands"] if f["hands"] is not None else f["server_hands"]
    lines = [
        f"start, from the scheduled time: the first hand {num(f['first_hand_after_s'])} s, "
        f"the last of {f['tables_at_start']} tables' first {num(f['last_first_hand_after_s'])} s, "
        f"'started' told {num(f['started_after_s'])} s"
        + (
            "; the director's steps: "
            + ", ".join(f"{name} {value:g}" for name, value in f["start_steps"].items())
            if f.get("start_steps")
            else ""
        ),
        (
            f"to the winner: {num(f['to_winner_s'], 0)} s, {hands:.0f} hands "
            if f["to_winner_s"] is not None
            else f"stopped after {num(f['played_s'], 0)} s of play, {f['players_left']} players "
            f"left: {hands:.0f} hands "
        )
        + f"({f['server_actions']:.0f} actions)",
        f"action latency: p50 {num(f['p50_ms'])} ms, p99 {num(f['p99_ms'])} ms over "
        f"{f['acts_timed']} acts; first two minutes p99 {num(f['first_two_minutes_p99_ms'])} ms, "
        f"worst minute p99 {num(f['worst_minute_p99_ms'])} ms ({f['minutes_over_target']} "
        f"minutes over {options.p99_ms:g} ms); ping p99 {num(f['ping_p99_ms'])} ms, "
        f"max {num(f['ping_max_ms'])} ms",
    ]
    spent = f.get("minutes_spent") or []
    if spent:
        lines.append(
            "each minute: the bots' p99 / the ping's p99 / the bots' own loop's lag p99 (ms), "
            "the node's CPU / the bots' (% of a core), the node's acts answered in 50 ms or "
            "more: "
            + "; ".join(
                f"{n + 1}: {num(bots)} / {num(row['ping_p99_ms'])} / {num(lag)}, "
                f"{row['node_cpu_percent']:.0f} / {row['bots_cpu_percent']:.0f}, "
                f"{num(row['node_acts_over_50ms_percent'], 2)}%"
                for n, (bots, row, lag) in enumerate(
                    zip(f["minutes_p99_ms"], spent, f["bots_loop_lag_p99_ms"], strict=False)
                )
            )
        )
        lines.append(
            f"the bots' own collector: {f['bots_collections_over_10ms']} passes over 10 ms, "
            f"the longest {num(f['bots_collection_max_ms'])} ms"
        )
    lines.append(
        "the node's full collections (from the start, heap blocks, ms): "
        + (
            "; ".join(
                f"{p['at_s']:+.0f} s, {p['blocks']:,} ({p['blocks_before']:,} before), "
                f"{p['ms']:.0f} ms"
                for p in f.get("full_passes") or []
            )
            or "none"
        )
    )
    if moves is not None:
        lines.append(
            f"moves: {moves['by_reason']}, waited p50 {num(moves['waited_p50_s'], 2)} s, p99 "
            f"{num(moves['waited_p99_s'], 2)} s, max {num(moves['waited_max_s'], 2)} s; hands "
            f"the table left dealt meanwhile: {moves['hands_waited']}"
        )
        lines.append(
            f"the journal replayed (a director taking over): {moves['replay_s']:.2f} s, "
            f"{moves['replay_s'] * 1000 / max(hands, 1):.2f} ms a hand; its longest "
            f"{REPLAY_SLICE} facts (one turn of the loop) {moves['longest_slice_ms']:.0f} ms"
        )
    else:
        lines.append(f"moves (/metrics): {f['moves_by_metrics']}")
    lines += [
        f"the director's delay past a table's pause: p99 {num(f['held_up_p99_ms'])} ms, max "
        f"{num(f['held_up_max_ms'])} ms over {f['pauses']} pauses; longer than the pause "
        f"({PAUSE:g} s): {f['held_up_over_pause']}; held back by the rules (the final "
        f"table's draw, hand-for-hand): {f['held_by_rules']}, the longest "
        f"{num(f['held_by_rules_max_s'], 1)} s past the pause",
        f"director: {f['director_cpu_s'] * 1000 / max(hands, 1):.2f} ms CPU a hand "
        f"({f['director_cpu_s']:.1f} s in all); server CPU {num(f['server_cpu_percent'], 0)}% "
        f"of a core; GC {f['gc_count']} passes, {num(f['gc_total_ms'], 0)} ms, longest under "
        f"{num(f['gc_longest_under_ms'], 0)} ms; bots CPU {f['bots_cpu_s']:.0f} s",
        f"errors: {f['errors'] or 'none'}; trouble: {f['trouble'] or 'none'}; disconnects "
        f"{f['disconnects']}; the clock acted {f['late_bots']}; not connected "
        f"{f['not_connected']}",
    ]
    return lines


def parse(argv: Sequence[str] | None = None) -> Options:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--entrants", type=int, default=1000)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--level-minutes", type=float, default=1.0)
    parser.add_argument("--starting-chips", type=int, default=1500)
    parser.add_argument("--think", default="0.1,0.6", help="an entrant's think time, MIN,MAX s")
    parser.add_argument("--workers", type=int, default=2, help="entrant processes")
    parser.add_argument(
        "--burst-connections", type=int, default=200, help="the registration burst's connections"
    )
    parser.add_argument("--p99-ms", type=float, default=50.0)
    parser.add_argument("--json", type=Path, help="also write the figures there as JSON")
    parser.add_argument(
        "--stalls",
        type=float,
        default=0.0,
        metavar="MS",
        help="the node's stall watch (STUD_STALL_WATCH_MS), printed at the end",
    )
    parser.add_argument("--timeout-minutes", type=float, default=60.0)
    parser.add_argument(
        "--minutes", type=float, help="stop after this much play, winner or not (the start)"
    )
    parser.add_argument("--burst-only", action="store_true", help="the registration burst alone")
    parser.add_argument(
        "--thaw-seconds",
        type=float,
        help="the node's least time between two full passes of its garbage collector "
        "(STUD_COLLECTOR_THAW_SECONDS; server/collector.py)",
    )
    args = parser.parse_args(argv)
    try:
        low, high = (float(s) for s in args.think.split(","))
    except ValueError:
        parser.error("--think takes MIN,MAX seconds")
    if args.entrants < 2:
        parser.error("--entrants: at least 2")
    if not 0 <= low <= high:
        parser.error("--think takes MIN,MAX seconds with 0 <= MIN <= MAX")
    if args.workers < 1:
        parser.error("--workers: at least 1")
    return Options(
        entrants=args.entrants,
        backend=args.backend,
        level_minutes=args.level_minutes,
        starting_chips=args.starting_chips,
        think=(low, high),
        workers=args.workers,
        burst_connections=args.burst_connections,
        p99_ms=args.p99_ms,
        json_path=args.json,
        stall_ms=args.stalls,
        timeout_minutes=args.timeout_minutes,
        minutes=args.minutes,
        burst_only=args.burst_only,
        thaw_seconds=args.thaw_seconds,
    )


def main(argv: Sequence[str] | None = None) -> int:
    options = parse(argv)
    backend = "SQLite" if options.backend == "sqlite" else "PostgreSQL + Redis"
    print(
        f"{backend}, 1 node; {options.entrants} entrants at tables of {SEATS}, "
        f"{options.level_minutes:g}-minute levels, thinking {options.think[0]:g}-"
        f"{options.think[1]:g} s, in {options.workers} process(es)"
    )
    print(
        f"Python {platform.python_version()}, {os.cpu_count()} CPU(s), load average "
        + " ".join(f"{value:.2f}" for value in os.getloadavg()),
        flush=True,
    )
    room_options = load.Options(
        backend=options.backend, nodes=1, tables=(1,), seconds=0, warmup=0, think=(0, 0),
        workers=1, lease_seconds=5.0, p99_ms=options.p99_ms, json_path=None,
        stall_ms=options.stall_ms,
    )  # fmt: skip
    if options.thaw_seconds is not None:  # read by the node from the bench's environment
        os.environ["STUD_COLLECTOR_THAW_SECONDS"] = f"{options.thaw_seconds:g}"
    with tempfile.TemporaryDirectory(prefix="stud-tournament-") as directory:
        room = Cardroom(Path(directory), room_options)
        try:
            room.start()
            figures = asyncio.run(play(options, room))
            if options.stall_ms:
                print("\n".join(room.stalls()))
        except BaseException:
            print(room.logs(), file=sys.stderr)
            raise
        finally:
            room.close()
    if not options.burst_only:
        for line in summary(figures, options):
            print(line)
    print("load average at the end " + " ".join(f"{v:.2f}" for v in os.getloadavg()))
    if options.json_path is not None:
        document = {"options": asdict(options), "load_average": os.getloadavg(), **figures}
        options.json_path.write_text(json.dumps(document, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
