"""One table actor per table: the only writer of its table's state.

Commands reach the actor through a bounded inbox and are handled one at a time;
the actor answers each with a reply and tells everyone what changed through
events on the bus. It deals while two or more players sit in, runs the action
clock and the time bank, acts for absent players by the rules (a forced
bring-in is posted, a check where it can, else a fold), persists every finished
hand with its stacks in one transaction, and contains its own crashes: a hand
that blows up is cancelled with every chip returned, and the table plays on.

Nothing is shown before it is written: the deck and players of a hand are
stored before it is dealt, each action before its events go out, so another
node (or this one, restarted) resumes the hand exactly where the players last
saw it (:meth:`TableActor.resume`). While the database does not answer the
table pauses (``table_paused``; clocks stop) and carries on when it does
(``table_unpaused``): it finishes nothing it cannot persist. A store that
finds the table run by another node (a newer fencing token) stops the actor
at once, without writing anything.

Every message on the bus is an envelope ``{"type": "event", "table", "seq",
"kind", "data"}``. Public events count up ``seq`` by one with no gaps; events
for one player's eyes ride on that player's channel with ``"private": true``
and the ``seq`` of the public event they precede. A snapshot asked for with a
``reply_to`` channel is published there, in line with the events: whoever
listens to that channel and the table's sees every event after the snapshot,
and none before it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.cards import Deck
from engine.errors import EngineError
from engine.events import Action, Event
from engine.hand import Hand
from engine.phh import PhhError, export
from engine.table import Seat, Table
from engine.variants import TableConfig
from engine.views import view
from server.bus import MemoryBus, player_channel, table_channel
from server.errors import Refusal

log = logging.getLogger(__name__)

INBOX_SIZE = 256
REMEMBERED_ACTION_IDS = 64


PAUSE_RETRY_MAX = 2.0  # seconds between tries of a write while the database does not answer


STOP_GRACE_SECONDS = 5.0  # how long a stopping table may take to finish what it is doing

# Each node that takes a table over numbers its events from (token - 1) * SEQ_PER_RUN: a client
# sees the jump and resyncs, and a gateway knows from any event's seq which run sent it.
SEQ_PER_RUN = 1_000_000_000


class CommandRefused(Exception):
    """A command the table will not carry out; changes nothing."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class TableTakenOver(Exception):
    """Another node runs this table now (its fencing token is newer): stop, write nothing."""


class StoreUnavailable(Exception):
    """The database did not answer: the write did not happen, or happened once (retry it)."""


@dataclass(frozen=True, slots=True)
class LiveHandState:
    """The hand in progress as written ahead of play: enough to deal and replay it again."""

    table_id: int
    number: int
    deck: dict[str, Any]  # {"order": [cards, top first], "seed": seed of the burn scramble}
    players: list[tuple[int, str, int]]  # (seat, player, chips at the start), in seat order
    actions: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FinishedHand:
    """What the store keeps of a hand, written in one transaction with the stacks."""

    table_id: int
    number: int
    events: list[dict[str, Any]]
    result: dict[str, Any]
    players: dict[int, str]  # seat -> player
    starting: dict[str, int]  # player -> chips at the start
    stacks: dict[str, int]  # player -> chips at the end
    cancelled: bool = False
    phh: str = ""  # engine.phh.export of the hand; "" where PHH cannot express its rules


class TableStore(Protocol):
    """Where the actor's chips and hands are kept (the database in production)."""

    async def buy_in(self, table_id: int, player: str, amount: int, *, seat: int) -> None:
        """Chips from the player's wallet to the seat (a new seat, or chips added)."""

    async def cash_out(self, table_id: int, player: str, amount: int) -> None:
        """The seat's chips (``amount``, maybe 0) back to the wallet; the seat is freed."""

    async def save_hand(self, hand: FinishedHand) -> None:
        """The finished (or cancelled) hand and the new stacks; the live rows go with it."""

    async def start_hand(self, live: LiveHandState) -> None:
        """The deck and players of the hand about to be dealt."""

    async def record_action(
        self, table_id: int, number: int, position: int, action: dict[str, Any]
    ) -> None:
        """One action (or time-out) of the hand in progress, before anyone is told of it."""


@dataclass(slots=True)
class TableSettings:
    seat_count: int | None = None
    min_buy_in: int = 20
    max_buy_in: int = 1000
    action_clock: float = 15.0
    time_bank: float = 30.0
    time_bank_refill: float = 2.0  # seconds added back per hand played, up to time_bank
    pause_between_hands: float = 2.0
    waiting_offer: float = 30.0  # how long a freed seat is held for the first waiting player
    sit_out_limit: float = 600.0  # a player sat out longer is removed from the table


