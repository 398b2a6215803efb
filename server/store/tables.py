"""Tables as the operator creates them (validated by the engine, stored with every rule),
and the hands played at them.

Keyword-only repository functions; the caller commits. A table's chip pool (its wallet,
``table:<id>``) is opened with it, in the same transaction; a hand's record commits with the
ledger movements of its result. A tournament's table (:func:`create_tournament_table`) has
no pool: its chips are the tournament's, not money, and never touch the ledger.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import sqlalchemy
from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from engine.errors import ConfigError, EngineError, Refusal
from engine.protocol import ErrorCode
from engine.rotation import Rotation, RotationError
from engine.table import Table
from engine.variants import TableConfig
from server.accounts import ledger
from server.db.models import HandRecord, TableRecord, TableStatus, TournamentRecord, WalletKind
from server.store.table_config import CHIPS, config_from_json, config_to_json


class BadConfig(Refusal):
    code = ErrorCode.BAD_CONFIG


class TableNameTaken(Refusal):
    code = ErrorCode.TABLE_NAME_TAKEN


def check_table(
    data: Mapping[str, Any], *, seats: int | None, min_buy_in: int | None, max_buy_in: int | None
) -> tuple[TableConfig, int, int, int]:
    """The config, seat count and buy-in range of a new table, or :class:`BadConfig`.

    The engine judges the rules and the seat count (it builds the very ``Table`` a table
    actor will play); buy-ins default to 20 and 100 big bets.
    """
    try:
        config = config_from_json(data)
        table = Table(config, seats)
    except (ConfigError, EngineError) as exc:
        raise BadConfig(str(exc)) from None
    if config.ante_by_position is not None:
        raise BadConfig(
            "ante_by_position: for replaying recorded hands; a table's ante is the same for "
            "every seat, however many are dealt in"
        )
    if config.absent_hands != "killed_when_action_reaches":
        raise BadConfig(
            "absent_hands: a cash table kills an absent hand when the action reaches it"
        )
    low = min_buy_in if min_buy_in is not None else 20 * config.big_bet
    high = max_buy_in if max_buy_in is not None else 100 * config.big_bet
    if low < table.needed_to_play():
        raise BadConfig(
            f"min_buy_in must cover one hand's ante and bring-in ({table.needed_to_play()})"
        )
    if high < low:
        raise BadConfig("max_buy_in must be at least min_buy_in")
    if high > CHIPS:
        raise BadConfig(f"max_buy_in must be at most {CHIPS:,} (64 bits; 100 big bets unless set)")
    return config, len(table.seats), low, high


def check_rotation(
    data: Mapping[str, Any], *, seats: int | None, min_buy_in: int | None, max_buy_in: int | None
) -> tuple[Rotation, int, int, int]:
    """A mixed table's rotation, seat count and buy-in range, or ``bad_rotation`` naming the
    field at fault: each game judged as a table of its own would be (its seats, its buy-ins);
    seats default to the most every game deals to, buy-ins to 20 and 100 of the biggest big
    bet of its games."""
    rotation = Rotation.from_dict(data)
    if rotation.unit == "level":
        raise RotationError(
            "unit", "level is a tournament's unit: a cash table's is hands or orbit"
        )
    count = seats if seats is not None else rotation.max_players
    biggest = max(game.big_bet for game in rotation.games)
    low = min_buy_in if min_buy_in is not None else 20 * biggest
    high = max_buy_in if max_buy_in is not None else 100 * biggest
    for index, game in enumerate(rotation.games):
        try:
            check_table(config_to_json(game), seats=count, min_buy_in=low, max_buy_in=high)
        except BadConfig as refused:
            raise RotationError(f"games[{index}]", refused.message) from None
    return rotation, count, low, high


def check_time_fee(fee: int, period: float, *, min_buy_in: int) -> None:
    """Time collection's settings, or :class:`BadConfig`: a fee of whole chips below the
    table's least buy-in (0: none), a period of a minute to a day."""
    if not isinstance(fee, int) or isinstance(fee, bool) or fee < 0:
        raise BadConfig("time_fee must be a whole number of chips >= 0")
    if fee >= min_buy_in:
        raise BadConfig(f"time_fee must be less than min_buy_in ({min_buy_in})")
    if not isinstance(period, int | float) or isinstance(period, bool):
        raise BadConfig("time_fee_period must be a number of seconds")
    if not 60 <= period <= 86_400:
        raise BadConfig("time_fee_period must be between 60 and 86400 seconds")


