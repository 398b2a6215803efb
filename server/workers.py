"""Serving nodes: one in this process (:func:`run_node`), or several node processes behind one
port (``stud-server --workers N``), one per core.

A node is one asyncio process: the tables it runs share one core. On PostgreSQL + Redis,
nodes already form one cardroom (server/cardroom/cluster.py), so using more cores is starting more
nodes; this module starts them on one machine behind one port.

- Each worker is a full node: its own node id (``<node-id>-w1`` .. ``-wN``), its own lease
  rounds and table actors, its own ``/metrics`` and ``/readyz``. Commands for a table run
  by another worker travel over Redis, as between machines.
- One port: each worker listens on its own socket bound with ``SO_REUSEPORT``, and the
  kernel spreads new connections evenly over the workers listening (a shared socket would
  let whichever worker wakes first accept a whole burst). The parent keeps a bound socket
  of its own on the port, never listening, so that the port stays this cardroom's while
  a worker restarts. A worker that dies loses the connections it held and the ones
  waiting for it to accept them; clients reconnect, to another worker.
- The parent migrates the database once, then supervises: a worker that dies is started
  again (at once if it had been running for a while, after a growing pause if it keeps
  dying); one that keeps failing before it serves stops everything with exit status 1.
- A watchdog: each worker's event loop beats a heartbeat in memory it shares with the parent
  every :data:`HEARTBEAT_SECONDS`; a serving worker whose heartbeat is older than
  ``worker_watchdog_seconds`` (its loop hung, or the process was stopped) is killed with
  SIGKILL, and restarted as after a crash: its tables' leases lapse and the other workers
  take them over meanwhile.
  SIGTERM or SIGINT to the parent stops every worker gracefully (each ends its tables'
  leases and websockets as a single node does), then the parent exits 0.
- Workers die with the parent (Linux ``PR_SET_PDEATHSIG``) and sit in their own process
  group: a terminal's Ctrl-C reaches the parent only, which passes the stop on.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import gc
import logging
import multiprocessing
import os
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from multiprocessing.context import SpawnProcess
from multiprocessing.synchronize import Event
from types import FrameType
from typing import TYPE_CHECKING, Protocol

from server import logs
from server.collector import Collector
from server.settings import Settings

if TYPE_CHECKING:
    import uvicorn
    from fastapi import FastAPI

log = logging.getLogger("stud_server.workers")

#: A worker that has served this long and then dies is restarted at once.
STEADY_SECONDS = 30.0
#: A worker that fails this many times in a row before serving stops the whole server.
MAX_START_FAILURES = 5
#: Pauses before restarting a worker that keeps dying: doubled each time, up to the cap.
FIRST_PAUSE_SECONDS = 0.5
MAX_PAUSE_SECONDS = 30.0
#: How long a graceful stop may take before the workers still running are killed.
STOP_SECONDS = 30.0
_PR_SET_PDEATHSIG = 1
#: How often a worker's event loop beats its heartbeat.
HEARTBEAT_SECONDS = 0.5


def refusal(settings: Settings) -> str | None:
    """Why ``settings.workers`` cannot run, or None."""
    if settings.workers == 1:
        return None
    if not settings.database_url.startswith("postgresql"):
        return (
            f"--workers {settings.workers} needs PostgreSQL and Redis: SQLite has one "
            "writer process (run one worker, or set --database-url postgresql://...)"
        )
    if settings.redis_url is None:
        return (
            f"--workers {settings.workers} needs Redis (--redis-url or REDIS_URL): the "
            "in-memory bus reaches one process only, and the workers share the tables "
            "through the bus"
        )
    longest = len(worker_node_id(settings.node_id, settings.workers))
    if longest > 64:
        return f"--node-id is too long for {settings.workers} workers ({longest} > 64 chars)"
    return None


def worker_node_id(node_id: str, index: int) -> str:
    """The node id of worker ``index`` (from 1)."""
    return f"{node_id}-w{index}"


def worker_settings(settings: Settings) -> list[Settings]:
    """Each worker's settings: its own node id; the demo tables and their house bots are
    the first worker's only (opened once, played by one set of bots)."""
    return [
        settings.model_copy(
            update={
                "node_id": worker_node_id(settings.node_id, i),
                "demo": settings.demo and i == 1,
                "workers": 1,
            }
        )
        for i in range(1, settings.workers + 1)
    ]


