"""The gateway's limits: what one address, one account or one websocket may ask of a node.

Logins are limited so that an attacker cannot turn the limit against anyone else (behind
one NAT, a campus or a mobile carrier, many players share one address): an account that
keeps failing to log in waits longer after each failure, and only that account waits; an
address has a budget of failed logins a minute, which slows guessing across many accounts,
and once it is spent the address may still log in to the accounts that logged in from it
before (:meth:`Gateway.begin_login`). Registrations are limited per address (token buckets,
:mod:`server.edge.limits`); the starting bankroll goes to a few new accounts per address a day.
A websocket's messages draw on three buckets of its own (actions, chat, the rest); a
connection refused too often for its rate is closed. Open websockets are counted per
address and per account, and a browser may open one only from an allowed origin.
Everything is kept in this node's memory, so every limit holds per node; every number is a
setting (:class:`server.settings.Settings`, documented in docs/operators.md).

A refusal for a limit is :class:`RateLimited` (``429 rate_limited`` with ``Retry-After``
over HTTP, an ``error`` frame on the websocket).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.edge.limits import (
    Clock,
    FailureDelay,
    KeyedBuckets,
    RecentKeys,
    TokenBucket,
    WindowCounter,
)
from server.edge.refusals import error_body
from server.settings import Settings
from server.table import commands as cmd

# Close code of a websocket refused for its rate too often, or over a socket cap.
TOO_MANY = 4029
MAX_PAUSE = 1.0  # the longest a connection over its rate is left unread at a time


class RateLimited(Refusal):
    """Over a limit: nothing was done; ``retry_after`` seconds from now it would be."""

    code = ErrorCode.RATE_LIMITED

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _per_minute(count: int, clock: Clock) -> KeyedBuckets:
    return KeyedBuckets(count / 60.0, count, clock=clock)


class Gateway:
    """This node's limits on accounts and sockets (one per app)."""

    def __init__(self, settings: Settings, *, clock: Clock = time.monotonic) -> None:
        self.settings = settings
        self.clock = clock
        self._address_failures = _per_minute(settings.login_failures_per_address_per_minute, clock)
        self._known_logins = RecentKeys()  # "address account" pairs that logged in
        self._register_address = _per_minute(settings.register_per_address_per_minute, clock)
        self._failures = FailureDelay(
            free=settings.login_free_failures,
            base=settings.login_failure_delay_seconds,
            cap=settings.login_failure_delay_max_seconds,
            clock=clock,
        )
        self._grants = WindowCounter(
            settings.starting_grants_per_address,
            settings.starting_grant_window_seconds,
            clock=clock,
        )
        self._spectator_snapshots = TokenBucket.full(
            settings.spectator_snapshots_per_second, settings.spectator_snapshots_burst, clock()
        )
        self._sockets_by_address: Counter[str] = Counter()
        self._sockets_by_account: Counter[str] = Counter()
        # Frames of connections not signed in: the cheap way to flood a node, given their
        # bounded share of each turn of the event loop, all of them together.
        self.anonymous_frames = TurnBudget(settings.ws_anonymous_frames_per_turn)

    # ------------------------------------------------------------------ HTTP

    def begin_login(self, address: str, username: str) -> LoginAttempt:
        """Let a login be tried now, or raise :class:`RateLimited` (nothing counted then).

        An account waits after its failures (``login_free_failures`` free, then a wait that
        doubles), whatever the address: the only account a brute force slows is the one it
        guesses at. An address draws on its budget of failures a minute for each try, unless
        the account logged in from it before: a budget spent by guesses across many accounts
        keeps its players logging in to their own. The attempt is counted as a failure
        from the start, so tries sent all at once meet the limits as tries one after another
        do; :meth:`login_succeeded` and :meth:`login_void` take it back."""
        account = username.lower()
        wait = self._failures.wait(account)
        if wait:
            raise RateLimited(
                "too many failed logins for this account: try again later", retry_after=wait
            )
        pair = f"{address} {account}"
        drew = pair not in self._known_logins
        if drew and (wait := self._address_failures.take(address)):
            raise RateLimited("too many failed logins from this address", retry_after=wait)
        self._failures.failed(account)
        return LoginAttempt(address, account, drew_on_address=drew)

    def login_succeeded(self, attempt: LoginAttempt) -> None:
        """The password was right: the account's failures are forgotten, the address's
        budget is given back, and this address may log in to this account from now on even
        with its budget spent."""
        self._failures.succeeded(attempt.account)
        if attempt.drew_on_address:
            self._address_failures.give_back(attempt.address)
        self._known_logins.add(f"{attempt.address} {attempt.account}")

    def login_void(self, attempt: LoginAttempt) -> None:
        """The password was never checked (the hashing pool was full, the database did not
        answer): the attempt counts for nothing."""
        self._failures.forgive(attempt.account)
        if attempt.drew_on_address:
            self._address_failures.give_back(attempt.address)

    def check_register(self, address: str) -> None:
        wait = self._register_address.take(address)
        if wait:
            raise RateLimited("too many registrations from this address", retry_after=wait)

    def grant_starting_bankroll(self, address: str) -> bool:
        """Whether a new account from ``address`` gets the starting bankroll (counted)."""
        return self._grants.use(address)

    # ------------------------------------------------------------------ websockets

    def socket_opened(self, address: str) -> bool:
        """Count a websocket from ``address``; False (not counted) over the cap."""
        if self._sockets_by_address[address] >= self.settings.ws_sockets_per_address:
            return False
        self._sockets_by_address[address] += 1
        return True

    def socket_closed(self, address: str) -> None:
        _discount(self._sockets_by_address, address)

    def account_connected(self, player: str) -> bool:
        """Count a websocket signed in as ``player``; False (not counted) over the cap."""
        if self._sockets_by_account[player] >= self.settings.ws_sockets_per_account:
            return False
        self._sockets_by_account[player] += 1
        return True

    def account_disconnected(self, player: str) -> None:
        _discount(self._sockets_by_account, player)

    def take_spectator_snapshot(self) -> None:
        """Draw on the node's budget of spectators' snapshots; raise :class:`RateLimited`
        when it is spent (no strike: the connection may be an honest one)."""
        wait = self._spectator_snapshots.take(self.clock())
        if wait:
            raise RateLimited("too many spectators asking: try again", retry_after=wait)

    def message_limits(self) -> MessageLimits:
        """The buckets of one new websocket connection."""
        s, now = self.settings, self.clock()
        return MessageLimits(
            act=TokenBucket.full(s.ws_actions_per_second, s.ws_actions_burst, now),
            chat=TokenBucket.full(s.ws_chat_per_second, s.ws_chat_burst, now),
            other=TokenBucket.full(s.ws_other_per_second, s.ws_other_burst, now),
            strikes_left=s.ws_rate_strikes,
            clock=self.clock,
        )


