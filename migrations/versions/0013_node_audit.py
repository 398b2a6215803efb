"""The audit log records what the nodes do on their own: tables moved between nodes.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05

A move made by a node (to even the tables out, to drain a node, after another died) has no
staff account behind it: ``actor_id`` becomes nullable, and ``actor`` names the node
(``node:<id>``, a node id up to 64 characters: the column is widened to 80). Downgrading
deletes the nodes' entries (the older code knows no entry without an account).

PostgreSQL alters the columns in place. On SQLite, batch mode's copy of the table would
reflect ``accounts`` (the foreign key's table), whose ``lower(username)`` index SQLite does not
reflect; and only the NOT NULL changes (SQLite keeps no string length). So, as in 0004, the
table's definition is edited in the schema, leaving the stored rows as they are, and checked
with ``PRAGMA integrity_check`` before the migration's transaction commits.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

REQUIRED = ("actor_id INTEGER NOT NULL", "actor VARCHAR(32) NOT NULL")
OPTIONAL = ("actor_id INTEGER", "actor VARCHAR(80) NOT NULL")


def upgrade() -> None:
    if op.get_context().dialect.name == "sqlite":
        _edit_sqlite_schema(REQUIRED, OPTIONAL)
        return
    op.alter_column("audit_log", "actor_id", existing_type=sa.Integer(), nullable=True)
    op.alter_column("audit_log", "actor", existing_type=sa.String(32), type_=sa.String(80))


def downgrade() -> None:
    op.execute("DELETE FROM audit_log WHERE actor_id IS NULL")
    if op.get_context().dialect.name == "sqlite":
        _edit_sqlite_schema(OPTIONAL, REQUIRED)
        return
    op.alter_column("audit_log", "actor", existing_type=sa.String(80), type_=sa.String(32))
    op.alter_column("audit_log", "actor_id", existing_type=sa.Integer(), nullable=False)


def _edit_sqlite_schema(old: tuple[str, ...], new: tuple[str, ...]) -> None:
    bind = op.get_bind()
    table_sql = bind.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'audit_log'"
    ).scalar_one()
    for before, after in zip(old, new, strict=True):
        if table_sql.count(before) != 1:
            raise RuntimeError(f"audit_log has no {before!r} to replace: {table_sql}")
        table_sql = table_sql.replace(before, after)
    version = bind.exec_driver_sql("PRAGMA schema_version").scalar_one()
    bind.exec_driver_sql("PRAGMA writable_schema = ON")
    bind.execute(
        sa.text("UPDATE sqlite_master SET sql = :sql WHERE type = 'table' AND name = 'audit_log'"),
        {"sql": table_sql},
    )
    bind.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")
    bind.exec_driver_sql("PRAGMA writable_schema = OFF")
    problems = bind.exec_driver_sql("PRAGMA integrity_check(audit_log)").scalars().all()
    if problems != ["ok"]:
        raise RuntimeError(f"audit_log after the edit of its columns: {problems}")
