"""The database: SQLAlchemy models and column types, the async engine and its sessions, the
driver's quirks, Alembic migrations run from code, and the data directory where the embedded
default keeps its files. The bottom of the server: imports nothing of it."""

from server.db.models import (
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
