"""One table actor per table: the only writer of its table's state.

Commands (typed records of :mod:`server.table.commands`) reach the actor through a bounded
inbox and are carried out one at a time, dispatched on their type; the actor answers
each with a reply and tells everyone what changed through events on the bus. It deals
while two or more players sit in, runs the clocks (:mod:`server.table.clocks`), acts for
absent players by the rules (a forced bring-in is posted, a check where it can, else a
fold), and contains its own crashes: a hand that blows up is cancelled with every chip
returned, and the table plays on (three errors in a row with no hand finishing in between
pause it until an operator resumes it: :func:`server.table.operators.pause_after_errors`).

The parts, each readable alone: the rules of the table and its seating in the pure
``engine.table.Table``; the players' commands (:mod:`server.table.player_commands`); the
clocks; the write-ahead (:mod:`server.table.journal`: nothing is shown before it is written,
and the table pauses while the database is away); the records of hands and their replay
(:mod:`server.table.dealing`); a hand's deal (:mod:`server.table.hand_start`); the numbered
events (:mod:`server.table.publisher`); the snapshot (:mod:`server.table.snapshot`). Its life
is the loop's (:mod:`server.table.loop`): an explicit state with the moves it allows. A store
that finds the table run by another node (a newer fencing token) stops the actor at once,
without writing anything. A tournament's table (``tournament_id``) deals on its director's
permits (:mod:`server.table.director_commands`).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from engine import fair2
from engine.cards import Deck
from engine.events import Event, Turn
from engine.protocol import ErrorCode
from engine.table import Departure, SeatingRules, Table
from engine.table_events import (
    Clock,
    HandCancelled,
    TablePaused,
    TableUnpaused,
)
from engine.variants import TableConfig
from server.bus.memory import Bus
from server.metrics import Metrics
from server.store.records import FinishedHand, LiveHandState, TableTakenOver
from server.store.table_config import config_from_json
from server.table import (
    absence,
    dealing,
    director_commands,
    hand_start,
    mixed,
    operators,
    player_commands,
    removal,
    turns,
)
from server.table import commands as cmd
from server.table.clocks import TableClocks
from server.table.journal import Journal
from server.table.lease import LeaseProof
from server.table.loop import TableLoop
from server.table.moves import AbsentAction, Change, PlayerAction, Timeout, Void
from server.table.player_commands import PlayerState
from server.table.ports import CommandRefused, TableSettings, TableStore
from server.table.publisher import Publisher
from server.table.snapshot import snapshot_of

log = logging.getLogger(__name__)


class TableActor(TableLoop):
    def __init__(
        self,
        table_id: int,
        config: TableConfig,
        *,
        bus: Bus,
        store: TableStore,
        settings: TableSettings | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        rng_factory: Callable[[], random.Random] | None = None,
        deck_factory: Callable[[], Deck] | None = None,
        deck_method: str = fair2.METHOD,
        run: int = 1,
        metrics: Metrics | None = None,
        lease: LeaseProof | None = None,
        tournament_id: int | None = None,
    ) -> None:
        super().__init__(table_id, metrics=metrics)
        self.settings = settings = settings or TableSettings()
        rules = SeatingRules(settings.min_buy_in, settings.max_buy_in, settings.waiting_offer)
        self.tournament_id = tournament_id  # a tournament's table (director_commands)
        self.permitted_hand: int | None = None  # the hand its director last let it deal
        self.table = Table(config, settings.seat_count, rules, tournament=tournament_id is not None)
        self.bus = bus
        self.clock = clock
        self.wall_clock = wall_clock  # time collection's periods, which outlive the node
        self.rng_factory = rng_factory  # seeds server seeds (tests); None: ``secrets``
        self.deck_factory = deck_factory  # tests stack the deck; None: a provably fair deal
        self.next_deal: dealing.NextDeal | None = None  # committed to, not dealt yet
        # How decks are committed to and proven: stud-deck/2 (engine.fair2); a table made with
        # stud-deck/1 deals as hands were dealt before it (tests of those hands' histories).
        self.deck_method = deck_method
        self.publisher = Publisher(bus, table_id, run=run, lease=lease)
        self.clocks = TableClocks(settings, clock)
        self.journal = Journal(
            store,
            table_id,
            clock=clock,
            on_pause=self._paused,
            on_resume=self._unpaused,
            metrics=self.metrics,
        )
        self.hand_number = 0
        self.hands_cancelled = 0
        self.errors_in_a_row = 0  # errors contained since a hand last finished
        # When the table last moved (a deal, an action, a time-out; ``clock`` time): the
        # back office's live list flags a hand that stays still too long.
        self.last_action_at: float | None = None
        self.players: dict[str, PlayerState] = {}
        self._players_in_hand: dict[int, str] = {}  # seat -> player, of the hand in progress
        self._starting: dict[str, int] = {}  # player -> chips at the start of that hand
        self._unresumable: tuple[LiveHandState, str] | None = None
        self.ops = operators.TableOps()  # what operators asked that outlasts the command
        self.mix: mixed.TableRotation | None = None  # a mixed table's rotation (None: one game)
        # The node moves the table to another (``cmd.HoldPlay``): no new hand; and whether
        # no hand is in progress, for the move to wait on.
        self.play_held = False
        self.between_hands = asyncio.Event()

    # ------------------------------------------------------------------ what others read

    @property
    def store(self) -> TableStore:
        return self.journal.store

    @property
    def seq(self) -> int:
        return self.publisher.seq

    @property
    def run_number(self) -> int:
        """The run of the table this actor is (the fencing token its node took it with)."""
        return self.publisher.run

    @property
    def waiting(self) -> list[str]:
        return self.table.waiting

    @property
    def offer(self) -> tuple[str, int] | None:
        return self.table.offer

    @property
    def deadline(self) -> float | None:
        return self.clocks.deadline

    @property
    def paused_since(self) -> float | None:
        return self.journal.paused_since

    @property
    def paused(self) -> bool:
        return self.journal.paused_since is not None

    @property
    def recorded_actions(self) -> int:
        """Actions of the hand in progress written so far (what a resume replays)."""
        return self.journal.recorded

    # ------------------------------------------------------------------ before the start

    def restore(
        self,
        seats: list[tuple[int, str, int]],
        *,
        hand_number: int = 0,
        seq: int | None = None,
        sitting_out: set[str] | None = None,
        waiting: list[str] | None = None,
        connections: dict[str, int] | None = None,
        time_paid: dict[str, float] | None = None,
        check_when_free: set[str] | None = None,
        ops: operators.TableOps | None = None,
    ) -> None:
        """Seat the players the store knows (seat, player, chips) and carry on the hand
        numbers (and ``seq``, for the same run started again). ``sitting_out``: None sits
        everyone out (after a restart nobody is connected yet; the sit-out limit removes
        whoever never returns). ``time_paid``: until when each player's time is paid.
        ``check_when_free``: who sat out asking the table to check for them where free.
        ``ops``: what operators asked of the table that outlasts their commands (this
        node's actor of the table that died)."""
        self.table.restore(seats, sitting_out=sitting_out, waiting=waiting or ())
        now = self.clock()
        for _, player, _ in seats:
            out = sitting_out is None or player in sitting_out
            self.player_state(player).sat_out_at = now if out else None
        for player, count in (connections or {}).items():
            if count:
                self.player_state(player).connections = count
        for player, until in (time_paid or {}).items():
            self.player_state(player).time_paid_until = until
        for player in check_when_free or ():
            self.player_state(player).check_when_free = True
        self.hand_number = hand_number
        if seq is not None:
            self.publisher.seq = seq
        if ops is not None:
            self.ops = ops

    def resume(self, live: LiveHandState) -> bool:
        """After ``restore``: deal the stored hand again from its deck and replay its
        actions, so play goes on exactly where it was. False when that cannot be done:
        the actor then voids the hand first thing (every chip back, the log saying why)."""
        if self.mix is not None:  # a mixed table's hand keeps its place, resumed or voided
            self.mix.remember(live.number, live.rotation, live.config)
        try:
            config = config_from_json(live.config) if live.config else self.table.config
            dealing.resume(self.table, config, live)
        except Exception as error:  # noqa: BLE001 - any failure means: not resumable
            log.exception(
                "table %s: hand %s cannot be resumed",
                self.table_id,
                live.number,
                extra={"table": self.table_id, "hand": live.number},
            )
            self._unresumable = (live, f"{type(error).__name__}: {error}")
            self.hand_number = max(self.hand_number, live.number)
            return False
        for _, player, _ in live.players:
            self.player_state(player).sat_out_at = None
        self.hand_number = live.number
        self.journal.resumed(live)
        self.dealt(live.players)
        for action in live.actions:
            action_id = action.get("action_id")
            actor = self._players_in_hand.get(action.get("seat", -1))
            if isinstance(action_id, str) and actor is not None:
                # A retry of an action written before the table moved: answered, not redone.
                self.player_state(actor).remember(action_id, self.seq)
        return True

    def announce(self, event: Event) -> None:
        """Publish a table event from outside the loop (before ``start``, or between tasks)."""
        self.publisher.publish(event)

    # ------------------------------------------------------------------ running

    async def _carry_on(self) -> None:
        """First thing in the loop: what a resumed table still owes (see :meth:`resume`)."""
        hand = self.table.hand
        if self._unresumable is not None:
            live, reason = self._unresumable
            self._unresumable = None
            await self.commit(Void("resume_failed", reason, unresumable=live))
        elif hand is not None and hand.is_over():
            await self.finish_hand()  # its last action was written, its record was not
        elif hand is not None:
            self._start_clock()
            hand_start.commit_next_hand(
                self
            )  # the commitment the previous node made is gone with it
            await self.commit()  # who asked to leave, in the resumed hand
        if self.table.hand is None:
            await operators.between_hands(self)
            self.between_hands.set()
        self.schedule_next_hand()

    async def _dispatch(self, command: cmd.TableCommand) -> dict[str, Any]:
        handler = _HANDLERS.get(type(command))
        if handler is None:
            raise CommandRefused(f"no command {command.name!r}", code=ErrorCode.UNKNOWN_COMMAND)
        return await handler(self, command)

    def _wake_at(self) -> float | None:
        # No sit-out limit at a tournament table: its players are blinded off until out.
        players = () if self.table.tournament else self.players.values()
        return self.clocks.wake_at(p.sat_out_at for p in players if p.sat_out_at is not None)

    def _now(self) -> float:
        return self.clock()

    async def _contain(self, error: Exception) -> None:
        """Void the hand, and try again at the next hand's time; errors every try, no hand
        finishing, pause the table (:func:`server.table.operators.pause_after_errors`)."""
        await self.commit(Void("internal_error"))
        self.errors_in_a_row += 1
        self.metrics.table_errors.inc()
        if self.errors_in_a_row >= operators.ERRORS_TO_PAUSE:
            self.errors_in_a_row = 0  # resumed, the table has as many tries again
            await operators.pause_after_errors(self)
        elif self.table.hand is None:
            self.schedule_next_hand()  # an error before the deal leaves no hand to end

    # ------------------------------------------------------------------ the database away

    def _paused(self) -> None:
        self.publisher.publish(TablePaused(reason="database"))

    def _unpaused(self, seconds: float) -> None:
        self.publisher.publish(TableUnpaused(seconds=round(seconds, 1)))
        self.clocks.shift(seconds)  # the pause is nobody's thinking time

    # ------------------------------------------------------------------ events out

    def tell(self, events: list[Event]) -> None:
        """Publish table events; the offered seat's clock follows the table's offer."""
        self.publisher.publish_all(events)
        if self.table.offer is None:
            self.clocks.offer_until = None
        elif self.clocks.offer_until is None:
            self.clocks.hold_offer()

    def tell_hand(self, events: list[Event], after: list[Event] | None = None) -> None:
        """Publish a hand's events (then ``after``, table events they caused), and start the
        clock of the next seat to act. A turn of a seat gone from the hand is not told: the
        table plays it at once (:mod:`server.table.absence`), its action marked ``absent``."""
        table = self.table
        told = [
            e for e in events if type(e) is not Turn or absence.reason_absent(table, e.seat) is None
        ]
        self.publisher.publish_hand(told, self._player_at)
        if after:
            self.publisher.publish_all(after)
        hand = self.table.hand
        if hand is not None and not hand.is_over():
            self._start_clock()

    def _start_clock(self) -> None:
        """The clock of the seat to act starts (none for a seat the table plays at once)."""
        seat = turns.clocked_seat(self.table)
        if seat is None:
            self.clocks.stop_turn()
            return
        player = self._player_at(seat)
        bank = self.player_state(player).time_bank if player is not None else 0.0
        self.clocks.start_turn(bank)
        self.publisher.publish(
            Clock(seat=seat, action_clock=self.settings.action_clock, time_bank=round(bank, 2))
        )

    def _player_at(self, seat: int) -> str | None:
        occupant = self.table.seats[seat]
        return occupant.player if occupant is not None else None

    def snapshot(self, player: str | None) -> dict[str, Any]:
        """The table as ``player`` may see it (None: a spectator), with the current seq."""
        return snapshot_of(
            self.table_id,
            self.table,
            player,
            players=self.players,
            seq=self.seq,
            hand_number=self.hand_number,
            buy_in=(self.settings.min_buy_in, self.settings.max_buy_in),
            clock_remaining=self.clocks.remaining(),
            operator_pause=self.ops.paused,
            tournament_id=self.tournament_id,
            rotation=self.mix.picture() if self.mix is not None else None,
            committed=(
                (self.next_deal.number, self.next_deal.commitment)
                if self.next_deal is not None
                else None
            ),
        )

    # ------------------------------------------------------------------ commands

    def player_state(self, player: str) -> PlayerState:
        state = self.players.get(player)
        if state is None:
            state = self.players[player] = PlayerState(self.settings.time_bank)
        return state

    async def settle_departure(self, departure: Departure) -> None:
        # Even with nothing left: the store frees the seat it keeps.
        await self.journal.cash_out(departure.player, departure.chips)
        self.players.pop(departure.player, None)
        self.tell(self.table.left(departure))

    # ------------------------------------------------------------------ the commit path

    @property
    def players_in_hand(self) -> dict[int, str]:
        """The hand in progress's players, by seat (as dealt)."""
        return self._players_in_hand

    def dealt(self, players: Sequence[tuple[int, str, int]]) -> None:
        """The hand dealt to ``players`` (seat, player, chips at its start), until recorded."""
        self._starting = {player: stack for _, player, stack in players}
        self._players_in_hand = {seat: player for seat, player, _ in players}

    async def commit(self, change: Change | None = None) -> dict[str, Any] | None:
        """The one path of every change to the hand in play: a player's action, an absent
        seat's, a time-out, a void. A move is applied to the hand (refused, it changes
        nothing), journaled (nothing is told before it is written), counted, its clock
        settled, its events published, the hand finished if it is over; then the seats gone
        from the hand that are to act are played for, at once, the same way. ``None``: no
        move of its own (a player sat out or left: their turn may be now). Returns the
        answer to a player's action, remembered for its retries."""
        if isinstance(change, Void):
            await self._void(change)
            return None
        reply: dict[str, Any] | None = None
        move = change if change is not None else self._absent_move()
        while move is not None:
            hand = self.table.hand
            assert hand is not None
            player = self._player_at(move.seat)
            state = self.player_state(player) if player is not None else None
            events = move.apply(hand)
            self.last_action_at = self.clock()
            await self.journal.record(self.hand_number, move)
            self.metrics.action(move.counted)
            spent = turns.settle_clock(self.clocks, move, state)
            if isinstance(move, PlayerAction):
                assert state is not None and move.action_id is not None
                seq = self.seq + sum(1 for e in events if e.to is None)
                reply = {"seq": seq, "accepted": True}
                state.remember(move.action_id, seq)
            self.tell_hand(events, after=spent)
            if hand.is_over():
                await self.finish_hand()
            move = self._absent_move()
        return reply

    def _absent_move(self) -> AbsentAction | None:
        return absence.absent_move(
            self.table,
            checks_when_free=lambda player: self.player_state(player).check_when_free,
            on_clock=self.clocks.deadline is not None,
        )

    async def _void(self, void: Void) -> None:
        """Every chip of the hand back where it came from. The hand was not persisted (that
        happens last, in one transaction), so the stored stacks are still those it started
        with; the table goes back to them too. A stored hand that could not be dealt again
        (``unresumable``) is voided as it was stored."""
        live = void.unresumable
        if live is not None:
            await self.journal.save_hand(dealing.unresumable_record(live, void.detail or ""))
            self._count_cancelled()
            self.publisher.publish(
                HandCancelled(
                    hand=live.number,
                    reason=void.reason,
                    stacks=tuple((seat, stack) for seat, _, stack in live.players),
                )
            )
            return
        self.clocks.stop_turn()
        hand = self.table.hand
        record = self.cancelled_record(void.reason, void.detail)
        if hand is None or record is None:
            return
        self._count_cancelled()
        departures = self.table.cancel_hand()
        self.publisher.publish(
            HandCancelled(
                hand=self.hand_number,
                reason=void.reason,
                stacks=tuple(zip(hand.seats, hand.starting, strict=True)),
                detail=void.detail,
                server_seed=dealing.revealed_seed(hand),
            )
        )
        try:
            await self.journal.save_hand(record)
        except TableTakenOver:
            raise
        except Exception:  # noqa: BLE001 - the chips are already back; keep the table alive
            log.exception("table %s: could not record the cancelled hand", self.table_id)
        await self._after_hand(departures)

    def _count_cancelled(self) -> None:
        self.hands_cancelled += 1
        self.metrics.hands_cancelled.inc()

    # ------------------------------------------------------------------ clocks

    async def _on_clock(self) -> None:
        """Whatever the table's clocks say is due: a turn out of time, the offered seat,
        the sit-out limit, the next hand."""
        hand = self.table.hand
        if self.clocks.turn_over_due() and hand is not None and not hand.is_over():
            seat = hand.seat_to_act()
            assert seat is not None
            await self.commit(Timeout(seat))
        if self.clocks.offer_due():
            self.clocks.stop_offer()
            self.tell(self.table.expire_offer())
        for name, state in list(self.players.items()) if not self.table.tournament else ():
            if state.sat_out_at is not None and self.clocks.sit_out_over(state.sat_out_at):
                seat = self.table.seat_of(name)
                state.sat_out_at = None
                if seat is not None and not self.table.in_hand(seat):
                    chips = self.table.leave(seat)
                    if chips is not None:
                        await self.settle_departure(Departure(seat, name, chips))
        if self.clocks.next_hand_due():
            await hand_start.start_hand(self)

    # ------------------------------------------------------------------ hands

    @property
    def holds_play(self) -> bool:
        """No new hand: an operator paused or closes the table, its node moves it, or its
        tournament's director has not permitted the next."""
        return self.ops.holds_play or self.play_held or director_commands.awaits_permit(self)

    def schedule_next_hand(self, *, after_showdown: bool = False) -> None:
        if self.table.hand is None and not self.holds_play and len(self.table.dealt_in()) >= 2:
            hand_start.commit_next_hand(self)
            self.clocks.schedule_next_hand(after_showdown=after_showdown)

    async def finish_hand(self) -> None:
        hand = self.table.hand
        assert hand is not None and hand.is_over()
        record = dealing.finished_record(
            self.table_id,
            self.hand_number,
            hand,
            self._players_in_hand,
            self._starting,
            rotation=self.hand_rotation,
        )
        await self.journal.save_hand(record)
        self.metrics.hands_finished.inc()
        self.errors_in_a_row = 0
        # Saved: from here on the stored stacks are the hand's final ones, so nothing may
        # cancel it (a cancel would put back the starting stacks).
        showdown = hand.result().showdown
        departures = self.table.finish_hand()
        self.clocks.stop_turn()
        banks, refilled = turns.refilled_banks(
            self._players_in_hand,
            {player: state.time_bank for player, state in self.players.items()},
            self._player_at,
            full=self.settings.time_bank,
            refill=self.settings.time_bank_refill,
        )
        for player, bank in banks.items():
            self.players[player].time_bank = bank
        self.tell(refilled)
        # Broke: sat out until chips are added (and removed after the sit-out limit).
        self.tell(self.table.sit_out_busted())
        # A showdown is left on the table long enough to read it (the table's showdown pause).
        await self._after_hand(departures, after_showdown=showdown)

    async def _after_hand(
        self, departures: list[Departure], *, after_showdown: bool = False
    ) -> None:
        for occupant in self.table.seats:
            if occupant is not None and occupant.sitting_out:
                state = self.player_state(occupant.player)
                if state.sat_out_at is None:  # counts toward the sit-out limit from now on
                    state.sat_out_at = self.clock()
        for departure in departures:
            await self.settle_departure(departure)
        await operators.between_hands(self)
        self.between_hands.set()
        self.schedule_next_hand(after_showdown=after_showdown)

    def cancelled_record(self, reason: str, detail: str | None = None) -> FinishedHand | None:
        """The record of the hand in progress voided: everyone keeps the chips they began
        with. None when no hand is in progress."""
        hand = self.table.hand
        if hand is None:
            return None
        return dealing.cancelled_record(
            self.table_id,
            self.hand_number,
            hand,
            self._players_in_hand,
            reason,
            detail,
            rotation=self.hand_rotation,
        )

    @property
    def hand_rotation(self) -> dict[str, Any] | None:
        """A mixed table's hand in progress (or last dealt): its position in the rotation."""
        return self.mix.position(self.hand_number) if self.mix is not None else None


_Handler = Callable[[TableActor, Any], Awaitable[dict[str, Any]]]
_HANDLERS: dict[type[cmd.TableCommand], _Handler] = {
    **player_commands.HANDLERS,
    **operators.HANDLERS,
    **director_commands.HANDLERS,
    cmd.Remove: removal.remove,
    cmd.SetRotation: mixed.set_rotation,
}
