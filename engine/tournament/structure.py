"""A tournament's structure as data: its starting chips and its levels and breaks, in order.

A level's stakes are exactly a table's (``ante``, ``bring_in``, ``small_bet``, ``big_bet`` of
:class:`engine.variants.TableConfig`; in pot and no limit the small bet is the smallest bet
and the big bet goes unused), so a table applies a level with
``dataclasses.replace(config, **level.table_stakes())``. A level lasts some minutes, or some
hands (quick formats and tests); a break lasts some minutes and sits between two levels.

A level may name its ``game`` (a variant's name): a mixed tournament's structure sheet reads
level, game, ante, bring-in, limits, and every table deals the level's game from its next hand
at that level (``engine.tournament.games``); a level that names none plays the tournament's
``variant``.

>>> structure = Structure.from_dict({
...     "starting_chips": 1500,
...     "entries": [
...         {"ante": 5, "bring_in": 10, "small_bet": 30, "big_bet": 60, "minutes": 10},
...         {"kind": "break", "minutes": 5},
...         {"ante": 10, "bring_in": 15, "small_bet": 50, "big_bet": 100, "minutes": 10},
...     ],
... })
>>> [level.small_bet for level in structure.levels]
[30, 50]
>>> Structure.from_dict({"starting_chips": 1500, "entries": [
...     {"ante": 5, "bring_in": 40, "small_bet": 30, "big_bet": 60, "minutes": 10}]})
Traceback (most recent call last):
...
engine.tournament.structure.StructureError: entries[0].bring_in: may not exceed the small bet
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, TypedDict

from engine.tournament.fields import FieldError, choice, duration, joined, record, whole
from engine.variants import VARIANTS, TableConfig

STAKES = ("ante", "bring_in", "small_bet", "big_bet")


class Stakes(TypedDict):
    """A level's stakes, keyed as :class:`TableConfig`'s fields."""

    ante: int
    bring_in: int
    small_bet: int
    big_bet: int


class StructureError(FieldError):
    """A structure refused, with the field at fault (``entries[3].bring_in``)."""


@contextmanager
def refusing(within: str = "") -> Iterator[None]:
    """Any setting refused inside, as a :class:`StructureError` seen from ``within``."""
    try:
        yield
    except FieldError as error:
        raise StructureError(joined(within, error.field), error.reason) from None


@dataclass(frozen=True, slots=True)
class Level:
    """A level's stakes, in whole chips, and its length: ``minutes`` or ``hands``, one of them;
    its ``game`` (a variant's name; None: the tournament's)."""

    ante: int
    bring_in: int
    small_bet: int
    big_bet: int
    minutes: float | None = None
    hands: int | None = None
    game: str | None = None

    def __post_init__(self) -> None:
        with refusing():
            for name in STAKES:
                whole(getattr(self, name), name)
        if self.small_bet <= 0:
            raise StructureError("small_bet", "must be above 0")
        if self.bring_in > self.small_bet:
            raise StructureError("bring_in", "may not exceed the small bet")
        if self.big_bet < self.small_bet:
            raise StructureError("big_bet", "may not be below the small bet")
        if (self.minutes is None) == (self.hands is None):
            raise StructureError("minutes", "a level lasts some minutes or some hands, one of them")
        with refusing():
            if self.minutes is not None:
                duration(self.minutes, "minutes")
            if self.hands is not None:
                whole(self.hands, "hands", minimum=1)
            if self.game is not None:
                choice(self.game, "game", VARIANTS)

    @property
    def seconds(self) -> float | None:
        """How long the level lasts in play (pauses excluded); None when it counts hands."""
        return None if self.minutes is None else self.minutes * 60

    def table_stakes(self) -> Stakes:
        """The level's stakes as :class:`TableConfig`'s fields of the same names."""
        return Stakes(
            ante=self.ante, bring_in=self.bring_in, small_bet=self.small_bet, big_bet=self.big_bet
        )

    def applied_to(self, config: TableConfig) -> TableConfig:
        """``config`` at this level's stakes: how a table deals its next hand at a new level."""
        return replace(config, **self.table_stakes())

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": "level"}
        if self.game is not None:
            data["game"] = self.game
        data.update(self.table_stakes())
        if self.minutes is not None:
            data["minutes"] = self.minutes
        else:
            data["hands"] = self.hands
        return data

    @classmethod
    def from_dict(cls, data: object) -> Level:
        with refusing():
            fields = record(
                data, "", required=STAKES, optional=("kind", "game", "minutes", "hands")
            )
            if fields.get("kind", "level") != "level":
                raise StructureError("kind", 'must be "level" or "break"')
            return cls(
                **{name: whole(fields[name], name) for name in STAKES},
                minutes=fields.get("minutes"),
                hands=fields.get("hands"),
                game=fields.get("game"),
            )


