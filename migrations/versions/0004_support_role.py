"""The support role: staff who read the back office (``/admin``) and change nothing.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

The CHECK on ``accounts.role`` admits ``support``. Downgrading makes every support account a
player again (the old CHECK knows no ``support``), so no account keeps a role the older code
does not know.

PostgreSQL alters the CHECK in place. SQLite cannot alter a CHECK, and batch mode's copy of
the table would lose the ``lower(username)`` index (SQLite does not reflect it) and, foreign
keys being on, could not drop the old ``accounts`` that every wallet refers to. So on SQLite
the table's definition is edited in the schema, SQLite's own procedure for changing a
constraint that leaves the stored rows as they are (https://sqlite.org/lang_altertable.html,
"making other kinds of table schema changes"), in the migration's transaction, and checked
with ``PRAGMA integrity_check`` before it commits.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WITH_SUPPORT = "role IN ('player', 'operator', 'bot', 'support')"
WITHOUT_SUPPORT = "role IN ('player', 'operator', 'bot')"


def upgrade() -> None:
    _replace_role_check(WITHOUT_SUPPORT, WITH_SUPPORT)


def downgrade() -> None:
    op.execute("UPDATE accounts SET role = 'player' WHERE role = 'support'")
    _replace_role_check(WITH_SUPPORT, WITHOUT_SUPPORT)


def _replace_role_check(old: str, new: str) -> None:
    if op.get_context().dialect.name == "sqlite":
        _edit_sqlite_schema(old, new)
    else:
        op.drop_constraint(op.f("ck_accounts_role"), "accounts", type_="check")
        op.create_check_constraint(op.f("ck_accounts_role"), "accounts", sa.text(new))


def _edit_sqlite_schema(old: str, new: str) -> None:
    bind = op.get_bind()
    table_sql = bind.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'accounts'"
    ).scalar_one()
    if table_sql.count(f"CHECK ({old})") != 1:
        raise RuntimeError(f"accounts has no CHECK ({old}) to replace: {table_sql}")
    version = bind.exec_driver_sql("PRAGMA schema_version").scalar_one()
    bind.exec_driver_sql("PRAGMA writable_schema = ON")
    bind.execute(
        sa.text("UPDATE sqlite_master SET sql = :sql WHERE type = 'table' AND name = 'accounts'"),
        {"sql": table_sql.replace(f"CHECK ({old})", f"CHECK ({new})")},
    )
    bind.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")
    bind.exec_driver_sql("PRAGMA writable_schema = OFF")
    problems = bind.exec_driver_sql("PRAGMA integrity_check(accounts)").scalars().all()
    if problems != ["ok"]:
        raise RuntimeError(f"accounts after the edit of its CHECK: {problems}")
