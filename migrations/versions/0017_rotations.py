"""Mixed tables: a table's rotation of games, and where each hand stood in it.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-06

``tables.rotation``: the rotation an operator set (engine.rotation JSON) and the first hand
dealt under it, ``{"rotation": ..., "from_hand": N}`` (null: a table of one game). Each
hand's position in its rotation (game, hand of the turn, hands the turn lasts) is written
ahead with the hand (``live_hands.rotation``) and kept with its record (``hands.rotation``):
the journal a table taken over reads the next hand's game from. Null: not a mixed hand.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
_TABLES = ("tables", "live_hands", "hands")


def upgrade() -> None:
    for table in _TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("rotation", Json, nullable=True))


def downgrade() -> None:
    for table in reversed(_TABLES):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("rotation")