@dataclass(frozen=True, slots=True)
class Break:
    """A pause in the play between two levels: the clock runs, no hand is dealt."""

    minutes: float

    def __post_init__(self) -> None:
        with refusing():
            duration(self.minutes, "minutes")

    @property
    def seconds(self) -> float:
        return self.minutes * 60

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "break", "minutes": self.minutes}

    @classmethod
    def from_dict(cls, data: object) -> Break:
        with refusing():
            fields = record(data, "", required=("kind", "minutes"))
            return cls(minutes=fields["minutes"])


Entry = Level | Break


def _entry_from_dict(data: object) -> Entry:
    if isinstance(data, Mapping) and data.get("kind") == "break":
        return Break.from_dict(data)
    return Level.from_dict(data)


@dataclass(frozen=True, slots=True)
class Structure:
    """The starting chips and the entries in play order: levels, a break between two of them.

    Each level's stakes are at least the previous level's, one of them strictly more; the
    structure starts and ends with a level, and after its last level that level goes on.
    """

    starting_chips: int
    entries: tuple[Entry, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.starting_chips, int) or isinstance(self.starting_chips, bool):
            raise StructureError("starting_chips", "must be a whole number")
        if self.starting_chips <= 0:
            raise StructureError("starting_chips", "must be above 0")
        if not isinstance(self.entries, tuple):
            raise StructureError("entries", "must be a tuple of levels and breaks")
        if not any(isinstance(entry, Level) for entry in self.entries):
            raise StructureError("entries", "needs at least one level")
        previous: Level | None = None
        for index, entry in enumerate(self.entries):
            at = f"entries[{index}]"
            if isinstance(entry, Break):
                if index == 0:
                    raise StructureError(at, "a structure starts with a level")
                if index == len(self.entries) - 1:
                    raise StructureError(at, "a structure ends with a level")
                if isinstance(self.entries[index - 1], Break):
                    raise StructureError(at, "two breaks in a row")
                continue
            if not isinstance(entry, Level):
                raise StructureError(at, "must be a level or a break")
            if previous is not None:
                _check_increase(previous, entry, at)
            previous = entry

    @property
    def levels(self) -> tuple[Level, ...]:
        return tuple(entry for entry in self.entries if isinstance(entry, Level))

    def level_number(self, index: int) -> int:
        """The number (from 1) of the level at entry ``index``, or for a break the level's
        before it: how players count levels ("late registration until the end of level 6")."""
        return sum(isinstance(entry, Level) for entry in self.entries[: index + 1])

    def level_of(self, stakes: Mapping[str, Any]) -> int | None:
        """The number (from 1) of the level played at these stakes (a hand's table rules:
        ``ante``, ``bring_in``, ``small_bet``, ``big_bet``), None when no level's. Exact: each
        level raises the stakes of the one before and lowers none, so no two share them."""
        try:
            wanted = tuple(stakes[name] for name in STAKES)
        except KeyError:
            return None
        for number, level in enumerate(self.levels, 1):
            if tuple(level.table_stakes().values()) == wanted:
                return number
        return None

    def next_level(self, index: int) -> Level | None:
        """The first level after entry ``index``, if any."""
        return next((e for e in self.entries[index + 1 :] if isinstance(e, Level)), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "starting_chips": self.starting_chips,
            "entries": [entry.to_dict() for entry in self.entries],
        }

    @classmethod
    def from_dict(cls, data: object) -> Structure:
        with refusing():
            fields = record(data, "", required=("starting_chips", "entries"))
            starting_chips = whole(fields["starting_chips"], "starting_chips", minimum=1)
            entries = fields["entries"]
            if not isinstance(entries, list):
                raise StructureError("entries", "must be a list of levels and breaks")
        parsed: list[Entry] = []
        for index, entry in enumerate(entries):
            with refusing(f"entries[{index}]"):
                parsed.append(_entry_from_dict(entry))
        return cls(starting_chips=starting_chips, entries=tuple(parsed))


def _check_increase(previous: Level, level: Level, at: str) -> None:
    for name in STAKES:
        if getattr(level, name) < getattr(previous, name):
            raise StructureError(f"{at}.{name}", "may not be below the previous level's")
    if level.table_stakes() == previous.table_stakes():
        raise StructureError(at, "must raise the stakes of the previous level")
