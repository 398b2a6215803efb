"""The back office's table operations: per-table clocks, the operator's pause, the close, and
the rules each hand in progress was dealt under.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

Nullable columns only, added in place on SQLite and PostgreSQL alike (no table is copied).
``tables.action_clock`` / ``time_bank``: null until an operator sets them (the node's
defaults apply). ``paused_reason``: the operator's pause, null when not paused.
``closing_reason``: an operator asked to close the table (``status`` turns ``closed`` once
everyone is cashed out; a node taking the table over finishes the close). ``live_hands.config``:
the rules the hand in progress was dealt under, so that a hand resumed after a change of rules
replays under its own.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

_TABLE_COLUMNS = (
    ("action_clock", sa.Float()),
    ("time_bank", sa.Float()),
    ("paused_reason", sa.Text()),
    ("paused_at", sa.DateTime(timezone=True)),
    ("closing_reason", sa.Text()),
    ("closed_at", sa.DateTime(timezone=True)),
)


def upgrade() -> None:
    for name, kind in _TABLE_COLUMNS:
        op.add_column("tables", sa.Column(name, kind, nullable=True))
    op.add_column("live_hands", sa.Column("config", Json, nullable=True))


def downgrade() -> None:
    op.drop_column("live_hands", "config")
    for name, _ in reversed(_TABLE_COLUMNS):
        op.drop_column("tables", name)
