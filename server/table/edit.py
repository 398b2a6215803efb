"""A table's settings an operator may change (``PATCH /admin/tables/{id}``), declared once.

Each :class:`Setting` names a column of the table's row (and the field of the same name in
the request, ``schemas.TableUpdate``) and the :class:`~server.table.ports.TableSettings`
field the table actor plays it as. Everything else follows from the declaration: the
request's values merged onto the stored ones and judged by the engine as at creation
(:func:`merged`), the change carried to the table as JSON (``commands.ChangeSettings``),
written with its audit entry by the table itself, played from the next hand on
(:func:`apply`), and told to the players (:func:`settings_event`). A new setting (time
collection's, say) joins by a column, a field of ``TableUpdate`` and a line in
:data:`SETTINGS`. The rake is a rule of the engine's (``TableConfig.rake_percent``...), so
it is changed in ``config``, key by key, like any rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.table import SeatingRules, Table
from engine.table_events import TableSettingsChanged
from engine.variants import TableConfig
from server.db.models import TableRecord
from server.store.table_config import config_from_json, config_to_json
from server.store.tables import check_table, check_time_fee
from server.table.ports import TableSettings


@dataclass(frozen=True, slots=True)
class Setting:
    name: str  # the table row's column, and the request's field
    runtime: str | None  # the TableSettings field it is played as (None: the rules, apart)


SETTINGS: tuple[Setting, ...] = (
    Setting("config", None),
    Setting("seats", "seat_count"),
    Setting("min_buy_in", "min_buy_in"),
    Setting("max_buy_in", "max_buy_in"),
    Setting("action_clock", "action_clock"),
    Setting("time_bank", "time_bank"),
    Setting("showdown_pause", "showdown_pause"),
    Setting("spectator_chat", "spectator_chat"),
    Setting("time_fee", "time_fee"),
    Setting("time_fee_period", "time_fee_period"),
)
NAMES = frozenset(setting.name for setting in SETTINGS)


def values_of(record: TableRecord) -> dict[str, Any]:
    """The table's editable settings as stored (null clocks: the node's defaults)."""
    return {setting.name: getattr(record, setting.name) for setting in SETTINGS}


def merged(record: TableRecord, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Every editable setting as it is to be: ``changes`` over the stored values (``config``
    key by key over the stored rules), judged by the engine as at creation (``bad_config``).
    Whether the seats in use allow the seat count is the table's to say."""
    values = values_of(record)
    values.update({name: value for name, value in changes.items() if name != "config"})
    rules = {**record.config, **(changes.get("config") or {})}
    config, seats, low, high = check_table(
        rules,
        seats=values["seats"],
        min_buy_in=values["min_buy_in"],
        max_buy_in=values["max_buy_in"],
    )
    values.update(config=config_to_json(config), seats=seats, min_buy_in=low, max_buy_in=high)
    check_time_fee(values["time_fee"], values["time_fee_period"], min_buy_in=low)
    return values


def apply(values: Mapping[str, Any], table: Table, settings: TableSettings) -> None:
    """Play ``values`` from now on (between hands): the engine's table takes the rules, the
    seat count and the seating policy (refusing, changing nothing, a seat in use that would
    go), then the actor's settings take the rest (a null clock keeps the one played)."""
    config = config_from_json(values["config"])
    runtime = {
        setting.runtime: values[setting.name]
        for setting in SETTINGS
        if setting.runtime is not None and values.get(setting.name) is not None
    }
    seats = int(runtime.get("seat_count", len(table.seats)))
    rules = SeatingRules(
        runtime.get("min_buy_in", settings.min_buy_in),
        runtime.get("max_buy_in", settings.max_buy_in),
        settings.waiting_offer,
    )
    table.reconfigure(config, seats, rules)
    for name, value in runtime.items():
        setattr(settings, name, value)


def settings_event(
    config: TableConfig, seats: int, settings: TableSettings
) -> TableSettingsChanged:
    """What the players are told of the table's settings (and a snapshot shows)."""
    return TableSettingsChanged(
        seats=seats,
        variant=config.variant.name,
        stakes={
            "ante": config.ante,
            "bring_in": config.bring_in,
            "small_bet": config.small_bet,
            "big_bet": config.big_bet,
            "structure": config.structure,
        },
        buy_in={"min": settings.min_buy_in, "max": settings.max_buy_in},
        action_clock=settings.action_clock,
        time_bank=settings.time_bank,
        config=config_to_json(config),
    )
