from __future__ import annotations

import pytest
from server_helpers import EVERY_TABLE_RULE
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from engine.variants import VARIANTS
from server.db.models import TableStatus
from server.store import tables
from server.store.table_config import config_from_json


async def test_a_stored_table_gives_back_its_engine_config(session: AsyncSession) -> None:
    record = await tables.create(session, name="Five", config=EVERY_TABLE_RULE, seats=6)
    await session.commit()
    again = await tables.get(session, table_id=record.id)
    assert again is not None
    assert tables.table_config(again) == config_from_json(EVERY_TABLE_RULE)
    assert tables.table_config(again).variant is VARIANTS["five_card_stud"]


async def test_a_cash_table_refuses_the_tournament_rule_for_absent_hands(
    session: AsyncSession,
) -> None:
    with pytest.raises(tables.BadConfig, match="absent_hands"):
        await tables.create(
            session, name="Away", config={"absent_hands": "killed_after_starting_hands"}
        )
    assert await tables.list_tables(session) == []


async def test_list_tables_by_status(session: AsyncSession) -> None:
    for name in ("A", "B"):
        await tables.create(session, name=name, config={})
    listed = await tables.list_tables(session, status=TableStatus.OPEN)
    assert [t.name for t in listed] == ["A", "B"]
    assert await tables.list_tables(session, status=TableStatus.CLOSED) == []


async def test_hands_are_kept_once_per_number(session: AsyncSession) -> None:
    table = await tables.create(session, name="Razz", config={"variant": "razz"})
    for number in (1, 2):
        await tables.record_hand(
            session,
            table_id=table.id,
            number=number,
            phh='variant = "FR"\n',
            events=[{"kind": "ante", "seat": 0, "amount": 1}],
            result={"stacks": {"0": 99 + number}},
        )
    await session.commit()
    hands = await tables.recent_hands(session, table_id=table.id)
    assert [(h.number, h.result) for h in hands] == [
        (2, {"stacks": {"0": 101}}),
        (1, {"stacks": {"0": 100}}),
    ]
    assert hands[0].events == [{"kind": "ante", "seat": 0, "amount": 1}]
    with pytest.raises(IntegrityError):
        await tables.record_hand(session, table_id=table.id, number=2, phh="", events=[], result={})
    await session.rollback()
