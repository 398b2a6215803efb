"""A tournament's table as its director drives it, and what differs there for its players.

The director (``server.tournaments``) seats players with their tournament chips, takes them
away between their hands, sets each level's stakes and lets the table deal one hand at a
time: typed records of :mod:`server.table.commands` (``SeatEntrant``, ``GiveUpPlayer``,
``SetStakes``, ``DealNext``, ``AddEntrantChips``) routed to the node that runs the table,
carried out here through :class:`Port`, what they need of the actor. Each is written through
the table's fenced store before it is played or told: a seat's row with its chips (no ledger:
tournament chips are not money), the stakes in the table's rules, the permit in the table's
row, so a node taking the table over carries on as it was.

The permit (``DealNext``) is how the director holds its tables: a tournament table deals
hand N only once permitted N, after the pause between hands (counted from the hand's end,
or from the permit if that comes later); without one it waits between hands (moves, breaks,
a pause, hand-for-hand). A permit for a hand dealt already is answered and deals nothing, so
a director that resends after a crash never deals two hands; one for a later hand is refused.

For the players: leaving sits them out (no leaving with chips; blinded off until they come
back or are out: ``engine.table``), as does an operator's kick or suspension (a
disqualification is the director's); the sit-out limit does not apply.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Protocol

from engine.events import Event
from engine.protocol import ErrorCode
from engine.table import Table
from server.store.table_config import config_to_json
from server.table import commands as cmd
from server.table import edit
from server.table.journal import Journal
from server.table.player_commands import PlayerState
from server.table.ports import CommandRefused, TableSettings, TableStore
from server.table.publisher import Publisher


class Port(Protocol):
    """What the director's commands need of a tournament table's actor."""

    table_id: int
    tournament_id: int | None
    table: Table
    settings: TableSettings
    publisher: Publisher
    journal: Journal
    players: dict[str, PlayerState]
    permitted_hand: int | None

    @property
    def store(self) -> TableStore: ...

    @property
    def hand_number(self) -> int: ...

    def tell(self, events: list[Event]) -> None: ...

    def schedule_next_hand(self) -> None: ...


def awaits_permit(actor: Port) -> bool:
    """A tournament table between hands waits for the director's permit of its next hand."""
    return actor.tournament_id is not None and actor.permitted_hand != actor.hand_number + 1


def _director(actor: Port, command: cmd.DirectorCommand) -> None:
    if actor.tournament_id is None or command.tournament_id != actor.tournament_id:
        raise CommandRefused(
            f"table {actor.table_id} is not a table of tournament {command.tournament_id}",
            code=ErrorCode.TOURNAMENT_TABLE,
        )


async def seat_entrant(actor: Port, command: cmd.SeatEntrant) -> dict[str, Any]:
    """Seated at once, also during a hand (dealt from the next: never two hands at once)."""
    _director(actor, command)
    player, seat, stack = command.player, command.seat, command.stack
    events = actor.table.seat_player(seat, player, stack, sitting_out=command.sitting_out)
    try:
        await actor.journal.persist(
            "seat_entrant",
            lambda: actor.store.seat_entrant(actor.table_id, player, stack, seat=seat),
        )
    except Exception:
        actor.table.give_up_player(seat)  # not written: the table is as it was
        raise
    actor.tell(events)
    actor.schedule_next_hand()
    return {"seat": seat, "stack": stack, "sitting_out": command.sitting_out}


async def give_up_player(actor: Port, command: cmd.GiveUpPlayer) -> dict[str, Any]:
    """The player's seat row goes with every chip they hold there, to the director (who
    seats them elsewhere, or out). Refused while they are in the hand in play."""
    _director(actor, command)
    seat = actor.table.seated(command.player)
    transfer, events = actor.table.give_up_player(seat)
    try:
        await actor.journal.persist(
            "give_up_player",
            lambda: actor.store.give_up_seat(actor.table_id, transfer.player, transfer.chips),
        )
    except Exception:
        actor.table.seat_player(
            seat, transfer.player, transfer.chips, sitting_out=transfer.sitting_out
        )
        raise
    actor.players.pop(transfer.player, None)
    actor.tell(events)
    return {
        "player": transfer.player,
        "seat": seat,
        "chips": transfer.chips,
        "sitting_out": transfer.sitting_out,
    }


