"""Request and response bodies of the HTTP API: ``XCreate`` in, ``XPublic`` out."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WrapValidator, field_validator
from pydantic_core import PydanticCustomError

from engine.errors import Refusal
from engine.variants import VARIANTS
from server.accounts import account_rules
from server.accounts.registry import USERNAME_PATTERN
from server.api.rotation_schemas import LobbyRotationPublic, RotationArg, RotationState
from server.store.table_config import (
    CHIPS,
    TableConfigChanges,
    TableConfigJson,
    as_bad_config,
    no_default,
)

MOST_SEATS = max(variant.max_players for variant in VARIANTS.values())

# A table's rules in a request: every field typed in the schema, any refusal ``bad_config``.
if TYPE_CHECKING:  # the models are made from the engine's TableConfig at import
    ConfigBody = BaseModel
    ConfigChangesBody = BaseModel
else:
    ConfigBody = Annotated[TableConfigJson, WrapValidator(as_bad_config)]
    ConfigChangesBody = Annotated[TableConfigChanges, WrapValidator(as_bad_config)]
# A new table's seats and buy-ins are judged with its rules: refused as bad_config too.
SeatCount = Annotated[int, Field(ge=2, le=MOST_SEATS), WrapValidator(as_bad_config)]
BuyIn = Annotated[int, Field(gt=0, le=CHIPS), WrapValidator(as_bad_config)]


def refused_as_invalid(check: Callable[[str], str], value: str) -> str:
    """A rule's refusal as a validation error whose type is the refusal's code (the HTTP
    answer carries that code: server/api/errors.py)."""
    try:
        return check(value)
    except Refusal as refusal:
        raise PydanticCustomError(
            str(refusal.code), "{message}", {"message": refusal.message}
        ) from None


class AccountCreate(BaseModel):
    """A new account, checked against server/accounts/account_rules.py (the house's names, the most
    common passwords) as well as these fields' limits."""

    model_config = ConfigDict(extra="forbid")

    username: str = Field(
        pattern=USERNAME_PATTERN,
        description="3-32 letters, digits, _ . -; not the house's (house-...: reserved_username)",
    )
    password: str = Field(
        min_length=8,
        max_length=256,
        description="not only spaces, nor one of the 10,000 most common (weak_password)",
    )
    bot: bool = Field(default=False, description="a program, not a person (same protocol)")

    @field_validator("username")
    @classmethod
    def _not_the_house(cls, username: str) -> str:
        return refused_as_invalid(account_rules.check_username, username)

    @field_validator("password")
    @classmethod
    def _not_common(cls, password: str) -> str:
        return refused_as_invalid(account_rules.check_password, password)


class AccountPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    username: str
    role: Literal["player", "operator", "bot", "support"]
    created_at: datetime


class LoginCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    username: str = Field(max_length=64)
    password: str = Field(max_length=256)


class TokenPublic(BaseModel):
    access_token: str
    token_type: Literal["bearer"] = "bearer"
    expires_at: datetime


class LoggedOutPublic(BaseModel):
    revoked: int = Field(description="how many live tokens of the account were revoked")


class LedgerLinePublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    kind: str
    amount: int = Field(description="chips in (> 0) or out (< 0) of this wallet")
    counterparty: str
    reference: str | None
    created_at: datetime


class WalletPublic(BaseModel):
    balance: int
    entries: list[LedgerLinePublic] = Field(description="newest first")
    next_before: int | None = Field(
        default=None, description="the cursor of the next (older) page; null: no more"
    )


class TableCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    config: ConfigBody = Field(
        default_factory=TableConfigJson,
        description="every rule setting; a missing key takes its default (bad_config: "
        "refused by its field's limits or by the rules between fields)",
    )
    seats: SeatCount | None = Field(default=None, description="default: the variant's most")
    min_buy_in: BuyIn | None = Field(default=None, description="default: 20 big bets")
    max_buy_in: BuyIn | None = Field(default=None, description="default: 100 big bets")
    spectator_chat: bool = Field(
        default=False, description="spectators may chat too (seated players always may)"
    )
    time_fee: int = Field(
        default=0,
        ge=0,
        le=CHIPS,
        description="time collection: chips each seated player pays per period, from their "
        "stack before their first hand of the period (0: none; less than min_buy_in)",
    )
    time_fee_period: float = Field(
        default=1800.0, ge=60, le=86_400, description="seconds: the period a time fee pays"
    )
    rotation: RotationArg | None = Field(
        default=None,
        description="a mixed table: its games in turn (config is then its first game's, and "
        "left out); refused bad_rotation with the field at fault",
    )


class TablePublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    variant: str
    config: dict[str, Any]
    seats: int
    min_buy_in: int
    max_buy_in: int
    spectator_chat: bool = False
    time_fee: int = Field(default=0, description="time collection: chips per player per period")
    time_fee_period: float = Field(default=1800.0, description="seconds")
    status: Literal["open", "closed"]
    created_at: datetime
    action_clock: float | None = Field(description="seconds (null: the node's default)")
    time_bank: float | None = Field(description="seconds (null: the node's default)")
    showdown_pause: float | None = Field(
        default=None,
        description="seconds from a showdown to the next deal (null: the node's default)",
    )
    paused_reason: str | None = Field(description="an operator paused it, why (null: not)")
    closing_reason: str | None = Field(description="an operator closed it (or is), why")
    closed_at: datetime | None
    tournament_id: int | None = Field(
        default=None, description="a tournament's table: the tournament (null: a cash table)"
    )
    tournament_table: int | None = Field(
        default=None, description="a tournament's table: its number in the tournament"
    )
    rotation: RotationState | None = Field(
        default=None, description="a mixed table: its rotation (null: a table of one game)"
    )


class TableUpdate(BaseModel):
    """New settings of a table (``server.table.edit``: one field per setting); what is
    left out stays as it is, ``config`` key by key."""

    model_config = ConfigDict(extra="forbid")

    config: ConfigChangesBody | None = Field(
        default=None,
        description="rules to change, the rest kept; judged with them as at creation (bad_config)",
    )
    seats: int | None = Field(default=None, ge=2, le=MOST_SEATS)
    min_buy_in: int | None = Field(default=None, gt=0, le=CHIPS)
    max_buy_in: int | None = Field(default=None, gt=0, le=CHIPS)
    action_clock: float | None = Field(
        default=None, gt=0, le=600, description="seconds (null: the node's default)"
    )
    time_bank: float | None = Field(
        default=None, ge=0, le=3600, description="seconds (null: the node's default)"
    )
    showdown_pause: float | None = Field(
        default=None,
        ge=0,
        le=60,
        description="seconds from a showdown to the next deal, to read it (at least the "
        "pause after a hand won without one; null: the node's default)",
    )
    # Settings that always have a value: left out, kept; never null (the schema says so). The
    # None is no value of theirs: it marks a field not given (model_dump's exclude_unset).
    spectator_chat: bool = Field(  # type: ignore[assignment]
        default=None, description="spectators may chat too", json_schema_extra=no_default
    )
    time_fee: int = Field(  # type: ignore[assignment]
        default=None,
        ge=0,
        le=CHIPS,
        description="time collection: chips per player per period (0: none)",
        json_schema_extra=no_default,
    )
    time_fee_period: float = Field(  # type: ignore[assignment]
        default=None, ge=60, le=86_400, description="seconds", json_schema_extra=no_default
    )
    reason: str | None = Field(default=None, max_length=500)


class OperatorReason(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1, max_length=500, description="why (kept in the audit log)")

    @field_validator("reason")
    @classmethod
    def _reason_says_something(cls, reason: str) -> str:
        reason = reason.strip()
        if not reason:
            raise ValueError("a reason is required")
        return reason


class TableOperationPublic(BaseModel):
    table: TablePublic
    after_hand: bool = Field(description="it takes effect when the hand in progress ends")
    cashed_out: dict[str, int] = Field(
        default_factory=dict, description="closing: each player's chips back to the wallet"
    )


class HandVoidPublic(BaseModel):
    table_id: int
    hand: int = Field(description="the hand's number at the table")
    stacks: dict[str, int] = Field(description="each player's chips, back as at its start")
    reason: str


class NodePublic(BaseModel):
    """A node of the cardroom, as it last told the others of itself."""

    model_config = ConfigDict(from_attributes=True)

    node: str
    tables: int = Field(description="the tables it runs, not counting those it is moving away")
    busy: float = Field(description="the share of one core its process used over its last round")
    draining: bool = Field(description="its tables move to other nodes; it takes no new one")
    drained: bool = Field(description="draining, and no table left: it may be stopped")
    moving: dict[int, str] = Field(description="tables on their way to another node: table -> node")
    heard_ago: float = Field(description="seconds since it last told (0: the node answering)")


class HealthPublic(BaseModel):
    status: Literal["ok"]
    checks: dict[str, str] = Field(default_factory=dict)


class StakesPublic(BaseModel):
    ante: int
    bring_in: int
    small_bet: int
    big_bet: int


class TableSummaryPublic(BaseModel):
    """A table as the lobby lists it."""

    id: int
    name: str
    variant: str = Field(description="the game played now (a mixed table's game in play)")
    variant_title: str = Field(description="the game as players say it")
    structure: str
    stakes: StakesPublic
    seats: int
    seats_taken: int
    waiting: int = Field(description="players on the waiting list")
    min_buy_in: int
    max_buy_in: int
    average_pot: int = Field(description="over the table's last 50 hands")
    hands_per_hour: int
    restarts: int = Field(description="times the table's actor was restarted after a crash")
    paused: bool = Field(default=False, description="an operator paused it: no new hand")
    node: str | None = Field(
        default=None, description="the node running the table (None: changing hands)"
    )
    rotation: LobbyRotationPublic | None = Field(
        default=None, description="a mixed table: its games in turn (null: one game)"
    )


class HandLinePublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    table_id: int
    table_name: str
    variant: str
    number: int
    seat: int
    starting: int
    ending: int
    net: int
    cancelled: bool
    created_at: datetime
    tournament_id: int | None = Field(default=None, description="a tournament's hand: which")
    tournament_name: str | None = None
    tournament_table: int | None = Field(default=None, description="the tournament's table")
    level: int | None = Field(default=None, description="the tournament level it was played at")


