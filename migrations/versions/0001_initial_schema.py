"""Initial schema: accounts, tokens, wallets, the ledger, tables and hands.

Revision ID: 0001
Revises:
Create Date: 2026-11-29

Written for SQLite and PostgreSQL alike. Types are spelled out here rather than imported
from the models, so this script keeps meaning what it meant when the models change.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _created_at() -> sa.Column[datetime]:
    return sa.Column("created_at", sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("username", sa.String(length=32), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        _created_at(),
        sa.CheckConstraint("role IN ('player', 'operator', 'bot')", name=op.f("ck_accounts_role")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_accounts")),
    )
    op.create_index(
        "uq_accounts_username_lower", "accounts", [sa.text("lower(username)")], unique=True
    )
    op.create_table(
        "tokens",
        sa.Column("id", BigId, nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        _created_at(),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_tokens_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_tokens_token_hash")),
    )
    op.create_index(op.f("ix_tokens_account_id"), "tokens", ["account_id"])
    wallets = op.create_table(
        "wallets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=True),
        sa.Column("balance", sa.BigInteger(), nullable=False),
        _created_at(),
        sa.CheckConstraint("kind IN ('player', 'house', 'table')", name=op.f("ck_wallets_kind")),
        sa.CheckConstraint("balance >= 0 OR kind = 'house'", name=op.f("ck_wallets_balance")),
        sa.CheckConstraint(
            "(kind = 'player') = (account_id IS NOT NULL)", name=op.f("ck_wallets_owner")
        ),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_wallets_account_id_accounts"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_wallets")),
        sa.UniqueConstraint("account_id", name=op.f("uq_wallets_account_id")),
        sa.UniqueConstraint("name", name=op.f("uq_wallets_name")),
    )
    op.create_table(
        "ledger_entries",
        sa.Column("id", BigId, nullable=False),
        sa.Column("debit_wallet_id", sa.Integer(), nullable=False),
        sa.Column("credit_wallet_id", sa.Integer(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("reference", sa.String(length=128), nullable=True),
        _created_at(),
        sa.CheckConstraint("amount > 0", name=op.f("ck_ledger_entries_amount")),
        sa.CheckConstraint(
            "debit_wallet_id <> credit_wallet_id", name=op.f("ck_ledger_entries_two_wallets")
        ),
        sa.ForeignKeyConstraint(
            ["debit_wallet_id"],
            ["wallets.id"],
            name=op.f("fk_ledger_entries_debit_wallet_id_wallets"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["credit_wallet_id"],
            ["wallets.id"],
            name=op.f("fk_ledger_entries_credit_wallet_id_wallets"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_entries")),
    )
    op.create_index(
        op.f("ix_ledger_entries_debit_wallet_id"), "ledger_entries", ["debit_wallet_id"]
    )
    op.create_index(
        op.f("ix_ledger_entries_credit_wallet_id"), "ledger_entries", ["credit_wallet_id"]
    )
    op.create_table(
        "tables",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("variant", sa.String(length=32), nullable=False),
        sa.Column("config", Json, nullable=False),
        sa.Column("seats", sa.Integer(), nullable=False),
        sa.Column("min_buy_in", sa.BigInteger(), nullable=False),
        sa.Column("max_buy_in", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        _created_at(),
        sa.CheckConstraint("status IN ('open', 'closed')", name=op.f("ck_tables_status")),
        sa.CheckConstraint("seats >= 2", name=op.f("ck_tables_seats")),
        sa.CheckConstraint(
            "min_buy_in > 0 AND max_buy_in >= min_buy_in", name=op.f("ck_tables_buy_in")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tables")),
        sa.UniqueConstraint("name", name=op.f("uq_tables_name")),
    )
    op.create_table(
        "hands",
        sa.Column("id", BigId, nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("phh", sa.Text(), nullable=False),
        sa.Column("events", Json, nullable=False),
        sa.Column("result", Json, nullable=False),
        _created_at(),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["tables.id"],
            name=op.f("fk_hands_table_id_tables"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hands")),
        sa.UniqueConstraint("table_id", "number", name="uq_hands_table_number"),
    )
    op.create_index(op.f("ix_hands_table_id"), "hands", ["table_id"])
    # The issuer of play money: every grant leaves it, so its balance is minus the chips out.
    op.bulk_insert(
        wallets,
        [
            {
                "name": "house:bankroll",
                "kind": "house",
                "account_id": None,
                "balance": 0,
                "created_at": datetime.now(UTC),
            }
        ],
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_hands_table_id"), table_name="hands")
    op.drop_table("hands")
    op.drop_table("tables")
    op.drop_index(op.f("ix_ledger_entries_credit_wallet_id"), table_name="ledger_entries")
    op.drop_index(op.f("ix_ledger_entries_debit_wallet_id"), table_name="ledger_entries")
    op.drop_table("ledger_entries")
    op.drop_table("wallets")
    op.drop_index(op.f("ix_tokens_account_id"), table_name="tokens")
    op.drop_table("tokens")
    op.drop_index("uq_accounts_username_lower", table_name="accounts")
    op.drop_table("accounts")
