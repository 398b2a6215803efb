"""Table fencing tokens and the hands in progress (their deck and every action so far).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29

``tables.fence`` is the token of the node that runs the table (raised by each node that takes
the table over; every write of that table checks it). ``live_hands`` and ``live_actions`` hold
the hand in progress, written ahead of what the players see, so that another node (or this
one, restarted) resumes it exactly where it was.
"""

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _created_at() -> sa.Column[datetime]:
    return sa.Column("created_at", sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.add_column(
            sa.Column("fence", sa.BigInteger(), nullable=False, server_default=sa.text("0"))
        )
    op.create_table(
        "live_hands",
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("deck", Json, nullable=False),
        sa.Column("players", Json, nullable=False),
        _created_at(),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["tables.id"],
            name=op.f("fk_live_hands_table_id_tables"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("table_id", name=op.f("pk_live_hands")),
    )
    op.create_table(
        "live_actions",
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("action", Json, nullable=False),
        _created_at(),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["live_hands.table_id"],
            name=op.f("fk_live_actions_table_id_live_hands"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("table_id", "number", "position", name=op.f("pk_live_actions")),
    )


def downgrade() -> None:
    op.drop_table("live_actions")
    op.drop_table("live_hands")
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("fence")
