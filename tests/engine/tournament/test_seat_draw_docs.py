"""The seat draw's checker in docs/fairness.md, run as it is written there, draws what the
server draws (``engine.tournament.draw``): a player can trust the page's method."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from engine.tournament.draw import Draw, TableQuota, draw_seats, run_draw

FAIRNESS = Path(__file__).resolve().parents[3] / "docs" / "fairness.md"
SEED = bytes.fromhex("5f" * 32)


def documented_checker() -> Any:
    text = FAIRNESS.read_text()
    section = text.split("## Tournament seat draws: `stud-seat-draw/1`", 1)[1]
    (code,) = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], re.S)
    scope: dict[str, Any] = {}
    exec(code, scope)  # the page's own code, nothing else
    return scope["seat_draw"]


@pytest.mark.parametrize("field", [3, 20, 1000])
def test_the_documented_checker_draws_the_start_as_the_server_does(field: int) -> None:
    players = [f"player-{n}" for n in range(field)]
    seating = draw_seats(SEED, 12, players, 8)
    tables = [(q.table, q.count, list(q.seats)) for q in seating.draw.quotas]
    checked = documented_checker()(SEED, 12, 1, players, tables)
    assert checked == {p.player: (p.table, p.seat) for p in seating.placements}


def test_the_documented_checker_draws_a_redraw_into_free_seats_as_the_server_does() -> None:
    players = ("ann", "bob", "cyd", "dee", "eve")
    quotas = (TableQuota(2, 3, (0, 3, 5, 6)), TableQuota(4, 2, (1, 7)))
    seating = run_draw(SEED, Draw(12, 3, players, quotas))
    tables = [(q.table, q.count, list(q.seats)) for q in quotas]
    checked = documented_checker()(SEED, 12, 3, list(players), tables)
    assert checked == {p.player: (p.table, p.seat) for p in seating.placements}


def test_the_documented_checker_draws_a_late_entrant_as_the_server_does() -> None:
    """One player, one place at each of the tables with the fewest players: the cards left
    over unused, as the page says."""
    quotas = (TableQuota(1, 1, (2, 4)), TableQuota(3, 1, (0,)), TableQuota(4, 1, (5, 6, 7)))
    for round_ in range(2, 12):
        seating = run_draw(SEED, Draw(12, round_, ("late-entrant",), quotas))
        tables = [(q.table, q.count, list(q.seats)) for q in quotas]
        checked = documented_checker()(SEED, 12, round_, ["late-entrant"], tables)
        assert checked == {p.player: (p.table, p.seat) for p in seating.placements}
