"""Finished hands keep their deck sealed: the operator's audit of a stud-deck/2 hand.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04

A stud-deck/2 hand reveals no server seed (docs/fairness.md): the seed it was dealt from is
kept with the hand's record, sealed with the deck key as ``live_hands.deck`` is
(server/store/deck_seal.py), so that an operator can open the whole deck for an audit or a dispute.
Nullable: hands recorded before it, and hands from a stacked deck, have none.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("hands") as batch:
        batch.add_column(sa.Column("deck", Json, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("hands") as batch:
        batch.drop_column("deck")
