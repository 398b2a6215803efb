"""Finished hands keep the rules they were dealt under (what a player's verifier replays).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02

A nullable column: hands recorded before it have no rules kept, and no fair deal to check.
The decks of hands in progress (``live_hands.deck``) are sealed by the server in the same
JSON column (server/store/deck_seal.py), so that column does not change.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("hands") as batch:
        batch.add_column(sa.Column("config", Json, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("hands") as batch:
        batch.drop_column("config")
