"""Entries into one tournament take turns in a process (``registry.EntryTurns``), entries into
different tournaments do not wait for one another, and nothing is kept once nobody waits."""

from __future__ import annotations

import asyncio

from server.tournaments.registry import EntryTurns, spec_of


async def test_entries_into_one_tournament_take_turns() -> None:
    turns = EntryTurns()
    order: list[str] = []

    async def enter(name: str, tournament: int) -> None:
        async with turns.of(tournament):
            order.append(f"{name} in")
            await asyncio.sleep(0.01)
            order.append(f"{name} out")

    await asyncio.gather(enter("ann", 1), enter("bob", 1))
    assert order == ["ann in", "ann out", "bob in", "bob out"]
    order.clear()
    await asyncio.gather(enter("ann", 1), enter("cat", 2))
    assert order[:2] == ["ann in", "cat in"]
    assert turns._turns == {}


def test_a_format_is_read_once_for_each_text() -> None:
    class Record:
        def __init__(self, spec: dict[str, object]) -> None:
            self.spec = spec

    spec = {
        "kind": "sit_and_go",
        "variant": "razz",
        "betting": "fixed_limit",
        "seats_per_table": 8,
        "structure": {
            "starting_chips": 100,
            "entries": [{"ante": 1, "bring_in": 2, "small_bet": 4, "big_bet": 8, "hands": 3}],
        },
        "buy_in": 10,
        "fee": 1,
        "min_entrants": 8,
        "max_entrants": 8,
        "payout_table": "sit_and_go",
    }
    first = spec_of(Record(spec))  # type: ignore[arg-type]
    assert spec_of(Record(dict(reversed(list(spec.items()))))) is first  # type: ignore[arg-type]
    changed = spec_of(Record({**spec, "min_entrants": 6, "max_entrants": 6}))  # type: ignore[arg-type]
    assert changed.max_entrants == 6 and first.max_entrants == 8
