"""The cardroom under load: tables of eight bots, more at each step, until the tail breaks.

Starts a server of its own (the embedded SQLite default; or PostgreSQL and Redis, with one
node or several), opens ``--tables`` tables of eight seats through the admin API, and seats
eight bots at each, acting ``--think`` seconds after their turn comes (docs/protocol.md; the
bots of ``bench/load_bots.py``, in ``--workers`` processes of their own). Each step adds
tables up to its count, lets them play ``--warmup`` seconds, then measures ``--seconds``:

- actions/s and hands/hour (the server's own counts, ``GET /metrics``);
- command-to-event latency at the clients: from an ``act`` sent to the ``action`` event it
  caused coming back, p50/p95/p99;
- the server processes' CPU (``/proc/PID/stat``) and CPU per action; RSS per connection (the
  growth of the server's RSS since before the first table, over the bot connections) and how
  fast the RSS grew over the measured step (MiB a minute, from a sample every 10 s);
- event-loop lag: the round trip of a ``ping`` sent every 0.25 s by a probe on each node;
- garbage collections of the server (``stud_gc_pause_seconds``): how many, their total, the
  longest one's bucket;
- on PostgreSQL + Redis, their share: the CPU of the database's PostgreSQL processes and of
  the Redis server per action, and Redis's commands per action by name (``INFO``);
- errors: error frames by code, lost connections, the clock acting for a late bot, tables
  that voided a hand, restarted or paused.

At the end: the largest step whose p99 stayed under ``--p99-ms`` (50 ms).

    python bench/load.py [--backend sqlite|postgresql] [--nodes N] [--server-workers N]
                         [--tables 25,50,100]
                         [--seconds 60] [--warmup 15] [--think 0.5,1.5] [--workers 2]
                         [--json PATH] [--stalls MS] [--game VARIANT|mix]

``--game`` sets the game every table plays: a variant (seven-card stud unless said), or
``mix``: mixed tables, the stud mix of seven-card stud, razz and stud hi-lo, two hands a game
(the cost per action of a mixed table against that of its games).

``--stalls MS`` turns on each node's stall watch (``server/edge/stalls.py``) and prints, at the
end, the stalls of its event loop longer than MS milliseconds: how many, their total, the
garbage collector's share, and where the loop was.

``--server-workers N`` runs each node as ``stud-server --workers N`` (N node processes behind
one port): the CPU counted is every worker's, the metrics are scraped from every worker.

PostgreSQL: a database of its own is made on ``STUD_TEST_POSTGRES_URL``'s server and dropped
at the end, and a ``redis-server`` of its own is started (tests/cluster/cluster_harness.py).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import multiprocessing
import os
import platform
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import httpx
import orjson
import redis.asyncio
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

ROOT = Path(__file__).resolve().parents[1]
# The project before bench/ (whose engine.py is not the engine), and the cluster tests' harness.
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "cluster")]

from cluster_harness import Node, PostgresDatabase, RedisProcess, server_cli, tail  # noqa: E402
from load_bots import BotSpec, Stats, worker_main  # noqa: E402
from profile_summary import Profile  # noqa: E402

from engine.variants import VARIANTS  # noqa: E402

OPERATOR = "loadboss"
PASSWORD = "load-bench-password"
SEATS = 8
# ``--game mix``: every table the stud mix, two hands a game, so that a short run deals every
# game (and switches four times as often as the usual eight hands a game would).
STUD_MIX = {
    "games": [
        {"variant": "seven_card_stud"},
        {"variant": "razz"},
        {"variant": "seven_card_stud_hi_lo"},
    ],
    "hands": 2,
}
PROBE_EVERY = 0.25  # seconds between a probe's pings (under the 5 a second a socket may send)
# What a bench from one address needs of a server otherwise left at its defaults: every bot
# comes from 127.0.0.1, is registered, granted chips and connected from there.
SETTINGS = {
    "STUD_STARTING_BANKROLL": "100000000",
    "STUD_PASSWORD_TIME_COST": "1",
    "STUD_PASSWORD_MEMORY_KIB": "8",
    "STUD_PASSWORD_PARALLELISM": "1",
    "STUD_LOGIN_FAILURES_PER_ADDRESS_PER_MINUTE": "1000000",
    "STUD_REGISTER_PER_ADDRESS_PER_MINUTE": "1000000",
    "STUD_STARTING_GRANTS_PER_ADDRESS": "1000000",
    "STUD_WS_SOCKETS_PER_ADDRESS": "100000",
}


@dataclass(frozen=True)
class Options:
    backend: str
    nodes: int
    tables: tuple[int, ...]
    seconds: float
    warmup: float
    think: tuple[float, float]
    workers: int
    lease_seconds: float
    p99_ms: float
    json_path: Path | None
    profile_dir: Path | None = None
    server_workers: int = 1  # node processes behind each node's port (stud-server --workers)
    stall_ms: float = 0.0  # the nodes' stall watch (STUD_STALL_WATCH_MS); 0: none
    game: str = "seven_card_stud"  # a variant every table plays, or "mix" (STUD_MIX)


# ---------------------------------------------------------------------- the server


class Cardroom:
    """The server under load: node processes on a SQLite file, or on a PostgreSQL database
    and a redis-server of their own; every log under ``directory``."""

    def __init__(self, directory: Path, options: Options) -> None:
        self.directory = directory
        self.options = options
        self.redis: RedisProcess | None = None
        self.database: PostgresDatabase | None = None
        self.nodes: list[Node] = []

    def start(self) -> None:
        env = {**os.environ, **SETTINGS}
        if self.options.backend == "sqlite":
            env["STUD_DATABASE_URL"] = f"sqlite+aiosqlite:///{self.directory / 'stud.db'}"
        else:
            self.redis = RedisProcess(self.directory)
            self.redis.start()
            self.database = PostgresDatabase()
            self.database.create()
            env["STUD_DATABASE_URL"] = self.database.url()
            env["STUD_REDIS_URL"] = self.redis.url
            # The decks of hands in play are sealed; PostgreSQL nodes share one deck key.
            env.setdefault("STUD_DECK_KEY", base64.b64encode(secrets.token_bytes(32)).decode())
        if self.options.stall_ms:
            env["STUD_STALL_WATCH_MS"] = str(self.options.stall_ms)
        server_cli(env, "create-operator", OPERATOR, "--password-stdin", stdin=PASSWORD + "\n")
        workers = self.options.server_workers
        self.nodes = [
            Node(
                chr(ord("A") + i),
                self.directory,
                env,
                lease_seconds=self.options.lease_seconds,
                args=("--workers", str(workers)) if workers > 1 else (),
            )
            for i in range(self.options.nodes)
        ]
        for node in self.nodes:
            node.start()
        for node in self.nodes:
            node.wait_ready(timeout=120)

    def pids(self) -> list[int]:
        """Every server process: the nodes, and their workers (``--server-workers``)."""
        pids = [node.process.pid for node in self.nodes if node.process is not None]
        return [*pids, *(child for pid in pids for child in descendants(pid))]

    def logs(self) -> str:
        return "\n".join(tail(node.log_path) for node in self.nodes)

    def stalls(self) -> list[str]:
        """What the nodes' stall watch logged (``--stalls``), every step together: how many
        stalls, how long in all, the collector's share, and where the loop was, by time."""
        pattern = re.compile(
            r"event loop stalled (\d+) ms \(on CPU (\d+) ms; collector (\d+) ms([^)]*)\) at: (.*)"
        )
        count, total, collector, on_cpu = 0, 0.0, 0.0, 0.0
        places: Counter[str] = Counter()
        for node in self.nodes:
            for line in node.log_path.read_text(errors="replace").splitlines():
                found = pattern.search(line)
                if found is None:
                    continue
                ms, cpu_ms, gc_ms = float(found[1]), float(found[2]), float(found[3])
                passes, where = found[4], found[5]
                count, total, collector = count + 1, total + ms, collector + gc_ms
                on_cpu += cpu_ms
                top = where.split(" (x")[0]  # the stack seen most in that stall
                places[f"the collector{passes}" if gc_ms >= ms / 2 else top] += ms
        lines = [
            f"stalls over {self.options.stall_ms:g} ms: {count}, {total:.0f} ms in all, "
            f"on CPU {on_cpu:.0f} ms of it, the collector {collector:.0f} ms"
        ]
        lines += [f"  {ms:7.0f} ms  {place}" for place, ms in places.most_common(12)]
        return lines

    def close(self) -> None:
        for node in self.nodes:
            node.stop()
        if self.redis is not None:
            self.redis.stop()
        if self.database is not None:
            self.database.drop()


def descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (Linux's ``/proc/PID/task/TID/children``)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
        for child in children:
            found += [child, *descendants(child)]
    return found


@dataclass(frozen=True)
class ProcessSample:
    """The server processes' CPU seconds and resident memory at one moment."""

    at: float
    cpu_seconds: float
    rss_bytes: int

    @classmethod
    def take(cls, pids: Sequence[int]) -> ProcessSample:
        ticks = os.sysconf("SC_CLK_TCK")
        page = os.sysconf("SC_PAGE_SIZE")
        cpu = 0.0
        rss = 0
        for pid in pids:
            # utime and stime are the 14th and 15th fields, counted after the command's ")".
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / ticks
            rss += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * page
        return cls(time.monotonic(), cpu, rss)


@dataclass(frozen=True)
class BackingSample:
    """What PostgreSQL and Redis have spent at one moment: the CPU seconds of each of the
    PostgreSQL processes serving the bench's database (its backends, and the log writer,
    checkpointer and background writer every database shares), the Redis server's CPU
    seconds and the commands it ran, by name."""

    postgres_cpu: dict[int, float]
    redis_cpu: float
    redis_calls: dict[str, int]

    @classmethod
    async def take(cls, room: Cardroom) -> BackingSample | None:
        if room.database is None or room.redis is None:
            return None
        connection = await asyncpg.connect(room.database.url().replace("+asyncpg", ""))
        try:
            rows = await connection.fetch(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "OR backend_type IN ('walwriter', 'checkpointer', 'background writer')"
            )
        finally:
            await connection.close()
        ticks = os.sysconf("SC_CLK_TCK")
        postgres_cpu: dict[int, float] = {}
        for row in rows:
            try:
                fields = Path(f"/proc/{row['pid']}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # gone since
                continue
            postgres_cpu[row["pid"]] = (int(fields[11]) + int(fields[12])) / ticks
        client = redis.asyncio.Redis.from_url(room.redis.url)
        try:
            cpu = await client.info("cpu")
            commands = await client.info("commandstats")
        finally:
            await client.aclose()
        return cls(
            postgres_cpu,
            float(cpu["used_cpu_sys"]) + float(cpu["used_cpu_user"]),
            {
                name.removeprefix("cmdstat_"): int(stats["calls"])
                for name, stats in commands.items()
            },
        )

    def since(self, before: BackingSample) -> tuple[float, float, dict[str, int]]:
        """PostgreSQL's CPU seconds (a process new since ``before`` counted from its start),
        Redis's, and Redis's commands by name, from ``before`` to this sample."""
        postgres = sum(
            cpu - before.postgres_cpu.get(pid, 0.0) for pid, cpu in self.postgres_cpu.items()
        )
        calls = {
            name: calls - before.redis_calls.get(name, 0)
            for name, calls in self.redis_calls.items()
            if calls > before.redis_calls.get(name, 0)
        }
        return postgres, self.redis_cpu - before.redis_cpu, calls


@dataclass
class ServerCounts:
    """What the nodes' ``/metrics`` say, summed over the nodes."""

    actions: float = 0.0
    hands: float = 0.0
    gc_count: float = 0.0
    gc_seconds: float = 0.0
    gc_buckets: dict[float, float] = field(default_factory=dict)  # upper bound: count

    @classmethod
    async def scrape(
        cls, http: httpx.AsyncClient, nodes: Sequence[Node], workers: int = 1
    ) -> ServerCounts:
        """Every node's metrics; of each node's ``workers`` workers, through its one port."""
        counts = cls()
        for node in nodes:
            for text in await worker_metrics(http, node.url, workers):
                for family in text_string_to_metric_families(text):
                    for sample in family.samples:
                        counts._add(sample.name, sample.labels, sample.value)
        return counts

    def _add(self, name: str, labels: dict[str, str], value: float) -> None:
        if name == "stud_actions_total":
            self.actions += value
        elif name == "stud_hands_finished_total":
            self.hands += value
        elif name == "stud_gc_pause_seconds_count":
            self.gc_count += value
        elif name == "stud_gc_pause_seconds_sum":
            self.gc_seconds += value
        elif name == "stud_gc_pause_seconds_bucket":
            bound = float(labels["le"])
            self.gc_buckets[bound] = self.gc_buckets.get(bound, 0.0) + value

    def since(self, before: ServerCounts) -> ServerCounts:
        return ServerCounts(
            self.actions - before.actions,
            self.hands - before.hands,
            self.gc_count - before.gc_count,
            self.gc_seconds - before.gc_seconds,
            {b: n - before.gc_buckets.get(b, 0.0) for b, n in self.gc_buckets.items()},
        )

    def longest_gc_bound(self) -> float | None:
        """The least bucket bound holding every collection of the interval (cumulative
        buckets: the first whose count is the total), or None without one."""
        if self.gc_count <= 0:
            return None
        for bound in sorted(self.gc_buckets):
            if self.gc_buckets[bound] >= self.gc_count:
                return bound
        return None


async def worker_metrics(http: httpx.AsyncClient, url: str, workers: int) -> list[str]:
    """The ``/metrics`` text of each of the ``workers`` behind ``url``: new connections, which
    the kernel spreads over them, until each has answered (``stud_node`` names it)."""
    if workers == 1:
        return [(await http.get(f"{url}/metrics")).text]
    texts: dict[str, str] = {}
    for _ in range(50 * workers):
        async with httpx.AsyncClient(timeout=60) as fresh:
            text = (await fresh.get(f"{url}/metrics")).text
        node = next(
            sample.labels["node"]
            for family in text_string_to_metric_families(text)
            for sample in family.samples
            if sample.name == "stud_node"
        )
        texts[node] = text
        if len(texts) == workers:
            return list(texts.values())
    raise RuntimeError(f"{url}: only {sorted(texts)} of {workers} workers answered /metrics")


async def tables_by_node(http: httpx.AsyncClient, room: Cardroom) -> str:
    """How many tables each node (each worker) runs, as the lobby says."""
    lobby = (await http.get(f"{room.nodes[0].url}/tables")).json()
    counted = Counter(str(entry.get("node")) for entry in lobby)
    return ", ".join(f"{node} {count}" for node, count in sorted(counted.items()))


# ---------------------------------------------------------------------- the probe


class Probe:
    """One websocket per node sending ``ping`` every PROBE_EVERY seconds: its round trips
    show how long a frame waits for the node's event loop."""

    def __init__(self, urls: Sequence[str]) -> None:
        self.urls = urls
        self.round_trips: list[float] = []
        self.lost = 0
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._run(url)) for url in self.urls]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def take(self) -> list[float]:
        round_trips, self.round_trips = self.round_trips, []
        return round_trips

    async def _run(self, url: str) -> None:
        while True:
            try:
                async with connect(url, compression=None, ping_interval=None) as ws:
                    await ws.recv()  # hello
                    await self._ping(ws)
            except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError):
                self.lost += 1  # a handshake refused 503: the node sheds new sockets
                await asyncio.sleep(1)

    async def _ping(self, ws: ClientConnection) -> None:
        for number in range(1, sys.maxsize):
            sent = time.perf_counter()
            await ws.send(orjson.dumps({"type": "ping", "id": number}).decode())
            while orjson.loads(await ws.recv()).get("id") != number:
                pass
            self.round_trips.append(time.perf_counter() - sent)
            await asyncio.sleep(PROBE_EVERY)


