"""The REST calls of ``StudClient``: accounts, the lobby, the wallet and the operators' and
staff's calls, each tried at the URL in use and, when nothing reached that node, at the
next one of the cardroom."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection

from stud_client.errors import ServerError, StudError
from stud_client.view import TableInfo

__all__ = ["RestCalls"]


class RestCalls:
    """The REST half of ``StudClient`` (which it is mixed into)."""

    urls: tuple[str, ...]
    token: str | None
    _current: int
    _http: httpx.AsyncClient
    _ws: ClientConnection | None
    _fatal: StudError | None

    async def _rest(self, method: str, path: str, *, json: Any = None) -> Any:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        order = [self._current, *(n for n in range(len(self.urls)) if n != self._current)]
        for tried, number in enumerate(order, 1):
            try:
                response = await self._http.request(
                    method, self.urls[number] + path, json=json, headers=headers
                )
            except httpx.ConnectError:
                # Nothing reached that node, so any request may go to the next one.
                if tried == len(order):
                    raise
                continue
            if number != self._current and self._ws is None:
                self._current = number  # the websocket will try it first too
            break
        if response.status_code >= 400:
            try:
                error = response.json()["error"]
                code, message = str(error["code"]), str(error["message"])
            except (ValueError, KeyError, TypeError):
                code, message = f"http_{response.status_code}", response.text[:200]
            raise ServerError(code, message, status=response.status_code)
        return response.json() if response.content else None

    async def register(self, username: str, password: str, *, bot: bool = False) -> dict[str, Any]:
        """A new account with the server's starting bankroll; ``bot`` marks a program."""
        account: dict[str, Any] = await self._rest(
            "POST",
            "/auth/register",
            json={"username": username, "password": password, "bot": bot},
        )
        return account

    async def logout(self, *, everywhere: bool = False) -> None:
        """Log out this token (``everywhere``: every token of the account). The server signs
        out the websockets of what it revoked, this client's among them."""
        await self._rest("POST", "/auth/logout-everywhere" if everywhere else "/auth/logout")

    async def login(self, username: str, password: str) -> str:
        """Log in; the token is kept for every later call and for the websocket."""
        body = await self._rest(
            "POST", "/auth/login", json={"username": username, "password": password}
        )
        self.token = str(body["access_token"])
        self._fatal = None  # a new token: a client signed out may connect again
        return self.token

    async def tables(self) -> list[TableInfo]:
        """The lobby: every open table."""
        return [TableInfo.from_json(t) for t in await self._rest("GET", "/tables")]

    async def wallet(self) -> int:
        """Chips in my wallet (not at tables)."""
        return int((await self._rest("GET", "/wallet"))["balance"])

    async def create_table(
        self,
        name: str,
        config: Mapping[str, Any] | None = None,
        *,
        seats: int | None = None,
        min_buy_in: int | None = None,
        max_buy_in: int | None = None,
    ) -> int:
        """Operators only: open a table (``config``: rule settings, see
        ``GET /admin/table-config``); returns its id."""
        body: dict[str, Any] = {"name": name, "config": dict(config or {})}
        for key, value in (
            ("seats", seats),
            ("min_buy_in", min_buy_in),
            ("max_buy_in", max_buy_in),
        ):
            if value is not None:
                body[key] = value
        return int((await self._rest("POST", "/admin/tables", json=body))["id"])

    async def make_bot(self, username: str, chips: int, reason: str) -> str:
        """Operators only: a new bot account (``POST /admin/bots``) granted ``chips`` by the
        house; returns its access token (it has no password: play it with
        ``StudClient(url, token=...)``)."""
        body = await self._rest(
            "POST", "/admin/bots", json={"username": username, "chips": chips, "reason": reason}
        )
        return str(body["access_token"])

    async def close_table(self, table_id: int, reason: str, *, void: bool = False) -> bool:
        """Operators only: close a table for good, everyone cashed out; True when it closed at
        once, False when it closes after the hand in progress (``void``: void that hand)."""
        body = await self._rest(
            "POST",
            f"/admin/tables/{table_id}/close" + ("?void=true" if void else ""),
            json={"reason": reason},
        )
        return not body["after_hand"]

    async def find_player(self, name: str) -> dict[str, Any]:
        """Staff only: one account as the back office sees it (balance, seats, hands)."""
        found: dict[str, Any] = await self._rest("GET", f"/admin/players/{name}")
        return found

    async def debit(self, name: str, amount: int, reason: str) -> dict[str, Any]:
        """Operators only: ``amount`` chips from the player's wallet back to the house."""
        done: dict[str, Any] = await self._rest(
            "POST", f"/admin/players/{name}/debit", json={"amount": amount, "reason": reason}
        )
        return done

    async def books(self) -> dict[str, Any]:
        """Operators only: whether the ledger balances, and every table's chip pool."""
        books: dict[str, Any] = await self._rest("GET", "/admin/books")
        return books
