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
