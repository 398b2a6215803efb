"""What players and operators ask of a running tournament, waiting for its director.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06

``tournament_requests``: one row per request (an operator's pause, resume, move, added time;
a player's entry, rebuy or add-on in play), numbered in the order they came. The director
takes them in that order, each as a fact of its journal (``fact_seq``) or refused
(``outcome`` holds the code), whichever node it runs on; ``request_id`` makes a retry
harmless.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "tournament_requests",
        sa.Column("id", BigId, nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("data", Json, nullable=False),
        sa.Column("asked_by", sa.String(80), nullable=False),
        sa.Column("request_id", sa.String(64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("fact_seq", sa.Integer(), nullable=True),
        sa.Column("outcome", Json, nullable=True),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_requests_tournament_id_tournaments"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournament_requests")),
        sa.UniqueConstraint(
            "tournament_id", "asked_by", "request_id", name="uq_tournament_requests_request_id"
        ),
    )
    op.create_index(
        "ix_tournament_requests_waiting", "tournament_requests", ["tournament_id", "done_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_tournament_requests_waiting", table_name="tournament_requests")
    op.drop_table("tournament_requests")
