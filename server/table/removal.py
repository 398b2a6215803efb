"""An operator removes a player from a table (a kick, a suspension): the table's handler of
:class:`server.table.commands.Remove`, kept beside the actor rather than in it.

The player leaves as by their own ``leave``, with the cause in the events: at once when they
are not in the hand in play (``seat_left`` with ``removed``, cashed out), else after it
(``leaving`` with ``removed`` now, ``seat_left`` when the hand is over). While the hand lasts
the table acts for them at their turns, at once (:mod:`server.table.absence`: a forced bring-in,
else a fold); their chips go back to their wallet by the ledger's one cash-out path. At a
tournament's table nobody leaves with chips: the player sits out, blinded off, as by their own
``leave`` there (taking them out of the tournament is its director's, who removes a
player it disqualifies this way: ``cause`` ``disqualified``, and they may not sit in again).
"""

from __future__ import annotations

from typing import Any, Protocol

from engine.events import Event
from engine.protocol import ErrorCode
from engine.table import Departure, Table
from engine.table_events import Leaving
from server.table import commands as cmd
from server.table import player_commands
from server.table.moves import Change
from server.table.ports import CommandRefused
from server.table.publisher import Publisher


class Port(Protocol):
    """What a removal needs of the table's actor."""

    table_id: int
    table: Table
    publisher: Publisher

    def tell(self, events: list[Event]) -> None: ...

    async def commit(self, change: Change | None = None) -> dict[str, Any] | None: ...

    async def settle_departure(self, departure: Departure) -> None: ...


async def remove(actor: Port, command: cmd.Remove) -> dict[str, Any]:
    player = command.player
    seat = actor.table.seat_of(player)
    if seat is None:
        raise CommandRefused(
            f"{player} does not sit at table {actor.table_id}", code=ErrorCode.NOT_SEATED
        )
    if actor.table.tournament:
        return await player_commands.leave_tournament(actor, seat, removed=command.cause)
    chips = actor.table.leave(seat, removed=command.cause)
    if chips is None:
        actor.publisher.publish(Leaving(seat=seat, removed=command.cause))
        await actor.commit()  # their turn now: played at once
        return {"seat": seat, "after_hand": True}
    await actor.settle_departure(Departure(seat, player, chips))
    return {"seat": seat, "cashed_out": chips}
