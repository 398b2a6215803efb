"""Fencing tokens: which run of a table may still write it.

A node taking a table over claims a new token (:func:`claim_table`); every write of the
table checks the writer's token first, under the table row's lock, so a node that lost the
table (to a newer token) writes nothing more. One table's check is :data:`FENCE_HELD`; a
group of tables written together (:mod:`server.store.write_ahead`) is checked by
:data:`FENCES_HELD` in one statement; on SQLite's own cursor by :data:`FENCE_HELD` once a
table (:func:`refused_on_cursor`: no round trip to save); on PostgreSQL's asyncpg
connection by :data:`FENCES_HELD_ARRAY` in one round trip (:func:`refused_on_asyncpg`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

from sqlalchemy import CursorResult, Integer, Table, any_, bindparam, select, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.driver import DriverStatement
from server.db.models import TableRecord
from server.store.records import TableTakenOver

_TABLES = cast(Table, TableRecord.__table__)

# No-op updates: they take the rows' locks. One table's matches only while its fence holds;
# several tables' tell each one's fence.
FENCE_HELD = (
    update(_TABLES)
    .where(_TABLES.c.id == bindparam("table"), _TABLES.c.fence == bindparam("token"))
    .values(fence=_TABLES.c.fence)
)
FENCES_HELD = (
    update(_TABLES)
    .where(_TABLES.c.id.in_(bindparam("ids", expanding=True)))
    .values(fence=_TABLES.c.fence)
    .returning(_TABLES.c.id, _TABLES.c.fence)
)
# The same on PostgreSQL's driver, the tables one array parameter: a statement compiled once
# for the driver has no list of parameters expanded for it at each run.
FENCES_HELD_ARRAY = (
    update(_TABLES)
    .where(_TABLES.c.id == any_(bindparam("ids", type_=ARRAY(Integer))))
    .values(fence=_TABLES.c.fence)
    .returning(_TABLES.c.id, _TABLES.c.fence)
)


async def claim_table(session: AsyncSession, *, table_id: int) -> int:
    """A new fencing token for the node taking the table over; every older one is refused
    from now on. Commits nothing itself (call inside the caller's transaction)."""
    await session.execute(
        update(TableRecord).where(TableRecord.id == table_id).values(fence=TableRecord.fence + 1)
    )
    token = await session.scalar(select(TableRecord.fence).where(TableRecord.id == table_id))
    if token is None:
        raise LookupError(f"no table {table_id}")
    return int(token)


async def check_fence(session: AsyncSession, *, table_id: int, fence: int) -> None:
    """Lock the table's row and make sure ``fence`` is still its token."""
    held = await session.execute(*fence_check({table_id: fence}))
    if refused(cast(CursorResult[Any], held), {table_id: fence}):
        raise taken_over(table_id, fence)


def fence_check(fenced: dict[int, int]) -> tuple[Any, dict[str, Any]]:
    """The statement, with its parameters, that locks these tables and checks their fences
    (table -> the writer's token); :func:`refused` reads its result."""
    if len(fenced) == 1:
        ((table, token),) = fenced.items()
        return FENCE_HELD, {"table": table, "token": token}
    return FENCES_HELD, {"ids": list(fenced)}


def refused(result: CursorResult[Any], fenced: dict[int, int]) -> set[int]:
    """The tables whose fence is no longer the writer's."""
    if len(fenced) == 1:
        return set() if result.rowcount == 1 else set(fenced)
    return _not_held(cast(Iterable[Sequence[int]], result), fenced)


def _not_held(held_rows: Iterable[Sequence[int]], fenced: dict[int, int]) -> set[int]:
    """The tables whose fence, as the rows (table, fence) found it, is not the writer's."""
    held = {row[0]: row[1] for row in held_rows}
    return {t for t, fence in fenced.items() if held.get(t) != fence}


def refused_on_cursor(cursor: Any, check: DriverStatement, fenced: dict[int, int]) -> set[int]:
    """:func:`fence_check` and :func:`refused` on a driver's cursor, in its transaction
    (``check``: :data:`FENCE_HELD` compiled for the driver): the tables whose fence is no
    longer the writer's."""
    refused: set[int] = set()
    for table, token in fenced.items():
        cursor.execute(check.sql, check.parameters({"table": table, "token": token}))
        if cursor.rowcount != 1:
            refused.add(table)
    return refused


async def refused_on_asyncpg(
    connection: Any, check: DriverStatement, fenced: dict[int, int]
) -> set[int]:
    """The same on an asyncpg connection, in its transaction, every table in one round trip
    (``check``: :data:`FENCES_HELD_ARRAY` compiled for asyncpg). A round trip a table made
    a group's commit grow with its size, and the next group wait the longer."""
    rows = await connection.fetch(check.sql, *check.parameters({"ids": sorted(fenced)}))
    return _not_held(rows, fenced)


def taken_over(table_id: int, fence: int | None) -> TableTakenOver:
    return TableTakenOver(f"table {table_id} is run by another node now (token {fence} is old)")
