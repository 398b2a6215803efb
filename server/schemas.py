"""Request and response bodies of the HTTP API: ``XCreate`` in, ``XPublic`` out."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from server.accounts import USERNAME_PATTERN


class AccountCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    username: str = Field(pattern=USERNAME_PATTERN, description="3-32 letters, digits, _ . -")
    password: str = Field(min_length=8, max_length=256)
    bot: bool = Field(default=False, description="a program, not a person (same protocol)")


class AccountPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    username: str
    role: Literal["player", "operator", "bot"]
    created_at: datetime


class LoginCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    username: str = Field(max_length=64)
    password: str = Field(max_length=256)


class TokenPublic(BaseModel):
    access_token: str
    token_type: Literal["bearer"] = "bearer"
    expires_at: datetime


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
    entries: list[LedgerLinePublic]


class TableCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="every rule setting (GET /admin/table-config for all of them and their "
        "defaults); a missing key takes its default",
    )
    seats: int | None = Field(default=None, description="default: the variant's most")
    min_buy_in: int | None = Field(default=None, description="default: 20 big bets")
    max_buy_in: int | None = Field(default=None, description="default: 100 big bets")


class TablePublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    variant: str
    config: dict[str, Any]
    seats: int
    min_buy_in: int
    max_buy_in: int
    status: Literal["open", "closed"]
    created_at: datetime


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
    variant: str
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
    node: str | None = Field(
        default=None, description="the node running the table (None: changing hands)"
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


class HandPagePublic(BaseModel):
    hands: list[HandLinePublic]
    next_before: int | None = Field(description="pass as ?before= for the next page")


class HandPlayerPublic(BaseModel):
    seat: int
    player: str
    starting: int
    ending: int


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


class BooksPublic(BaseModel):
    balanced: bool
    granted: int
    reclaimed: int
    held: int
    house: int
    mismatched: list[str]
    tables: dict[int, dict[str, int]] = Field(description="table id -> its pool and seats")