async def create(
    session: AsyncSession,
    *,
    name: str,
    config: Mapping[str, Any],
    seats: int | None = None,
    min_buy_in: int | None = None,
    max_buy_in: int | None = None,
    spectator_chat: bool = False,
    time_fee: int = 0,
    time_fee_period: float = 1800.0,
    rotation: Mapping[str, Any] | None = None,
) -> TableRecord:
    """A new open table and its empty chip pool. ``rotation``: a mixed table's games
    (:func:`check_rotation`); its rules (``config``) are then its first game's."""
    mixed = None
    if rotation is not None:
        mixed, seats, min_buy_in, max_buy_in = check_rotation(
            rotation, seats=seats, min_buy_in=min_buy_in, max_buy_in=max_buy_in
        )
        config = config_to_json(mixed.games[0])
    table_config, seat_count, low, high = check_table(
        config, seats=seats, min_buy_in=min_buy_in, max_buy_in=max_buy_in
    )
    check_time_fee(time_fee, time_fee_period, min_buy_in=low)
    if await session.scalar(select(TableRecord.id).where(TableRecord.name == name)) is not None:
        raise TableNameTaken(f"a table is already named {name!r}")
    record = TableRecord(
        name=name,
        variant=table_config.variant.name,
        config=config_to_json(table_config),
        seats=seat_count,
        min_buy_in=low,
        max_buy_in=high,
        status=TableStatus.OPEN.value,
        spectator_chat=spectator_chat,
        time_fee=time_fee,
        time_fee_period=float(time_fee_period),
        rotation={"rotation": mixed.to_dict(), "from_hand": 1} if mixed is not None else None,
    )
    session.add(record)
    try:
        await session.flush()
    except IntegrityError:
        raise TableNameTaken(f"a table is already named {name!r}") from None
    await ledger.open_wallet(session, name=ledger.table_pool(record.id), kind=WalletKind.TABLE)
    return record


async def create_tournament_table(
    session: AsyncSession, *, tournament_id: int, number: int, config: TableConfig, seats: int
) -> TableRecord:
    """Table ``number`` of a tournament, open, named after it (``"<tournament> #<number>"``,
    the tournament's name cut to fit). Its rules must be a tournament table's (the engine's
    ``Table(..., tournament=True)`` judges them: absent hands killed once the starting hands
    are dealt) and take no rake, since nothing is paid from tournament chips; the buy-in
    columns hold 1, unused (its director seats players with their chips). No chip pool: the
    ledger never sees tournament chips. Raises :class:`BadConfig`, :class:`TableNameTaken`,
    or ``LookupError`` for a tournament that is not there."""
    (record,) = await create_tournament_tables(
        session, tournament_id=tournament_id, numbers=[number], config=config, seats=seats
    )
    return record


