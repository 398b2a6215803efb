"""A player's commands to a table (and its node's hold and play-on), as its actor carries them
out: kept beside the actor rather than in it, the handlers reaching it through :class:`Port`.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.events import Event
from engine.protocol import ErrorCode
from engine.table import Departure, Table
from engine.table_events import ChatSaid, Leaving
from server.table import commands as cmd
from server.table import dealing, operators
from server.table.journal import Journal
from server.table.moves import Change, PlayerAction
from server.table.ports import CommandRefused, TableSettings
from server.table.publisher import Publisher

# The answers to a player's last actions, for a retry of one of them (the client library
# retries an action for seconds, over a reconnect): about two hands of a player's actions.
# Each is kept as long as the player plays that many more; 64 held every player's last ten
# minutes of actions, the node's memory growing all that time (docs/benchmarks.md).
REMEMBERED_ACTION_IDS = 16


@dataclass(slots=True)
class PlayerState:
    """What the table keeps of a player beyond the seat: time bank, when they sat out,
    how many connections they have here, until when their time is paid, and the answers to
    their recent actions."""

    time_bank: float
    sat_out_at: float | None = None
    connections: int = 0
    time_paid_until: float | None = None  # time collection: the paid period's end (wall clock)
    check_when_free: bool = False  # sat out during a hand: checks where free (server.table.absence)
    action_ids: OrderedDict[str, int] = field(default_factory=OrderedDict)  # id: its seq

    def remember(self, action_id: str, seq: int) -> None:
        """An action's answer for its retries (its ``seq``), the latest
        :data:`REMEMBERED_ACTION_IDS` kept."""
        self.action_ids[action_id] = seq
        while len(self.action_ids) > REMEMBERED_ACTION_IDS:
            self.action_ids.popitem(last=False)


class Port(Protocol):
    """What a player's commands need of the table's actor."""

    table: Table
    settings: TableSettings
    ops: operators.TableOps
    publisher: Publisher
    journal: Journal
    clock: Callable[[], float]
    players: dict[str, PlayerState]
    next_deal: dealing.NextDeal | None
    play_held: bool
    between_hands: asyncio.Event

    @property
    def run_number(self) -> int: ...

    def player_state(self, player: str) -> PlayerState: ...

    def tell(self, events: list[Event]) -> None: ...

    def schedule_next_hand(self, *, after_showdown: bool = False) -> None: ...

    def snapshot(self, player: str | None) -> dict[str, Any]: ...

    async def commit(self, change: Change | None = None) -> dict[str, Any] | None: ...

    async def settle_departure(self, departure: Departure) -> None: ...


async def sit(actor: Port, command: cmd.Sit) -> dict[str, Any]:
    player, chips = command.player, command.buy_in
    seat = actor.table.choose_seat(player, chips, command.seat)
    actor.ops.check_seat(seat)
    await actor.journal.buy_in(player, chips, seat=seat)
    events = actor.table.sit(seat, player, chips)
    actor.player_state(player).sat_out_at = None
    actor.tell(events)
    actor.schedule_next_hand()
    return {"seat": seat, "stack": chips}


async def add_chips(actor: Port, command: cmd.AddChips) -> dict[str, Any]:
    seat = actor.table.seated(command.player)
    actor.table.check_add_chips(seat, command.amount)
    await actor.journal.buy_in(command.player, command.amount, seat=seat)
    actor.tell(actor.table.add_chips(seat, command.amount))
    actor.schedule_next_hand()
    occupant = actor.table.seats[seat]
    assert occupant is not None
    return {"seat": seat, "stack": occupant.stack, "pending": occupant.pending_chips}


async def sit_out(actor: Port, command: cmd.SitOut) -> dict[str, Any]:
    seat = actor.table.seated(command.player)
    events = actor.table.sit_out(seat, next_hand=command.next_hand)
    occupant = actor.table.seats[seat]
    assert occupant is not None
    state = actor.player_state(command.player)
    state.check_when_free = command.check_when_free
    if occupant.sitting_out:
        state.sat_out_at = actor.clock()
    actor.tell(events)
    # Sat out during the hand: the table acts for them at their turns (server.table.absence),
    # at once if it is theirs now (before the reply, which follows what it caused).
    await actor.commit()
    return {
        "seat": seat,
        "sitting_out": occupant.sitting_out,
        "after_hand": occupant.sit_out_next_hand,
    }


async def sit_in(actor: Port, command: cmd.SitIn) -> dict[str, Any]:
    seat = actor.table.seated(command.player)
    actor.tell(actor.table.sit_in(seat))
    actor.player_state(command.player).sat_out_at = None
    actor.schedule_next_hand()
    return {"seat": seat}


async def leave(actor: Port, command: cmd.Leave) -> dict[str, Any]:
    player = command.player
    if actor.table.tournament:
        return await leave_tournament(actor, actor.table.seated(player))
    if player in actor.table.waiting:
        actor.tell(actor.table.leave_waiting_list(player))
        if actor.table.seat_of(player) is None:
            return {"left_waiting_list": True}
    seat = actor.table.seated(player)
    chips = actor.table.leave(seat)
    if chips is None:
        actor.publisher.publish(Leaving(seat=seat))
        await actor.commit()  # their turn now: folded at once
        return {"seat": seat, "after_hand": True}
    await actor.settle_departure(Departure(seat, player, chips))
    return {"seat": seat, "cashed_out": chips}


class Leaver(Protocol):
    """What a tournament player's leave (or an operator's removal) needs of the actor."""

    table: Table

    def tell(self, events: list[Event]) -> None: ...

    async def commit(self, change: Change | None = None) -> dict[str, Any] | None: ...


async def leave_tournament(actor: Leaver, seat: int, removed: str | None = None) -> dict[str, Any]:
    """At a tournament table a player who leaves (or whom an operator or the director
    removes: ``removed``) sits out instead: no leaving with chips, blinded off until back or
    out (``engine.table``); their turn in the hand in play, if it is now, is played at once
    (``server.table.absence``)."""
    actor.tell(actor.table.leave_tournament(seat, removed=removed))
    await actor.commit()
    return {"seat": seat, "sitting_out": True}


async def join_waiting_list(actor: Port, command: cmd.JoinWaitingList) -> dict[str, Any]:
    position, events = actor.table.join_waiting_list(command.player)
    actor.tell(events)
    return {"position": position}


async def chat(actor: Port, command: cmd.Chat) -> dict[str, Any]:
    if not actor.settings.spectator_chat and actor.table.seat_of(command.player) is None:
        raise CommandRefused("only players seated here may chat", code=ErrorCode.CHAT_NOT_ALLOWED)
    actor.publisher.publish(ChatSaid(player=command.player, text=command.text))
    return {}


async def snapshot(actor: Port, command: cmd.Snapshot) -> dict[str, Any]:
    snapshot = actor.snapshot(command.player or None)
    if command.reply_to is None:
        return snapshot
    # In line with the events: the listener misses none after it, sees none before it;
    # the command's own answer is a receipt, so the snapshot travels once.
    actor.publisher.reply(command.reply_to, command.reply_id, snapshot)
    return {"seq": snapshot["seq"]}


async def client_seed(actor: Port, command: cmd.ClientSeed) -> dict[str, Any]:
    """A seated player's seed for the next hand, whose commitment is already published
    (docs/fairness.md); the last seed a player sends before the deal counts. One meant
    for a hand dealt already goes to the next (its commitment was out before it came);
    the reply names the hand it went to."""
    actor.table.seated(command.player)
    deal = actor.next_deal
    if deal is None or (command.hand is not None and command.hand > deal.number):
        waiting = f"hand {deal.number}" if deal is not None else "no hand yet"
        raise CommandRefused(
            f"client seeds are taken for the committed next hand only ({waiting})",
            code=ErrorCode.SEED_WINDOW_CLOSED,
        )
    deal.seeds[command.player] = command.seed
    return {"hand": deal.number}


async def presence(actor: Port, command: cmd.Presence) -> dict[str, Any]:
    """A connection of the player's came or went (a player may have several). One told
    to a given run of the table is refused by any other: a node's actor that has not
    yet learnt the table moved must not count it."""
    if command.run is not None and command.run != actor.run_number:
        raise CommandRefused(
            "the table moved to another node; try again", code=ErrorCode.TABLE_MOVED
        )
    state = actor.player_state(command.player)
    state.connections = max(0, state.connections + (1 if command.connected else -1))
    if not state.connections and actor.table.seat_of(command.player) is None:
        del actor.players[command.player]  # a spectator gone: nothing to remember
    return {"run": actor.run_number}


async def hold_play(actor: Port, command: cmd.HoldPlay) -> dict[str, Any]:
    actor.play_held = True
    return {"between_hands": actor.between_hands.is_set()}


async def play_on(actor: Port, command: cmd.PlayOn) -> dict[str, Any]:
    actor.play_held = False
    actor.schedule_next_hand()
    return {}


async def act(actor: Port, command: cmd.Act) -> dict[str, Any]:
    seat = actor.table.seated(command.player)
    state = actor.player_state(command.player)
    remembered = state.action_ids.get(command.action_id)
    if remembered is not None:
        return {"seq": remembered, "accepted": True}  # a retry: the same answer, acted once
    hand = actor.table.hand
    if hand is None or hand.is_over():
        raise CommandRefused("no hand is being played", code=ErrorCode.NO_HAND)
    reply = await actor.commit(PlayerAction(seat, command.kind, command.amount, command.action_id))
    assert reply is not None
    return reply


HANDLERS: dict[type[cmd.TableCommand], Callable[[Port, Any], Awaitable[dict[str, Any]]]] = {
    cmd.Sit: sit,
    cmd.AddChips: add_chips,
    cmd.SitOut: sit_out,
    cmd.SitIn: sit_in,
    cmd.Leave: leave,
    cmd.JoinWaitingList: join_waiting_list,
    cmd.Chat: chat,
    cmd.Act: act,
    cmd.Snapshot: snapshot,
    cmd.Presence: presence,
    cmd.ClientSeed: client_seed,
    cmd.HoldPlay: hold_play,
    cmd.PlayOn: play_on,
}
