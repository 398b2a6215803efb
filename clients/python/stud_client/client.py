"""``StudClient``: the REST calls and one websocket for every table a player watches.

The websocket is kept alive: a heartbeat ``ping`` well inside the server's idle limit, and
after a drop (the network, a server restart, a ``too slow`` close) a reconnect with
exponential backoff and jitter, the same token signed in again, and every watched table
resynced from a fresh snapshot. Commands in flight when the line dropped fail with
``ConnectionLost``; ``Table.act`` sends its action again under the same action id.

A client given several nodes of one cardroom (``fallback_urls``) tries them in turn when it
(re)connects, the one that answered last first: it outlives the node it was connected to. A
node that keeps the socket open but says nothing (frozen, or its event loop stalled) is
found out by the heartbeat: with no frame at all for ``silent_after`` seconds and a ``ping``
left unanswered for a heartbeat, the client cuts the socket and reconnects, to another node
first.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import httpx
import orjson
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from stud_client.errors import ConnectionLost, ErrorCode, ServerError, StudError
from stud_client.heartbeat import DEFAULT_KEEPALIVE, Beat, Heartbeat
from stud_client.rest import RestCalls
from stud_client.table import MAX_RETRY_AFTER, TRY_AGAIN, Table
from stud_client.tournaments import Tournaments

__all__ = ["ClientStats", "StudClient"]

log = logging.getLogger(__name__)
PROTOCOL_VERSION = 1
# Refusals of the token on signing in again that no retry can mend.
FATAL = frozenset(
    {
        ErrorCode.BAD_TOKEN,
        ErrorCode.TOKEN_EXPIRED,
        ErrorCode.TOKEN_REVOKED,
        ErrorCode.ACCOUNT_SUSPENDED,
        ErrorCode.UNKNOWN_PLAYER,
    }
)


@dataclass(slots=True)
class ClientStats:
    """What a client went through: enough to report on a load run."""

    reconnects: int = 0
    failovers: int = 0  # reconnects that went to another URL than the last one
    silences: int = 0  # servers left for saying nothing within ``silent_after``
    pings: int = 0  # heartbeats sent
    resyncs: int = 0  # snapshots applied after a gap, a restart or a reconnect
    gaps: int = 0  # events that came with a seq one past the expected one
    actions: int = 0  # actions the server answered
    retries: int = 0  # actions sent again (same action id)
    errors: Counter[str] = field(default_factory=Counter)  # error frames, by code
    latencies: list[float] = field(default_factory=list)  # seconds, act -> its event


class StudClient(RestCalls):
    """A player's (or a bot's, or a spectator's) connection to a stud server.

    >>> async def main() -> None:  # doctest: +SKIP
    ...     async with StudClient("http://127.0.0.1:8000") as client:
    ...         await client.login("ann", "secret-password")
    ...         await client.connect()
    ...         table = await client.watch((await client.tables())[0].id)
    ...         await table.sit(buy_in=200)
    ...         view = await table.wait_for(lambda v: v.my_turn)
    """

    def __init__(
        self,
        base_url: str,
        *,
        fallback_urls: Sequence[str] = (),
        token: str | None = None,
        heartbeat: float | None = 5.0,
        silent_after: float | None = None,
        request_timeout: float = 15.0,
        backoff: tuple[float, float] = (0.05, 5.0),
        drop_frame: Callable[[Mapping[str, Any]], bool] | None = None,
        http: httpx.AsyncClient | None = None,
        client_seeds: bool = True,
    ) -> None:
        """``fallback_urls``: other nodes of the same cardroom; a (re)connect tries every URL
        in turn, the one that worked last first, and REST calls go to the current one.
        ``heartbeat``: a ``ping`` after this many seconds without a frame from the server,
        and at least every third of the server's idle limit (its ``hello`` says it), so a
        busy connection costs no more pings than a quiet one needs (None: none; the server
        then closes an idle connection). ``silent_after``: seconds without a frame from the
        server after which, with a ping unanswered for a heartbeat, it is taken for frozen
        and left (by default two heartbeats).
        ``backoff``: first and longest wait between reconnect rounds.
        ``drop_frame``: fault injection for tests; a frame it returns True for is ignored
        as if the network had lost it. ``client_seeds``: give a fresh random seed to every
        hand dealt to this player (docs/fairness.md), as the table announces its commitment."""
        urls = [url.rstrip("/") for url in (base_url, *fallback_urls)]
        self.urls: tuple[str, ...] = tuple(dict.fromkeys(urls))  # in order, each once
        self._current = 0  # the URL that worked last (the first one until one has)
        self.token = token
        self.player: str | None = None
        self.stats = ClientStats()
        self.heartbeat = heartbeat
        self.silent_after = silent_after or (2 * heartbeat if heartbeat else None)
        self._heartbeat = Heartbeat(heartbeat, self.silent_after) if heartbeat else None
        self._suspect: int | None = None  # the URL left for silence: tried last
        self.request_timeout = request_timeout
        self.backoff = backoff
        self._drop_frame = drop_frame
        self.client_seeds = client_seeds
        self._own_http = http is None
        self._http = http or httpx.AsyncClient(timeout=request_timeout)
        self._ws: ClientConnection | None = None
        self._ready = asyncio.Event()
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._tables: dict[int, Table] = {}
        # Tournaments: the REST calls, and those followed over the websocket.
        self.tournaments = Tournaments(self)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._runner: asyncio.Task[None] | None = None
        self._closing = False
        self._fatal: StudError | None = None

    @property
    def base_url(self) -> str:
        """The URL in use: REST calls go there, and the websocket is (or was last) there."""
        return self.urls[self._current]

    @property
    def ws_url(self) -> str:
        return _ws_url(self.base_url)

    async def __aenter__(self) -> StudClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def signed_out(self) -> ServerError | None:
        """Why the server signed this client out (``token_revoked``, ``token_expired``,
        ``account_suspended``), or None. Once signed out it does not reconnect: log in again
        and ``connect``."""
        fatal = self._fatal
        return fatal if isinstance(fatal, ServerError) else None

    # ------------------------------------------------------------------ websocket

    async def connect(self) -> None:
        """Open the websocket (at the first of the URLs that answers) and sign in with the
        token, if any. From then on the connection is kept up until ``close``."""
        if self._runner is not None:
            return
        self._closing = False
        await self._open()
        self._runner = asyncio.create_task(self._run(), name="stud-client")
        if self.heartbeat:
            self._spawn(self._beat())
        await self._restore()

    async def watch(self, table_id: int) -> Table:
        """Watch a table: its snapshot now, its events from then on."""
        table = self._tables.get(table_id)
        if table is None:
            table = self._tables[table_id] = Table(self, table_id)
        try:
            await self._request("watch", table=table_id)
        except ServerError:
            # Never seen: forgotten (once, though several watches of it were refused).
            if table.seq is None and self._tables.get(table_id) is table:
                del self._tables[table_id]
            raise
        return table

    async def close(self, *, logout: bool = False) -> None:
        """Close the websocket and the HTTP client; ``logout``: then end this token on the
        server too (a program's token that nothing should use again), as best it can."""
        self._closing = True
        self._ready.clear()
        ws, self._ws = self._ws, None
        if ws is not None:
            with contextlib.suppress(ConnectionClosed, OSError):  # the line is gone already
                await ws.close()
        if self._runner is not None:
            self._runner.cancel()  # it may be waiting to reconnect
            await asyncio.gather(self._runner, return_exceptions=True)
            self._runner = None
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._fail_pending()
        if logout and self.token:
            with contextlib.suppress(StudError, httpx.HTTPError):
                await self._rest("POST", "/auth/logout")
        if self._own_http:
            await self._http.aclose()

    async def drop_connection(self) -> None:
        """Cut the socket without a closing handshake, as a network failure would; the
        client then reconnects by itself (chaos testing)."""
        if self._ws is not None:
            self._ws.transport.abort()

    # ------------------------------------------------------------------ internals

    async def _open(self) -> None:
        """Connect to the URL that worked last, else to each other one in turn; the last
        failure is raised if none answers."""
        order = [self._current, *(n for n in range(len(self.urls)) if n != self._current)]
        if self._suspect is not None and len(order) > 1:
            order.remove(self._suspect)
            order.append(self._suspect)
        for tried, number in enumerate(order, 1):
            try:
                await self._open_at(_ws_url(self.urls[number]))
            except (
                OSError,
                TimeoutError,
                InvalidHandshake,
                InvalidURI,
                ConnectionClosed,
                StudError,
            ) as error:
                if tried == len(order):
                    raise
                log.info(
                    "stud client: %s did not answer (%s); trying %s",
                    self.urls[number],
                    error,
                    self.urls[order[tried]],
                )
                continue
            self._suspect = None
            if number != self._current:
                log.info("stud client: now connected to %s", self.urls[number])
                if self._runner is not None:  # a reconnect, not the first connect
                    self.stats.failovers += 1
                self._current = number
            return

    async def _open_at(self, ws_url: str) -> None:
        ws = await connect(
            ws_url,
            open_timeout=self.request_timeout,
            ping_interval=20,
            ping_timeout=20,
            close_timeout=2,
            max_size=2**20,
        )
        try:
            hello = orjson.loads(await asyncio.wait_for(ws.recv(), self.request_timeout))
        except BaseException:
            await ws.close()
            raise
        if hello.get("type") != "hello" or hello.get("protocol") != PROTOCOL_VERSION:
            await ws.close()
            raise StudError(f"not a stud server speaking protocol v1: {hello!r}")
        idle = hello.get("idle_seconds")
        if self._heartbeat is not None:
            if isinstance(idle, int | float) and idle > 0:
                self._heartbeat.keepalive = min(DEFAULT_KEEPALIVE, idle / 3)
            self._heartbeat.connected(time.monotonic())
        self._ws = ws

    async def _restore(self) -> None:
        """Sign in again and resync every watched table (after a connect or a reconnect)."""
        try:
            if self.token is not None:
                result = await self._request("auth", wait=False, token=self.token)
                self.player = str(result["player"])
        except ServerError as refused:
            if refused.code in FATAL:
                # A token refused (expired, revoked) will never do: stop here, loudly.
                self._fatal = refused
                self._ready.set()
            elif self._ws is not None:
                self._ws.transport.abort()  # try again with the next connection
            raise
        self._ready.set()
        tables = list(self._tables)
        results = await asyncio.gather(
            *(self._request("resync", table=t) for t in tables), return_exceptions=True
        )
        for table_id, result in zip(tables, results, strict=True):
            if isinstance(result, ServerError):
                log.warning("table %s: resync refused (%s)", table_id, result.code)
                self._resync_soon(table_id)
        await self.tournaments._restore()

    async def _run(self) -> None:
        """Read frames; when the socket drops, reconnect (backoff and jitter) and restore."""
        while True:
            ws = self._ws
            if ws is not None:
                try:
                    async for text in ws:
                        if self._heartbeat is not None:
                            self._heartbeat.heard(time.monotonic())
                        try:
                            self._on_text(text)
                        except Exception:  # noqa: BLE001 - one bad frame must not end it
                            log.exception("stud client: a frame could not be applied")
                except ConnectionClosed:
                    pass
            if self._closing:
                return
            self._lost()
            if self._fatal is not None:
                # Signed out: the same token will never do. Requests raise why at once.
                self._ready.set()
                self._runner = None
                return
            attempt = 0
            while not self._closing:
                low, high = self.backoff
                delay = min(high, low * 2**attempt)
                await asyncio.sleep(delay * (0.5 + random.random() / 2))
                attempt += 1
                try:
                    await self._open()
                    break
                except (
                    OSError,
                    TimeoutError,
                    InvalidHandshake,
                    InvalidURI,
                    ConnectionClosed,
                    StudError,
                ) as error:
                    log.info("stud client: reconnect attempt %s failed (%s)", attempt, error)
            if self._closing:
                return
            self.stats.reconnects += 1
            self._spawn(self._restore_quietly())

    async def _restore_quietly(self) -> None:
        with contextlib.suppress(StudError, TimeoutError):
            await self._restore()

    def _lost(self) -> None:
        self._ws = None
        self._ready.clear()
        self._fail_pending()
        for table in self._tables.values():
            table._on_drop()

    def _fail_pending(self) -> None:
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(self._fatal or ConnectionLost("the connection dropped"))

    async def _beat(self) -> None:
        """Ping a quiet server, and leave one that stopped answering (its socket open, its
        process frozen): ``stud_client.heartbeat`` decides when."""
        beat = self._heartbeat
        assert beat is not None
        while not self._closing:
            await asyncio.sleep(beat.tick)
            ws = self._ws
            if ws is None:
                continue
            now = time.monotonic()
            decided = beat.decide(now)
            if decided is Beat.LEAVE:
                log.warning(
                    "stud client: %s has said nothing for %.1f s, nor answered a ping in "
                    "%.1f s; leaving it",
                    self.base_url,
                    now - beat.heard_at,
                    now - beat.pinged_at,
                )
                self.stats.silences += 1
                self._suspect = self._current
                ws.transport.abort()  # the reader sees the drop and reconnects
            elif decided is Beat.PING:
                self.stats.pings += 1
                with contextlib.suppress(ConnectionClosed):
                    await ws.send('{"type":"ping"}')

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _ready_or_lost(self) -> None:
        """Wait for the connection to be back; ConnectionLost if it is not in time."""
        if self._fatal is not None:
            raise self._fatal
        try:
            await asyncio.wait_for(self._ready.wait(), self.request_timeout)
        except TimeoutError:
            raise ConnectionLost("not connected") from None
        if self._fatal is not None:
            raise self._fatal

    async def _request(self, kind: str, /, *, wait: bool = True, **fields: Any) -> Any:
        """Send a message and wait for its reply (or its error, raised as ServerError)."""
        if wait:
            await self._ready_or_lost()
        ws = self._ws
        if ws is None:
            raise ConnectionLost("not connected")
        message_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        # A drop fails every pending request, maybe before this one is awaited (its send
        # failing too, or its task cancelled at shutdown): mark the failure seen either way.
        future.add_done_callback(_retrieve)
        self._pending[message_id] = future
        try:
            await ws.send(orjson.dumps({"type": kind, "id": message_id, **fields}).decode())
        except ConnectionClosed:
            self._pending.pop(message_id, None)
            raise ConnectionLost("the connection dropped") from None
        try:
            return await asyncio.wait_for(future, self.request_timeout)
        finally:
            self._pending.pop(message_id, None)

    def _resync_soon(self, table_id: int) -> None:
        self._spawn(self._resync(table_id))

    async def _resync(self, table_id: int) -> None:
        """Until the table answers, as long as it is watched: a table changing nodes refuses
        at once (``table_unavailable`` with ``retry_after``) until its next node runs it."""
        attempt = 0
        while table_id in self._tables and not self._closing:
            try:
                await self._request("resync", table=table_id)
                return
            except ConnectionLost:
                return  # the reconnect resyncs every table
            except ServerError as error:
                if error.code not in TRY_AGAIN:
                    log.warning("table %s: resync refused (%s)", table_id, error.code)
                    return
                hint = error.retry_after
            except TimeoutError:
                hint = None
            log.info("table %s: resync failed; trying again", table_id)
            # When the server said when the table runs again, then (it knows when a lease
            # lapses); else backing off.
            backoff = min(0.1 * 2**attempt, MAX_RETRY_AFTER)
            await asyncio.sleep(backoff if hint is None else min(max(hint, 0.05), MAX_RETRY_AFTER))
            attempt += 1

    async def _unwatch(self, table: Table) -> None:
        await self._request("unwatch", table=table.id)
        self._tables.pop(table.id, None)

    def _on_text(self, text: str | bytes) -> None:
        frame = orjson.loads(text)
        if self._drop_frame is not None and self._drop_frame(frame):
            return
        kind = frame.get("type")
        if kind == "event":
            table = self._tables.get(frame["table"])
            if table is not None:
                table._on_event(frame)
        elif kind == "tournament_event":
            self.tournaments._on_frame(frame)
        elif kind == "reply":
            result = frame.get("result")
            if isinstance(result, dict) and result.get("type") == "snapshot":
                table = self._tables.get(result["table"])
                if table is not None:
                    if table.seq is not None:
                        self.stats.resyncs += 1
                    table._apply_snapshot(result)
            future = self._pending.pop(frame.get("id"), None)
            if future is not None and not future.done():
                future.set_result(result)
        elif kind == "signed_out":
            # The token ended (logged out, revoked, expired, the account suspended): the
            # server closes the socket next; no reconnect with this token.
            code = str(frame.get("code"))
            self._fatal = ServerError(code, str(frame.get("message")))
            log.warning("stud client: signed out by the server (%s)", code)
            self._fail_pending()
        elif kind == "error":
            code = str(frame.get("code"))
            self.stats.errors[code] += 1
            future = self._pending.pop(frame.get("id"), None)
            if future is not None and not future.done():
                retry_after = frame.get("retry_after")
                future.set_exception(
                    ServerError(
                        code,
                        str(frame.get("message")),
                        retry_after=retry_after
                        if isinstance(retry_after, int | float) and retry_after >= 0
                        else None,
                    )
                )
            elif future is None:
                log.warning("stud client: error frame %s", frame)


def _ws_url(base_url: str) -> str:
    scheme, _, rest = base_url.partition("://")
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest}/ws"


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()
