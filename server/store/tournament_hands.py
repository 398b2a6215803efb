"""What a tournament's hand was part of: its tournament, the level it was played at and the
tournament's table. Keyword-only repository functions.

Nothing is stored for this beyond what play writes already: a tournament's table row names
its tournament and its number there (``tables.tournament_id``, ``tournament_table``), and a
hand's record keeps the rules it was dealt by, whose stakes name its level exactly
(:meth:`engine.tournament.structure.Structure.level_of`). So every hand, also one recorded
before this was asked of it, tells its level the same way.

A tournament hand's PHH file is written with the standard's optional fields ``event`` (the
tournament's name), ``level``, ``table`` (the tournament's table number) and ``hand`` (the
hand's number at that table), and the user field ``_tournament_id``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from engine import phh
from engine.tournament.structure import Structure
from server.db.models import TableRecord, TournamentRecord


@dataclass(frozen=True, slots=True)
class TournamentTable:
    """A table of a tournament: the tournament, its name and structure, the table's number."""

    tournament_id: int
    name: str
    number: int
    structure: Structure


@dataclass(frozen=True, slots=True)
class TournamentHand:
    """A hand of a tournament: which, at which of its tables, at which level (None only for
    rules no level of the tournament has, which its director never sets)."""

    tournament_id: int
    name: str
    table: int
    level: int | None


async def tournament_tables(
    session: AsyncSession, *, table_ids: Iterable[int]
) -> dict[int, TournamentTable]:
    """The tournament tables among ``table_ids``, by table id (a cash table is left out)."""
    wanted = sorted(set(table_ids))
    if not wanted:
        return {}
    rows = (
        await session.execute(
            select(
                TableRecord.id,
                TableRecord.tournament_table,
                TournamentRecord.id,
                TournamentRecord.name,
                TournamentRecord.spec,
            )
            .join(TournamentRecord, TournamentRecord.id == TableRecord.tournament_id)
            .where(TableRecord.id.in_(wanted))
        )
    ).all()
    structures: dict[int, Structure] = {}
    found = {}
    for table_id, number, tournament_id, name, spec in rows:
        if tournament_id not in structures:
            structures[tournament_id] = Structure.from_dict(spec["structure"])
        found[int(table_id)] = TournamentTable(
            int(tournament_id), name, int(number or 0), structures[tournament_id]
        )
    return found


def hand_at(table: TournamentTable, config: Mapping[str, Any] | None) -> TournamentHand:
    """A hand dealt at ``table`` by the rules ``config`` (its record's), with its level."""
    level = table.structure.level_of(config) if config is not None else None
    return TournamentHand(table.tournament_id, table.name, table.number, level)


async def tournament_hand(
    session: AsyncSession, *, table_id: int, config: Mapping[str, Any] | None
) -> TournamentHand | None:
    """The tournament of one hand dealt at ``table_id`` by ``config``; None for a cash hand."""
    table = (await tournament_tables(session, table_ids=[table_id])).get(table_id)
    return None if table is None else hand_at(table, config)


def phh_fields(hand: TournamentHand, number: int) -> dict[str, Any]:
    """The PHH standard's optional fields of a tournament hand (``level`` only when known)."""
    fields: dict[str, Any] = {"event": hand.name, "hand": number}
    if hand.level is not None:
        fields["level"] = hand.level
    fields["table"] = hand.table
    fields["_tournament_id"] = hand.tournament_id
    return fields


def phh_name(table_id: int, number: int, hand: TournamentHand | None) -> str:
    """A hand's PHH file name: by tournament and its table there for a tournament's hand."""
    if hand is None:
        return f"table-{table_id}-hand-{number}.phh"
    return f"tournament-{hand.tournament_id}-table-{hand.table}-hand-{number}.phh"


def with_fields(history: phh.HandHistory, fields: Mapping[str, Any]) -> phh.HandHistory:
    """``history`` with ``fields`` first among its optional fields (any it had replaced: the
    table's own id, written as ``table`` at the table, gives way to the tournament's number)."""
    rest = {key: value for key, value in history.fields.items() if key not in fields}
    return replace(history, fields={**fields, **rest})


def tournament_phh(text: str, hand: TournamentHand | None, number: int) -> str:
    """A stored PHH text as exported whole (every field it has, user fields too): a
    tournament hand's with its tournament's fields."""
    if hand is None or not text:
        return text
    document = phh.parse_toml(text)
    history = phh.from_fields(document)
    kept = {k: v for k, v in document.items() if k in history.fields or k.startswith("_")}
    whole = replace(history, fields=kept)
    return phh.dumps(with_fields(whole, phh_fields(hand, number)))
