"""A mixed table: the rotation of games its actor deals, each hand's game picked at its start.

The table's row keeps the rotation an operator set and the first hand dealt under it
(``{"rotation": ..., "from_hand": N}``); each hand keeps its position in the rotation, written
ahead with it and recorded with it (``LiveHandState.rotation``, ``FinishedHand.rotation``).
The game of the next hand is :func:`engine.rotation.schedule` of the rotation and the last
hand's position, so a table restarted or taken over by another node deals the same game at
the same count: :class:`TableRotation` is built again from the journal's last hand
(:meth:`TableRotation.remember`). A hand in progress never changes game: the table's rules
are switched between hands only (:func:`switch_game`).

An operator's new rotation (:func:`set_rotation`) is dealt from the first hand of the next
turn, so the game in play finishes its turn; or from the next hand when the table is idle
(no hand in play and none about to be dealt). Until then the game in play goes on under the
rules its last hand was dealt with. A new rotation starts with its first game. A rotation
taken away (``null``) leaves the table its own rules (``config``) from the switch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from engine.errors import ConfigError
from engine.protocol import ErrorCode
from engine.rotation import Position, Rotation, Scheduled, hands_to_switch, schedule
from engine.table import Table
from engine.table_events import GameAnnounced, RotationChanged
from engine.variants import TableConfig
from server.accounts.audit_log import AuditAction
from server.store.records import AuditNote
from server.store.table_config import config_from_json
from server.table import commands as cmd
from server.table.journal import Journal
from server.table.ports import CommandRefused, TableStore
from server.table.publisher import Publisher

__all__ = ["TableRotation", "set_rotation", "switch_game"]


@dataclass(slots=True)
class TableRotation:
    """Where a mixed table stands: the rotation in force from ``from_hand`` (None: the
    table's own rules, ``base``, from then), and the last hand dealt, as its journal says."""

    rotation: Rotation | None
    from_hand: int
    base: TableConfig  # the table's own rules (its row's config)
    last_number: int = 0  # the last hand dealt (0: none under any rotation)
    last: Position | None = None  # its position (None: not a mixed hand)
    last_config: TableConfig | None = None  # the rules it was dealt under
    game: Scheduled | None = None  # the game of the hand in progress, or the last dealt
    told: dict[str, Any] | None = None  # what the last ``game`` event said

    @classmethod
    def of_record(cls, data: Mapping[str, Any] | None, base: TableConfig) -> TableRotation | None:
        """From the table row's ``rotation`` column (None: a table of one game)."""
        if data is None:
            return None
        spec = data.get("rotation")
        rotation = Rotation.from_dict(spec) if spec is not None else None
        return cls(rotation, int(data.get("from_hand", 1)), base)

    def remember(
        self, number: int, position: Mapping[str, Any] | None, config: Mapping[str, Any] | None
    ) -> None:
        """The journal's last hand: its number, its position and rules as stored (what a
        snapshot shows of its game too)."""
        if number <= 0:
            return
        self.last_number = number
        self.last = Position.from_dict(position) if position is not None else None
        try:
            self.last_config = config_from_json(config) if config is not None else None
        except ConfigError:  # rules this code no longer plays: the turn cannot go on
            self.last_config = None
        if self.last is not None and self.last_config is not None:
            following = self._following(number, self.last, self.last_config)
            self.game = Scheduled(self.last, self.last_config, following)
            self.told = announced_game(number, self.game).encode()
        else:
            self.game, self.told = None, None

    def _following(self, number: int, position: Position, config: TableConfig) -> TableConfig:
        """The game after the turn of hand ``number`` (at ``position``): what its last hand
        says comes next."""
        if not position.of:
            return config
        end = number + position.of - position.hand
        last_of_turn = Position(position.game, position.of, position.of, position.level)
        ahead = replace(self, last_number=end, last=last_of_turn, last_config=config)
        return ahead.next_config(end + 1)

    # ------------------------------------------------------------------ the next hand

    def _restarts(self, number: int) -> bool:
        """Hand ``number`` begins the rotation set last (its first game's first hand)."""
        return number >= self.from_hand and self.last_number < self.from_hand

    def next_config(self, number: int) -> TableConfig:
        """The rules hand ``number`` is dealt under (the game does not hang on the players)."""
        scheduled = self.schedule(number, players=2)
        return scheduled.config if scheduled is not None else self.base

    def schedule(self, number: int, *, players: int) -> Scheduled | None:
        """Hand ``number``'s game, dealt to ``players`` seats (None: not a mixed hand)."""
        rotation, last = self.rotation, self.last
        if self._restarts(number):
            return schedule(rotation, None, players=players) if rotation is not None else None
        if number < self.from_hand:
            # The turn in play goes on under the rules of its last hand, up to the switch.
            config = self.last_config
            if last is None or config is None or last.last_of_turn:
                return schedule(rotation, None, players=players) if rotation else None
            following = rotation.games[0] if rotation is not None else self.base
            position = Position(last.game, last.hand + 1, last.of, last.level)
            return Scheduled(position, config, following)
        if rotation is None:
            return None
        return schedule(rotation, last, players=players)

    def dealt(self, number: int, scheduled: Scheduled | None) -> GameAnnounced | None:
        """Hand ``number`` is dealt at ``scheduled``: remembered, and what to tell of it."""
        self.last_number = number
        self.game = scheduled
        if scheduled is None:
            self.last = self.last_config = None
            return None
        self.last, self.last_config = scheduled.position, scheduled.config
        event = announced_game(number, scheduled)
        self.told = event.encode()
        return event

    def position(self, number: int) -> dict[str, Any] | None:
        """Hand ``number``'s position as the journal keeps it (None: not a mixed hand)."""
        if self.last is None or self.last_number != number:
            return None
        return self.last.to_dict()

    # ------------------------------------------------------------------ an operator's edit

    def switch_hand(self, next_number: int, *, idle: bool) -> int:
        """The first hand a rotation set now is dealt under: the next switch, or the next hand
        when the table is idle (or its game's turn ends with the hand in play or last dealt)."""
        if idle or self.last is None:
            return next_number
        left = hands_to_switch(self.last)
        if left is None:  # a level's end cannot be counted in hands: the next hand
            return next_number
        return self.last_number + left + 1

    def check_seats(self, number: int, seats: int) -> None:
        """``seats`` fit every game the table may deal from hand ``number`` (``bad_rotation``
        if not): the game of a turn in play, which goes on up to the switch to a rotation set
        since, and the rotation's. The routes judge a change on the row they read, which an
        operator's other change may have changed since."""
        rotation = self.rotation.games if self.rotation is not None else ()
        _check_seats((self.next_config(number), *rotation), seats)

    def picture(self) -> dict[str, Any]:
        """The rotation as a snapshot shows it: its games, its unit, from which hand, and the
        game of the hand in progress (or the last dealt) as the ``game`` event told it."""
        rotation = self.rotation
        return {
            "games": [
                {"variant": g.variant.name, "title": g.variant.title}
                for g in (rotation.games if rotation is not None else ())
            ],
            "unit": rotation.unit if rotation is not None else None,
            "hands": rotation.hands if rotation is not None and rotation.unit == "hands" else None,
            "from_hand": self.from_hand,
            "game": self.told,
        }

    def record(self) -> dict[str, Any]:
        """The table row's ``rotation`` column."""
        spec = self.rotation.to_dict() if self.rotation is not None else None
        return {"rotation": spec, "from_hand": self.from_hand}


def _check_seats(games: Sequence[TableConfig], seats: int) -> None:
    for config in games:
        variant = config.variant
        if seats > variant.max_players:
            raise CommandRefused(
                f"seats: {variant.title} seats at most {variant.max_players}, the table {seats}",
                code=ErrorCode.BAD_ROTATION,
            )


def announced_game(number: int, scheduled: Scheduled) -> GameAnnounced:
    """What the table tells of hand ``number``'s game (the ``game`` event)."""
    position = scheduled.position
    return GameAnnounced(
        hand=number,
        variant=scheduled.config.variant.name,
        title=scheduled.config.variant.title,
        game_hand=position.hand,
        game_hands=position.of,
        hands_left=scheduled.hands_left,
        next_variant=scheduled.next_config.variant.name,
        next_title=scheduled.next_config.variant.title,
        text=scheduled.text,
    )


def switch_game(table: Table, mix: TableRotation | None, number: int) -> None:
    """Between hands: the table's rules become those hand ``number`` is dealt under (its
    seat count and seating policy kept)."""
    if mix is None:
        return
    config = mix.next_config(number)
    if config != table.config:
        table.reconfigure(config, len(table.seats), table.rules)


# ---------------------------------------------------------------------- the operator's command


class Pending(Protocol):
    """An operator's new settings waiting for the hand's end (``operators.TableOps``)."""

    @property
    def pending(self) -> dict[str, Any] | None: ...


class Port(Protocol):
    """What an operator's change of the rotation needs of the table's actor."""

    table_id: int
    table: Table
    mix: TableRotation | None
    publisher: Publisher
    journal: Journal

    @property
    def store(self) -> TableStore: ...

    @property
    def hand_number(self) -> int: ...

    @property
    def ops(self) -> Pending: ...

    @property
    def holds_play(self) -> bool: ...


async def set_rotation(actor: Port, command: cmd.SetRotation) -> dict[str, Any]:
    """A new rotation (or none), judged already (``bad_rotation``), from the next switch;
    written with its audit entry, then told (``rotation_changed``)."""
    table = actor.table
    base = actor.mix.base if actor.mix is not None else table.config
    spec = command.rotation
    rotation = Rotation.from_dict(spec) if spec is not None else None
    if rotation is not None:  # the seats now, and those new settings bring at the hand's end
        pending = actor.ops.pending
        seats = max(len(table.seats), int(pending["seats"]) if pending is not None else 0)
        _check_seats(rotation.games, seats)
    hand = table.hand
    in_hand = hand is not None and not hand.is_over()
    idle = not in_hand and (actor.holds_play or len(table.dealt_in()) < 2)
    mix = actor.mix or TableRotation(None, 1, base, last_number=actor.hand_number)
    before = mix.record() if actor.mix is not None else None
    from_hand = mix.switch_hand(actor.hand_number + 1, idle=idle)
    changed = TableRotation(
        rotation,
        from_hand,
        base,
        last_number=mix.last_number,
        last=mix.last,
        last_config=mix.last_config,
        game=mix.game,
        told=mix.told,
    )
    note = AuditNote(
        command.operator_id,
        command.player,
        AuditAction.TABLE_ROTATION.value,
        command.reason,
        before={"rotation": before},
        after={"rotation": changed.record()},
    )
    await actor.store.save_table(actor.table_id, {"rotation": changed.record()}, note)
    actor.mix = changed
    actor.publisher.publish(
        RotationChanged(
            games=tuple(g.variant.name for g in rotation.games) if rotation is not None else (),
            unit=rotation.unit if rotation is not None else None,
            hands=rotation.hands if rotation is not None and rotation.unit == "hands" else None,
            from_hand=from_hand,
        )
    )
    return {"from_hand": from_hand, "after_hand": from_hand > actor.hand_number + 1}
