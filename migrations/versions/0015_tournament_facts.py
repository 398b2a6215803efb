"""The journal of running tournaments: the facts their directors took, in order.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06

``tournament_facts``: one row per fact (the start, each hand of a tournament's tables, a
pause, a resume, the clock's wake), numbered per tournament; replayed in order they give a
director taking over the state of the one before. ``tournaments.director_node`` and
``director_until``: which node's director runs the tournament, and until when (its lease).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "tournament_facts",
        sa.Column("id", BigId, nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("data", Json, nullable=False),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_facts_tournament_id_tournaments"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournament_facts")),
        sa.UniqueConstraint("tournament_id", "seq", name="uq_tournament_facts_seq"),
    )
    op.create_index(
        op.f("ix_tournament_facts_tournament_id"), "tournament_facts", ["tournament_id"]
    )
    op.add_column("tournaments", sa.Column("director_node", sa.String(80), nullable=True))
    op.add_column(
        "tournaments", sa.Column("director_until", sa.DateTime(timezone=True), nullable=True)
    )


def downgrade() -> None:
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("director_until")
        batch.drop_column("director_node")
    op.drop_index(op.f("ix_tournament_facts_tournament_id"), table_name="tournament_facts")
    op.drop_table("tournament_facts")
