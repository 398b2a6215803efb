"""A mixed tournament's games by level: the structure sheet, and each hand's game at a table.

A mixed tournament's levels name their games (``Level.game``). What a director's structure
sheet prints, level by level (game, ante, bring-in, limits, length) and the breaks between,
is :func:`sheet`; :func:`rotated` makes a structure whose levels play a rotation of games in
turn, one level each (a stud mix: stud, razz, stud hi-lo, stud, ...).

A table is told a level's game with its stakes (:class:`LevelGame`: the level's number, its
game and the next level's) and deals it from its next hand: a hand in progress keeps its
game, and every table switches at the same level change since each is told the level before
the permit of its first hand at it (``engine.tournament.run``). Each hand's place is a
rotation :class:`~engine.rotation.Position` of unit ``level`` (:func:`level_position`): the
level it was dealt at and its count there, kept with the hand in the table's journal, so a
table taken over counts on from it.

>>> from engine.tournament.structure import Level, Structure
>>> mix = rotated(Structure(1500, (Level(5, 10, 30, 60, hands=4), Level(10, 15, 50, 100, hands=4),
...                                Level(15, 25, 75, 150, hands=4))), ("seven_card_stud", "razz"))
>>> [level.game for level in mix.levels]
['seven_card_stud', 'razz', 'seven_card_stud']
>>> first = level_position(None, 1)
>>> level_position(first, 1), level_position(first, 2)
(Position(game=0, hand=2, of=0, level=1), Position(game=1, hand=1, of=0, level=2))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from engine.rotation import Position
from engine.tournament.spec import TournamentSpec
from engine.tournament.structure import Break, Level, Structure
from engine.variants import find_variant


@dataclass(frozen=True, slots=True)
class SheetLine:
    """A line of the structure sheet: a level (its number, game, stakes and length) or a
    break (``level`` None: its minutes alone)."""

    level: int | None
    game: str | None
    title: str | None  # the game as players say it ("Razz")
    ante: int | None
    bring_in: int | None
    small_bet: int | None
    big_bet: int | None
    minutes: float | None
    hands: int | None

    @property
    def is_break(self) -> bool:
        return self.level is None

    def to_dict(self) -> dict[str, Any]:
        if self.is_break:
            return {"kind": "break", "minutes": self.minutes}
        return {
            "kind": "level",
            "level": self.level,
            "game": self.game,
            "title": self.title,
            "ante": self.ante,
            "bring_in": self.bring_in,
            "small_bet": self.small_bet,
            "big_bet": self.big_bet,
            "minutes": self.minutes,
            "hands": self.hands,
        }


def sheet(spec: TournamentSpec) -> list[SheetLine]:
    """The structure sheet: every level with its game, stakes and length, the breaks between.

    >>> from engine.tournament.templates import TEMPLATES
    >>> line = sheet(TEMPLATES["stud-mix-turbo"])[1]
    >>> line.level, line.title, line.small_bet, line.big_bet
    (2, 'Razz', 50, 100)
    """
    lines: list[SheetLine] = []
    number = 0
    for entry in spec.structure.entries:
        if isinstance(entry, Break):
            lines.append(SheetLine(None, None, None, None, None, None, None, entry.minutes, None))
            continue
        number += 1
        game = spec.game_of(entry)
        lines.append(
            SheetLine(
                number,
                game,
                find_variant(game).title,
                entry.ante,
                entry.bring_in,
                entry.small_bet,
                entry.big_bet,
                entry.minutes,
                entry.hands,
            )
        )
    return lines


def rotated(structure: Structure, games: Sequence[str]) -> Structure:
    """``structure`` with level N playing ``games[(N - 1) % len(games)]``: a rotation by
    level, written out level by level as the sheet prints it."""
    if not games:
        raise ValueError("a rotation of at least one game")
    entries = []
    number = 0
    for entry in structure.entries:
        if isinstance(entry, Level):
            entry = replace(entry, game=games[number % len(games)])
            number += 1
        entries.append(entry)
    return Structure(structure.starting_chips, tuple(entries))


@dataclass(frozen=True, slots=True)
class LevelGame:
    """What a mixed tournament's table is told of a level with its stakes: the level's
    number (from 1), its game, and the game of the level after (its own after the last)."""

    level: int
    game: str
    next_game: str

    def to_dict(self) -> dict[str, Any]:
        return {"level": self.level, "game": self.game, "next_game": self.next_game}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LevelGame:
        return cls(int(data["level"]), str(data["game"]), str(data["next_game"]))


def level_game(spec: TournamentSpec, level: Level) -> LevelGame | None:
    """What a table is told of ``level``'s game; None when the tournament plays one game
    (its tables never switch)."""
    if not spec.mixed:
        return None
    number = spec.structure.level_of(level.table_stakes())
    if number is None:
        raise ValueError(f"not a level of the tournament's structure: {level}")
    levels = spec.structure.levels
    following = levels[number] if number < len(levels) else level
    return LevelGame(number, spec.game_of(level), spec.game_of(following))


def level_position(last: Position | None, level: int) -> Position:
    """The place of a table's next hand, dealt at ``level``, after its hand at ``last``
    (None: none yet): the level's next hand there, or its first."""
    if level < 1:
        raise ValueError("levels count from 1")
    hand = last.hand + 1 if last is not None and last.level == level else 1
    return Position(level - 1, hand, 0, level)
