"""The back office's request and response bodies about accounts: the audit log, players and
their wallets, bots, suspensions and kicks (a table's are in :mod:`server.api.schemas`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from server.accounts import account_rules
from server.accounts.registry import USERNAME_PATTERN
from server.api.schemas import (
    AccountPublic,
    HandLinePublic,
    LedgerLinePublic,
    OperatorReason,
    refused_as_invalid,
)
from server.store.table_config import CHIPS

#: The most chips one ``POST /admin/bots`` grants a bot.
MAX_BOT_CHIPS = 1_000_000_000


class AuditEntryPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    actor: str = Field(description="the staff account that acted, or node:<id> for a node")
    action: str = Field(description="table.create, player.credit, player.debit")
    target_kind: str
    target_id: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    reason: str | None
    created_at: datetime


class AuditPagePublic(BaseModel):
    entries: list[AuditEntryPublic]
    next_before: int | None = Field(description="pass as ?before= for the next page")


class PlayerLinePublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    username: str
    role: Literal["player", "operator", "bot", "support"]
    created_at: datetime


class PlayerPagePublic(BaseModel):
    players: list[PlayerLinePublic]
    total: int = Field(description="how many accounts match the prefix in all")
    limit: int
    offset: int


class SeatPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    table_id: int
    table_name: str
    seat: int
    chips: int = Field(description="every chip the player has at the table")
    updated_at: datetime


class PlayerPublic(BaseModel):
    account: PlayerLinePublic
    balance: int = Field(description="the chips in the player's wallet")
    entries: list[LedgerLinePublic] = Field(description="latest ledger movements, newest first")
    next_entries_before: int | None = Field(
        description="pass as ?entries_before= for older movements"
    )
    seats: list[SeatPublic]
    hands: list[HandLinePublic] = Field(description="latest hands, newest first")
    next_hands_before: int | None = Field(description="pass as ?hands_before= for older hands")
    suspension: SuspensionPublic | None = Field(
        default=None, description="when, by whom and why the account is suspended (null: it is not)"
    )


class AdjustmentCreate(OperatorReason):
    amount: StrictInt = Field(gt=0, le=CHIPS, description="chips, a whole number > 0")


class AdjustmentPublic(BaseModel):
    player: str
    amount: int = Field(description="chips in (> 0) or out (< 0) of the wallet")
    balance_before: int
    balance_after: int
    ledger_entry: int
    audit_id: int


def _a_reason(reason: str) -> str:
    reason = reason.strip()
    if not reason:
        raise ValueError("a reason is required")
    return reason


class BotCreate(OperatorReason):
    """A bot account an operator makes (``POST /admin/bots``): no password, a token."""

    username: str = Field(
        pattern=USERNAME_PATTERN,
        description="3-32 letters, digits, _ . -; not the house's (house-...: reserved_username)",
    )
    chips: StrictInt = Field(
        default=0,
        ge=0,
        le=MAX_BOT_CHIPS,
        description="chips granted by the house to the bot's wallet, 0 to 1,000,000,000",
    )

    @field_validator("username")
    @classmethod
    def _not_the_house(cls, username: str) -> str:
        return refused_as_invalid(account_rules.check_username, username)


class BotPublic(BaseModel):
    account: AccountPublic
    chips: int = Field(description="the wallet's balance: what the house granted")
    ledger_entry: int | None = Field(description="the grant's ledger entry (null: no chips)")
    access_token: str = Field(description="the bot's token (shown once): it has no password")
    token_type: Literal["bearer"] = "bearer"
    expires_at: datetime
    audit_id: int


class SuspendCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1, max_length=500, description="why (kept in the audit log)")
    _reason = field_validator("reason")(_a_reason)


class KickCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    player: str = Field(min_length=1, max_length=32, description="the seated player's name")
    reason: str = Field(min_length=1, max_length=500, description="why (kept in the audit log)")
    _reason = field_validator("reason")(_a_reason)


class SuspensionPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    suspended_at: datetime
    suspended_by: str = Field(description="the operator who suspended the account")
    reason: str


class RemovalPublic(BaseModel):
    """A player removed from one table: at once (``cashed_out``) or after its hand."""

    table_id: int
    seat: int | None = Field(description="the seat they held (null: the table refused)")
    after_hand: bool = Field(description="they leave when the hand in play ends")
    cashed_out: int | None = Field(description="chips back to the wallet now (null: later)")
    error: str | None = Field(
        default=None, description="the table's refusal code, if it could not be reached"
    )


class SuspendPublic(BaseModel):
    player: str
    suspension: SuspensionPublic
    tokens_revoked: int
    tables: list[RemovalPublic] = Field(description="the tables the player sat at")
    audit_id: int


class UnsuspendPublic(BaseModel):
    player: str
    audit_id: int


class KickPublic(BaseModel):
    player: str
    removal: RemovalPublic
    audit_id: int


PlayerPublic.model_rebuild()  # its suspension is defined after it
