"""One bot in a tournament (``stud-bots --tournament``, ``stud_bots.tournament``): its seat
followed (``stud_client.tournaments``), the table of its seat watched, its turns played there
with its strategy, and a move's new table gone to.

It never moves by itself and never acts at a table it has left: it acts at a table only while
its tournament says it sits there (the state, then the ``seated`` and ``moved`` events), and a
move comes between its hands. A move's event lost (a dropped connection, a director taken
over) costs it nothing: after a reconnect its client asks the state again, and a bot told to
sit where it is not seated, twice running a few seconds apart, asks it again itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TypeVar

from stud_bots.strategies import Bot
from stud_client import (
    Action,
    ConnectionLost,
    ServerError,
    StudClient,
    StudError,
    Table,
    TableView,
    TournamentFollow,
    TournamentSeat,
)

__all__ = ["CHECK_SECONDS", "Entrant", "Tally", "play"]

T = TypeVar("T")

CHECK_SECONDS = 2.0  # how often a bot checks it sits where its tournament says


@dataclass(slots=True)
class Entrant:
    """A bot account in the tournament: its strategy, its client (one websocket), its
    follow of the tournament once registered, and what went wrong for it."""

    name: str
    strategy: str
    bot: Bot
    client: StudClient
    rng: random.Random
    think: tuple[float, float]
    follow: TournamentFollow | None = None
    registered: bool = False
    tables: list[int] = field(default_factory=list)  # the tables it sat at, in order
    errors: Counter[str] = field(default_factory=Counter)  # failures that are no error frame
    refreshes: int = 0  # states asked again: it did not sit where it was told


class Tally:
    """The hands the bots saw end, by table (each table's told by every bot there)."""

    def __init__(self) -> None:
        self.ended: dict[int, set[int]] = {}
        self.started = time.monotonic()

    def hand_ended(self, table_id: int, hand: int) -> None:
        self.ended.setdefault(table_id, set()).add(hand)

    @property
    def hands(self) -> int:
        return sum(len(hands) for hands in self.ended.values())


async def _lasting(entrant: Entrant, work: Awaitable[T]) -> T | None:
    """``work``'s result, or None when the connection dropped under it (counted)."""
    try:
        return await work
    except (ConnectionLost, TimeoutError) as error:
        entrant.errors["connection_lost" if isinstance(error, ConnectionLost) else "timeout"] += 1
        return None


async def play(entrant: Entrant, tally: Tally) -> None:
    """One bot's tournament: wherever its seat is, until it is out or the tournament over."""
    follow = entrant.follow
    assert follow is not None
    while not follow.over_for_me:
        seat = follow.seat
        if seat is None:
            await follow.wait_for(lambda f: f.seat is not None or f.over_for_me)
            continue
        await _sit_at(entrant, seat, tally)


async def _sit_at(entrant: Entrant, seat: TournamentSeat, tally: Tally) -> None:
    """Play at the seat's table until the follow says the bot sits elsewhere (moved) or is
    done; checking now and then that it sits there (else its state is asked again)."""
    follow = entrant.follow
    assert follow is not None
    try:
        table = await entrant.client.watch(seat.table)
    except ServerError:
        await asyncio.sleep(CHECK_SECONDS)  # counted by the client; the state says again
        await _refresh(entrant)
        return
    except (ConnectionLost, TimeoutError):
        entrant.errors["connection_lost"] += 1
        await asyncio.sleep(CHECK_SECONDS / 4)
        return
    if not entrant.tables or entrant.tables[-1] != seat.table:
        entrant.tables.append(seat.table)
    acting = asyncio.create_task(_act_at(entrant, table, seat, tally))
    moved = asyncio.create_task(follow.wait_for(lambda f: f.seat != seat or f.over_for_me))
    unseated = 0
    try:
        while True:
            done, _ = await asyncio.wait(
                {acting, moved}, timeout=CHECK_SECONDS, return_when=asyncio.FIRST_COMPLETED
            )
            if done:
                break
            # Told to sit here, and not seated here twice running: the move's event was lost
            # (or not carried out yet): where it sits, asked again.
            unseated = unseated + 1 if table.seat is None else 0
            if unseated >= 2:
                unseated = 0
                await _refresh(entrant)
    finally:
        for task in (acting, moved):
            task.cancel()
        await asyncio.gather(acting, moved, return_exceptions=True)
        with contextlib.suppress(StudError, TimeoutError):
            await table.unwatch()


async def _refresh(entrant: Entrant) -> None:
    assert entrant.follow is not None
    entrant.refreshes += 1
    with contextlib.suppress(ServerError, ConnectionLost, TimeoutError):
        await entrant.follow.refresh()


async def _act_at(entrant: Entrant, table: Table, seat: TournamentSeat, tally: Tally) -> None:
    """Act on the bot's turns at this table while its seat is here."""
    follow = entrant.follow
    assert follow is not None
    acted: int | None = None
    sat_in_at: int | None = None
    stream = table.events()
    try:
        async for event in stream:
            if event.kind == "hand_ended" and event.hand is not None:
                tally.hand_ended(table.id, event.hand)
            if follow.seat != seat:
                return  # moved: never another action here
            if table.seat is None:
                continue
            if event.kind == "turn" and event.data.get("seat") != table.seat:
                continue
            if event.kind not in ("turn", "snapshot", "sat_out", "hand_ended", "clock"):
                continue
            view = table.view
            me = view.me
            if me is None:
                continue
            if me.sitting_out and sat_in_at != view.seq:
                sat_in_at = view.seq  # its clock ran out: back in
                with contextlib.suppress(ServerError):
                    await _lasting(entrant, table.sit_in())
                continue
            if view.my_turn and view.turn_seq != acted:
                acted = view.turn_seq
                await _lasting(entrant, _take_turn(entrant, table, view, seat))
    finally:
        await stream.aclose()


async def _take_turn(entrant: Entrant, table: Table, view: TableView, seat: TournamentSeat) -> None:
    started = time.monotonic()
    assert view.legal is not None
    action: Action = entrant.bot.decide(view, view.legal)
    low, high = entrant.think
    pause = entrant.rng.uniform(low, high) - (time.monotonic() - started)
    if pause > 0:
        await asyncio.sleep(pause)
    if table.view.turn_seq != view.turn_seq:
        entrant.errors["missed_turn"] += 1  # the clock ran out while thinking
        return
    follow = entrant.follow
    if follow is None or follow.seat != seat:
        return  # moved meanwhile (it cannot be during its hand; never act where it left)
    with contextlib.suppress(ServerError):  # counted by the client, by code
        await table.act(action)
