"""The lobby's list and the back office's live list of every open table, as one node sees them:
its own tables from their actors, the others' as their nodes last told, the rest from records.
The lobby lists the cash tables: a tournament's tables are reached through their tournament
(the back office's live list has them all)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from server.cardroom.gossip import Gossip
from server.cardroom.live_tables import LiveState, live_row, live_state
from server.cardroom.table_stats import TableStats, lobby_line
from server.db.models import TableRecord
from server.store import tables
from server.table.actor import TableActor


def lobby_list(
    gossip: Gossip,
    running: Iterable[int],
    summary: Callable[[int], dict[str, Any]],
    records: Mapping[int, TableRecord],
) -> list[dict[str, Any]]:
    """Every open cash table, as the lobby lists it: this node's own (``running``, each its
    ``summary``), the others' as they last told (a table between nodes is listed from its
    record)."""
    listed: dict[int, dict[str, Any]] = {}
    for table_id in gossip.heard:
        heard = gossip.run_elsewhere(table_id)
        if heard is not None:
            listed[table_id] = heard.summary
    for table_id in running:
        listed[table_id] = summary(table_id)
    for table_id, record in records.items():
        if table_id not in listed:
            listed[table_id] = record_summary(record)
    return [
        listed[table_id]
        for table_id in sorted(listed)
        if listed[table_id].get("tournament_id") is None
    ]


def live_list(
    gossip: Gossip,
    running: Iterable[tuple[int, TableActor]],
    summary: Callable[[int], dict[str, Any]],
    records: Mapping[int, TableRecord],
    *,
    stuck_after: float,
) -> list[dict[str, Any]]:
    """Every open table as it is now, for the back office (``server.cardroom.live_tables``)."""
    now = time.monotonic()
    rows: dict[int, dict[str, Any]] = {}
    for table_id in gossip.heard:
        heard = gossip.run_elsewhere(table_id)
        if heard is not None and heard.summary.get("id") == table_id:
            rows[table_id] = live_row(
                heard.summary,
                heard.live,
                LiveState.ELSEWHERE,
                stuck_after=stuck_after,
                heard_ago=now - heard.at,
            )
    for table_id, actor in running:
        rows[table_id] = live_row(
            summary(table_id),
            live_state(actor),
            LiveState.RUNNING,
            stuck_after=stuck_after,
        )
    for table_id, record in records.items():
        if table_id not in rows:
            paused = record.paused_reason
            rows[table_id] = live_row(
                record_summary(record),
                None if paused is None else {"paused_by": "operator", "pause_reason": paused},
                LiveState.BETWEEN_NODES,
                stuck_after=stuck_after,
            )
    return [rows[table_id] for table_id in sorted(rows)]


def running_summary(
    record: TableRecord, actor: TableActor, stats: TableStats, *, restarts: int, node: str
) -> dict[str, Any]:
    """The lobby line of a table this node runs, from its actor."""
    mix = actor.mix
    return lobby_line(
        record,
        actor.table.config,
        seats=len(actor.table.seats),
        buy_in=(actor.settings.min_buy_in, actor.settings.max_buy_in),
        paused=actor.ops.paused is not None,
        seats_taken=sum(1 for s in actor.table.seats if s is not None),
        waiting=len(actor.waiting),
        average_pot=stats.average_pot(),
        hands_per_hour=stats.hands_per_hour(),
        restarts=restarts,
        node=node,
        rotation=mix.rotation.to_dict() if mix is not None and mix.rotation is not None else None,
    )


def record_summary(record: TableRecord) -> dict[str, Any]:
    """The lobby line of a table from its record alone (no node told of it lately)."""
    rotation = (record.rotation or {}).get("rotation")
    return lobby_line(record, tables.table_config(record), rotation=rotation)
