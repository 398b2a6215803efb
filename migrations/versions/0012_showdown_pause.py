"""Tables may set the pause after a showdown (time to read the cards shown).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04

A nullable column, like the clocks: null plays the node's STUD_SHOWDOWN_PAUSE_SECONDS.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.add_column(sa.Column("showdown_pause", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("showdown_pause")
