"""A mixed table's rotation in the admin API: typed field by field for the OpenAPI schema
(each game's rules too), the engine judging the rules between fields (``engine.rotation``);
every refusal ``bad_rotation`` with the field at fault (``games[1].stakes``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic_core import PydanticCustomError

from engine.protocol import ErrorCode
from engine.rotation import MOST_GAMES, MOST_HANDS
from engine.variants import VARIANTS
from server.store.table_config import CHIPS, GameRulesJson

Chips = Annotated[StrictInt, Field(ge=0, le=CHIPS)]

if TYPE_CHECKING:  # made from the engine's TableConfig at import
    GameRules = BaseModel
else:
    GameRules = GameRulesJson


class RotationStakes(BaseModel):
    """Fixed-limit stakes, or a pot- or no-limit game's (its small bet the least bet)."""

    model_config = ConfigDict(extra="forbid")

    ante: Chips
    bring_in: Chips = Field(description="at most small_bet")
    small_bet: Chips
    big_bet: Chips = Field(description="at least small_bet")


class RotationGame(BaseModel):
    """One game of a rotation."""

    model_config = ConfigDict(extra="forbid")

    variant: Literal[tuple(VARIANTS)]  # type: ignore[valid-type]
    structure: Literal["fixed_limit", "pot_limit", "no_limit"] = Field(
        default="fixed_limit", description="pot and no limit: the game states its own stakes"
    )
    stakes: RotationStakes | None = Field(
        default=None, description="the game's own (null: the rotation's)"
    )
    rules: GameRules | None = Field(
        default=None, description="the game's rule settings (razz's bring-in, hi-lo's qualifier)"
    )

    def posted(self) -> dict[str, Any]:
        game: dict[str, Any] = {"variant": self.variant, "structure": self.structure}
        if self.stakes is not None:
            game["stakes"] = self.stakes.model_dump()
        if self.rules is not None:
            game["rules"] = self.rules.model_dump(exclude_unset=True)
        return game


class RotationBody(BaseModel):
    """A mixed table's games in turn (engine.rotation): each for ``hands`` hands (unit
    ``hands``, 8 unless set) or for an orbit (as many hands as players dealt in at its start);
    fixed-limit games share ``stakes`` unless they state their own."""

    model_config = ConfigDict(extra="forbid")

    games: list[RotationGame] = Field(min_length=1, max_length=MOST_GAMES)
    unit: Literal["hands", "orbit", "level"] = Field(
        default="hands", description="level: a tournament's rotation (not a cash table's)"
    )
    hands: StrictInt | None = Field(
        default=None, ge=1, le=MOST_HANDS, description="unit hands: hands each game lasts (8)"
    )
    stakes: RotationStakes | None = Field(
        default=None, description="the fixed-limit games' stakes (null: 1, 2, 5, 10)"
    )

    def posted(self) -> dict[str, Any]:
        """The rotation as the engine reads it (``Rotation.from_dict``)."""
        data: dict[str, Any] = {"games": [g.posted() for g in self.games], "unit": self.unit}
        if self.hands is not None:
            data["hands"] = self.hands
        if self.stakes is not None:
            data["stakes"] = self.stakes.model_dump()
        return data


def where(loc: tuple[int | str, ...]) -> str:
    """A field's path as the engine names it: ``games[1].stakes.ante``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def as_bad_rotation(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A rotation refused by its types as ``bad_rotation``, each field at fault named."""
    try:
        return handler(value)
    except ValidationError as exc:
        message = "; ".join(
            f"{where(error['loc'])}: {error['msg']}" if error["loc"] else error["msg"]
            for error in exc.errors()
        )
        raise PydanticCustomError(
            str(ErrorCode.BAD_ROTATION), "{message}", {"message": message}
        ) from None


RotationArg = Annotated[RotationBody, WrapValidator(as_bad_rotation)]


class RotationState(BaseModel):
    """A mixed table's rotation as stored: the games in turn (null: the table's own rules
    alone) and the first hand dealt under them."""

    model_config = ConfigDict(from_attributes=True)

    rotation: RotationBody | None
    from_hand: int = Field(description="the first hand dealt under this rotation")


class RotationUpdate(BaseModel):
    """A mixed table's new rotation, dealt from the next switch (or the next hand when the
    table is idle); null takes the rotation away (the table's own rules from the switch)."""

    model_config = ConfigDict(extra="forbid")

    rotation: RotationArg | None
    reason: str | None = Field(default=None, max_length=500, description="kept in the audit log")


class RotationChangePublic(BaseModel):
    table_id: int
    rotation: RotationState
    after_hand: bool = Field(description="it waits for the game in play to finish its turn")


class LobbyGamePublic(BaseModel):
    variant: str
    title: str = Field(description="the game as players say it")


class LobbyRotationPublic(BaseModel):
    """A mixed table's games in turn, as the lobby lists them."""

    games: list[LobbyGamePublic]
    unit: Literal["hands", "orbit", "level"]
    hands: int | None = Field(description="unit hands: hands each game lasts")
