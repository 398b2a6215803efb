"""A table's snapshot: the table as one player (or a spectator) may see it, with the
``seq`` of the last event it includes. Its table part is the engine's picture
(``engine.table_view.TablePicture``), the same fold a client makes of the events; the
server adds what only it knows: the number, the stakes and buy-in, the clock, the next
hand's commitment (docs/fairness.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from engine.table import Table
from engine.table_view import TablePicture


class _Player(Protocol):
    connections: int
    time_bank: float


def snapshot_of(
    table_id: int,
    table: Table,
    player: str | None,
    *,
    players: Mapping[str, _Player],
    seq: int,
    hand_number: int,
    buy_in: tuple[int, int],
    clock_remaining: float | None,
    operator_pause: str | None = None,
    committed: tuple[int, str] | None = None,
    tournament_id: int | None = None,
    rotation: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``committed``: the next hand's published commitment, not yet dealt (hand, commitment),
    so that a player who sits down or comes back now gives that very hand a seed.
    ``tournament_id``: a tournament's table says whose (a cash table's snapshot has no such
    key). ``rotation``: a mixed table's rotation and the game of its hand (``server.table.mixed``;
    a table of one game's snapshot has no such key)."""

    def presence(name: str) -> tuple[bool, float]:
        state = players.get(name)
        return bool(state and state.connections), round(state.time_bank, 1) if state else 0.0

    picture = TablePicture.of_table(
        table, player, hand_number=hand_number, waiting=table.waiting, presence=presence
    ).snapshot()
    config = table.config
    hand = table.hand
    clock = None
    if hand is not None and clock_remaining is not None and not hand.is_over():
        clock = {"seat": hand.seat_to_act(), "remaining": clock_remaining}
    snapshot: dict[str, Any] = {
        "type": "snapshot",
        "table": table_id,
        "seq": seq,
        "variant": config.variant.name,
        "stakes": {
            "ante": config.ante,
            "bring_in": config.bring_in,
            "small_bet": config.small_bet,
            "big_bet": config.big_bet,
            "structure": config.structure,
        },
        "buy_in": {"min": buy_in[0], "max": buy_in[1]},
        "seats": picture["seats"],
        "you": picture["you"],
        "hand_number": picture["hand_number"],
        "hand": picture["hand"],
        "clock": clock,
        "waiting": picture["waiting"],
        "operator_pause": operator_pause,
        "deck_committed": deck_committed(committed),
    }
    if tournament_id is not None:
        snapshot["tournament_id"] = tournament_id
    if rotation is not None:
        snapshot["rotation"] = rotation
    return snapshot


def deck_committed(committed: tuple[int, str] | None) -> dict[str, Any] | None:
    """A snapshot's pending commitment, as ``deck_committed`` announced it (None: none)."""
    if committed is None:
        return None
    return {"hand": committed[0], "commitment": committed[1]}
