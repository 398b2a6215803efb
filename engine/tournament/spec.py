"""A tournament's format as data: the game, the tables, the money, the structure and the
options, validated once, as operators post it through the admin API.

A freezeout by default: one entry each, no rebuy. The options:

- late registration until the end of level ``late_registration_levels``;
- at most ``re_entries`` entries more for a player who is out, during late registration;
- :class:`Rebuys`: during the first ``levels`` levels, a player whose stack is at most the
  starting chips may buy ``chips`` more for the buy-in (and the fee); one add-on of
  ``add_on_chips``, for the buy-in and the fee too, from the end of the rebuy period until
  the end of the next level (a break between them included).

Late registration and the add-on end before the last level (which goes on until the end):
the prizes are fixed once no more chips can be bought.

A mixed tournament's levels name their games (``Level.game``): each level plays its own,
the levels that name none the tournament's ``variant``; the tables seat as many as every
game of the structure deals to.

Entrants are entries: ``min_entrants`` and ``max_entrants`` and the payout table count a
re-entry as one more. A sit-and-go starts when its seats are filled: its minimum and maximum
are the same number, on one table or several.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from engine.errors import EngineError
from engine.tournament.fields import FieldError, choice, joined, optional_whole, record, whole
from engine.tournament.payout_tables import find_payout_table
from engine.tournament.structure import Level, Structure
from engine.variants import VARIANTS, TableConfig, find_variant

Kind = Literal["sit_and_go", "scheduled"]
Betting = Literal["fixed_limit", "pot_limit", "no_limit"]
KINDS: tuple[Kind, ...] = ("sit_and_go", "scheduled")
BETTINGS: tuple[Betting, ...] = ("fixed_limit", "pot_limit", "no_limit")


class SpecError(FieldError):
    """A tournament format refused, with the field at fault (``rebuys.levels``)."""


@dataclass(frozen=True, slots=True)
class Rebuys:
    """Rebuys during the first ``levels`` levels, and the add-on that ends them."""

    levels: int
    chips: int
    add_on_chips: int | None = None

    def __post_init__(self) -> None:
        try:
            whole(self.levels, "levels", minimum=1)
            whole(self.chips, "chips", minimum=1)
            optional_whole(self.add_on_chips, "add_on_chips", minimum=1)
        except FieldError as error:
            raise SpecError(error.field, error.reason) from None

    def to_dict(self) -> dict[str, Any]:
        return {"levels": self.levels, "chips": self.chips, "add_on_chips": self.add_on_chips}

    @classmethod
    def from_dict(cls, data: object) -> Rebuys:
        fields = record(data, "", required=("levels", "chips"), optional=("add_on_chips",))
        return cls(fields["levels"], fields["chips"], fields.get("add_on_chips"))


@dataclass(frozen=True, slots=True)
class TournamentSpec:
    """A tournament's format, checked whole; a freezeout unless an option says otherwise."""

    kind: Kind
    # A name of engine.variants.VARIANTS ("seven_card_stud", "razz"): the game of every level
    # that names none of its own.
    variant: str
    betting: Betting
    seats_per_table: int
    structure: Structure
    buy_in: int  # money, whole chips: to the prize pool
    fee: int  # money, whole chips: to the house
    min_entrants: int
    max_entrants: int
    payout_table: str
    late_registration_levels: int | None = None
    re_entries: int = 0
    rebuys: Rebuys | None = None

    def __post_init__(self) -> None:
        try:
            self._check()
        except SpecError:
            raise
        except FieldError as error:
            raise SpecError(error.field, error.reason) from None

    def _check(self) -> None:
        choice(self.kind, "kind", KINDS)
        choice(self.variant, "variant", VARIANTS)
        choice(self.betting, "betting", BETTINGS)
        whole(self.seats_per_table, "seats_per_table", minimum=2)
        if not isinstance(self.structure, Structure):
            raise SpecError("structure", "must be a Structure")
        self._check_games()
        whole(self.buy_in, "buy_in")
        whole(self.fee, "fee")
        whole(self.min_entrants, "min_entrants", minimum=2)
        whole(self.max_entrants, "max_entrants", minimum=self.min_entrants)
        if self.kind == "sit_and_go" and self.max_entrants != self.min_entrants:
            raise SpecError("max_entrants", "a sit-and-go starts full: as many as min_entrants")
        payout = find_payout_table(self.payout_table)
        if self.max_entrants > payout.max_entrants:
            raise SpecError("max_entrants", f"{payout.name} pays at most {payout.max_entrants}")
        self._check_options()

    def _check_games(self) -> None:
        """Every level's game seats the tables' players and plays at the level's stakes."""
        for game in self.games:
            most = find_variant(game).max_players
            if self.seats_per_table > most:
                levels = [
                    n
                    for n, level in enumerate(self.structure.levels, 1)
                    if self.game_of(level) == game
                ]
                where = "" if game == self.variant and not self.mixed else f" (level {levels[0]})"
                raise SpecError("seats_per_table", f"{game}{where} seats at most {most}")
        for index, entry in enumerate(self.structure.entries):
            if isinstance(entry, Level):
                try:
                    self.table_config(entry)
                except EngineError as error:
                    raise SpecError(f"structure.entries[{index}]", str(error)) from None

    def _check_options(self) -> None:
        levels = len(self.structure.levels)
        late = optional_whole(self.late_registration_levels, "late_registration_levels", minimum=1)
        if late is not None:
            if self.kind == "sit_and_go":
                raise SpecError("late_registration_levels", "a sit-and-go starts full")
            if late >= levels:
                raise SpecError(
                    "late_registration_levels", f"ends before the last of {levels} levels"
                )
        whole(self.re_entries, "re_entries")
        if self.re_entries and late is None:
            raise SpecError("re_entries", "re-entry is open during late registration only")
        if self.rebuys is not None:
            if not isinstance(self.rebuys, Rebuys):
                raise SpecError("rebuys", "must be Rebuys or None")
            if self.rebuys.levels >= levels:
                raise SpecError("rebuys.levels", f"rebuys end before the last of {levels} levels")
            if self.rebuys.add_on_chips is not None and self.rebuys.levels + 1 >= levels:
                raise SpecError(
                    "rebuys.levels", f"the add-on ends before the last of {levels} levels"
                )

    def game_of(self, level: Level) -> str:
        """The game ``level`` plays: its own, else the tournament's."""
        return level.game if level.game is not None else self.variant

    @property
    def games(self) -> tuple[str, ...]:
        """Every game the levels play, in the order they first come."""
        return tuple(dict.fromkeys(self.game_of(level) for level in self.structure.levels))

    @property
    def mixed(self) -> bool:
        """The levels play more than one game: the tables switch game with the level."""
        return len(self.games) > 1

    def table_config(self, level: Level) -> TableConfig:
        """The tables' configuration at ``level``: its game, the betting, the level's stakes,
        and rule 8's tournament variant (an absent player's hand killed once every player has
        the starting hand)."""
        return TableConfig(
            variant=find_variant(self.game_of(level)),
            structure=self.betting,
            absent_hands="killed_after_starting_hands",
            **level.table_stakes(),
        )

    def late_registration_open(self, levels_ended: int) -> bool:
        """Whether a new entry is taken once ``levels_ended`` levels have ended (after the
        start; before it, registration is open until the field is full)."""
        late = self.late_registration_levels
        return late is not None and levels_ended < late

    def may_re_enter(self, entries_used: int, levels_ended: int) -> bool:
        """Whether a player out after ``entries_used`` entries (the first one counted) may
        enter again."""
        return entries_used <= self.re_entries and self.late_registration_open(levels_ended)

    def may_rebuy(self, stack: int, levels_ended: int) -> bool:
        """Whether a player with ``stack`` chips (those bought and not yet added counted)
        may rebuy once ``levels_ended`` levels have ended."""
        rebuys = self.rebuys
        return (
            rebuys is not None
            and levels_ended < rebuys.levels
            and stack <= self.structure.starting_chips
        )

    def rebuys_open(self, levels_ended: int) -> bool:
        """The rebuy period: the first ``rebuys.levels`` levels (breaks among them)."""
        return self.rebuys is not None and levels_ended < self.rebuys.levels

    def add_on_open(self, levels_ended: int) -> bool:
        """The add-on's time: from the end of the rebuy period to the end of the next
        level."""
        rebuys = self.rebuys
        return (
            rebuys is not None and rebuys.add_on_chips is not None and levels_ended == rebuys.levels
        )

    def money_open(self, levels_ended: int) -> bool:
        """Whether entries, rebuys or add-ons may still be bought: the prize pool and the
        field are final, and the prizes fixed, once none may."""
        return (
            self.late_registration_open(levels_ended)
            or self.rebuys_open(levels_ended)
            or self.add_on_open(levels_ended)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "variant": self.variant,
            "betting": self.betting,
            "seats_per_table": self.seats_per_table,
            "structure": self.structure.to_dict(),
            "buy_in": self.buy_in,
            "fee": self.fee,
            "min_entrants": self.min_entrants,
            "max_entrants": self.max_entrants,
            "payout_table": self.payout_table,
            "late_registration_levels": self.late_registration_levels,
            "re_entries": self.re_entries,
            "rebuys": None if self.rebuys is None else self.rebuys.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: object) -> TournamentSpec:
        try:
            fields = record(data, "", required=_REQUIRED, optional=_OPTIONAL)
            structure = _nested(Structure.from_dict, fields["structure"], "structure")
            rebuys = fields.get("rebuys")
            return cls(
                kind=fields["kind"],
                variant=fields["variant"],
                betting=fields["betting"],
                seats_per_table=fields["seats_per_table"],
                structure=structure,
                buy_in=fields["buy_in"],
                fee=fields["fee"],
                min_entrants=fields["min_entrants"],
                max_entrants=fields["max_entrants"],
                payout_table=fields["payout_table"],
                late_registration_levels=fields.get("late_registration_levels"),
                re_entries=fields.get("re_entries", 0),
                rebuys=None if rebuys is None else _nested(Rebuys.from_dict, rebuys, "rebuys"),
            )
        except SpecError:
            raise
        except FieldError as error:
            raise SpecError(error.field, error.reason) from None


_REQUIRED = (
    "kind",
    "variant",
    "betting",
    "seats_per_table",
    "structure",
    "buy_in",
    "fee",
    "min_entrants",
    "max_entrants",
    "payout_table",
)
_OPTIONAL = ("late_registration_levels", "re_entries", "rebuys")


T = TypeVar("T")


def _nested(parse: Callable[[object], T], data: object, at: str) -> T:
    """``parse(data)``, its refusal's field seen from the spec."""
    try:
        return parse(data)
    except FieldError as error:
        raise SpecError(joined(at, error.field), error.reason) from None
