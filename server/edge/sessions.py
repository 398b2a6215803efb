"""Signed-in websockets bound to their tokens, ended at once on every node.

A websocket that signed in is bound to its token (:class:`SignIn`). Whatever ends the token
ends the websocket: a logout (that token), a logout everywhere or a suspension (every token
of the account), the token's expiry. The node where it happens publishes the end on the
bus (``cardroom:sessions``); every node, itself included, signs out the websockets it holds
for that token or account (a ``signed_out`` frame with the code, then the close). Expiry
needs no message: each node times its own websockets' tokens.

Pub/sub delivers at most once (a Redis restart loses what was on the wire), so each node
also checks its bound tokens against the database every ``check_seconds``, in one query
for all of them: a lost message costs at most that long. An HTTP request needs none of
this: it reads its token on every request (``server.accounts.tokens.resolve``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.protocol import ErrorCode
from server.bus.memory import Bus
from server.db.models import Suspension, Token
from server.db.types import utcnow

log = logging.getLogger(__name__)

SESSIONS_CHANNEL = "cardroom:sessions"
SWEEP_CHUNK = 500  # token ids per query of the sweep

MESSAGES = {
    ErrorCode.TOKEN_REVOKED: "this token was logged out",
    ErrorCode.TOKEN_EXPIRED: "this token has expired: log in again",
    ErrorCode.ACCOUNT_SUSPENDED: "this account is suspended",
}


@dataclass(frozen=True, slots=True)
class SignIn:
    """Who a websocket signed in as, and with which token."""

    token_id: int
    account_id: int
    player: str
    expires_at: datetime

    def expired(self, now: datetime | None = None) -> bool:
        return self.expires_at <= (now or utcnow())


class Bound(Protocol):
    """A signed-in connection (``server.edge.ws.Connection``)."""

    def sign_out(self, code: ErrorCode, message: str) -> None:
        """Tell the client why, and close."""


class SessionRegistry:
    """This node's signed-in websockets, by token and by account."""

    def __init__(
        self,
        bus: Bus,
        sessionmaker: async_sessionmaker[AsyncSession],
        *,
        check_seconds: float = 5.0,
    ) -> None:
        self.bus = bus
        self.sessionmaker = sessionmaker
        self.check_seconds = check_seconds
        self._sign_ins: dict[Bound, SignIn] = {}
        self._by_token: dict[int, set[Bound]] = {}
        self._by_account: dict[int, set[Bound]] = {}
        self._timers: dict[Bound, asyncio.TimerHandle] = {}
        self._tasks: list[asyncio.Task[None]] = []

    def __len__(self) -> int:
        return len(self._sign_ins)

    def start(self) -> None:
        subscription = self.bus.subscribe(SESSIONS_CHANNEL)
        self._tasks = [
            asyncio.create_task(self._listen(subscription), name="sessions-listen"),
            asyncio.create_task(self._sweep_forever(), name="sessions-sweep"),
        ]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    # ------------------------------------------------------------------ binding

    def bind(self, connection: Bound, sign_in: SignIn) -> None:
        """Bind the connection to its token; it is signed out when the token expires."""
        self._sign_ins[connection] = sign_in
        self._by_token.setdefault(sign_in.token_id, set()).add(connection)
        self._by_account.setdefault(sign_in.account_id, set()).add(connection)
        delay = max(0.0, (sign_in.expires_at - utcnow()).total_seconds())
        self._timers[connection] = asyncio.get_running_loop().call_later(
            delay, self._end, [connection], ErrorCode.TOKEN_EXPIRED
        )

    def unbind(self, connection: Bound) -> None:
        sign_in = self._sign_ins.pop(connection, None)
        if sign_in is None:
            return
        for index, key in (
            (self._by_token, sign_in.token_id),
            (self._by_account, sign_in.account_id),
        ):
            bound = index.get(key)
            if bound is not None:
                bound.discard(connection)
                if not bound:
                    del index[key]
        timer = self._timers.pop(connection, None)
        if timer is not None:
            timer.cancel()

    # ------------------------------------------------------------------ ending

    def end_token(self, token_id: int, code: ErrorCode = ErrorCode.TOKEN_REVOKED) -> None:
        """Sign out every websocket of this token, on every node (after the commit)."""
        self._announce({"token": token_id, "code": code.value})

    def end_account(self, account_id: int, code: ErrorCode = ErrorCode.TOKEN_REVOKED) -> None:
        """Sign out every websocket of the account, on every node (after the commit)."""
        self._announce({"account": account_id, "code": code.value})

    def _announce(self, message: dict[str, Any]) -> None:
        self._heard(message)  # here at once; the bus brings it back (a no-op by then)
        self.bus.publish_now(SESSIONS_CHANNEL, message)

    def _heard(self, message: dict[str, Any]) -> None:
        try:
            code = ErrorCode(str(message.get("code")))
        except ValueError:
            log.warning("sessions: a message with no known code: %r", message)
            return
        token, account = message.get("token"), message.get("account")
        found: set[Bound] = set()
        if isinstance(token, int):
            found |= self._by_token.get(token, set())
        if isinstance(account, int):
            found |= self._by_account.get(account, set())
        self._end(found, code)

    def _end(self, connections: Iterable[Bound], code: ErrorCode) -> None:
        for connection in list(connections):
            self.unbind(connection)
            try:
                connection.sign_out(code, MESSAGES.get(code, "signed out"))
            except Exception:  # noqa: BLE001 - one connection's failure must not spare others
                log.exception("sessions: could not sign a connection out")

    async def _listen(self, subscription: Any) -> None:
        async for message in subscription:
            if isinstance(message, dict):
                self._heard(message)

    # ------------------------------------------------------------------ the sweep

    async def sweep(self) -> int:
        """Sign out every bound websocket whose token the database no longer accepts
        (revoked, expired, its account suspended): the backstop for a message the bus lost.
        How many it signed out."""
        token_ids = sorted(self._by_token)
        ended: dict[int, ErrorCode] = {}
        now = utcnow()
        async with self.sessionmaker() as session:
            for start in range(0, len(token_ids), SWEEP_CHUNK):
                chunk = token_ids[start : start + SWEEP_CHUNK]
                rows = await session.execute(
                    select(Token.id, Token.revoked_at, Token.expires_at, Suspension.account_id)
                    .outerjoin(Suspension, Suspension.account_id == Token.account_id)
                    .where(Token.id.in_(chunk))
                )
                seen: set[int] = set()
                for token_id, revoked_at, expires_at, suspended in rows:
                    seen.add(token_id)
                    if suspended is not None:
                        ended[token_id] = ErrorCode.ACCOUNT_SUSPENDED
                    elif revoked_at is not None:
                        ended[token_id] = ErrorCode.TOKEN_REVOKED
                    elif expires_at <= now:
                        ended[token_id] = ErrorCode.TOKEN_EXPIRED
                for token_id in set(chunk) - seen:  # deleted with its account
                    ended[token_id] = ErrorCode.BAD_TOKEN
        count = 0
        for token_id, code in ended.items():
            bound = self._by_token.get(token_id, set())
            count += len(bound)
            self._end(bound, code)
        return count

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.check_seconds)
            if not self._by_token:
                continue
            try:
                await asyncio.wait_for(self.sweep(), self.check_seconds)
            except Exception as error:  # noqa: BLE001 - the database away: the next round
                log.warning("sessions: could not check the tokens (%r)", error)
