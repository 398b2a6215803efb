"""Persistence: SQLAlchemy models, the async engine, and Alembic migrations."""

from server.store.db.models import (
    Account,
    Base,
    HandRecord,
    LedgerEntry,
    Role,
    TableRecord,
    TableStatus,
    Token,
    Wallet,
    WalletKind,
)

__all__ = [
    "Account",
    "Base",
    "HandRecord",
    "LedgerEntry",
    "Role",
    "TableRecord",
    "TableStatus",
    "Token",
    "Wallet",
    "WalletKind",
]
