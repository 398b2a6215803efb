"""An operator's commands to a table (the back office's table operations), as its actor
carries them out: change its settings, pause and resume it, void the hand in progress
(through the actor's commit path, as the table voids a hand on its own), close it.

Each is a typed record of :mod:`server.table.commands` that only the REST API builds, routed like
a player's command to the node that runs the table, and answered by its actor, the table's
only writer: it writes the change and its audit entry in one fenced transaction through its
store, then plays it and tells the players. What waits for the hand in progress (new
settings, a pause, a close) is kept in :class:`TableOps` and done between hands
(:func:`between_hands`); what is written survives a restart and a takeover, since the
cardroom builds each actor with it (:meth:`TableOps.restore`). The handlers reach the
actor through :class:`Port`, what they need of it. A table whose hands keep hitting errors
pauses itself the way an operator's pause does (:func:`pause_after_errors`, reason ``errors``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.errors import Refusal
from engine.events import Event
from engine.protocol import ErrorCode
from engine.table import Departure, Table
from engine.table_events import OperatorClosed, OperatorPaused, OperatorResumed
from engine.variants import TableConfig
from server.accounts.audit_log import AuditAction
from server.db.types import utcnow
from server.store.records import AuditNote, TableTakenOver
from server.store.table_config import config_to_json
from server.table import commands as cmd
from server.table import edit
from server.table.clocks import TableClocks
from server.table.journal import Journal
from server.table.mixed import TableRotation
from server.table.moves import Change, Void
from server.table.ports import CommandRefused, TableSettings, TableStore
from server.table.publisher import Publisher

log = logging.getLogger(__name__)

VOIDED = "operator_void"  # the reason of a hand an operator voided (``hand_cancelled``)
# A table whose tries to play end in an error this many times in a row, no hand finishing in
# between, pauses itself (reason ``ERRORS``) until an operator resumes it.
ERRORS_TO_PAUSE = 3
ERRORS = "errors"


@dataclass(slots=True)
class TableOps:
    """What the operators asked of a table that outlasts the command: a pause, a close,
    settings waiting for the hand in progress to end."""

    paused: str | None = None  # the operator's reason; None: not paused
    closing: str | None = None  # the operator's reason; the table closes between hands
    pending: dict[str, Any] | None = None  # new settings, played from the next hand
    cashed_out: dict[str, int] = field(default_factory=dict)  # player -> chips, at the close
    _config: tuple[TableConfig, dict[str, Any]] | None = None  # the rules and their JSON

    def restore(self, *, paused: str | None, closing: str | None) -> None:
        """What the table's row says (a node building the table's actor)."""
        self.paused, self.closing = paused, closing

    @property
    def holds_play(self) -> bool:
        """No new hand: the table is paused or closing."""
        return self.paused is not None or self.closing is not None

    def check_seat(self, seat: int) -> None:
        """A seat that new settings waiting for the hand's end remove takes nobody."""
        if self.pending is not None and seat >= int(self.pending["seats"]):
            raise CommandRefused(
                f"seat {seat} goes when this hand ends (new table settings)",
                code=ErrorCode.BAD_SEAT,
            )

    def config_json(self, config: TableConfig) -> dict[str, Any]:
        """The rules as JSON (what a hand's write-ahead keeps), made once per rule set."""
        if self._config is None or self._config[0] is not config:
            self._config = (config, config_to_json(config))
        return self._config[1]


class Port(Protocol):
    """What the operators' commands need of the table's actor."""

    table_id: int
    table: Table
    settings: TableSettings
    ops: TableOps
    publisher: Publisher
    journal: Journal
    clocks: TableClocks
    shut: bool  # closed for good
    mix: TableRotation | None  # a mixed table's rotation (server.table.mixed)

    @property
    def store(self) -> TableStore: ...

    @property
    def hand_number(self) -> int: ...

    @property
    def players_in_hand(self) -> dict[int, str]: ...

    def tell(self, events: list[Event]) -> None: ...

    def schedule_next_hand(self) -> None: ...

    async def commit(self, change: Change | None = None) -> dict[str, Any] | None: ...

    async def settle_departure(self, departure: Departure) -> None: ...

    def close_for_good(self) -> None: ...