@dataclass(slots=True)
class _Player:
    time_bank: float
    sat_out_at: float | None = None
    connections: int = 0
    action_ids: OrderedDict[str, dict[str, Any]] = field(default_factory=OrderedDict)


@dataclass(slots=True)
class _Command:
    kind: str
    player: str
    data: dict[str, Any]
    reply: asyncio.Future[dict[str, Any]]


class TableActor:
    def __init__(
        self,
        table_id: int,
        config: TableConfig,
        *,
        bus: MemoryBus,
        store: TableStore,
        settings: TableSettings | None = None,
        clock: Callable[[], float] = time.monotonic,
        rng_factory: Callable[[], random.Random] = secrets.SystemRandom,
        deck_factory: Callable[[], Deck] | None = None,
    ) -> None:
        self.table_id = table_id
        self.settings = settings or TableSettings()
        self.table = Table(config, self.settings.seat_count)
        self.bus = bus
        self.store = store
        self.clock = clock
        self.rng_factory = rng_factory
        self.deck_factory = deck_factory  # tests stack the deck; None: a fresh shuffle
        self.inbox: asyncio.Queue[_Command] = asyncio.Queue(INBOX_SIZE)
        self.seq = 0
        self.hand_number = 0
        self.players: dict[str, _Player] = {}
        self.waiting: list[str] = []
        self.offer: tuple[str, int, float] | None = None  # player, seat, until
        self.deadline: float | None = None  # when the player to act runs out of time
        self.turn_started = 0.0
        self.next_hand_at: float | None = None
        self.hands_cancelled = 0
        self._starting: dict[str, int] = {}
        self._players_in_hand: dict[int, str] = {}
        self._public = table_channel(table_id)
        self._task: asyncio.Task[None] | None = None
        self._busy = True  # carrying out a command or a clock (not waiting for the next one)
        self._closing = False
        self.stopped = asyncio.Event()
        self.taken_over = False  # another node runs the table now: this actor stopped
        self.paused_since: float | None = None  # the database has not answered since
        self._recorded = 0  # actions of the hand in progress written so far
        self._unresumable: tuple[LiveHandState, str] | None = None

    # ------------------------------------------------------------------ outside

    def restore(
        self,
        seats: list[tuple[int, str, int]],
        *,
        hand_number: int = 0,
        seq: int = 0,
        sitting_out: set[str] | None = None,
        waiting: list[str] | None = None,
        connections: dict[str, int] | None = None,
    ) -> None:
        """Before ``start``: seat the players the store knows (seat, player, chips) and carry
        on the hand numbers and ``seq``. ``sitting_out``: None sits everyone out (after a
        restart nobody is connected yet; the sit-out limit removes whoever never returns)."""
        now = self.clock()
        for seat, player, chips in seats:
            out = sitting_out is None or player in sitting_out
            self.table.seats[seat] = Seat(player, chips, sitting_out=out)
            self._state(player).sat_out_at = now if out else None
        for player, count in (connections or {}).items():
            if count:
                self._state(player).connections = count
        self.hand_number = hand_number
        self.seq = seq
        self.waiting = list(waiting or [])

    def announce(self, kind: str, data: dict[str, Any]) -> None:
        """Publish a table event from outside the loop (before ``start``, or between tasks)."""
        self._publish(kind, data)

    def start(self) -> asyncio.Task[None]:
        self._task = asyncio.create_task(self.run(), name=f"table-{self.table_id}")
        return self._task

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

    def fail_pending(self, code: str, message: str) -> None:
        """Refuse every command still in the inbox (the actor is gone or going)."""
        while not self.inbox.empty():
            command = self.inbox.get_nowait()
            if not command.reply.done():
                command.reply.set_exception(CommandRefused(code, message))

    async def stop(self) -> None:
        """Stop serving. A command (or clock) being carried out is finished first, within
        STOP_GRACE_SECONDS: cut short, its database write would be too."""
        task = self._task
        if task is None:
            return
        self._closing = True
        if self._busy:
            await asyncio.wait({task}, timeout=STOP_GRACE_SECONDS)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def submit(self, command: str, player: str, /, **data: Any) -> dict[str, Any]:
        """Hand a command to the actor and wait for its reply; raise CommandRefused."""
        if self._task is not None and self._task.done():
            # Nobody would ever answer: the caller learns at once (and retries elsewhere).
            raise CommandRefused("table_closed", "the table stopped; try again")
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        try:
            self.inbox.put_nowait(_Command(command, player, data, future))
        except asyncio.QueueFull:
            raise CommandRefused("table_busy", "the table is busy; try again") from None
        return await future

    # ------------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Serve commands and clocks until stopped; a failing hand is cancelled, not fatal."""
        try:
            await self._carry_on()
            self._schedule_next_hand()
            while not self._closing:
                self._busy = False
                command = await self._next_command()
                self._busy = True
                try:
                    if command is not None:
                        await self._handle(command)
                    await self._on_clock()
                except TableTakenOver:
                    raise
                except Exception:  # noqa: BLE001 - contain any bug to this hand
                    log.exception("table %s: hand cancelled after an error", self.table_id)
                    if command is not None and not command.reply.done():
                        command.reply.set_exception(
                            CommandRefused("internal_error", "the table hit an error")
                        )
                    await self._cancel_hand("internal_error")
        except TableTakenOver as error:
            self.taken_over = True
            log.warning("table %s: %s; this node stops running it", self.table_id, error)
        finally:
            self.stopped.set()
            code = "table_moved" if self.taken_over else "table_closed"
            self.fail_pending(code, "the table stopped here; try again")

    async def _carry_on(self) -> None:
        """First thing in the loop: what a resumed table still owes (see :meth:`resume`)."""
        hand = self.table.hand
        if self._unresumable is not None:
            live, reason = self._unresumable
            self._unresumable = None
            await self._void_unresumable(live, reason)
        elif hand is not None and hand.is_over():
            await self._finish_hand()  # its last action was written, its record was not
        elif hand is not None:
            self._start_clock(hand)

    async def _next_command(self) -> _Command | None:
        wake = [t for t in (self.deadline, self.next_hand_at, self._offer_until(),
                            self._sit_out_check_at()) if t is not None]
        if not wake:
            return await self.inbox.get()
        timeout = max(0.0, min(wake) - self.clock())
        try:
            return await asyncio.wait_for(self.inbox.get(), timeout)
        except TimeoutError:
            return None

    def _offer_until(self) -> float | None:
        return self.offer[2] if self.offer is not None else None

    def _sit_out_check_at(self) -> float | None:
        times = [p.sat_out_at for p in self.players.values() if p.sat_out_at is not None]
        return min(times) + self.settings.sit_out_limit if times else None

    async def _handle(self, command: _Command) -> None:
        handler = _HANDLERS.get(command.kind)
        if handler is None:
            command.reply.set_exception(
                CommandRefused("unknown_command", f"no command {command.kind!r}")
            )
            return
        try:
            reply = await handler(self, command.player, command.data)
        except CommandRefused as refusal:
            command.reply.set_exception(refusal)
        except EngineError as error:
            command.reply.set_exception(CommandRefused(error.code, str(error)))
        except Refusal as refusal:  # a store's refusal (insufficient_funds...)
            command.reply.set_exception(CommandRefused(refusal.code, refusal.message))
        except StoreUnavailable:  # a buy-in while the database is away: nothing happened
            command.reply.set_exception(CommandRefused(
                "database_unavailable", "the cardroom's database does not answer; try again"
            ))
        except TableTakenOver:
            command.reply.set_exception(
                CommandRefused("table_moved", "the table moved to another node; try again")
            )
            raise
        else:
            command.reply.set_result(reply)

    # ------------------------------------------------------------------ writing ahead

    async def _persist(self, write: Callable[[], Awaitable[None]]) -> None:
        """Write, however long the database takes to come back: until it does, the table
        is paused (no clock runs, nothing new is shown). Refusals are not retried."""
        delay = 0.05
        while True:
            try:
                await write()
            except StoreUnavailable as error:
                if self.paused_since is None:
                    self.paused_since = self.clock()
                    log.warning("table %s: paused, the database does not answer (%s)",
                                self.table_id, error)
                    self._publish("table_paused", {"reason": "database"})
                await asyncio.sleep(delay)
                delay = min(PAUSE_RETRY_MAX, delay * 2)
                continue
            break
        if self.paused_since is not None:
            paused = self.clock() - self.paused_since
            self.paused_since = None
            log.info("table %s: the database is back after %.1f s", self.table_id, paused)
            self._publish("table_unpaused", {"seconds": round(paused, 1)})
            if self.deadline is not None:
                self.deadline += paused  # the pause is nobody's thinking time
            if self.next_hand_at is not None:
                self.next_hand_at += paused

    @property
    def recorded_actions(self) -> int:
        """Actions of the hand in progress written so far (what a resume replays)."""
        return self._recorded

    async def _record(self, action: dict[str, Any]) -> None:
        """The hand in progress's next action, written before its events go out."""
        position = self._recorded
        await self._persist(lambda: self.store.record_action(
            self.table_id, self.hand_number, position, action
        ))
        self._recorded = position + 1

    # ------------------------------------------------------------------ events out

    def _publish(self, kind: str, data: dict[str, Any]) -> None:
        self.seq += 1
        self.bus.publish_now(
            self._public,
            {"type": "event", "table": self.table_id, "seq": self.seq, "kind": kind,
             "data": data},
        )

    def _publish_hand_events(self, events: list[Event]) -> None:
        hand = self.table.hand
        for event in events:
            if event.to is None:
                self._publish(event.kind, event.data)
                continue
            player = self._player_at(event.to)
            if player is not None:
                self.bus.publish_now(
                    player_channel(self.table_id, player),
                    {"type": "event", "table": self.table_id, "seq": self.seq + 1,
                     "kind": event.kind, "data": event.data, "private": True},
                )
        if hand is not None and not hand.is_over():
            self._start_clock(hand)

    def _player_at(self, seat: int) -> str | None:
        occupant = self.table.seats[seat]
        return occupant.player if occupant is not None else None

    # ------------------------------------------------------------------ snapshot

    def snapshot(self, player: str | None) -> dict[str, Any]:
        """The table as ``player`` may see it (None: a spectator), with the current seq."""
        seat = self.table.seat_of(player) if player is not None else None
        hand = self.table.hand
        picture = None
        if hand is not None:
            dealt_seat = seat if seat is not None and seat in hand.index_of else None
            picture = view(hand.events, dealt_seat)
        seats: list[dict[str, Any]] = []
        for number, occupant in enumerate(self.table.seats):
            if occupant is None:
                seats.append({"seat": number, "player": None})
                continue
            state = self.players.get(occupant.player)
            seats.append({
                "seat": number, "player": occupant.player, "stack": occupant.stack,
                "pending_chips": occupant.pending_chips,
                "sitting_out": occupant.sitting_out,
                "sit_out_next_hand": occupant.sit_out_next_hand, "leaving": occupant.leaving,
                "connected": bool(state and state.connections),
                "time_bank": round(state.time_bank, 1) if state else 0.0,
            })
        config = self.table.config
        return {
            "type": "snapshot",
            "table": self.table_id,
            "seq": self.seq,
            "variant": config.variant.name,
            "stakes": {"ante": config.ante, "bring_in": config.bring_in,
                       "small_bet": config.small_bet, "big_bet": config.big_bet,
                       "structure": config.structure},
            "buy_in": {"min": self.settings.min_buy_in, "max": self.settings.max_buy_in},
            "seats": seats,
            "you": seat,
            "hand_number": self.hand_number if hand is not None else None,
            "hand": picture,
            "clock": self._clock_state(),
            "waiting": list(self.waiting),
        }

    def _clock_state(self) -> dict[str, Any] | None:
        hand = self.table.hand
        if hand is None or self.deadline is None or hand.is_over():
            return None
        return {"seat": hand.seat_to_act(), "remaining": round(self.deadline - self.clock(), 2)}

    # ------------------------------------------------------------------ seating commands

    def _state(self, player: str) -> _Player:
        state = self.players.get(player)
        if state is None:
            state = self.players[player] = _Player(self.settings.time_bank)
        return state

    def _seat_of(self, player: str) -> int:
        seat = self.table.seat_of(player)
        if seat is None:
            raise CommandRefused("not_seated", "you have no seat at this table")
        return seat

    async def _sit(self, player: str, data: dict[str, Any]) -> dict[str, Any]:
        settings = self.settings
        chips = data.get("buy_in")
        if not isinstance(chips, int) or isinstance(chips, bool):
            raise CommandRefused("bad_amount", "buy_in must be a whole number of chips")
        if not settings.min_buy_in <= chips <= settings.max_buy_in:
            raise CommandRefused(
                "bad_buy_in",
                f"buy in between {settings.min_buy_in} and {settings.max_buy_in}",
            )
        if self.table.seat_of(player) is not None:
            raise CommandRefused("already_seated", "you are already seated here")
        seat = data.get("seat")
        free = [n for n, s in enumerate(self.table.seats) if s is None]
        if self.offer is not None and self.offer[0] != player:
            free = [n for n in free if n != self.offer[1]]
        elif self.waiting and self.offer is None and player not in self.waiting[:1]:
            free = []  # the waiting list comes first
        if seat is None:
            if not free:
                raise CommandRefused("table_full", "no free seat; join the waiting list")
            seat = free[0]
        elif not isinstance(seat, int) or not 0 <= seat < len(self.table.seats):
            raise CommandRefused("bad_seat", f"no seat {seat!r} at this table")
        elif self.table.seats[seat] is not None:
            raise CommandRefused("seat_taken", f"seat {seat} is taken")
        elif seat not in free:
            raise CommandRefused("seat_reserved", f"seat {seat} is offered to another player")
        await self.store.buy_in(self.table_id, player, chips, seat=seat)
        self.table.sit(seat, player, chips)
        state = self._state(player)
        state.sat_out_at = None
        if player in self.waiting:
            self.waiting.remove(player)
        if self.offer is not None and self.offer[0] == player:
            self.offer = None
        self._publish("seat_taken", {"seat": seat, "player": player, "stack": chips})
        self._schedule_next_hand()
        return {"seat": seat, "stack": chips}

    async def _add_chips(self, player: str, data: dict[str, Any]) -> dict[str, Any]:
        seat = self._seat_of(player)
        chips = data.get("amount")
        if not isinstance(chips, int) or isinstance(chips, bool) or chips <= 0:
            raise CommandRefused("bad_amount", "amount must be a positive whole number")
        occupant = self.table.seats[seat]
        assert occupant is not None
        if occupant.stack + occupant.pending_chips + chips > self.settings.max_buy_in:
            raise CommandRefused("bad_buy_in", f"at most {self.settings.max_buy_in} on the table")
        await self.store.buy_in(self.table_id, player, chips, seat=seat)
        self.table.add_chips(seat, chips)
        pending = self.table.in_hand(seat)
        self._publish("chips_added", {"seat": seat, "amount": chips, "after_hand": pending})
        self._schedule_next_hand()
        return {"seat": seat, "stack": occupant.stack, "pending": occupant.pending_chips}

    async def _sit_out(self, player: str, data: dict[str, Any]) -> dict[str, Any]:
        seat = self._seat_of(player)
        next_hand = bool(data.get("next_hand", True))
        self.table.sit_out(seat, next_hand=next_hand)
        occupant = self.table.seats[seat]
        assert occupant is not None
        if occupant.sitting_out:
            self._state(player).sat_out_at = self.clock()
        self._publish("sat_out", {"seat": seat, "after_hand": occupant.sit_out_next_hand})
        return {"seat": seat, "sitting_out": occupant.sitting_out,
                "after_hand": occupant.sit_out_next_hand}

    async def _sit_in(self, player: str, data: dict[str, Any]) -> dict[str, Any]:
        seat = self._seat_of(player)
        self.table.sit_in(seat)
        self._state(player).sat_out_at = None
        self._publish("sat_in", {"seat": seat})
        self._schedule_next_hand()
        return {"seat": seat}

    async def _leave(self, player: str, data: dict[str, Any]) -> dict[str, Any]:
        if player in self.waiting:
            self.waiting.remove(player)
            self._publish("waiting_list", {"waiting": list(self.waiting)})
            if self.table.seat_of(player) is None:
                return {"left_waiting_list": True}
        seat = self._seat_of(player)
        chips = self.table.leave(seat)
        if chips is None:
            self._publish("leaving", {"seat": seat})
            return {"seat": seat, "after_hand": True}
        await self._settle_departure(seat, player, chips)
        return {"seat": seat, "cashed_out": chips}

    async def _settle_departure(self, seat: int, player: str, chips: int) -> None:
        # Even with nothing left: the store frees the seat it keeps.
        await self._persist(lambda: self.store.cash_out(self.table_id, player, chips))
        self.players.pop(player, None)
        self._publish("seat_left", {"seat": seat, "player": player, "cashed_out": chips})
        self._offer_free_seat()

    async def _join_waiting_list(self, player: str, data: dict[str, Any]) -> dict[str, Any]:
        if self.table.seat_of(player) is not None:
            raise CommandRefused("already_seated", "you are already seated here")
        if player not in self.waiting:
            self.waiting.append(player)
            self._publish("waiting_list", {"waiting": list(self.waiting)})
        self._offer_free_seat()
        return {"position": self.waiting.index(player) + 1}

    def _offer_free_seat(self) -> None:
        if self.offer is not None or not self.waiting:
            return
        free = [n for n, s in enumerate(self.table.seats) if s is None]
        if not free:
            return
        player = self.waiting[0]
        until = self.clock() + self.settings.waiting_offer
        self.offer = (player, free[0], until)
        self._publish("seat_offered", {"player": player, "seat": free[0],
                                       "seconds": self.settings.waiting_offer})

    async def _chat(self, player: str, data: dict[str, Any]) -> dict[str, Any]:
        text = data.get("text")
        if not isinstance(text, str) or not text.strip() or len(text) > 500:
            raise CommandRefused("bad_chat", "chat text must be 1 to 500 characters")
        self._publish("chat", {"player": player, "text": text.strip()})
        return {}

    async def _snapshot(self, player: str, data: dict[str, Any]) -> dict[str, Any]:
        snapshot = self.snapshot(player or None)
        reply_to = data.get("reply_to")
        if isinstance(reply_to, str):
            # In line with the events: the listener misses none after it, sees none before.
            self.bus.publish_now(
                reply_to, {"type": "reply", "id": data.get("reply_id"), "result": snapshot}
            )
        return snapshot

    async def _connection(self, player: str, data: dict[str, Any]) -> dict[str, Any]:
        """A connection of the player's came or went (a player may have several). One told
        to a given run of the table (``run``) is refused by any other: a node's actor that
        has not yet learnt the table moved must not count it."""
        run = data.get("run")
        if run is not None and run != self.seq // SEQ_PER_RUN:
            raise CommandRefused("table_moved", "the table moved to another node; try again")
        state = self._state(player)
        state.connections = max(0, state.connections + (1 if data.get("connected") else -1))
        if not state.connections and self.table.seat_of(player) is None:
            del self.players[player]  # a spectator gone: nothing to remember
        return {"run": self.seq // SEQ_PER_RUN}

    # ------------------------------------------------------------------ acting

    async def _act(self, player: str, data: dict[str, Any]) -> dict[str, Any]:
        seat = self._seat_of(player)
        state = self._state(player)
        action_id = data.get("action_id")
        if not isinstance(action_id, str) or not 0 < len(action_id) <= 64:
            raise CommandRefused("bad_action_id", "every action needs an action_id (1-64 chars)")
        if action_id in state.action_ids:
            return state.action_ids[action_id]  # a retry: the same answer, no second action
        hand = self.table.hand
        if hand is None or hand.is_over():
            raise CommandRefused("no_hand", "no hand is being played")
        kind = data.get("kind")
        amount = data.get("amount")
        if not isinstance(kind, str):
            raise CommandRefused("unknown_action", "kind must be an action name")
        events = hand.apply(Action(seat, kind, amount))
        await self._record({"seat": seat, "kind": kind, "amount": amount,
                            "action_id": action_id})
        self._spend_clock(player)
        reply = {"seq": self.seq + sum(1 for e in events if e.to is None), "accepted": True}
        state.action_ids[action_id] = reply
        while len(state.action_ids) > REMEMBERED_ACTION_IDS:
            state.action_ids.popitem(last=False)
        self._publish_hand_events(events)
        if hand.is_over():
            await self._finish_hand()
        return reply

    def _start_clock(self, hand: Hand) -> None:
        seat = hand.seat_to_act()
        if seat is None:
            self.deadline = None
            return
        player = self._player_at(seat)
        bank = self._state(player).time_bank if player is not None else 0.0
        now = self.clock()
        self.turn_started = now
        self.deadline = now + self.settings.action_clock + bank
        self._publish("clock", {"seat": seat, "action_clock": self.settings.action_clock,
                                "time_bank": round(bank, 2)})

    def _spend_clock(self, player: str) -> None:
        state = self._state(player)
        used = self.clock() - self.turn_started - self.settings.action_clock
        if used > 0:
            state.time_bank = max(0.0, state.time_bank - used)
        self.deadline = None

    async def _on_clock(self) -> None:
        now = self.clock()
        hand = self.table.hand
        if self.deadline is not None and now >= self.deadline and hand is not None \
                and not hand.is_over():
            seat = hand.seat_to_act()
            assert seat is not None
            player = self._player_at(seat)
            if player is not None:
                self._state(player).time_bank = 0.0
            self.deadline = None
            events = hand.timeout(seat)
            await self._record({"seat": seat, "timeout": True})
            self._publish_hand_events(events)
            if hand.is_over():
                await self._finish_hand()
        if self.offer is not None and now >= self.offer[2]:
            player = self.offer[0]
            self.offer = None
            if player in self.waiting:
                self.waiting.remove(player)
            self._publish("seat_offer_expired", {"player": player})
            self._offer_free_seat()
        for name, state in list(self.players.items()):
            limit = self.settings.sit_out_limit
            if state.sat_out_at is not None and now >= state.sat_out_at + limit:
                seat = self.table.seat_of(name)
                state.sat_out_at = None
                if seat is not None and not self.table.in_hand(seat):
                    chips = self.table.leave(seat)
                    if chips is not None:
                        await self._settle_departure(seat, name, chips)
        if self.next_hand_at is not None and now >= self.next_hand_at:
            self.next_hand_at = None
            await self._start_hand()

    # ------------------------------------------------------------------ hands

    def _schedule_next_hand(self) -> None:
        if self.table.hand is not None or self.next_hand_at is not None:
            return
        if len(self.table.dealt_in()) >= 2:
            self.next_hand_at = self.clock() + self.settings.pause_between_hands

    def _new_deck(self) -> tuple[Deck, dict[str, Any]]:
        """A deck and what it takes to deal it again: its whole order, and the seed of the
        scramble of the burn cards should it run short."""
        if self.deck_factory is not None:
            deck = self.deck_factory()
            return deck, {"order": deck.order(), "seed": None}
        rng = self.rng_factory()
        order = Deck(rng=rng).order()
        seed = rng.getrandbits(64)
        return Deck(order=order, rng=random.Random(seed)), {"order": order, "seed": seed}

    async def _start_hand(self) -> None:
        dealt = self.table.dealt_in()
        if len(dealt) < 2:
            return
        seats = self.table.seats
        players = [(n, seats[n].player, seats[n].stack) for n in dealt]  # type: ignore[union-attr]
        deck, deck_record = self._new_deck()
        number = self.hand_number + 1
        await self._persist(lambda: self.store.start_hand(
            LiveHandState(self.table_id, number, deck_record, players)
        ))
        self.hand_number = number
        self._recorded = 0
        hand = self.table.start_hand(deck)
        self._starting = {player: stack for _, player, stack in players}
        self._players_in_hand = {seat: player for seat, player, _ in players}
        self._publish("hand_number", {"hand": self.hand_number})
        self._publish_hand_events(list(hand.events))

    # ------------------------------------------------------------------ resuming

    def resume(self, live: LiveHandState) -> bool:
        """Before ``start``, after ``restore``: deal the stored hand again from its deck and
        replay its actions, so play goes on exactly where it was. False when that cannot
        be done: the actor then voids the hand first thing (every chip back, the event log
        saying why)."""
        try:
            hand = self._replay(live)
        except Exception as error:  # noqa: BLE001 - any failure means: not resumable
            log.exception("table %s: hand %s cannot be resumed", self.table_id, live.number)
            self._unresumable = (live, f"{type(error).__name__}: {error}")
            self.hand_number = max(self.hand_number, live.number)
            return False
        table = self.table
        for seat, player, stack in live.players:
            occupant = table.seats[seat]
            assert occupant is not None
            # Chips bought meanwhile are in the seat's row already: they wait for the hand.
            occupant.pending_chips = occupant.stack - stack
            occupant.stack = stack
            occupant.sitting_out = False
            self._state(player).sat_out_at = None
        table.hand = hand
        self.hand_number = live.number
        self._recorded = len(live.actions)
        self._starting = {player: stack for _, player, stack in live.players}
        self._players_in_hand = {seat: player for seat, player, _ in live.players}
        for action in live.actions:
            action_id = action.get("action_id")
            actor = self._players_in_hand.get(action.get("seat", -1))
            if isinstance(action_id, str) and actor is not None:
                # A retry of an action written before the table moved: answered, not redone.
                self._state(actor).action_ids[action_id] = {"seq": self.seq, "accepted": True}
        return True

    def _replay(self, live: LiveHandState) -> Hand:
        for seat, player, stack in live.players:
            occupant = self.table.seats[seat] if 0 <= seat < len(self.table.seats) else None
            if occupant is None or occupant.player != player or occupant.stack < stack:
                raise ValueError(f"seat {seat} does not hold {player} with {stack} chips")
        order, seed = live.deck.get("order"), live.deck.get("seed")
        if order is None:
            raise ValueError("the deck of the hand was not recorded")
        deck = Deck(order=order, rng=random.Random(seed) if seed is not None else None)
        hand = Hand(self.table.config, [(seat, stack) for seat, _, stack in live.players], deck)
        for action in live.actions:
            if action.get("timeout"):
                hand.timeout(action["seat"])
            else:
                hand.apply(Action(action["seat"], action["kind"], action.get("amount")))
        return hand

    async def _void_unresumable(self, live: LiveHandState, reason: str) -> None:
        """The stored hand could not be dealt again: void it, every chip where it was."""
        starting = {player: stack for _, player, stack in live.players}
        record = FinishedHand(
            table_id=self.table_id, number=live.number,
            events=[{"kind": "hand_cancelled",
                     "data": {"reason": "resume_failed", "detail": reason}, "to": None}],
            result={"cancelled": "resume_failed"},
            players={seat: player for seat, player, _ in live.players},
            starting=starting, stacks=dict(starting), cancelled=True,
        )
        await self._persist(lambda: self.store.save_hand(record))
        self.hands_cancelled += 1
        self._publish("hand_cancelled", {
            "hand": live.number, "reason": "resume_failed",
            "stacks": {str(seat): stack for seat, _, stack in live.players},
        })

    def _phh(self, hand: Hand) -> str:
        """The hand as PHH, where PHH has a code for the game (engine.phh); else ""."""
        players = [self._players_in_hand[s] for s in hand.seats]
        try:
            return export(hand, table=str(self.table_id), players=players)
        except PhhError:
            return ""

    async def _finish_hand(self) -> None:
        hand = self.table.hand
        assert hand is not None and hand.is_over()
        result = hand.result()
        stacks = {self._players_in_hand[s]: v for s, v in result.stacks.items()}
        record = FinishedHand(
            table_id=self.table_id,
            number=self.hand_number,
            events=[{"kind": e.kind, "data": e.data, "to": e.to} for e in hand.events],
            result={"net": {str(s): v for s, v in result.net.items()},
                    "shares": result.shares, "pots": result.pots, "showdown": result.showdown},
            players=dict(self._players_in_hand),
            starting=dict(self._starting),
            stacks=stacks,
            phh=self._phh(hand),
        )
        await self._persist(lambda: self.store.save_hand(record))
        # Saved: from here on the stored stacks are the hand's final ones, so nothing may
        # cancel it (a cancel would put back the starting stacks).
        departures = self.table.finish_hand()
        self.deadline = None
        for player in self._players_in_hand.values():
            state = self.players.get(player)
            if state is not None:
                state.time_bank = min(self.settings.time_bank,
                                      state.time_bank + self.settings.time_bank_refill)
        need = self.table.needed_to_play()
        for number, occupant in enumerate(self.table.seats):
            if occupant is not None and not occupant.sitting_out and occupant.stack < need:
                # Broke: sat out until chips are added (and removed after the sit-out limit).
                self.table.sit_out(number)
                self._publish("sat_out", {"seat": number, "after_hand": False, "busted": True})
        self._start_sit_out_clocks()
        for seat, player, chips in departures:
            await self._settle_departure(seat, player, chips)
        self._schedule_next_hand()

    def _start_sit_out_clocks(self) -> None:
        """Whoever sits out from now on starts counting toward the sit-out limit."""
        for occupant in self.table.seats:
            if occupant is not None and occupant.sitting_out:
                state = self._state(occupant.player)
                if state.sat_out_at is None:
                    state.sat_out_at = self.clock()

    def cancelled_record(self, reason: str) -> FinishedHand | None:
        """The record of the hand in progress voided: everyone keeps the chips they began
        with. None when no hand is in progress."""
        hand = self.table.hand
        if hand is None:
            return None
        starting = {self._players_in_hand[s]: hand.starting[i] for i, s in enumerate(hand.seats)}
        return FinishedHand(
            table_id=self.table_id, number=self.hand_number,
            events=[{"kind": e.kind, "data": e.data, "to": e.to} for e in hand.events]
            + [{"kind": "hand_cancelled", "data": {"reason": reason}, "to": None}],
            result={"cancelled": reason}, players=dict(self._players_in_hand),
            starting=starting, stacks=dict(starting), cancelled=True,
        )

    async def _cancel_hand(self, reason: str) -> None:
        """Void the hand in progress: every chip of it goes back where it came from.

        The hand was not persisted (that happens last, in one transaction), so the stored
        stacks are still those it started with; the table goes back to them too.
        """
        self.deadline = None
        hand = self.table.hand
        record = self.cancelled_record(reason)
        if hand is None or record is None:
            return
        self.hands_cancelled += 1
        departures = self.table.cancel_hand()
        self._publish("hand_cancelled", {"hand": self.hand_number, "reason": reason,
                                         "stacks": {str(s): hand.starting[i]
                                                    for i, s in enumerate(hand.seats)}})
        try:
            await self._persist(lambda: self.store.save_hand(record))
        except TableTakenOver:
            raise
        except Exception:  # noqa: BLE001 - the chips are already back; keep the table alive
            log.exception("table %s: could not record the cancelled hand", self.table_id)
        self._start_sit_out_clocks()
        for number, player, chips in departures:
            await self._settle_departure(number, player, chips)
        self._schedule_next_hand()


_Handler = Callable[[TableActor, str, dict[str, Any]], Any]
_HANDLERS: dict[str, _Handler] = {
    "sit": TableActor._sit,
    "add_chips": TableActor._add_chips,
    "sit_out": TableActor._sit_out,
    "sit_in": TableActor._sit_in,
    "leave": TableActor._leave,
    "join_waiting_list": TableActor._join_waiting_list,
    "chat": TableActor._chat,
    "act": TableActor._act,
    "snapshot": TableActor._snapshot,
    "connection": TableActor._connection,
}
