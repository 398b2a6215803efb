"""Seats (every chip at a table, per player) and hand_players (a player's part in a hand).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-06

Written for SQLite and PostgreSQL alike; types spelled out as in 0001.
"""

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _updated_at() -> sa.Column[datetime]:
    return sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    op.create_table(
        "seats",
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("chips", sa.BigInteger(), nullable=False),
        _updated_at(),
        sa.CheckConstraint("chips >= 0", name=op.f("ck_seats_chips")),
        sa.CheckConstraint("seat >= 0", name=op.f("ck_seats_seat")),
        sa.ForeignKeyConstraint(
            ["table_id"], ["tables.id"], name=op.f("fk_seats_table_id_tables"), ondelete="RESTRICT"
        ),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_seats_account_id_accounts"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("table_id", "seat", name=op.f("pk_seats")),
        sa.UniqueConstraint("table_id", "account_id", name="uq_seats_table_account"),
    )
    op.create_index(op.f("ix_seats_account_id"), "seats", ["account_id"])
    op.create_table(
        "hand_players",
        sa.Column("hand_id", BigId, nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("starting", sa.BigInteger(), nullable=False),
        sa.Column("ending", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["hand_id"],
            ["hands.id"],
            name=op.f("fk_hand_players_hand_id_hands"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_hand_players_account_id_accounts"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("hand_id", "account_id", name=op.f("pk_hand_players")),
    )
    op.create_index("ix_hand_players_account_hand", "hand_players", ["account_id", "hand_id"])


def downgrade() -> None:
    op.drop_index("ix_hand_players_account_hand", table_name="hand_players")
    op.drop_table("hand_players")
    op.drop_index(op.f("ix_seats_account_id"), table_name="seats")
    op.drop_table("seats")
