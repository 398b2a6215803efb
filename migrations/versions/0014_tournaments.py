"""Tournaments: their records, their entries, and a prize pool wallet for each.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06

``tournaments``: a tournament as an operator made it (its format as JSON, its status, the
commitment to its seat draw's seed and the seed sealed at rest). ``tournament_entries``: each
paid entry (a re-entry is another row), the request that made it, its place and prize.
``wallets.kind`` admits ``tournament``: a tournament's prize pool, ``tournament:<id>``.
``tables.tournament_id`` / ``tournament_table``: a tournament's table and its number in the
tournament (null at a cash table); ``tables.permitted_hand``: the hand its director last let it
deal. ``live_hands.absent``: the seats of the hand in progress dealt in while away, whose hands
rule 8's tournament variant killed (null: none).
Downgrading refuses while any tournament wallet holds chips or has movements (the older code
knows no such wallet), then drops the rest.

PostgreSQL alters the CHECK in place. On SQLite, as in 0004, the table's definition is edited
in the schema (SQLite's own procedure for a constraint the stored rows already meet), and
checked with ``PRAGMA integrity_check`` before the migration's transaction commits.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
UTC_TIME = sa.DateTime(timezone=True)

WITHOUT = "kind IN ('player', 'house', 'table')"
WITH = "kind IN ('player', 'house', 'table', 'tournament')"
TOURNAMENT_STATUS = "status IN ('registering', 'running', 'finished', 'cancelled')"
ENTRY_STATUS = "status IN ('registered', 'playing', 'out', 'unregistered', 'refunded')"


def upgrade() -> None:
    _replace_wallet_kind_check(WITHOUT, WITH)
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("template", sa.String(32), nullable=True),
        sa.Column("spec", Json, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("starts_at", UTC_TIME, nullable=True),
        sa.Column("created_at", UTC_TIME, nullable=False),
        sa.Column("created_by", sa.String(32), nullable=False),
        sa.Column("draw_commitment", sa.String(64), nullable=False),
        sa.Column("draw_seed", Json, nullable=False),
        sa.Column("started_at", UTC_TIME, nullable=True),
        sa.Column("finished_at", UTC_TIME, nullable=True),
        sa.Column("cancelled_reason", sa.Text(), nullable=True),
        sa.CheckConstraint(TOURNAMENT_STATUS, name=op.f("ck_tournaments_status")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
        sa.UniqueConstraint("name", name=op.f("uq_tournaments_name")),
    )
    op.create_index(op.f("ix_tournaments_status"), "tournaments", ["status"])
    op.create_table(
        "tournament_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("request_id", sa.String(64), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("buy_in", sa.BigInteger(), nullable=False),
        sa.Column("fee", sa.BigInteger(), nullable=False),
        sa.Column("registered_at", UTC_TIME, nullable=False),
        sa.Column("left_at", UTC_TIME, nullable=True),
        sa.Column("place", sa.Integer(), nullable=True),
        sa.Column("prize", sa.BigInteger(), nullable=True),
        sa.CheckConstraint(ENTRY_STATUS, name=op.f("ck_tournament_entries_status")),
        sa.CheckConstraint("number >= 1", name=op.f("ck_tournament_entries_number")),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_entries_tournament_id_tournaments"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_tournament_entries_account_id_accounts"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournament_entries")),
        sa.UniqueConstraint(
            "tournament_id", "account_id", "number", name="uq_tournament_entries_number"
        ),
        sa.UniqueConstraint(
            "tournament_id", "account_id", "request_id", name="uq_tournament_entries_request"
        ),
    )
    op.create_index(
        op.f("ix_tournament_entries_tournament_id"), "tournament_entries", ["tournament_id"]
    )
    op.create_index(op.f("ix_tournament_entries_account_id"), "tournament_entries", ["account_id"])
    with op.batch_alter_table("tables") as batch:
        batch.add_column(sa.Column("tournament_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("tournament_table", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("permitted_hand", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            op.f("fk_tables_tournament_id_tournaments"),
            "tournaments",
            ["tournament_id"],
            ["id"],
            ondelete="RESTRICT",
        )
        batch.create_index(op.f("ix_tables_tournament_id"), ["tournament_id"])
    with op.batch_alter_table("live_hands") as batch:
        batch.add_column(sa.Column("absent", Json, nullable=True))


def downgrade() -> None:
    if not op.get_context().as_sql:  # an offline script cannot look: it only renders
        _refuse_while_tournament_wallets_are_used()
    op.execute("DELETE FROM wallets WHERE kind = 'tournament'")
    with op.batch_alter_table("live_hands") as batch:
        batch.drop_column("absent")
    with op.batch_alter_table("tables") as batch:
        batch.drop_index(op.f("ix_tables_tournament_id"))
        batch.drop_constraint(op.f("fk_tables_tournament_id_tournaments"), type_="foreignkey")
        batch.drop_column("permitted_hand")
        batch.drop_column("tournament_table")
        batch.drop_column("tournament_id")
    op.drop_index(op.f("ix_tournament_entries_account_id"), table_name="tournament_entries")
    op.drop_index(op.f("ix_tournament_entries_tournament_id"), table_name="tournament_entries")
    op.drop_table("tournament_entries")
    op.drop_index(op.f("ix_tournaments_status"), table_name="tournaments")
    op.drop_table("tournaments")
    _replace_wallet_kind_check(WITH, WITHOUT)


def _refuse_while_tournament_wallets_are_used() -> None:
    held = (
        op.get_bind()
        .exec_driver_sql(
            "SELECT count(*) FROM wallets w WHERE w.kind = 'tournament' AND (w.balance <> 0 OR "
            "EXISTS (SELECT 1 FROM ledger_entries e "
            "WHERE e.debit_wallet_id = w.id OR e.credit_wallet_id = w.id))"
        )
        .scalar_one()
    )
    if held:
        raise RuntimeError(f"{held} tournament wallets have chips or movements: not downgraded")


def _replace_wallet_kind_check(old: str, new: str) -> None:
    if op.get_context().dialect.name != "sqlite":
        op.drop_constraint(op.f("ck_wallets_kind"), "wallets", type_="check")
        op.create_check_constraint(op.f("ck_wallets_kind"), "wallets", sa.text(new))
        return
    bind = op.get_bind()
    table_sql = bind.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'wallets'"
    ).scalar_one()
    if table_sql.count(f"CHECK ({old})") != 1:
        raise RuntimeError(f"wallets has no CHECK ({old}) to replace: {table_sql}")
    version = bind.exec_driver_sql("PRAGMA schema_version").scalar_one()
    bind.exec_driver_sql("PRAGMA writable_schema = ON")
    bind.execute(
        sa.text("UPDATE sqlite_master SET sql = :sql WHERE type = 'table' AND name = 'wallets'"),
        {"sql": table_sql.replace(f"CHECK ({old})", f"CHECK ({new})")},
    )
    bind.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")
    bind.exec_driver_sql("PRAGMA writable_schema = OFF")
    problems = bind.exec_driver_sql("PRAGMA integrity_check(wallets)").scalars().all()
    if problems != ["ok"]:
        raise RuntimeError(f"wallets after the edit of its CHECK: {problems}")
