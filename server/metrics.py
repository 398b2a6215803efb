"""What a node counts for Prometheus (``GET /metrics``), in a registry of its own.

Each app has its :class:`Metrics` (a ``CollectorRegistry`` per app, never the library's
global one, so tests and several apps in one process do not collide). The hot path pays
one counter increment or one histogram observation per thing counted, through a child
per label value made once and kept (``labels()`` takes a lock and a lookup each call).
Gauges of the tables (how many in each lifecycle state, how many paused) are read from
the table actors when Prometheus scrapes, costing nothing in between.

Every name, with its labels, is listed in docs/architecture.md ("Metrics and logs").
"""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from enum import Enum
from typing import Any, Protocol, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector


class WatchedTournament(Protocol):
    """What the tournament gauges read of a director (``server.tournaments.director``)."""

    @property
    def players_left(self) -> int | None: ...


class WatchedTable(Protocol):
    """What the table gauges read of a table (a ``server.table.loop.TableLoop``)."""

    @property
    def state(self) -> Enum: ...

    @property
    def paused(self) -> bool: ...


# From half a millisecond (an in-memory command) to ten seconds (a database timing out).
LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)

# From a move made at once to one that waited for a long hand (or a paused tournament).
MOVE_WAIT_BUCKETS = (0.0, 1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)

# From a young collection (tens of microseconds) to a full one over a large heap (a second).
GC_BUCKETS = (0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)

_Child = TypeVar("_Child", Counter, Histogram)