class ShutTable:
    """A table an operator closed, wherever a command for it comes from: refused, for good."""

    def __init__(self, table_id: int) -> None:
        self.table_id = table_id

    async def submit(self, command: cmd.TableCommand) -> dict[str, Any]:
        raise CommandRefused(f"table {self.table_id} is closed", code=ErrorCode.TABLE_SHUT)


def _note(command: cmd.OperatorCommand, action: AuditAction, **values: Any) -> AuditNote:
    return AuditNote(command.operator_id, command.player, action.value, command.reason, **values)


def _in_hand(actor: Port) -> bool:
    hand = actor.table.hand
    return hand is not None and not hand.is_over()


def _cash_table(actor: Port, doing: str) -> None:
    """A tournament's table is its director's to change, void or close."""
    if actor.table.tournament:
        raise CommandRefused(
            f"table {actor.table_id} is a tournament's: its director's, not an operator's, to "
            f"{doing}",
            code=ErrorCode.TOURNAMENT_TABLE,
        )


def _open(actor: Port) -> None:
    if actor.ops.closing is not None:
        raise CommandRefused(
            f"table {actor.table_id} is closing: {actor.ops.closing}", code=ErrorCode.TABLE_SHUT
        )


# ---------------------------------------------------------------------- the commands


async def change_settings(actor: Port, command: cmd.ChangeSettings) -> dict[str, Any]:
    _cash_table(actor, "change")
    _open(actor)
    values = command.settings
    actor.table.check_seat_count(int(values["seats"]))
    if actor.mix is not None:  # the game dealt next too (a turn in play outlasts its rotation)
        actor.mix.check_seats(actor.hand_number + 1, int(values["seats"]))
    note = _note(command, AuditAction.TABLE_UPDATE, changes=True)
    await actor.store.save_table(actor.table_id, dict(values), note)
    actor.ops.pending = dict(values)
    after_hand = _in_hand(actor)
    if not after_hand:
        _play_settings(actor)
    return {"after_hand": after_hand}


async def pause(actor: Port, command: cmd.PauseTable) -> dict[str, Any]:
    _open(actor)
    if actor.ops.paused is not None:
        raise CommandRefused(
            f"table {actor.table_id} is paused already: {actor.ops.paused}",
            code=ErrorCode.TABLE_ALREADY_PAUSED,
        )
    reason = command.reason or ""
    after_hand = _in_hand(actor)
    note = _note(
        command,
        AuditAction.TABLE_PAUSE,
        before={"paused": None},
        after={"paused": reason, "after_hand": after_hand},
    )
    await actor.store.save_table(
        actor.table_id, {"paused_reason": reason, "paused_at": utcnow()}, note
    )
    actor.ops.paused = reason
    actor.clocks.cancel_next_hand()
    actor.publisher.publish(OperatorPaused(reason=reason, after_hand=after_hand))
    return {"after_hand": after_hand}


async def pause_after_errors(actor: Port) -> None:
    """The table pauses itself, as an operator's pause does (written, told, no new hand), when
    errors keep voiding its hands: an operator resumes it once the cause is fixed. Not written
    when the database does not take it: paused on this node all the same."""
    if actor.ops.holds_play:
        return
    try:
        await actor.store.save_table(
            actor.table_id, {"paused_reason": ERRORS, "paused_at": utcnow()}, None
        )
    except TableTakenOver:
        raise
    except Exception:  # noqa: BLE001 - the pause holds here, unwritten
        log.exception("table %s: could not write its pause after errors", actor.table_id)
    actor.ops.paused = ERRORS
    actor.clocks.cancel_next_hand()
    actor.publisher.publish(OperatorPaused(reason=ERRORS, after_hand=_in_hand(actor)))
    log.error(
        "table %s: paused after %s errors in a row; resume it once their cause is fixed",
        actor.table_id,
        ERRORS_TO_PAUSE,
    )


async def resume(actor: Port, command: cmd.ResumeTable) -> dict[str, Any]:
    _open(actor)
    paused = actor.ops.paused
    if paused is None:
        raise CommandRefused(
            f"table {actor.table_id} is not paused", code=ErrorCode.TABLE_NOT_PAUSED
        )
    reason = command.reason or ""
    note = _note(
        command, AuditAction.TABLE_RESUME, before={"paused": paused}, after={"paused": None}
    )
    await actor.store.save_table(actor.table_id, {"paused_reason": None, "paused_at": None}, note)
    actor.ops.paused = None
    actor.publisher.publish(OperatorResumed(reason=reason))
    actor.schedule_next_hand()
    return {"after_hand": False}


