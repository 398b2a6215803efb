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

A table with nobody left (it broke, or the tournament is over) is closed
(``CloseTournamentTable``) the way an operator's close ends a cash table
(:func:`server.table.operators.shut`): the row says closed, its watchers are told, the actor
stops and the cardroom retires it (its lease given back, the other nodes told, every later
command refused ``table_shut``, which tells a director that resends it the table is closed).

For the players: leaving sits them out (no leaving with chips; blinded off until they come
back or are out: ``engine.table``), as does an operator's kick or suspension (a
disqualification is the director's); the sit-out limit does not apply.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Protocol

from engine.protocol import ErrorCode
from engine.tournament.games import LevelGame
from engine.variants import find_variant
from server.store.table_config import config_to_json
from server.table import commands as cmd
from server.table import edit, operators
from server.table.level_games import LevelGames
from server.table.mixed import switch_game
from server.table.player_commands import PlayerState
from server.table.ports import CommandRefused


class Port(operators.Port, Protocol):
    """What the director's commands need of a tournament table's actor: what an operator's
    need (closing is theirs), and the tournament's."""

    tournament_id: int | None
    players: dict[str, PlayerState]
    permitted_hand: int | None


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
    """Played from the next hand; the table's rules are written so a takeover keeps them. A
    mixed tournament's level brings its game, dealt from the next hand too
    (``server.table.level_games``): the level is written with the rules."""
    _director(actor, command)
    ante, bring_in, small, big = command.ante, command.bring_in, command.small_bet, command.big_bet
    table = actor.table
    hand = table.hand
    in_hand = hand is not None and not hand.is_over()
    level = LevelGame.from_dict(command.level) if command.level is not None else None
    # Refused here (bad_config) when the stakes cannot be played, before anything is written.
    config = replace(table.config, ante=ante, bring_in=bring_in, small_bet=small, big_bet=big)
    values: dict[str, Any] = {}
    mix = actor.mix
    if level is not None:
        config = replace(config, variant=find_variant(level.game))
        if len(table.seats) > config.variant.max_players:
            raise CommandRefused(
                f"{config.variant.title} seats at most {config.variant.max_players}",
                code=ErrorCode.BAD_SEAT_COUNT,
            )
        mix = (mix if isinstance(mix, LevelGames) else LevelGames(None, 1, config)).at_level(
            level, config
        )
        values = {"variant": level.game, "rotation": mix.record()}
    values["config"] = config_to_json(config)
    await actor.journal.persist(
        "set_stakes", lambda: actor.store.save_table(actor.table_id, values, None)
    )
    table.set_stakes(ante=ante, bring_in=bring_in, small_bet=small, big_bet=big)
    if level is not None:
        actor.mix = mix
        if not in_hand:  # between hands: the level's game at once (else from the next hand)
            switch_game(table, mix, actor.hand_number + 1)
    actor.publisher.publish(edit.settings_event(table.config, len(table.seats), actor.settings))
    return {"after_hand": in_hand}


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


async def close_table(actor: Port, command: cmd.CloseTournamentTable) -> dict[str, Any]:
    """Closed for good, as an operator's close ends a cash table between hands (nobody is
    there to cash out). Refused while anyone is seated: the director takes them away first."""
    _director(actor, command)
    seated = sorted(s.player for s in actor.table.seats if s is not None)
    if seated:
        raise CommandRefused(
            f"table {actor.table_id} still seats {', '.join(seated)}: take them away first",
            code=ErrorCode.SEATS_IN_USE,
        )
    actor.ops.closing = command.reason
    actor.clocks.cancel_next_hand()
    await operators.shut(actor)
    return {"closed": True}


HANDLERS: dict[type[cmd.TableCommand], Callable[[Port, Any], Awaitable[dict[str, Any]]]] = {
    cmd.AddEntrantChips: add_entrant_chips,
    cmd.SeatEntrant: seat_entrant,
    cmd.GiveUpPlayer: give_up_player,
    cmd.SetStakes: set_stakes,
    cmd.DealNext: deal_next,
    cmd.CloseTournamentTable: close_table,
}
