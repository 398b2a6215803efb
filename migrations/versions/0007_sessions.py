"""Suspended accounts: when, by whom and why an operator suspended one.

Revision ID: 0007
Revises: 0005
Create Date: 2026-12-01

One row per account suspended now (``account_suspensions``); unsuspending deletes it, the
audit log keeps the history. Sessions need no table of their own: a token row is the
session, revoked one at a time (logout) or all of an account's at once (logout everywhere,
a suspension). Downgrading forgets every suspension (those accounts may log in again).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "account_suspensions",
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("suspended_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("suspended_by", sa.String(32), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_account_suspensions_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("account_id", name=op.f("pk_account_suspensions")),
    )


def downgrade() -> None:
    op.drop_table("account_suspensions")
