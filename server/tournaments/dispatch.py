"""A fact's orders carried out at many tables at once, in the order each table needs them.

The start of a field of a thousand seats a thousand players at 125 tables and lets each
table deal: told one after the other, each order waiting for its table to write it, the
last table dealt its first hand half a minute after the first. Orders to different tables
do not depend on one another, with one exception: a player taken from one table and seated
at another must leave the first before the second seats them (never at two tables at once).
So the orders are cut into **waves** (:func:`waves`): in a wave each table's orders keep
their order, in one lane, and the lanes run side by side; a player's order at a table other
than the one their last order of the wave went to starts the next wave, which begins once
the one before has ended. An order a lane could not carry out stops that lane and, once its
wave has ended, the rest (the director stops as before, and the next takes it over from the
journal, making the tables match it first).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from engine.tournament.run import Order

LANES = 16  # tables told at once: each waits on its table's write, and SQLite writes one


def waves(orders: Sequence[Order]) -> list[dict[int | None, list[Order]]]:
    """The orders in waves of lanes, by table (None: orders to no table, kept in order)."""
    found: list[dict[int | None, list[Order]]] = [{}]
    where: dict[str, int | None] = {}  # each player's table in the current wave
    for order in orders:
        table: int | None = getattr(order, "table", None)
        player: str | None = getattr(order, "player", None)
        if table is not None and player is not None:
            if player in where and where[player] != table:
                found.append({})
                where = {}
            where[player] = table
        found[-1].setdefault(table, []).append(order)
    return [wave for wave in found if wave]


async def carry_out(
    orders: Sequence[Order], one: Callable[[Order], Awaitable[object]], *, lanes: int = LANES
) -> None:
    """Each order given to ``one``, wave by wave, at most ``lanes`` tables at once; the first
    error of a wave raised once all its lanes have stopped."""
    gate = asyncio.Semaphore(lanes)

    async def lane(lane_orders: list[Order]) -> None:
        async with gate:
            for order in lane_orders:
                await one(order)

    for wave in waves(orders):
        if len(wave) == 1:
            (only,) = wave.values()
            await lane(only)
            continue
        done = await asyncio.gather(*(lane(o) for o in wave.values()), return_exceptions=True)
        for outcome in done:
            if isinstance(outcome, BaseException):
                raise outcome