@dataclass(frozen=True, slots=True)
class LoginAttempt:
    """A login let through by :meth:`Gateway.begin_login`, counted as a failure until it is
    known to be right."""

    address: str
    account: str  # the name in lower case
    drew_on_address: bool  # it took from the address's budget of failures


def origin_allowed(origin: str | None, host: str | None, settings: Settings) -> bool:
    """A browser's page may open a websocket only from an allowed origin (by default the
    server's own host); a client that sends no ``Origin`` is not a browser, and may."""
    if origin is None:
        return True
    if settings.ws_allowed_origins:
        return origin in settings.ws_allowed_origins
    _, _, rest = origin.partition("://")
    return host is not None and rest == host


def _discount(counter: Counter[str], key: str) -> None:
    counter[key] -= 1
    if counter[key] <= 0:
        del counter[key]


# What a seat sends to play its hands: an action at each turn and a seed for each hand's
# deck (server.table.dealing). A quick table asks for them as fast as it deals, so they are paced
# together, never refused.
PLAY_MESSAGES = frozenset(c.name for c in (cmd.Act, cmd.ClientSeed))


@dataclass(slots=True)
class MessageLimits:
    """One websocket's buckets: ``act`` for what plays the hands (:data:`PLAY_MESSAGES`),
    ``chat`` for chat lines, ``other`` for every other message (a frame that does not
    parse included)."""

    act: TokenBucket
    chat: TokenBucket
    other: TokenBucket
    strikes_left: int  # refusals for rate before the connection is closed
    clock: Clock
    pause: float = 0.0  # after a refusal for rate: how long the connection is not read

    def take(self, kind: str | None) -> float:
        """Draw on the bucket of a message of type ``kind``. An action (or a hand's seed)
        over its rate is paced, never refused: the seconds it must wait are returned (0.0:
        none), so a bot playing as fast as a quick table deals loses no legal action while
        a flood of them is slowed to the rate. Any other message over its rate raises
        :class:`RateLimited` (and counts a strike)."""
        now = self.clock()
        if kind in PLAY_MESSAGES:
            return self.act.reserve(now)
        bucket = self.chat if kind == cmd.Chat.name else self.other
        wait = bucket.take(now)
        if wait:
            self.strikes_left -= 1
            self.pause = min(wait, MAX_PAUSE)
            what = "chat" if kind == cmd.Chat.name else "message"
            raise RateLimited(f"too many {what} frames: slow down ({wait:.1f} s)", retry_after=wait)
        return 0.0

    @property
    def exhausted(self) -> bool:
        """Refused for rate too often: the connection is closed."""
        return self.strikes_left <= 0


