"""Tournaments for a client: the REST calls (the list, a tournament's details, registering)
and, over the client's one websocket, a tournament followed (:class:`TournamentFollow`).

A follow holds where the tournament and the player stand: the ``tournament_state`` that
``subscribe_tournament`` answers with (docs/protocol.md, "Tournaments"), kept current by the
``tournament_event`` frames that come after it. Those are taken as the protocol says: a
``key`` seen before is dropped (a director that takes a tournament over says its last fact
again), and so is an event whose ``fact`` is below the state's (the state has it). Events
that came before the state but are newer than it are applied again on top of it: each
event's data is absolute, so applying one twice changes nothing. After a reconnect the
client subscribes again by itself, and the fresh state says where the player sits, whatever
events were lost meanwhile.

The player's seat (:attr:`TournamentFollow.seat`) is what a program plays by: the table to
watch and act at, from the state and the ``seated`` and ``moved`` events; None once the
player is out, or before the start. A program never moves itself: the tournament's director
does, and tells it so.

>>> async def play(client: StudClient) -> None:  # doctest: +SKIP
...     await client.tournaments.register(3, request_id="ann-3")
...     follow = await client.tournaments.follow(3, everything=False)
...     await follow.wait_for(lambda f: f.seat is not None or f.over_for_me)
...     table = await client.watch(follow.seat.table)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from stud_client.errors import ConnectionLost, ServerError
from stud_client.table import TRY_AGAIN, wait_until

if TYPE_CHECKING:
    from stud_client.client import StudClient

__all__ = ["TournamentEvent", "TournamentFollow", "TournamentSeat", "Tournaments"]

log = logging.getLogger(__name__)

KEYS_KEPT = 1024  # the event keys a follow remembers (a takeover repeats only the last few)
RECENT_KEPT = 64  # events kept to apply again on top of a state older than they are
LISTENER_QUEUE = 1024
RESTORE_TRIES = 5  # a state asked again after a reconnect, while the server says it is busy
# The player's part once it has ended: no seat any more, nothing more to play.
ENDED = frozenset({"out", "winner", "disqualified"})
# The tournament's state fields each kind of event brings up to date (its data is absolute).
FIELD = ("players_left", "average_stack", "tables")
CLOCK = (
    "level",
    "on_break",
    "paused",
    "next_level",
    "seconds_left",
    "ends_at",
    "hands_left",
)


@dataclass(frozen=True, slots=True)
class TournamentSeat:
    """Where the player sits in a tournament: the table's id (``watch`` it), its number in
    the tournament, and the seat."""

    table: int
    table_number: int
    seat: int


@dataclass(frozen=True, slots=True)
class TournamentEvent:
    """A tournament event as this follow took it. After each state it applies comes one of
    kind ``"state"`` whose data is the ``tournament_state``."""

    tournament: int
    fact: int
    key: str
    kind: str
    data: Mapping[str, Any]


class TournamentFollow:
    """One tournament this client follows (``Tournaments.follow``): its state, the player's
    part and seat, kept current from the websocket; wait on it with :meth:`wait_for`."""

    def __init__(self, tournaments: Tournaments, tournament_id: int, *, everything: bool) -> None:
        self.id = tournament_id
        self.everything = everything
        self._tournaments = tournaments
        self.state: dict[str, Any] = {}  # the last tournament_state, kept current
        self.you: dict[str, Any] | None = None  # the player's part (the state's ``you``)
        self.seat: TournamentSeat | None = None
        self.states = 0  # tournament_states applied (the first, and one per reconnect)
        self.dropped = 0  # events dropped: a key seen before, or older than the state
        self._keys: OrderedDict[str, None] = OrderedDict()
        self._recent: deque[TournamentEvent] = deque(maxlen=RECENT_KEPT)
        self._changed = asyncio.Event()
        self._listeners: list[asyncio.Queue[TournamentEvent]] = []
        self._closed = False

    # ------------------------------------------------------------------ reading

    @property
    def fact(self) -> int:
        """The journal's last fact the state held has folded in (0 before the start)."""
        return int(self.state.get("fact", 0))

    @property
    def status(self) -> str | None:
        """The tournament's: ``registering``, ``running``, ``finished`` or ``cancelled``."""
        status = self.state.get("status")
        return str(status) if status is not None else None

    @property
    def over(self) -> bool:
        """The tournament is finished, or was cancelled."""
        return self.status in ("finished", "cancelled")

    @property
    def over_for_me(self) -> bool:
        """Nothing more for this player to play: out, the winner, disqualified, or the
        tournament over (or cancelled)."""
        you = self.you
        return self.over or (you is not None and you.get("status") in ENDED)

    @property
    def place(self) -> int | None:
        you = self.you
        return int(you["place"]) if you is not None and you.get("place") is not None else None

    @property
    def prize(self) -> int | None:
        you = self.you
        return int(you["prize"]) if you is not None and you.get("prize") is not None else None

    def events(self) -> _FollowStream:
        """Every event taken from this call on, in order (a ``state`` one after each state
        applied); ``aclose`` it when done. A consumer far behind loses the oldest."""
        return _FollowStream(self._listeners)

    async def wait_for(
        self, predicate: Callable[[TournamentFollow], bool], timeout: float | None = None
    ) -> TournamentFollow:
        """This follow once ``predicate`` holds for it (at once if it does now)."""
        return await wait_until(lambda: self._changed, lambda: self, predicate, timeout)

    # ------------------------------------------------------------------ asking

    async def refresh(self) -> dict[str, Any]:
        """Ask where the tournament stands now (``subscribe_tournament`` again) and apply
        it; with ``everything`` false the tournament's own events are left again at once
        (the player's own still come)."""
        client = self._tournaments._client
        state: dict[str, Any] = await client._request("subscribe_tournament", tournament=self.id)
        if not self.everything:
            await client._request("unsubscribe_tournament", tournament=self.id)
        self._apply_state(state)
        return state

    async def close(self) -> None:
        """Stop following: no more events taken (the player's own are ignored too)."""
        self._closed = True
        self._tournaments._follows.pop(self.id, None)
        if self.everything:
            with contextlib.suppress(ServerError, ConnectionLost, TimeoutError):
                await self._tournaments._client._request(
                    "unsubscribe_tournament", tournament=self.id
                )

    # ------------------------------------------------------------------ applying

    def _apply_state(self, state: Mapping[str, Any]) -> None:
        self.state = dict(state)
        you = state.get("you")
        self.you = dict(you) if isinstance(you, Mapping) else None
        self._seat_from_you()
        self.states += 1
        fact = self.fact
        self._changed_now(TournamentEvent(self.id, fact, f"state:{self.states}", "state", state))
        # What came before this state but is newer than it, applied again on top of it.
        for event in [e for e in self._recent if e.fact > fact]:
            self._apply(event)

    def _on_frame(self, frame: Mapping[str, Any]) -> None:
        key = str(frame.get("key"))
        fact = int(frame.get("fact") or 0)
        if key in self._keys or fact < self.fact:
            self.dropped += 1
            return
        self._keys[key] = None
        while len(self._keys) > KEYS_KEPT:
            self._keys.popitem(last=False)
        data = frame.get("data")
        event = TournamentEvent(
            self.id, fact, key, str(frame.get("kind")), data if isinstance(data, Mapping) else {}
        )
        self._recent.append(event)
        self._apply(event)

    def _apply(self, event: TournamentEvent) -> None:
        kind, data = event.kind, event.data
        me = self._tournaments._client.player
        state = self.state
        for name in FIELD:
            if name in data:
                state[name] = data[name]
        if kind in ("started", "level_up", "break", "break_over"):
            for name in CLOCK:
                if name in data:
                    state[name] = data[name]
        if kind == "started":
            state["status"] = "running"
        elif kind == "hand_for_hand":
            state["hand_for_hand"] = bool(data.get("on"))
        elif kind in ("seated", "moved") and "seat" in data:
            # Only the player's own (their channel): the table they sit at now.
            self.you = {
                "status": "playing",
                "stack": data.get("stack"),
                "table": data.get("table"),
                "table_number": data.get("table_number"),
                "seat": data.get("seat"),
            }
            self._seat_from_you()
        elif kind == "eliminated" and data.get("player") == me:
            self.you = {
                "status": "out",
                "place": data.get("place"),
                "prize": data.get("prize"),
                "tied": data.get("tied"),
            }
            self.seat = None
        elif kind == "disqualified" and data.get("player") == me:
            self.you = {"status": "disqualified", "chips_removed": data.get("chips_removed")}
            self.seat = None
        elif kind in ("registered", "unregistered"):
            state["entrants"] = data.get("entrants", state.get("entrants"))
            if data.get("player") == me:
                self.you = {"status": "registered"} if kind == "registered" else None
        elif kind == "finished":
            state["status"] = "finished"
            state["results"] = data.get("results", [])
            for result in state["results"]:
                if result.get("player") == me:
                    won = result.get("place") == 1 and data.get("winner") == me
                    self.you = {
                        "status": "winner" if won else "out",
                        "place": result.get("place"),
                        "prize": result.get("prize"),
                        "tied": result.get("tied"),
                    }
            self.seat = None
        self._changed_now(event)

    def _seat_from_you(self) -> None:
        you = self.you
        if you is None or you.get("status") != "playing" or you.get("table") is None:
            self.seat = None
            return
        self.seat = TournamentSeat(int(you["table"]), int(you["table_number"]), int(you["seat"]))

    def _changed_now(self, event: TournamentEvent) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
        for queue in self._listeners:
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(event)