async def void(actor: Port, command: cmd.VoidHand) -> dict[str, Any]:
    _cash_table(actor, "void")
    _open(actor)
    hand = actor.table.hand
    if hand is None or hand.is_over():
        raise CommandRefused(
            f"no hand is being played at table {actor.table_id}",
            code=ErrorCode.NO_HAND_IN_PROGRESS,
        )
    number = actor.hand_number
    players = actor.players_in_hand
    now = {players[seat]: hand.stacks[i] for i, seat in enumerate(hand.seats)}
    restored = {players[seat]: hand.starting[i] for i, seat in enumerate(hand.seats)}
    note = _note(
        command,
        AuditAction.HAND_VOID,
        before={"hand": number, "stacks": now, "pot": hand.pot_total()},
        after={"hand": number, "stacks": restored},
    )
    await actor.store.save_table(actor.table_id, {}, note)
    await actor.commit(Void(VOIDED, detail=command.reason))
    return {"hand": number, "stacks": restored}


async def close(actor: Port, command: cmd.CloseTable) -> dict[str, Any]:
    _cash_table(actor, "close")
    _open(actor)
    reason = command.reason or ""
    in_hand = _in_hand(actor)
    seated = {s.player: s.stack for s in actor.table.seats if s is not None}
    after_hand = in_hand and not command.void
    note = _note(
        command,
        AuditAction.TABLE_CLOSE,
        before={"status": "open", "players": seated},
        after={"status": "closing" if after_hand else "closed", "void": command.void},
    )
    await actor.store.save_table(actor.table_id, {"closing_reason": reason}, note)
    actor.ops.closing = reason
    actor.clocks.cancel_next_hand()
    if after_hand:
        actor.publisher.publish(OperatorClosed(reason=reason, after_hand=True))
        return {"after_hand": True, "cashed_out": {}}
    if in_hand:  # void: the hand ends now, and the table closes as it ends (between_hands)
        await actor.commit(Void(VOIDED, detail=reason))
    else:
        await shut(actor)
    return {"after_hand": False, "cashed_out": dict(actor.ops.cashed_out)}


HANDLERS: dict[type[cmd.TableCommand], Callable[[Port, Any], Awaitable[dict[str, Any]]]] = {
    cmd.ChangeSettings: change_settings,
    cmd.PauseTable: pause,
    cmd.ResumeTable: resume,
    cmd.VoidHand: void,
    cmd.CloseTable: close,
}


# ---------------------------------------------------------------------- between hands


async def between_hands(actor: Port) -> None:
    """No hand in progress: play the settings that waited for it; close if asked to."""
    if actor.shut:
        return
    if actor.ops.pending is not None:
        _play_settings(actor)
    if actor.ops.closing is not None:
        await shut(actor)


def _play_settings(actor: Port) -> None:
    values = actor.ops.pending
    assert values is not None
    try:
        edit.apply(values, actor.table, actor.settings)
    except Refusal as refusal:  # a seat in use (taken meanwhile): tried again after the hand
        log.warning("table %s: new settings wait (%s)", actor.table_id, refusal.message)
        return
    actor.ops.pending = None
    if actor.mix is not None:  # the rules a table that stopped rotating plays
        actor.mix.base = actor.table.config
    event = edit.settings_event(actor.table.config, len(actor.table.seats), actor.settings)
    actor.publisher.publish(event)


async def shut(actor: Port) -> None:
    """Close the table now (no hand in progress): the waiting list is told, everyone is
    cashed out to their wallet, the table's row says closed, and the actor stops."""
    table = actor.table
    for player in list(table.waiting):
        actor.tell(table.leave_waiting_list(player))
    for number, seat in enumerate(table.seats):
        if seat is None:
            continue
        chips = table.leave(number)
        assert chips is not None  # no hand in progress
        actor.ops.cashed_out[seat.player] = chips
        await actor.settle_departure(Departure(number, seat.player, chips))
    await actor.journal.persist(
        "close",
        lambda: actor.store.save_table(
            actor.table_id, {"status": "closed", "closed_at": utcnow()}, None
        ),
    )
    actor.publisher.publish(OperatorClosed(reason=actor.ops.closing or "", after_hand=False))
    actor.close_for_good()