async def create_tournament_tables(
    session: AsyncSession,
    *,
    tournament_id: int,
    numbers: Sequence[int],
    config: TableConfig,
    seats: int,
) -> list[TableRecord]:
    """Tables ``numbers`` of a tournament, as :func:`create_tournament_table` makes one, in
    one query for the names taken and one flush (the start of a large field opens a hundred
    tables and more)."""
    tournament = await session.get(TournamentRecord, tournament_id)
    if tournament is None:
        raise LookupError(f"no tournament {tournament_id}")
    try:
        table = Table(config, seats, tournament=True)
    except (ConfigError, EngineError) as exc:
        raise BadConfig(str(exc)) from None
    if config.rake_percent:
        raise BadConfig("rake_percent: a tournament table takes no rake from its chips")
    names: dict[str, int] = {}
    for number in numbers:
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            raise BadConfig("a tournament's tables are numbered from 1")
        suffix = f" #{number}"
        names[tournament.name[: _NAME_MAX - len(suffix)] + suffix] = number
    taken = await session.scalar(
        select(TableRecord.name).where(TableRecord.name.in_(list(names))).limit(1)
    )
    if taken is not None:
        raise TableNameTaken(f"a table is already named {taken!r}")
    records = [
        TableRecord(
            name=name,
            variant=config.variant.name,
            config=config_to_json(config),
            seats=len(table.seats),
            min_buy_in=1,
            max_buy_in=1,
            status=TableStatus.OPEN.value,
            tournament_id=tournament_id,
            tournament_table=number,
        )
        for name, number in names.items()
    ]
    session.add_all(records)
    try:
        await session.flush()
    except IntegrityError:
        raise TableNameTaken(f"a table is already named one of {sorted(names)}") from None
    return records


_NAME_MAX = 64  # tables.name


async def get(session: AsyncSession, *, table_id: int) -> TableRecord | None:
    return await session.get(TableRecord, table_id)


async def list_tables(
    session: AsyncSession, *, status: TableStatus | None = None
) -> list[TableRecord]:
    query = select(TableRecord).order_by(TableRecord.id)
    if status is not None:
        query = query.where(TableRecord.status == status.value)
    return list((await session.scalars(query)).all())


def table_config(record: TableRecord) -> TableConfig:
    """The engine config of a stored table (what a table actor plays)."""
    return config_from_json(record.config)


async def record_hand(
    session: AsyncSession,
    *,
    table_id: int,
    number: int,
    phh: str,
    events: list[Any],
    result: dict[str, Any],
    config: dict[str, Any] | None = None,
    rake: int = 0,
    deck: dict[str, Any] | None = None,
    rotation: dict[str, Any] | None = None,
) -> int:
    """Keep a finished hand; (table, number) is unique, so a retried save cannot double it.
    ``config``: the rules it was dealt under (what a player's verifier replays it by);
    ``deck``: the seeds of its deal, sealed (server.store.deck_seal), for the operator's audit;
    ``rotation``: a mixed table's hand, its position in the rotation (the table's journal).
    Returns the hand's id. (One statement built once: every table writes one a hand.)"""
    values = {
        "table_id": table_id,
        "number": number,
        "phh": phh,
        "events": events,
        "result": result,
        "config": config,
        "rake": rake,
        "deck": deck,
        "rotation": rotation,
    }
    return int((await session.execute(_INSERT_HAND, values)).scalar_one())


_HANDS = cast(sqlalchemy.Table, HandRecord.__table__)
_INSERT_HAND = insert(_HANDS).returning(_HANDS.c.id)


async def recent_hands(
    session: AsyncSession, *, table_id: int, limit: int = 20
) -> list[HandRecord]:
    """The table's latest hands, newest first."""
    query = (
        select(HandRecord)
        .where(HandRecord.table_id == table_id)
        .order_by(HandRecord.number.desc())
        .limit(limit)
    )
    return list((await session.scalars(query)).all())


async def last_hand(
    session: AsyncSession, *, table_id: int
) -> tuple[int, dict[str, Any] | None, dict[str, Any] | None] | None:
    """The table's last recorded hand: its number, its position in a rotation (None: not a
    mixed hand) and its rules; None before the first. A mixed table's journal: the next hand's
    game follows from it (``server.table.mixed``)."""
    row = (
        await session.execute(
            select(HandRecord.number, HandRecord.rotation, HandRecord.config)
            .where(HandRecord.table_id == table_id)
            .order_by(HandRecord.number.desc())
            .limit(1)
        )
    ).first()
    if row is None:
        return None
    return int(row[0]), row[1], row[2]