class HandPagePublic(BaseModel):
    hands: list[HandLinePublic]
    next_before: int | None = Field(description="pass as ?before= for the next page")


class HandPlayerPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    seat: int
    player: str
    starting: int
    ending: int


class ClientSeedPublic(BaseModel):
    seat: int
    seed: str


class FairnessPublic(BaseModel):
    """A provably fair deal: docs/fairness.md says how the deal follows from it."""

    method: str = Field(description="the method: stud-deck/2 (stud-deck/1 for older hands)")
    table_id: int
    hand: int = Field(description="the hand's number at its table")
    commitment: str = Field(
        description="published before the deal: stud-deck/2, the Merkle root of the committed "
        "deck; stud-deck/1, SHA-256 of the server seed"
    )
    server_seed: str | None = Field(
        default=None,
        description="stud-deck/1 only: 32 bytes in hex, revealed when the hand ended "
        "(stud-deck/2 reveals no seed: the cards you saw were opened to you one by one, "
        "in the cards_opened events)",
    )
    client_seeds: list[ClientSeedPublic] = Field(description="by seat, as they went in")
    config: dict[str, Any] = Field(description="the rules the hand was dealt under")


class HandPublic(HandLinePublic):
    """A hand as its player saw it: events for everyone and for their seat only."""

    players: list[HandPlayerPublic]
    result: dict[str, Any]
    events: list[dict[str, Any]]
    phh: str | None = Field(description="the PHH text, when it shows only cards you saw")
    phh_withheld: Literal["no_phh", "hidden_cards"] | None = Field(
        description="why phh is null: the table's rules have no PHH form, or it would show "
        "cards you did not see"
    )
    fairness: FairnessPublic | None = Field(
        default=None,
        description="the seeds the deck was derived from and the rules, for stud-verify "
        "(docs/fairness.md); null for a hand not dealt from a provably fair deck",
    )


class BooksPublic(BaseModel):
    balanced: bool
    granted: int
    reclaimed: int
    held: int = Field(description="chips everywhere but the bankroll, the house revenue too")
    house: int = Field(description="the house bankroll: minus the chips it issued")
    revenue: int = Field(description="what the house collected: the rake and time fees")
    rake: int = Field(description="the chips ever raked from pots (part of the revenue)")
    mismatched: list[str]
    tables: dict[int, dict[str, int]] = Field(description="table id -> its pool and seats")
    tournaments: dict[int, dict[str, int]] = Field(
        default_factory=dict,
        description="id -> chips issued, removed (disqualified players'), in play; its prize pool",
    )


class HandRowPublic(BaseModel):
    """A hand in the back office's list."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    table_id: int
    table_name: str
    number: int
    ended_at: datetime = Field(description="when the hand ended (its record was written)")
    players: list[HandPlayerPublic] = Field(description="each player's chips before and after")
    pot: int = Field(description="every chip of every pot (0 for a cancelled hand)")
    rake: int = Field(default=0, description="the chips of the pot raked for the house")
    cancelled: bool


class HandRowPagePublic(BaseModel):
    total: int = Field(description="how many hands meet the filters, on every page")
    hands: list[HandRowPublic]
    next_offset: int | None = Field(description="pass as ?offset= for the next page")


class HandEventPublic(BaseModel):
    kind: str
    data: dict[str, Any]
    to: int | None = Field(description="None: sent to everyone; else the one seat it was sent to")
    audience: str = Field(description="'everyone', or the player in the seat it was sent to")


class HandEventsPublic(BaseModel):
    id: int
    table_id: int
    number: int
    events: list[HandEventPublic]


class LivePlayerPublic(BaseModel):
    seat: int
    player: str
    stack: int = Field(description="chips in front of the player now (in a hand: left to bet)")
    in_hand: bool
    sitting_out: bool


class LiveTablePublic(BaseModel):
    """A table as it is now."""

    id: int
    name: str
    variant: str
    state: Literal["running", "elsewhere", "between_nodes"] = Field(
        description="run by this node, by another node (as it told lately), or by none just now"
    )
    node: str | None = Field(description="the node running it (None: between nodes)")
    hand_number: int | None = Field(description="the last hand dealt (None: not known)")
    in_hand: bool = Field(description="a hand is being played")
    street: str | None = Field(description="the street of the hand in play")
    pot: int = Field(description="the chips bet in the hand in play")
    players: list[LivePlayerPublic]
    seconds_since_action: float | None = Field(
        description="since the table last moved: a deal, an action or a time-out"
    )
    stuck: bool = Field(description="a hand in play has not moved for longer than stuck_after")
    paused_by: Literal["operator", "database"] | None = Field(
        default=None,
        description="paused by an operator (no new hand) or while the database is away",
    )
    pause_reason: str | None = Field(default=None, description="the operator's reason")
    rotation: LobbyRotationPublic | None = Field(
        default=None, description="a mixed table: its games in turn (null: one game)"
    )