# ---------------------------------------------------------------------- the bots


class Workers:
    """The bot processes and their pipes; each runs ``target(pipe, think)`` (load_bots's
    worker by default, bench/tournament.py's entrants for that bench)."""

    def __init__(
        self,
        count: int,
        think: tuple[float, float],
        target: Callable[[Connection, tuple[float, float]], None] = worker_main,
    ) -> None:
        context = multiprocessing.get_context("spawn")
        self.pipes: list[Connection] = []
        self.processes: list[BaseProcess] = []
        for _ in range(count):
            parent, child = context.Pipe()
            process = context.Process(target=target, args=(child, think), daemon=True)
            process.start()
            self.pipes.append(parent)
            self.processes.append(process)

    async def ask(self, messages: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """Send worker i ``messages[i]``; their answers, in order."""
        for pipe, message in zip(self.pipes, messages, strict=True):
            pipe.send(message)
        answers = await asyncio.gather(*(asyncio.to_thread(pipe.recv) for pipe in self.pipes))
        return [tuple(answer) for answer in answers]

    async def all(self, *message: Any) -> list[tuple[Any, ...]]:
        return await self.ask([message] * len(self.pipes))

    def stop(self) -> None:
        for pipe in self.pipes:
            pipe.send(("stop",))
        for process in self.processes:
            process.join(30)
            if process.is_alive():
                process.kill()


def table_body(name: str, game: str) -> dict[str, Any]:
    """``POST /admin/tables``'s body for a table of eight seats playing ``game``."""
    body: dict[str, Any] = {"name": name, "seats": SEATS}
    if game == "mix":
        body["rotation"] = STUD_MIX
    elif game != "seven_card_stud":
        body["config"] = {"variant": game}
    return body


async def open_tables(
    http: httpx.AsyncClient, room: Cardroom, token: str, first: int, count: int, game: str
) -> list[BotSpec]:
    """Tables ``first`` .. ``first + count - 1`` of eight seats playing ``game``, and a bot
    account for each seat (registered and signed in on the first node); the bots to seat
    there."""
    base = room.nodes[0].url
    gate = asyncio.Semaphore(8)

    async def table(index: int) -> tuple[int, int]:
        async with gate:
            response = await post_when_free(
                http,
                f"{base}/admin/tables",
                table_body(f"load-{index}", game),
                headers={"Authorization": f"Bearer {token}"},
            )
        response.raise_for_status()
        body = response.json()
        return int(body["id"]), int(body["max_buy_in"])

    async def bot(index: int, seat: int, table_id: int, buy_in: int) -> BotSpec:
        name = f"load{index}s{seat}"
        async with gate:
            token = await bot_account(http, base, name)
        node = room.nodes[(index * SEATS + seat) % len(room.nodes)]
        return BotSpec(
            name=name,
            token=token,
            url=node.url.replace("http://", "ws://") + "/ws",
            table=table_id,
            buy_in=buy_in,
            seed=index * SEATS + seat,
            reports_table=seat == 0,
        )

    indices = range(first, first + count)
    tables = await asyncio.gather(*(table(i) for i in indices))
    return list(
        await asyncio.gather(
            *(
                bot(index, seat, table_id, buy_in)
                for index, (table_id, buy_in) in zip(indices, tables, strict=True)
                for seat in range(SEATS)
            )
        )
    )


async def post_when_free(
    http: httpx.AsyncClient, url: str, body: Any, headers: dict[str, str] | None = None
) -> httpx.Response:
    """POST, and again after its ``Retry-After`` while the server answers 503 (``server_busy``:
    its password hashing is full; ``database_unavailable``: SQLite's writer was held past its
    busy timeout): on a busy machine, setting up hundreds of bots at once meets both."""
    for _ in range(50):
        response = await http.post(url, json=body, headers=headers)
        if response.status_code != 503:
            return response
        await asyncio.sleep(float(response.headers.get("retry-after", "1")))
    return response


async def bot_account(http: httpx.AsyncClient, base: str, name: str) -> str:
    """A bot account registered as ``name``, and its token."""
    body = {"username": name, "password": PASSWORD, "bot": True}
    (await post_when_free(http, f"{base}/auth/register", body)).raise_for_status()
    return await login(http, base, name, PASSWORD)


async def login(http: httpx.AsyncClient, base: str, name: str, password: str) -> str:
    body = {"username": name, "password": password}
    response = await post_when_free(http, f"{base}/auth/login", body)
    response.raise_for_status()
    return str(response.json()["access_token"])


# ---------------------------------------------------------------------- a step


@dataclass
class StepResult:
    """One step's figures (latencies and pauses in milliseconds)."""

    tables: int
    connections: int
    seconds: float
    actions_per_second: float
    hands_per_hour: float
    acts_timed: int
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    server_cpu_percent: float
    cpu_per_action_ms: float | None
    rss_per_connection_kib: float | None
    rss_mib_per_minute: float | None  # the servers' RSS over the measured step, its slope
    ping_p99_ms: float | None
    ping_max_ms: float | None
    gc_count: int | None
    gc_total_ms: float | None
    gc_longest_under_ms: float | None
    bots_cpu_percent: float
    # PostgreSQL + Redis: their CPU per action (ms) and Redis's commands per action, by name
    postgres_cpu_per_action_ms: float | None
    redis_cpu_per_action_ms: float | None
    redis_calls_per_action: dict[str, float]
    errors: dict[str, int]
    trouble: dict[str, int]
    disconnects: int
    late_bots: int
    setup_failures: int


def percentile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank ``q`` quantile (0 < q <= 1) of ``values``, or None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def slope(samples: Sequence[ProcessSample]) -> float | None:
    """How fast the servers' resident memory grew over ``samples``, in MiB a minute (least
    squares): flat memory is about 0."""
    if len(samples) < 3:
        return None
    times = [s.at for s in samples]
    sizes = [s.rss_bytes / 2**20 for s in samples]
    mean_t, mean_s = sum(times) / len(times), sum(sizes) / len(sizes)
    spread = sum((t - mean_t) ** 2 for t in times)
    if spread == 0:
        return None
    return sum((t - mean_t) * (m - mean_s) for t, m in zip(times, sizes, strict=True)) / spread * 60


def ms(value: float | None) -> float | None:
    return None if value is None else value * 1000


async def run_step(
    options: Options,
    room: Cardroom,
    workers: Workers,
    probe: Probe,
    http: httpx.AsyncClient,
    tables: int,
    connections: int,
    baseline_rss: int,
    setup_failures: int,
) -> StepResult:
    """Warm up, then measure ``options.seconds`` of play at ``tables`` tables."""
    await asyncio.sleep(options.warmup)
    await workers.all("reset")
    probe.take()
    before = ProcessSample.take(room.pids())
    counts_before = await ServerCounts.scrape(http, room.nodes, options.server_workers)
    backing_before = await BackingSample.take(room)
    recorders = start_profiles(options, room, tables)
    samples = [before]
    every = min(10.0, options.seconds / 6)
    while (left := before.at + options.seconds - time.monotonic()) > 0:
        await asyncio.sleep(min(every, left))
        samples.append(ProcessSample.take(room.pids()))
    after = samples[-1]
    counts = (await ServerCounts.scrape(http, room.nodes, options.server_workers)).since(
        counts_before
    )
    backing_after = await BackingSample.take(room)
    postgres_cpu = redis_cpu = None
    redis_calls: dict[str, float] = {}
    if backing_before is not None and backing_after is not None and counts.actions:
        postgres, redis_seconds, calls = backing_after.since(backing_before)
        postgres_cpu = postgres / counts.actions * 1000
        redis_cpu = redis_seconds / counts.actions * 1000
        redis_calls = {name: n / counts.actions for name, n in calls.items()}
    reports: list[Stats] = [answer[1] for answer in await workers.all("report")]
    round_trips = probe.take()
    for recorder in recorders:
        await asyncio.to_thread(recorder.wait)

    elapsed = after.at - before.at
    latencies = [latency for stats in reports for latency in stats.latencies]
    cpu = after.cpu_seconds - before.cpu_seconds
    errors: Counter[str] = Counter()
    trouble: Counter[str] = Counter()
    for stats in reports:
        errors.update(stats.errors)
        trouble.update(stats.trouble)
    has_gc = counts_before.gc_buckets != {}
    longest = counts.longest_gc_bound()
    return StepResult(
        tables=tables,
        connections=connections,
        seconds=round(elapsed, 2),
        actions_per_second=counts.actions / elapsed,
        hands_per_hour=counts.hands / elapsed * 3600,
        acts_timed=len(latencies),
        p50_ms=ms(percentile(latencies, 0.50)),
        p95_ms=ms(percentile(latencies, 0.95)),
        p99_ms=ms(percentile(latencies, 0.99)),
        server_cpu_percent=cpu / elapsed * 100,
        cpu_per_action_ms=cpu / counts.actions * 1000 if counts.actions else None,
        rss_per_connection_kib=(
            (after.rss_bytes - baseline_rss) / connections / 1024 if connections else None
        ),
        rss_mib_per_minute=slope(samples),
        ping_p99_ms=ms(percentile(round_trips, 0.99)),
        ping_max_ms=ms(max(round_trips, default=None)),
        gc_count=int(counts.gc_count) if has_gc else None,
        gc_total_ms=counts.gc_seconds * 1000 if has_gc else None,
        gc_longest_under_ms=ms(longest),
        bots_cpu_percent=sum(stats.cpu_seconds for stats in reports) / elapsed * 100,
        postgres_cpu_per_action_ms=postgres_cpu,
        redis_cpu_per_action_ms=redis_cpu,
        redis_calls_per_action=redis_calls,
        errors=dict(errors),
        trouble=dict(trouble),
        disconnects=sum(stats.disconnects for stats in reports),
        late_bots=sum(stats.timeouts for stats in reports),
        setup_failures=setup_failures,
    )


def profile_path(options: Options, tables: int, node: str) -> Path:
    assert options.profile_dir is not None
    return options.profile_dir / f"{options.backend}-{options.nodes}n-{tables}t-{node}.txt"


def start_profiles(options: Options, room: Cardroom, tables: int) -> list[subprocess.Popen[bytes]]:
    """py-spy recording every node over the measured step (``--profile``)."""
    if options.profile_dir is None:
        return []
    options.profile_dir.mkdir(parents=True, exist_ok=True)
    return [
        subprocess.Popen(
            [
                "py-spy", "record", "--pid", str(node.process.pid), "--nonblocking",
                "--rate", "100", "--duration", str(max(1, round(options.seconds))),
                "--format", "raw", "--output", str(profile_path(options, tables, node.id)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for node in room.nodes
        if node.process is not None
    ]  # fmt: skip


def profiles_of(options: Options, tables: int) -> list[Path]:
    if options.profile_dir is None:
        return []
    pattern = f"{options.backend}-{options.nodes}n-{tables}t-*"
    return [path for path in sorted(options.profile_dir.glob(pattern)) if path.stat().st_size]


# ---------------------------------------------------------------------- the run


async def ramp(options: Options, room: Cardroom, workers: Workers) -> list[StepResult]:
    results: list[StepResult] = []
    async with httpx.AsyncClient(timeout=60) as http:
        token = await login(http, room.nodes[0].url, OPERATOR, PASSWORD)
        baseline_rss = ProcessSample.take(room.pids()).rss_bytes
        # A probe socket for each worker of a node (the kernel places them: most workers).
        probe = Probe(
            [
                node.url.replace("http://", "ws://") + "/ws"
                for node in room.nodes
                for _ in range(options.server_workers)
            ]
        )
        probe.start()
        opened = 0
        connections = 0
        failures = 0
        try:
            for tables in options.tables:
                specs = await open_tables(http, room, token, opened, tables - opened, options.game)
                shares: list[list[BotSpec]] = [[] for _ in workers.pipes]
                for number, spec in enumerate(specs):  # a table's bots share a worker
                    shares[(opened + number // SEATS) % len(shares)].append(spec)
                answers = await workers.ask([("add", share) for share in shares])
                failed = [line for answer in answers for line in answer[1]]
                for line in failed[:5]:
                    print(f"  bot not seated: {line}", file=sys.stderr)
                failures += len(failed)
                connections += len(specs) - len(failed)
                opened = tables
                result = await run_step(
                    options, room, workers, probe, http, tables, connections, baseline_rss, failures
                )
                print(row(result), flush=True)
                if result.postgres_cpu_per_action_ms is not None:
                    print(f"    {backing(result)}", flush=True)
                if options.server_workers > 1 or options.nodes > 1:
                    print(f"    tables by node: {await tables_by_node(http, room)}", flush=True)
                results.append(result)
                for path in profiles_of(options, tables):
                    for line in Profile.read(path).summary(top=10):
                        print(f"    {line}", flush=True)
        finally:
            await probe.stop()
    return results


COLUMNS = (
    ("tables", 6),
    ("act/s", 7),
    ("hands/h", 8),
    ("p50", 7),
    ("p95", 7),
    ("p99", 7),
    ("CPU%", 6),
    ("ms/act", 6),
    ("KiB/conn", 8),
    ("MiB/min", 7),
    ("ping99", 7),
    ("GC n", 5),
    ("GC ms", 6),
    ("GC max", 7),
    ("bots%", 6),
    ("errors", 0),
)


def header() -> str:
    return " ".join(f"{name:>{width}}" for name, width in COLUMNS)


def row(r: StepResult) -> str:
    def num(value: float | None, digits: int = 1) -> str:
        return "-" if value is None else f"{value:,.{digits}f}"

    problems = [f"{code} {n}" for code, n in sorted(r.errors.items())]
    problems += [f"{kind} {n}" for kind, n in sorted(r.trouble.items())]
    if r.disconnects:
        problems.append(f"disconnects {r.disconnects}")
    if r.late_bots:
        problems.append(f"clock acted {r.late_bots}")
    if r.setup_failures:
        problems.append(f"not seated {r.setup_failures}")
    cells = (
        str(r.tables),
        num(r.actions_per_second),
        num(r.hands_per_hour, 0),
        num(r.p50_ms),
        num(r.p95_ms),
        num(r.p99_ms),
        num(r.server_cpu_percent, 0),
        num(r.cpu_per_action_ms, 2),
        num(r.rss_per_connection_kib, 0),
        num(r.rss_mib_per_minute, 1),
        num(r.ping_p99_ms),
        "-" if r.gc_count is None else str(r.gc_count),
        num(r.gc_total_ms),
        "-" if r.gc_longest_under_ms is None else f"<{r.gc_longest_under_ms:g}",
        num(r.bots_cpu_percent, 0),
        ", ".join(problems) or "none",
    )
    return " ".join(f"{cell:>{width}}" for cell, (_, width) in zip(cells, COLUMNS, strict=True))


def backing(r: StepResult) -> str:
    """PostgreSQL's and Redis's share of an action, under the row of a PostgreSQL step."""
    calls = sorted(r.redis_calls_per_action.items(), key=lambda item: -item[1])
    return (
        f"PostgreSQL {r.postgres_cpu_per_action_ms:.3f} ms CPU an action; "
        f"Redis {r.redis_cpu_per_action_ms:.3f} ms CPU an action, commands an action: "
        + ", ".join(f"{name} {n:.2f}" for name, n in calls[:6])
    )


def best(results: Sequence[StepResult], p99_ms: float) -> int | None:
    """The most tables of a step whose p99 stayed under ``p99_ms``."""
    passing = [r.tables for r in results if r.p99_ms is not None and r.p99_ms < p99_ms]
    return max(passing, default=None)


def game_text(game: str) -> str:
    if game == "mix":
        return (
            "the stud mix ("
            + ", ".join(g["variant"] for g in STUD_MIX["games"])
            + ", 2 hands each)"
        )
    return game


def describe(options: Options) -> Iterator[str]:
    backend = "SQLite" if options.backend == "sqlite" else "PostgreSQL + Redis"
    yield (
        f"{backend}, {options.nodes} node(s)"
        + (
            f" of {options.server_workers} workers behind one port"
            if options.server_workers > 1
            else ""
        )
        + f"; {game_text(options.game)}; {SEATS} bots a table thinking "
        f"{options.think[0]:g}-{options.think[1]:g} s, in {options.workers} process(es); "
        f"{options.warmup:g} s warm-up, {options.seconds:g} s measured a step"
    )
    yield (
        f"Python {platform.python_version()}, {os.cpu_count()} CPU(s), load average "
        + " ".join(f"{value:.2f}" for value in os.getloadavg())
    )
    yield "latencies and pauses in ms; CPU% of one core (server: every node; bots: every worker)"


def parse(argv: Sequence[str] | None = None) -> Options:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--nodes", type=int, default=1, help="nodes (PostgreSQL only above 1)")
    parser.add_argument(
        "--server-workers",
        type=int,
        default=1,
        help="node processes behind each node's port (stud-server --workers; PostgreSQL only)",
    )
    parser.add_argument("--tables", default="25,50,100", help="tables at each step, rising")
    parser.add_argument("--seconds", type=float, default=60, help="measured at each step")
    parser.add_argument("--warmup", type=float, default=15, help="played, not measured")
    parser.add_argument("--think", default="0.5,1.5", help="a bot's think time, MIN,MAX s")
    parser.add_argument("--workers", type=int, default=2, help="bot processes")
    parser.add_argument("--lease-seconds", type=float, default=5.0, help="the nodes' lease")
    parser.add_argument("--p99-ms", type=float, default=50.0, help="the latency to hold")
    parser.add_argument("--json", type=Path, help="also write the results there as JSON")
    games = [name for name, v in VARIANTS.items() if v.max_players >= SEATS]
    parser.add_argument(
        "--game",
        choices=[*games, "mix"],
        default="seven_card_stud",
        help="the game every table plays; mix: the stud mix (mixed tables, 2 hands a game)",
    )
    parser.add_argument(
        "--stalls",
        type=float,
        default=0.0,
        metavar="MS",
        help="watch the nodes' event loops for stalls over MS milliseconds "
        "(STUD_STALL_WATCH_MS) and print where they were, every step together",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        help="record every node with py-spy over each measured step, into this folder, "
        "and print where the time went (bench/profile_summary.py)",
    )
    args = parser.parse_args(argv)
    try:
        tables = tuple(int(n) for n in args.tables.split(","))
        low, high = (float(s) for s in args.think.split(","))
    except ValueError:
        parser.error("--tables takes counts like 25,50,100 and --think MIN,MAX seconds")
    if not tables or any(n <= 0 for n in tables) or list(tables) != sorted(set(tables)):
        parser.error("--tables takes rising positive counts, like 25,50,100")
    if not 0 <= low <= high:
        parser.error("--think takes MIN,MAX seconds with 0 <= MIN <= MAX")
    if args.nodes < 1 or (args.nodes > 1 and args.backend == "sqlite"):
        parser.error("--nodes: at least 1, and several only on --backend postgresql")
    if args.workers < 1:
        parser.error("--workers: at least 1")
    if args.server_workers < 1 or (args.server_workers > 1 and args.backend == "sqlite"):
        parser.error("--server-workers: at least 1, and several only on --backend postgresql")
    if args.profile is not None and shutil.which("py-spy") is None:
        parser.error("--profile needs py-spy (pip install py-spy)")
    return Options(
        backend=args.backend,
        nodes=args.nodes,
        tables=tables,
        seconds=args.seconds,
        warmup=args.warmup,
        think=(low, high),
        workers=args.workers,
        lease_seconds=args.lease_seconds,
        p99_ms=args.p99_ms,
        json_path=args.json,
        profile_dir=args.profile,
        server_workers=args.server_workers,
        stall_ms=args.stalls,
        game=args.game,
    )


def main(argv: Sequence[str] | None = None) -> int:
    options = parse(argv)
    for line in describe(options):
        print(line)
    with tempfile.TemporaryDirectory(prefix="stud-load-") as directory:
        room = Cardroom(Path(directory), options)
        workers: Workers | None = None
        try:
            room.start()
            workers = Workers(options.workers, options.think)
            print(header(), flush=True)
            results = asyncio.run(ramp(options, room, workers))
            if options.stall_ms:
                print("\n".join(room.stalls()))
        except BaseException:
            print(room.logs(), file=sys.stderr)
            raise
        finally:
            if workers is not None:
                workers.stop()
            room.close()
    largest = best(results, options.p99_ms)
    print(
        f"largest step with p99 under {options.p99_ms:g} ms: "
        + ("none" if largest is None else f"{largest} tables")
        + "; load average at the end "
        + " ".join(f"{value:.2f}" for value in os.getloadavg())
    )
    if options.json_path is not None:
        document = {
            "options": asdict(options),  # paths written as strings
            "load_average": os.getloadavg(),
            "steps": [asdict(result) for result in results],
            "largest_tables_under_p99": largest,
        }
        options.json_path.write_text(json.dumps(document, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
