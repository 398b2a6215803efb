"""A mixed tournament's table: the game of each hand is the game of the level it is dealt at.

The director tells a table each level with its stakes (``SetStakes`` with its ``level``: the
level's number, its game and the next level's, ``engine.tournament.games.LevelGame``); the
table writes the level's rules (game and stakes) and the level to its row before it plays
them, and deals them from its next hand: a hand in progress keeps its game, switched between
hands only (:func:`server.table.mixed.switch_game`). Every table is told a level before the
permit of its first hand at it, so all switch at the same level change.

:class:`LevelGames` is a :class:`~server.table.mixed.TableRotation` whose next game is the
level's: each hand keeps its place (a rotation ``Position`` of unit ``level``: the level and
the hand's count there) in the journal like a mixed cash table's, the ``game`` event tells
it ("Razz, level 4, hand 2", the next level's game), and a node taking the table over reads
the level from the row (``rotation``: ``{"level": ...}``) and the count from the last hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from engine.rotation import Position, Scheduled
from engine.tournament.games import LevelGame, level_position
from engine.variants import TableConfig, find_variant
from server.table.mixed import TableRotation

__all__ = ["LevelGames"]


@dataclass(slots=True)
class LevelGames(TableRotation):
    """The level a tournament table deals its next hand at (``level``), ``base`` its rules
    (the level's game and stakes)."""

    level: LevelGame | None = None

    @classmethod
    def of_level(cls, data: Mapping[str, Any] | None, base: TableConfig) -> LevelGames | None:
        """From the table row's ``rotation`` column as :meth:`record` wrote it (None: the
        table of a tournament of one game)."""
        if data is None or data.get("level") is None:
            return None
        return cls(None, 1, base, level=LevelGame.from_dict(data["level"]))

    def at_level(self, level: LevelGame, base: TableConfig) -> LevelGames:
        """The same table told ``level``, whose rules are ``base``: its next hand's."""
        return replace(self, level=level, base=base)

    def record(self) -> dict[str, Any]:
        """The table row's ``rotation`` column."""
        level = self.level.to_dict() if self.level is not None else None
        return {"rotation": None, "from_hand": self.from_hand, "level": level}

    def next_config(self, number: int) -> TableConfig:
        return self.base

    def schedule(self, number: int, *, players: int) -> Scheduled | None:
        """Hand ``number``'s game: the level's, counted on from the last hand's place."""
        level = self.level
        if level is None:
            return None
        position = level_position(self.last, level.level)
        return Scheduled(
            position, self.base, replace(self.base, variant=find_variant(level.next_game))
        )

    def _following(self, number: int, position: Position, config: TableConfig) -> TableConfig:
        level = self.level
        if level is None or position.level != level.level:
            return config
        return replace(config, variant=find_variant(level.next_game))

    def picture(self) -> dict[str, Any]:
        """As a snapshot shows it: the level's game and the next level's, the level, and the
        game of the hand in progress (or the last dealt) as the ``game`` event told it."""
        level = self.level
        games = [] if level is None else list(dict.fromkeys((level.game, level.next_game)))
        return {
            "games": [{"variant": name, "title": find_variant(name).title} for name in games],
            "unit": "level",
            "hands": None,
            "from_hand": self.from_hand,
            "game": self.told,
            "level": level.level if level is not None else None,
        }
