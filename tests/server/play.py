"""Helpers that play at a running table actor the way a client would (through ``submit``),
seed a database with players and a table, and crash an actor."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.actions import LegalActions
from server.accounts import registry
from server.accounts.passwords import Passwords
from server.cardroom.cluster import TableHandle
from server.db.models import Role
from server.store import tables
from server.table import commands
from server.table.actor import TableActor
from server.table.ports import CommandRefused

_ids = itertools.count()
PASSWORDS = Passwords(time_cost=1, memory_kib=8, parallelism=1)

Choose = Callable[[LegalActions, random.Random], tuple[str, int | None]]


async def submit(table: TableHandle, name: str, player: str, **fields: Any) -> dict[str, Any]:
    """The command record ``name`` with these fields, as code on the server builds one (the
    table still judges what it is given: a buy-in that is not a whole number is refused)."""
    if name not in commands.COMMANDS:
        commands.parse(name, player, fields)  # refused: no such command
    return await table.submit(commands.COMMANDS[name](player=player, **fields))


def random_legal(legal: LegalActions, rng: random.Random) -> tuple[str, int | None]:
    """Any legal action, amounts drawn from the legal ones (folds kept rare)."""
    kinds = [k for k in legal.kinds if k != "fold"] or list(legal.kinds)
    if rng.random() < 0.1 and "fold" in legal.kinds:
        return "fold", None
    kind = rng.choice(kinds)
    if kind == legal.wager:
        if legal.to_choices:
            return kind, rng.choice(legal.to_choices)
        return kind, rng.randint(legal.min_to, legal.max_to)
    return kind, None


def calling(legal: LegalActions, rng: random.Random) -> tuple[str, int | None]:
    """Never folds, never raises: every hand goes to showdown."""
    for kind in ("check", "call", "bring_in"):
        if kind in legal.kinds:
            return kind, None
    return random_legal(legal, rng)


async def play(
    actor: TableActor,
    until: Callable[[], bool],
    *,
    choose: Choose = random_legal,
    rng: random.Random | None = None,
    timeout: float = 120.0,
) -> None:
    """Act for whoever is to act until ``until()`` holds. ``timeout``: a table that never
    gets there (a gross failure), not a pace: hands on PostgreSQL with a busy machine's third
    of a core take many seconds."""
    rng = rng or random.Random(7)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not until():
        assert loop.time() < deadline, "the table did not get there in time"
        hand = actor.table.hand
        legal = hand.legal_actions() if hand is not None and not hand.is_over() else None
        if legal is None or legal.seat is None:
            await asyncio.sleep(0.002)
            continue
        occupant = actor.table.seats[legal.seat]
        assert occupant is not None
        kind, amount = choose(legal, rng)
        data: dict[str, Any] = {"action_id": f"t{next(_ids)}", "kind": kind}
        if amount is not None:
            data["amount"] = amount
        try:
            await submit(actor, "act", occupant.player, **data)
        except CommandRefused as refused:
            assert refused.code in ("not_your_turn", "no_hand"), refused.code


async def wait_for(
    condition: Callable[[], bool],
    timeout: float = 5.0,
    explain: Callable[[], str] | None = None,
) -> None:
    """Until ``condition`` holds; ``explain`` says what was there instead when it never does."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "condition never held" + (
            f": {explain()}" if explain is not None else ""
        )
        await asyncio.sleep(0.005)


async def seed(
    sessionmaker: async_sessionmaker[AsyncSession],
    players: list[str],
    *,
    bankroll: int = 1_000,
    config: dict[str, Any] | None = None,
    name: str = "T",
) -> int:
    """Players with ``bankroll`` each, and one table; its id."""
    async with sessionmaker() as session:
        for player in players:
            await registry.register(
                session,
                passwords=PASSWORDS,
                username=player,
                password="x" * 8,
                role=Role.PLAYER,
                bankroll=bankroll,
            )
        record = await tables.create(
            session, name=name, config=config or {}, min_buy_in=20, max_buy_in=500
        )
        await session.commit()
        return record.id


async def crash(actor: TableActor) -> None:
    """Kill the actor's task with a bug outside any command (what its loop cannot catch)."""

    async def boom() -> None:
        raise RuntimeError("a bug in the loop")

    actor._next_command = boom  # type: ignore[method-assign,assignment]
    with contextlib.suppress(CommandRefused):  # refused if the loop was busy: it dies first
        await submit(actor, "snapshot", "")  # wakes the loop, which then dies
    assert actor.task is not None
    with pytest.raises(RuntimeError):
        await actor.task