async def set_stakes(actor: Port, command: cmd.SetStakes) -> dict[str, Any]:
    """Played from the next hand; the table's rules are written so a takeover keeps them."""
    _director(actor, command)
    ante, bring_in, small, big = command.ante, command.bring_in, command.small_bet, command.big_bet
    # Refused here (bad_config) when the stakes cannot be played, before anything is written.
    config = replace(actor.table.config, ante=ante, bring_in=bring_in, small_bet=small, big_bet=big)
    await actor.journal.persist(
        "set_stakes",
        lambda: actor.store.save_table(actor.table_id, {"config": config_to_json(config)}, None),
    )
    actor.table.set_stakes(ante=ante, bring_in=bring_in, small_bet=small, big_bet=big)
    table = actor.table
    actor.publisher.publish(edit.settings_event(table.config, len(table.seats), actor.settings))
    hand = table.hand
    return {"after_hand": hand is not None and not hand.is_over()}


async def deal_next(actor: Port, command: cmd.DealNext) -> dict[str, Any]:
    """``dealt``: the hand was dealt already (nothing more is); else it is dealt next."""
    _director(actor, command)
    number, next_hand = command.number, actor.hand_number + 1
    if number < next_hand:
        return {"hand": number, "dealt": True}
    if number > next_hand:
        raise CommandRefused(
            f"table {actor.table_id} deals hand {next_hand} next, not {number}",
            code=ErrorCode.NOT_NEXT_HAND,
        )
    if actor.permitted_hand != number:
        await actor.journal.persist(
            "deal_next",
            lambda: actor.store.save_table(actor.table_id, {"permitted_hand": number}, None),
        )
        actor.permitted_hand = number
        actor.schedule_next_hand()
    return {"hand": number, "dealt": False}


async def add_entrant_chips(actor: Port, command: cmd.AddEntrantChips) -> dict[str, Any]:
    """A rebuy's or an add-on's chips, between the player's hands (the director adds them
    only then); the seat row written to the stack they make first. ``added``: False when
    the player held that stack already (a resent command)."""
    _director(actor, command)
    player, chips, stack = command.player, command.chips, command.stack
    seat = actor.table.seated(player)
    occupant = actor.table.seats[seat]
    assert occupant is not None
    held = occupant.stack + occupant.pending_chips
    if held == stack:
        return {"seat": seat, "stack": stack, "added": False}
    if held + chips != stack:
        raise CommandRefused(
            f"{player} holds {held} chips at table {actor.table_id}, not {stack - chips}",
            code=ErrorCode.BAD_AMOUNT,
        )
    if actor.table.in_hand(seat):
        raise CommandRefused(
            f"{player} is in the hand in play: chips bought are added between hands",
            code=ErrorCode.HAND_IN_PROGRESS,
        )
    await actor.journal.persist(
        "add_entrant_chips",
        lambda: actor.store.add_entrant_chips(actor.table_id, player, chips, stack=stack),
    )
    actor.tell(actor.table.add_chips(seat, chips))
    actor.schedule_next_hand()
    return {"seat": seat, "stack": stack, "added": True}


HANDLERS: dict[type[cmd.TableCommand], Callable[[Port, Any], Awaitable[dict[str, Any]]]] = {
    cmd.AddEntrantChips: add_entrant_chips,
    cmd.SeatEntrant: seat_entrant,
    cmd.GiveUpPlayer: give_up_player,
    cmd.SetStakes: set_stakes,
    cmd.DealNext: deal_next,
}
