"""Collection: the house's revenue wallet, each hand's rake, and time collection.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02

``wallets``: the house's revenue (``house:revenue``, kind ``house``), where every chip raked
from a pot and every time fee goes. ``hands.rake``: the chips raked from the hand (its players'
chips net to minus it). ``tables.time_fee`` / ``time_fee_period``: time collection, a fee per
seated player per period (0: none). ``seats.time_paid_until``: when the period the seat's
player paid for ends. Columns with defaults, added in place on SQLite and PostgreSQL alike.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

REVENUE = "house:revenue"


def upgrade() -> None:
    wallets = sa.table(
        "wallets",
        sa.column("name", sa.String),
        sa.column("kind", sa.String),
        sa.column("account_id", sa.Integer),
        sa.column("balance", sa.BigInteger),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    op.bulk_insert(
        wallets,
        [
            {
                "name": REVENUE,
                "kind": "house",
                "account_id": None,
                "balance": 0,
                "created_at": datetime.now(UTC),
            }
        ],
    )
    op.add_column(
        "hands", sa.Column("rake", sa.BigInteger(), nullable=False, server_default=sa.text("0"))
    )
    op.add_column(
        "tables",
        sa.Column("time_fee", sa.BigInteger(), nullable=False, server_default=sa.text("0")),
    )
    op.add_column(
        "tables",
        sa.Column("time_fee_period", sa.Float(), nullable=False, server_default=sa.text("1800")),
    )
    op.add_column("seats", sa.Column("time_paid_until", sa.DateTime(timezone=True)))


def downgrade() -> None:
    op.drop_column("seats", "time_paid_until")
    op.drop_column("tables", "time_fee_period")
    op.drop_column("tables", "time_fee")
    op.drop_column("hands", "rake")
    op.execute(sa.text("DELETE FROM wallets WHERE name = :name").bindparams(name=REVENUE))
