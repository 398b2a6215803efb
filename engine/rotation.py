"""Mixed games: a rotation of stud games as data, and the game of each hand as a pure function.

A :class:`Rotation` is an ordered list of games (each a ``TableConfig``: a variant, its own
rule settings and its stakes) and a unit: every N hands (8 unless set), every orbit (as many
hands as players were dealt in at the orbit's first hand), or every level (tournaments). The
games of a fixed-limit rotation share its stakes unless a game states its own; a pot- or
no-limit game always states its own.

Where a table stands in its rotation is a :class:`Position` (which game, which hand of that
game's turn, how many hands the turn lasts), kept with every hand the table deals. The next
hand's position, and so its game, is :func:`schedule` of the rotation and the last hand's
position alone: a table restarted, or taken over by another node, finds the same game and
count from what its journal holds. A voided hand was dealt: it counts like any other.

>>> mix = Rotation.from_dict({"games": [{"variant": "seven_card_stud"}, {"variant": "razz"}],
...                           "hands": 2})
>>> first = schedule(mix, None, players=6)
>>> first.text
'Seven-Card Stud, hand 1 of 2'
>>> second = schedule(mix, first.position, players=6)
>>> second.text
'Seven-Card Stud, hand 2 of 2; next: Razz'
>>> schedule(mix, second.position, players=5).config.variant.name
'razz'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from engine.errors import ConfigError, EngineError
from engine.protocol import ErrorCode
from engine.variants import VARIANTS, Structure, TableConfig

Unit = Literal["hands", "orbit", "level"]
UNITS: tuple[str, ...] = get_args(Unit)
STRUCTURES: tuple[str, ...] = get_args(Structure)
STAKES = ("ante", "bring_in", "small_bet", "big_bet")
# What a game's ``rules`` may not hold: its variant, structure and stakes are fields of their own.
_NOT_RULES = frozenset(("variant", "structure", *STAKES))
RULES: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(TableConfig) if f.name not in _NOT_RULES
)
DEFAULT_HANDS = 8
MOST_GAMES = 20
MOST_HANDS = 1000
_DEFAULTS = TableConfig()
DEFAULT_STAKES: dict[str, int] = {name: getattr(_DEFAULTS, name) for name in STAKES}
_SHARED = (_DEFAULTS.ante, _DEFAULTS.bring_in, _DEFAULTS.small_bet, _DEFAULTS.big_bet)


class RotationError(ConfigError):
    """A rotation refused: ``field`` is where (``games[2].stakes``), ``reason`` why; the
    message joins them. Code ``bad_rotation``."""

    code = ErrorCode.BAD_ROTATION

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field = field
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Rotation:
    """The games a mixed table deals in turn, each for one unit."""

    games: tuple[TableConfig, ...]
    unit: Unit = "hands"
    hands: int = DEFAULT_HANDS  # unit "hands": how many hands each game's turn lasts
    # The shared fixed-limit stakes (what ``to_dict`` gives games without stakes of their own).
    stakes: tuple[int, int, int, int] = _SHARED

    def __post_init__(self) -> None:
        if not self.games:
            raise RotationError("games", "at least one game")
        if len(self.games) > MOST_GAMES:
            raise RotationError("games", f"at most {MOST_GAMES} games")
        if self.unit not in UNITS:
            raise RotationError("unit", "must be one of " + ", ".join(UNITS))
        if not isinstance(self.hands, int) or isinstance(self.hands, bool):
            raise RotationError("hands", "must be a whole number")
        if not 1 <= self.hands <= MOST_HANDS:
            raise RotationError("hands", f"must be from 1 to {MOST_HANDS} (hands a game lasts)")

    @property
    def max_players(self) -> int:
        """The most seats every game of the rotation can deal to."""
        return min(game.variant.max_players for game in self.games)

    # ------------------------------------------------------------------ as JSON

    @classmethod
    def from_dict(cls, data: object) -> Rotation:
        """A rotation from its JSON (``to_dict``'s form), every refusal naming its field:

        ``{"games": [{"variant": "razz", "structure": "fixed_limit", "stakes": {...},
        "rules": {...}}, ...], "unit": "hands", "hands": 8, "stakes": {"ante": 1, ...}}``;
        ``unit``, ``hands``, the shared ``stakes`` and each game's ``structure``,
        ``stakes`` and ``rules`` may be left out."""
        data = _record(data, "", required=("games",), optional=("unit", "hands", "stakes"))
        unit = data.get("unit", "hands")
        if unit not in UNITS:
            raise RotationError("unit", "must be one of " + ", ".join(UNITS))
        hands = data.get("hands", DEFAULT_HANDS)
        if not isinstance(hands, int) or isinstance(hands, bool):
            raise RotationError("hands", "must be a whole number")
        if "hands" in data and unit != "hands":
            raise RotationError("hands", f"only with unit hands (the unit is {unit})")
        shared = _stakes(data.get("stakes", DEFAULT_STAKES), "stakes")
        games = data["games"]
        if not isinstance(games, list):
            raise RotationError("games", "must be a list of games")
        if not games:
            raise RotationError("games", "at least one game")
        return cls(
            tuple(_game(game, f"games[{i}]", shared) for i, game in enumerate(games)),
            unit,
            hands,
            shared,
        )

    def to_dict(self) -> dict[str, Any]:
        """The rotation as JSON: each game's variant, its structure and stakes where they are
        not the shared ones, its rules where they are not the rule books'."""
        shared = dict(zip(STAKES, self.stakes, strict=True))
        games: list[dict[str, Any]] = []
        for config in self.games:
            game: dict[str, Any] = {"variant": config.variant.name}
            if config.structure != "fixed_limit":
                game["structure"] = config.structure
            own = {name: getattr(config, name) for name in STAKES}
            if own != shared or config.structure != "fixed_limit":
                game["stakes"] = own
            rules = {
                name: list(value) if isinstance(value, tuple) else value
                for name in RULES
                if (value := getattr(config, name)) != getattr(_DEFAULTS, name)
            }
            if rules:
                game["rules"] = rules
            games.append(game)
        out: dict[str, Any] = {"games": games, "unit": self.unit}
        if self.unit == "hands":
            out["hands"] = self.hands
        out["stakes"] = shared
        return out


def _record(
    data: object, at: str, *, required: Sequence[str], optional: Sequence[str] = ()
) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise RotationError(at, "must be an object")
    for key in data:
        if key not in required and key not in optional:
            raise RotationError(_joined(at, str(key)), "unknown field")
    for key in required:
        if key not in data:
            raise RotationError(_joined(at, key), "missing")
    return data


def _joined(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name


def _stakes(data: object, at: str) -> tuple[int, int, int, int]:
    """Four amounts of chips (checked against each other by ``TableConfig`` with the game)."""
    stakes = _record(data, at, required=STAKES)
    amounts = []
    for name in STAKES:
        value = stakes[name]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise RotationError(f"{at}.{name}", "must be a whole number of chips >= 0")
        amounts.append(value)
    return amounts[0], amounts[1], amounts[2], amounts[3]


def _game(data: object, at: str, shared: tuple[int, int, int, int]) -> TableConfig:
    game = _record(data, at, required=("variant",), optional=("structure", "stakes", "rules"))
    variant = game["variant"]
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise RotationError(
            f"{at}.variant", f"unknown variant {variant!r} (one of {', '.join(VARIANTS)})"
        )
    structure = game.get("structure", "fixed_limit")
    if structure not in STRUCTURES:
        raise RotationError(f"{at}.structure", "must be one of " + ", ".join(STRUCTURES))
    if "stakes" in game:
        stakes = _stakes(game["stakes"], f"{at}.stakes")
    elif structure != "fixed_limit":
        raise RotationError(
            f"{at}.stakes", f"missing: a {structure} game states its own stakes in a rotation"
        )
    else:
        stakes = shared
    rules = game.get("rules", {})
    if not isinstance(rules, Mapping):
        raise RotationError(f"{at}.rules", "must be an object")
    values: dict[str, Any] = {}
    for name, value in rules.items():
        if name in _NOT_RULES:
            raise RotationError(f"{at}.rules.{name}", "not a rule: the game's own field")
        if name not in RULES:
            raise RotationError(f"{at}.rules.{name}", "unknown rule")
        values[name] = tuple(value) if isinstance(value, list) else value
    values.update(zip(STAKES, stakes, strict=True))
    try:
        return TableConfig(variant=VARIANTS[variant], structure=structure, **values)
    except (EngineError, TypeError) as error:
        raise RotationError(at, str(error)) from None


# ---------------------------------------------------------------------- where a table stands


@dataclass(frozen=True, slots=True)
class Position:
    """Where a hand stands in its rotation: what the journal keeps with each hand."""

    game: int  # the game's index in the rotation
    hand: int  # this hand's count in the game's turn, from 1
    of: int  # how many hands the turn lasts; 0: until the level ends (unit "level")
    level: int = 0  # unit "level": the level the hand was dealt in

    def to_dict(self) -> dict[str, int]:
        out = {"game": self.game, "hand": self.hand, "of": self.of}
        if self.level:
            out["level"] = self.level
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Position:
        return cls(int(data["game"]), int(data["hand"]), int(data["of"]), int(data.get("level", 0)))

    @property
    def last_of_turn(self) -> bool:
        """The game changes after this hand (never known in advance for a level)."""
        return self.of > 0 and self.hand >= self.of


def next_position(
    rotation: Rotation, last: Position | None, *, players: int, level: int = 0
) -> Position:
    """The position of the hand after ``last`` (None: the rotation's first hand), dealt to
    ``players`` seats, in tournament ``level`` (unit "level": game ``level - 1`` around the
    list, so every table at one level plays one game)."""
    count = len(rotation.games)
    if rotation.unit == "level":
        if level < 1:
            raise ValueError("a rotation by level needs the hand's level (from 1)")
        hand = last.hand + 1 if last is not None and last.level == level else 1
        return Position((level - 1) % count, hand, 0, level)
    if last is not None and last.game < count and last.hand < last.of:
        return Position(last.game, last.hand + 1, last.of)
    game = 0 if last is None or last.game >= count else (last.game + 1) % count
    if rotation.unit == "orbit":
        if players < 1:
            raise ValueError("an orbit is counted from the players dealt in")
        return Position(game, 1, players)
    return Position(game, 1, rotation.hands)


@dataclass(frozen=True, slots=True)
class Scheduled:
    """A hand's game in its rotation, and what the dealer says of it."""

    position: Position
    config: TableConfig  # the game of this hand
    next_config: TableConfig  # the game after this one's turn

    @property
    def hands_left(self) -> int | None:
        """Hands still to come in this game's turn after this one (None: until the level ends)."""
        return self.position.of - self.position.hand if self.position.of else None

    @property
    def text(self) -> str:
        """ "Razz, hand 3 of 8"; on a turn's last hand the next game too."""
        title, position = self.config.variant.title, self.position
        if not position.of:
            return f"{title}, level {position.level}, hand {position.hand}"
        words = f"{title}, hand {position.hand} of {position.of}"
        if position.last_of_turn:
            words += f"; next: {self.next_config.variant.title}"
        return words


def schedule(
    rotation: Rotation, last: Position | None, *, players: int, level: int = 0
) -> Scheduled:
    """The next hand's game (see :func:`next_position`) and the game that follows its turn."""
    position = next_position(rotation, last, players=players, level=level)
    games = rotation.games
    following = (position.level if rotation.unit == "level" else position.game + 1) % len(games)
    return Scheduled(position, games[position.game], games[following])


def hands_to_switch(position: Position) -> int | None:
    """How many hands after ``position``'s until the game changes (0: the next hand is a new
    game's; None: at the level's end)."""
    return position.of - position.hand if position.of else None


def positions(rotation: Rotation, players: Sequence[int]) -> list[Position]:
    """The positions of hands dealt one after another from the rotation's start, hand ``i``
    to ``players[i]`` seats: the journal's positions, worked out again from the start."""
    out: list[Position] = []
    last: Position | None = None
    for count in players:
        last = next_position(rotation, last, players=count)
        out.append(last)
    return out