def reuse_port_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` with ``SO_REUSEPORT`` (not listening yet)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


def _die_with_parent(parent: int) -> None:
    """Ask Linux to end this process when its parent ends (a no-op elsewhere)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(name, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the parent ended before the request took hold
        os._exit(1)


class Heartbeat(Protocol):
    """A worker's heartbeat, shared with its parent: the monotonic time of its last beat."""

    value: float


def _worker_main(
    settings: Settings, log_level: str, parent: int, ready: Event, heartbeat: Heartbeat
) -> None:
    """A worker process: one node on its own ``SO_REUSEPORT`` socket."""
    _die_with_parent(parent)
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)  # the parent passes stops on; a terminal's Ctrl-C is the parent's
    logs.configure(log_level, settings.log_format)
    sock = reuse_port_socket(settings.host, settings.port)
    run_node(settings, log_level, sockets=[sock], on_started=ready.set, heartbeat=heartbeat)


async def beat(heartbeat: Heartbeat) -> None:
    """Beat the heartbeat from the event loop for as long as it runs (a loop that hangs
    stops beating: the parent's watchdog sees it)."""
    while True:
        heartbeat.value = time.monotonic()
        await asyncio.sleep(HEARTBEAT_SECONDS)


@dataclass
class _Worker:
    index: int
    settings: Settings
    process: SpawnProcess | None = None
    ready: Event | None = None
    heartbeat: Heartbeat | None = None
    started_at: float = 0.0
    served: bool = False  # it signalled that it serves, in its current run
    start_failures: int = 0  # in a row, before serving
    short_lives: int = 0  # in a row, dead before STEADY_SECONDS
    restart_at: float | None = None  # when to start it again (monotonic)


@dataclass
class Supervisor:
    """Starts the workers, keeps them running, and stops them all on a signal."""

    settings: Settings
    log_level: str
    steady_seconds: float = STEADY_SECONDS
    max_start_failures: int = MAX_START_FAILURES
    first_pause_seconds: float = FIRST_PAUSE_SECONDS
    # What a worker process runs: (settings, log level, the parent's pid, its ready event,
    # its heartbeat).
    target: Callable[[Settings, str, int, Event, Heartbeat], None] = _worker_main
    workers: list[_Worker] = field(default_factory=list)
    _stopping: bool = False
    _context: multiprocessing.context.SpawnContext = field(
        default_factory=lambda: multiprocessing.get_context("spawn")
    )

    def run(self) -> int:
        """Serve until a stop signal (0), or a port or a worker that cannot start (1)."""
        try:
            placeholder = reuse_port_socket(self.settings.host, self.settings.port)
        except OSError as error:
            log.critical(
                "cannot listen on %s:%d: %s", self.settings.host, self.settings.port, error
            )
            return 1
        port = placeholder.getsockname()[1]
        settings = self.settings.model_copy(update={"port": port})
        self.workers = [
            _Worker(index=i, settings=one)
            for i, one in enumerate(worker_settings(settings), start=1)
        ]
        wake_read, wake_write = socket.socketpair()
        wake_read.setblocking(False)
        wake_write.setblocking(False)
        previous = self._catch_signals(wake_write.fileno())
        log.info(
            "starting %d workers on %s:%d (%s)",
            len(self.workers),
            settings.host,
            port,
            ", ".join(w.settings.node_id for w in self.workers),
        )
        try:
            for worker in self.workers:
                self._start(worker)
            return self._supervise(wake_read)
        finally:
            self._stop_all()
            self._restore_signals(previous)
            for sock in (placeholder, wake_read, wake_write):
                sock.close()

    # -------------------------------------------------------------- signals

    def _catch_signals(
        self, wake_fd: int
    ) -> dict[int, Callable[[int, FrameType | None], object] | int | None]:
        previous: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, self._on_stop_signal)
        previous[-1] = signal.set_wakeup_fd(wake_fd)
        return previous

    def _restore_signals(
        self, previous: dict[int, Callable[[int, FrameType | None], object] | int | None]
    ) -> None:
        wake_fd = previous.pop(-1)
        signal.set_wakeup_fd(wake_fd if isinstance(wake_fd, int) else -1)
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    def _on_stop_signal(self, signum: int, frame: FrameType | None) -> None:
        if not self._stopping:
            log.info("%s: stopping every worker", signal.Signals(signum).name)
        self._stopping = True

    # -------------------------------------------------------------- workers

    def _start(self, worker: _Worker) -> None:
        worker.ready = self._context.Event()
        worker.heartbeat = self._context.Value("d", 0.0, lock=False)
        worker.process = self._context.Process(
            target=self.target,
            args=(worker.settings, self.log_level, os.getpid(), worker.ready, worker.heartbeat),
            name=f"stud-server {worker.settings.node_id}",
            daemon=False,
        )
        worker.process.start()
        worker.started_at = time.monotonic()
        worker.served = False
        worker.restart_at = None
        log.info("worker %s started (pid %s)", worker.settings.node_id, worker.process.pid)

    def _supervise(self, wake: socket.socket) -> int:
        while not self._stopping:
            running = [w.process.sentinel for w in self.workers if w.process is not None]
            now = time.monotonic()
            timeout = 0.5  # to notice a worker's "serving" between its deaths
            for worker in self.workers:
                if worker.restart_at is not None:
                    timeout = min(timeout, max(0.0, worker.restart_at - now))
            wait([*running, wake], timeout)
            with contextlib.suppress(BlockingIOError):
                while wake.recv(64):
                    pass
            if self._stopping:
                break
            for worker in self.workers:
                status = self._tend(worker)
                if status is not None:
                    return status
        return 0

    def _tend(self, worker: _Worker) -> int | None:
        """Notice a worker's start, death or time to restart; 1 when it cannot start."""
        now = time.monotonic()
        process = worker.process
        ready = worker.ready
        if process is not None and not worker.served and ready is not None and ready.is_set():
            worker.served = True
            worker.start_failures = 0
            log.info("worker %s serves", worker.settings.node_id)
        if process is not None and process.exitcode is None and self._hung(worker, now):
            process.kill()
            process.join(STOP_SECONDS)
        if process is not None and process.exitcode is not None:
            process.join()
            worker.process = None
            lived = now - worker.started_at
            if not worker.served:
                worker.start_failures += 1
            worker.short_lives = worker.short_lives + 1 if lived < self.steady_seconds else 0
            log.error(
                "worker %s (pid %s) %s with status %s after %.1f s",
                worker.settings.node_id,
                process.pid,
                "died" if worker.served else "failed to start",
                process.exitcode,
                lived,
            )
            if worker.start_failures >= self.max_start_failures:
                log.critical(
                    "worker %s failed to start %d times in a row: stopping",
                    worker.settings.node_id,
                    worker.start_failures,
                )
                return 1
            pause = (
                0.0
                if worker.short_lives == 0
                else min(
                    MAX_PAUSE_SECONDS, self.first_pause_seconds * 2 ** (worker.short_lives - 1)
                )
            )
            worker.restart_at = now + pause
            log.info("worker %s restarts in %.1f s", worker.settings.node_id, pause)
        if worker.process is None and worker.restart_at is not None and now >= worker.restart_at:
            self._start(worker)
        return None

    def _hung(self, worker: _Worker, now: float) -> bool:
        """A serving worker whose heartbeat is older than the watchdog's limit (logged)."""
        heartbeat = worker.heartbeat
        if not worker.served or heartbeat is None:
            return False
        last = heartbeat.value or worker.started_at
        silent = now - last
        if silent <= self.settings.worker_watchdog_seconds:
            return False
        log.error(
            "worker %s (pid %s) has not beaten its heartbeat for %.1f s: killed",
            worker.settings.node_id,
            worker.process.pid if worker.process is not None else None,
            silent,
        )
        return True

    def _stop_all(self) -> None:
        """SIGTERM to every worker (each stops as a single node does), then wait for them;
        those still running after STOP_SECONDS are killed."""
        running = [w.process for w in self.workers if w.process is not None]
        for process in running:
            if process.pid is not None and process.exitcode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        for process in running:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.exitcode is None:
                log.error("worker pid %s did not stop in time: killed", process.pid)
                process.kill()
                process.join()
        for worker in self.workers:
            worker.process = None
        log.info("every worker stopped")


def run_node(
    settings: Settings,
    log_level: str,
    *,
    sockets: list[socket.socket] | None = None,
    on_started: Callable[[], object] | None = None,
    heartbeat: Heartbeat | None = None,
) -> None:
    """Serve one node in this process until a stop signal: on ``settings``' host and port,
    or on ``sockets`` already bound (a worker's); ``on_started`` once it accepts;
    ``heartbeat`` beaten from its event loop (a worker's, for its parent's watchdog)."""
    import uvicorn
    from uvicorn.config import STARTUP_FAILURE

    from server.app import create_app

    app = create_app(settings)
    # What was built to start is kept for the node's life: frozen, the collector's full
    # passes skip it, and a burst of new connections costs tens of milliseconds, not hundreds.
    gc.freeze()
    # The collector's passes on the node's own clock, short and often (server/collector.py).
    collector = Collector(settings.collector_thaw_seconds)
    config = node_config(app, settings, log_level)

    class Server(uvicorn.Server):
        beating: asyncio.Task[None] | None = None  # the heartbeat, kept from the collector

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                collector.start(asyncio.get_running_loop())
            if self.started and heartbeat is not None:
                self.beating = asyncio.get_running_loop().create_task(beat(heartbeat))
            if self.started and on_started is not None:
                on_started()

    server = Server(config)
    # After a graceful stop uvicorn raises the signal that asked for it again: Ctrl-C's is
    # a KeyboardInterrupt, the end of the stop rather than an error (as in uvicorn.run).
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=sockets)
    if not server.started:
        raise SystemExit(STARTUP_FAILURE)


def node_config(app: FastAPI, settings: Settings, log_level: str) -> uvicorn.Config:
    """How uvicorn serves a node's app: its address, its HTTP pacing, its websockets, no
    server name in its answers and no query string in its log lines."""
    import uvicorn

    from server.edge.rate_limits import paced_http_protocol
    from server.edge.transport import websocket_options

    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=log_level,
        http=paced_http_protocol(settings.http_requests_per_turn),
        # No "server: uvicorn" header: an answer does not say what runs it.
        server_header=False,
        **websocket_options(settings),
        # uvicorn's own lines go through the root logger's handler: the same format (with
        # its time, as text or JSON) as every other line.
        log_config=None,
    )
    # After uvicorn's logging is configured (by the Config): its lines keep no query string.
    logs.hide_query_strings()
    return config