class TurnBudget:
    """At most ``per_turn`` pieces of work in one turn of the event loop; those over it
    wait, in the order they came, for the next turns.

    A storm of work arriving together (four hundred sockets opened at once, or woken at
    once) would otherwise all be done in the same turn, ahead of the frames of players
    already seated: each hop of their actions (the socket, the table, the database) waits
    for the turn in progress to end, and a long turn costs each of them its length.
    """

    def __init__(self, per_turn: int) -> None:
        self.per_turn = per_turn
        self._waiting: deque[Callable[[], None]] = deque()
        self._used = 0  # pieces of work done this turn
        self._ticking = False

    def admit(self) -> bool:
        """Take a piece of this turn's budget now, if nothing waits and some is left."""
        if self._waiting or self._used >= self.per_turn:
            return False
        self._used += 1
        self._tick_soon()
        return True

    def later(self, work: Callable[[], None]) -> None:
        """``work()`` once its turn comes."""
        self._waiting.append(work)
        self._tick_soon()

    async def turn(self) -> None:
        """Return once this task's piece of work may be done (at once, if it may now)."""
        if self.admit():
            return
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def go() -> None:
            if not ready.done():  # not cancelled while it waited
                ready.set_result(None)

        self.later(go)
        await ready

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def _tick_soon(self) -> None:
        if not self._ticking:
            self._ticking = True
            asyncio.get_running_loop().call_soon(self._tick)

    def _tick(self) -> None:
        self._ticking = False
        self._used = 0
        while self._waiting and self._used < self.per_turn:
            self._used += 1
            self._waiting.popleft()()
        if self._waiting or self._used:
            self._tick_soon()


def paced_http_protocol(per_turn: int) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools, or h11 without it) reading at most ``per_turn``
    requests (websocket handshakes among them) a turn of the event loop, all connections
    together: the ``http`` class a node serves with. A connection waiting its turn is not
    read meanwhile; frames on open websockets are not paced here."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    budget = TurnBudget(per_turn)

    class PacedHTTPProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
        def send_400_response(self, msg: str) -> None:
            """A request the HTTP parser cannot read (before any route sees it): refused in
            the API's one JSON shape, ``bad_request``, as every other refusal, then closed."""
            body = orjson.dumps(error_body(ErrorCode.BAD_REQUEST, msg))
            head = [b"HTTP/1.1 400 Bad Request\r\n"]
            for name, value in self.server_state.default_headers:
                head.append(name + b": " + value + b"\r\n")
            head.append(b"content-type: application/json\r\n")
            head.append(b"content-length: " + str(len(body)).encode("ascii") + b"\r\n")
            head.append(b"connection: close\r\n\r\n")
            self.transport.write(b"".join(head) + body)
            self.transport.close()

        def data_received(self, data: bytes) -> None:
            if budget.admit():
                super().data_received(data)
                return
            transport, read = self.transport, super().data_received
            transport.pause_reading()

            def in_turn() -> None:
                if not transport.is_closing():  # not gone while it waited
                    transport.resume_reading()
                    read(data)

            budget.later(in_turn)

    return PacedHTTPProtocol