class _FollowStream:
    """An async iterator of a follow's events, listening from the moment it is made."""

    def __init__(self, listeners: list[asyncio.Queue[TournamentEvent]]) -> None:
        self._queue: asyncio.Queue[TournamentEvent] = asyncio.Queue(LISTENER_QUEUE)
        self._listeners = listeners
        listeners.append(self._queue)

    def __aiter__(self) -> _FollowStream:
        return self

    async def __anext__(self) -> TournamentEvent:
        if self._queue not in self._listeners:
            raise StopAsyncIteration
        return await self._queue.get()

    async def aclose(self) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(self._queue)


class Tournaments:
    """A client's tournaments (``StudClient.tournaments``): REST, and those it follows."""

    def __init__(self, client: StudClient) -> None:
        self._client = client
        self._follows: dict[int, TournamentFollow] = {}

    # ------------------------------------------------------------------ REST

    async def find(
        self,
        *,
        status: tuple[str, ...] = (),
        kind: str | None = None,
        game: str | None = None,
        buy_in_min: int | None = None,
        buy_in_max: int | None = None,
    ) -> list[dict[str, Any]]:
        """``GET /tournaments``: the soonest first (by default those registering or running)."""
        query: list[tuple[str, str]] = [("status", s) for s in status]
        for name, value in (
            ("kind", kind),
            ("game", game),
            ("buy_in_min", buy_in_min),
            ("buy_in_max", buy_in_max),
        ):
            if value is not None:
                query.append((name, str(value)))
        path = "/tournaments" + (f"?{urlencode(query)}" if query else "")
        found: list[dict[str, Any]] = await self._client._rest("GET", path)
        return found

    async def details(self, tournament_id: int, *, entries: bool = True) -> dict[str, Any]:
        """``GET /tournaments/{id}``: the format, payouts, tables, and your own part when
        signed in; ``entries`` false leaves the list of entries out (a big field's)."""
        path = f"/tournaments/{tournament_id}" + ("" if entries else "?entries=false")
        found: dict[str, Any] = await self._client._rest("GET", path)
        return found

    async def templates(self) -> dict[str, dict[str, Any]]:
        """The shipped formats an operator may make a tournament from, by name."""
        found: dict[str, dict[str, Any]] = await self._client._rest("GET", "/tournaments/templates")
        return found

    async def register(self, tournament_id: int, *, request_id: str) -> dict[str, Any]:
        """Enter (the buy-in and fee leave the wallet). The same ``request_id`` again finds
        the entry it made, paid once: safe to send again after a lost answer."""
        made: dict[str, Any] = await self._client._rest(
            "POST", f"/tournaments/{tournament_id}/register", json={"request_id": request_id}
        )
        return made

    async def unregister(self, tournament_id: int) -> dict[str, Any]:
        """Take the entry back before the start: the buy-in and the fee refunded."""
        taken: dict[str, Any] = await self._client._rest(
            "DELETE", f"/tournaments/{tournament_id}/register"
        )
        return taken

    async def create(
        self,
        name: str,
        *,
        template: str | None = None,
        spec: Mapping[str, Any] | None = None,
        starts_at: str | None = None,
    ) -> dict[str, Any]:
        """Operators only: a new tournament from a shipped template or a full format
        (``starts_at``: a scheduled one's start, ISO 8601 with its zone); its details."""
        body: dict[str, Any] = {"name": name}
        for field_name, value in (("template", template), ("spec", spec), ("starts_at", starts_at)):
            if value is not None:
                body[field_name] = value
        made: dict[str, Any] = await self._client._rest("POST", "/admin/tournaments", json=body)
        return made

    async def edit(
        self,
        tournament_id: int,
        *,
        name: str | None = None,
        starts_at: str | None = None,
        reason: str | None = None,
    ) -> dict[str, Any]:
        """Operators only: a tournament's name or start changed before its start; its
        details."""
        body = {
            key: value
            for key, value in (("name", name), ("starts_at", starts_at), ("reason", reason))
            if value is not None
        }
        edited: dict[str, Any] = await self._client._rest(
            "PATCH", f"/admin/tournaments/{tournament_id}", json=body
        )
        return edited

    # ------------------------------------------------------------------ websocket

    async def follow(self, tournament_id: int, *, everything: bool = True) -> TournamentFollow:
        """Follow a tournament over the websocket (signed in): its state now, then kept
        current. ``everything`` false: only the player's own events (seated, moved, out, the
        end), not the tournament's (levels, others out): what a program playing it needs, at
        a fraction of the frames. Followed again after every reconnect."""
        follow = self._follows.get(tournament_id)
        if follow is None:
            follow = TournamentFollow(self, tournament_id, everything=everything)
            self._follows[tournament_id] = follow
        try:
            await follow.refresh()
        except ServerError:
            if follow.states == 0 and self._follows.get(tournament_id) is follow:
                del self._follows[tournament_id]
            raise
        return follow

    def _on_frame(self, frame: Mapping[str, Any]) -> None:
        follow = self._follows.get(frame.get("tournament"))  # type: ignore[arg-type]
        if follow is not None and not follow._closed:
            follow._on_frame(frame)

    async def _restore(self) -> None:
        """After a reconnect: every followed tournament's state asked again (the events of
        the time the line was down are lost; the state has them)."""
        await asyncio.gather(*(self._refresh(f) for f in list(self._follows.values())))

    async def _refresh(self, follow: TournamentFollow) -> None:
        """The follow's state read again, tried a few times while the server is busy (a
        lost line is the next reconnect's to restore)."""
        for attempt in range(RESTORE_TRIES):
            try:
                await follow.refresh()
                return
            except ConnectionLost:
                return
            except (ServerError, TimeoutError) as error:
                if isinstance(error, ServerError) and error.code not in TRY_AGAIN:
                    log.warning("tournament %s: its state was refused (%s)", follow.id, error)
                    return
                await asyncio.sleep(0.2 * 2**attempt)
        log.warning("tournament %s: its state was not read again", follow.id)
