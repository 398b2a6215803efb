"""The back office's live list of tables: what each table is doing right now.

A table's live state comes from its actor, on the node that runs it (``live_state``); the
other nodes hear it in the lobby gossip (``server.cardroom.gossip``) and never ask. A table is
``running`` on this node, ``elsewhere`` on the node that told of it lately, or
``between_nodes`` while no node has told of it within a lease (taken over, or starting).
A table whose hand has not moved (no deal, action or time-out) for longer than a threshold
is ``stuck``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from server.table.actor import TableActor


class LiveState(StrEnum):
    RUNNING = "running"  # this node runs it
    ELSEWHERE = "elsewhere"  # another node runs it, as it told lately
    BETWEEN_NODES = "between_nodes"  # no node told of it lately


def live_state(actor: TableActor) -> dict[str, Any]:
    """The table as it is now, JSON-ready (what the gossip carries to the other nodes):
    hand number, street, pot, seated players with their stacks, seconds since it moved."""
    hand = actor.table.hand
    playing = hand is not None and not hand.is_over()
    in_hand: dict[int, int] = {}
    if hand is not None and playing:
        in_hand = dict(zip(hand.seats, hand.stacks, strict=True))
    players = [
        {
            "seat": number,
            "player": seat.player,
            "stack": in_hand.get(number, seat.stack),
            "in_hand": number in in_hand,
            "sitting_out": seat.sitting_out,
        }
        for number, seat in enumerate(actor.table.seats)
        if seat is not None
    ]
    since = None if actor.last_action_at is None else actor.clock() - actor.last_action_at
    paused_by, reason = (
        ("operator", actor.ops.paused)
        if actor.ops.paused is not None
        else ("database", None)
        if actor.paused
        else (None, None)
    )
    return {
        "hand_number": actor.hand_number,
        "in_hand": playing,
        "street": hand.streets[hand.street].name if hand is not None and playing else None,
        "pot": hand.pot_total() if hand is not None and playing else 0,
        "players": players,
        "seconds_since_action": None if since is None else round(since, 3),
        "paused_by": paused_by,
        "pause_reason": reason,
    }


def live_row(
    summary: dict[str, Any],
    live: dict[str, Any] | None,
    state: LiveState,
    *,
    stuck_after: float,
    heard_ago: float = 0.0,
) -> dict[str, Any]:
    """One line of the live list from a table's lobby summary and live state (None: not
    known, the table between nodes); ``heard_ago``: how old the live state is."""
    live = dict(live or {})
    since = live.get("seconds_since_action")
    if since is not None:
        since = round(float(since) + heard_ago, 3)
    in_hand = bool(live.get("in_hand"))
    return {
        "id": summary["id"],
        "name": summary["name"],
        "variant": summary["variant"],
        "state": state.value,
        "node": summary.get("node") if state is not LiveState.BETWEEN_NODES else None,
        "hand_number": live.get("hand_number"),
        "in_hand": in_hand,
        "street": live.get("street"),
        "pot": int(live.get("pot") or 0),
        "players": list(live.get("players") or []),
        "seconds_since_action": since,
        "stuck": in_hand and since is not None and since > stuck_after,
        "paused_by": live.get("paused_by"),
        "pause_reason": live.get("pause_reason"),
        "rotation": summary.get("rotation"),
    }