class Metrics:
    """One app's metrics; the table actors, the journal, the websocket and the cardroom
    call its methods, ``GET /metrics`` renders it."""

    def __init__(self, node_id: str | None = None) -> None:
        self.registry = registry = CollectorRegistry(auto_describe=True)
        if node_id is not None:
            # Which node answered: each node (each worker of ``--workers``) has its own.
            Gauge(
                "stud_node", "The node these metrics are of (1).", ["node"], registry=registry
            ).labels(node_id).set(1)
        self.connections = Gauge(
            "stud_websocket_connections", "Open websocket connections.", registry=registry
        )
        self.hands_finished = Counter(
            "stud_hands_finished", "Hands played to their end and recorded.", registry=registry
        )
        self.hands_cancelled = Counter(
            "stud_hands_cancelled",
            "Hands voided, every chip back (an error, a hand that could not be resumed).",
            registry=registry,
        )
        self.table_errors = Counter(
            "stud_table_errors",
            "Errors a table contained (its hand voided); three in a row pause it (reason errors).",
            registry=registry,
        )
        self.actions = Counter(
            "stud_actions",
            "Actions applied to hands, by kind (timeout: the clock acted for the player).",
            ["kind"],
            registry=registry,
        )
        self.command_seconds = Histogram(
            "stud_command_seconds",
            "From a command entering a table's inbox to its reply, by command.",
            ["command"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.refusals = Counter(
            "stud_refusals",
            "Refusals answered, by error code and by who answered (table: a table actor of "
            "this node, or its inbox; websocket: an error frame sent to a client; http: an "
            "HTTP error answer).",
            ["code", "source"],
            registry=registry,
        )
        self.db_write_seconds = Histogram(
            "stud_db_write_seconds",
            "A table's database writes that succeeded, by write.",
            ["write"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.bus_publish_seconds = Histogram(
            "stud_bus_publish_seconds",
            "One pipeline of publishes to Redis, written and confirmed (no samples on the "
            "in-memory bus).",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.takeovers = Counter(
            "stud_table_takeovers",
            "Tables this node took over from another node (released: the node stopped and "
            "gave it back; lease_expired: its lease ran out; moved: handed over between hands).",
            ["reason"],
            registry=registry,
        )
        self.table_moves = Counter(
            "stud_table_moves",
            "Tables this node handed over to another between hands (balance: evening the "
            "tables out over the nodes; drain: the node is drained).",
            ["reason"],
            registry=registry,
        )
        self.gc_pause_seconds = Histogram(
            "stud_gc_pause_seconds",
            "Garbage collections of the node's process, by generation: the event loop stands "
            "still for each.",
            ["generation"],
            buckets=GC_BUCKETS,
            registry=registry,
        )
        self._gc_children = [self.gc_pause_seconds.labels(str(g)) for g in range(3)]
        self.event_loop_lag = Gauge(
            "stud_event_loop_lag_seconds",
            "How late the node's event loop wakes a timer: the median over the last second "
            "(server/edge/overload.py); over STUD_OVERLOAD_LAG_SECONDS new work is shed.",
            registry=registry,
        )
        self.shed_calls = Counter(
            "stud_shed",
            "New work refused server_busy while the event loop was behind, by kind (connect, "
            "login, register, lobby, hands, wallet, sit, add_chips, join_waiting_list).",
            ["kind"],
            registry=registry,
        )
        self.tournament_moves = Counter(
            "stud_tournament_moves",
            "Players this node's tournament directors moved between tables, by reason "
            "(balance, break, final_table, operator).",
            ["reason"],
            registry=registry,
        )
        self.tournament_move_wait = Histogram(
            "stud_tournament_move_wait_seconds",
            "How long each move waited: from the balancing first waiting for the table the "
            "player left (a hand in play) or holding it (the final table's draw) to the move "
            "(an operator's move: from its request); by reason.",
            ["reason"],
            buckets=MOVE_WAIT_BUCKETS,
            registry=registry,
        )
        self.tournament_director_cpu = Counter(
            "stud_tournament_director_cpu_seconds",
            "The CPU time this node's tournament directors' own tasks spent on the event loop "
            "(each step of the task timed; the tables' work on their orders and the database's "
            "own threads not counted).",
            registry=registry,
        )
        self.tournament_requests_waiting = Gauge(
            "stud_tournament_requests_waiting",
            "Requests to running tournaments filed and not yet taken by their directors, "
            "across the cardroom (read from the database at each scrape; -1: it did not "
            "answer).",
            registry=registry,
        )
        _GC_TIMER.watch(self)
        self._children: dict[tuple[object, ...], Counter | Histogram] = {}
        self._tables: Callable[[], Iterable[WatchedTable]] = tuple
        self._table_states: tuple[str, ...] = ()
        for reason in ("released", "lease_expired", "moved"):  # at zero from the start
            self._child(self.takeovers, reason)
        for reason in ("balance", "drain"):
            self._child(self.table_moves, reason)
        for reason in ("balance", "break", "final_table", "operator"):
            self._child(self.tournament_moves, reason)
        self._tournaments: Callable[[], Iterable[WatchedTournament]] = tuple
        registry.register(_TablesCollector(self))
        registry.register(_TournamentsCollector(self))

    # ------------------------------------------------------------------ what is counted

    def _child(self, metric: _Child, *values: str) -> _Child:
        key = (id(metric), *values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child  # type: ignore[return-value]

    def command_answered(self, command: str, seconds: float) -> None:
        self._child(self.command_seconds, command).observe(seconds)

    def refused(self, code: str, source: str) -> None:
        self._child(self.refusals, str(code), source).inc()

    def action(self, kind: str) -> None:
        self._child(self.actions, kind).inc()

    def db_write(self, write: str, seconds: float) -> None:
        self._child(self.db_write_seconds, write).observe(seconds)

    def bus_published(self, seconds: float) -> None:
        self.bus_publish_seconds.observe(seconds)

    def shed(self, kind: str) -> None:
        self._child(self.shed_calls, kind).inc()

    def takeover(self, reason: str) -> None:
        self._child(self.takeovers, reason).inc()

    def table_moved(self, reason: str) -> None:
        self._child(self.table_moves, reason).inc()

    def tournament_moved(self, reason: str, waited: float) -> None:
        self._child(self.tournament_moves, reason).inc()
        self._child(self.tournament_move_wait, reason).observe(waited)

    def director_ran(self, cpu_seconds: float) -> None:
        self.tournament_director_cpu.inc(cpu_seconds)

    def watch_tournaments(self, directors: Callable[[], Iterable[WatchedTournament]]) -> None:
        """Where the tournament gauges are read from at each scrape: this node's directors."""
        self._tournaments = directors

    def tournaments(self) -> Iterable[WatchedTournament]:
        return self._tournaments()

    def gc_paused(self, generation: int, seconds: float) -> None:
        self._gc_children[generation].observe(seconds)

    def watch_tables(
        self, tables: Callable[[], Iterable[WatchedTable]], states: Iterable[str]
    ) -> None:
        """Where the table gauges are read from at each scrape: this node's actors, and
        every state they may be in (each listed, at zero too)."""
        self._tables = tables
        self._table_states = tuple(states)

    def tables(self) -> Iterable[WatchedTable]:
        return self._tables()

    def table_states(self) -> tuple[str, ...]:
        return self._table_states

    def exposition(self, accept: str | None) -> tuple[bytes, str]:
        """The metrics in the format the scraper accepts (Prometheus' text format unless
        it asks for OpenMetrics), and that format's content type."""
        encoder, content_type = choose_encoder(accept or "")
        return encoder(self.registry), content_type


class _TablesCollector(Collector):
    """The tables this node runs, by lifecycle state, and the paused ones, read when
    scraped (every state listed, at zero too, so a query never finds a series missing)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        counts = dict.fromkeys(self.metrics.table_states(), 0)
        paused = 0
        for table in self.metrics.tables():
            state = str(table.state.value)
            counts[state] = counts.get(state, 0) + 1
            paused += table.paused
        by_state = GaugeMetricFamily(
            "stud_tables", "Tables run by this node, by lifecycle state.", labels=["state"]
        )
        for state, count in counts.items():
            by_state.add_metric([state], count)
        yield by_state
        yield GaugeMetricFamily(
            "stud_tables_paused",
            "Tables of this node paused (waiting for the database to answer).",
            value=paused,
        )


class _TournamentsCollector(Collector):
    """The tournaments this node directs and their players left, read when scraped."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        left = [d.players_left for d in self.metrics.tournaments()]
        playing = [n for n in left if n is not None]
        yield GaugeMetricFamily(
            "stud_tournaments_running",
            "Tournaments this node directs that are playing (started, not over).",
            value=len(playing),
        )
        yield GaugeMetricFamily(
            "stud_tournament_players_left",
            "Players still in the tournaments this node directs.",
            value=sum(playing),
        )


class _GcTimer:
    """Times every collection of the process (one ``gc.callbacks`` entry, however many apps
    the process holds) for every live :class:`Metrics`, held weakly so that an app's
    registry goes with the app."""

    def __init__(self) -> None:
        self.watchers: weakref.WeakSet[Metrics] = weakref.WeakSet()
        self.started = 0.0

    def watch(self, metrics: Metrics) -> None:
        self.watchers.add(metrics)
        if self.callback not in gc.callbacks:
            gc.callbacks.append(self.callback)

    def callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self.started = time.perf_counter()
            return
        seconds = time.perf_counter() - self.started
        for metrics in self.watchers:
            metrics.gc_paused(info["generation"], seconds)


_GC_TIMER = _GcTimer()
