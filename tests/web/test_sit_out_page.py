"""Sitting out and leaving on the page, in scripted hands (a stacked deck): "Sit out now" and
"Leave seat" on one's turn fold the hand at once, not after the action clock and time bank;
the seat of a player who left goes when the hand ends; a seat's time bank shows what is
left of it, nothing once it is spent."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from page_steps import act, new_name, sign_up
from playwright.sync_api import Browser, BrowserContext, Page, expect
from scripted_server import ScriptedServer

from engine.cards import Deck

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from decks import stud_deck  # noqa: E402

# Seats 0, 1, 2 in the order the players sit: seat 1's 2c brings in, then seat 2 acts,
# then seat 0.
HANDS = [
    "2d 3d Jc | 4h | 5h | 6h | Tc",
    "5d 6d 2c | 7h | 8h | 9h | Td",
    "8d 9d Qc | Ah | Kh | Jh | Th",
]
# What a turn could wait at most on the tables below: 30 s of action clock, 30 of bank.
CLOCK_AND_BANK = 60.0


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScriptedServer]:
    with ScriptedServer(
        Path(tmp_path_factory.mktemp("sitout")),
        lambda: Deck(order=stud_deck(HANDS).order()),
        action_clock_seconds=30,
        time_bank_seconds=30,
        pause_between_hands_seconds=0.5,
    ) as server:
        yield server


def _seat_players(
    browser: Browser, server: ScriptedServer, name: str, count: int, **clocks: float
) -> tuple[int, list[BrowserContext], list[Page]]:
    """A paused table (its own ``action_clock`` and ``time_bank`` if given); ``count`` new
    players open it and sit (seats 0, 1, ...); then it plays."""
    created = server.admin(
        "POST",
        "/admin/tables",
        {"name": name, "seats": count, "min_buy_in": 20, "max_buy_in": 500},
    )
    table_id = int(created["id"])
    if clocks:
        server.admin("PATCH", f"/admin/tables/{table_id}", dict(clocks))
    server.admin("POST", f"/admin/tables/{table_id}/pause", {"reason": "seating"})
    contexts, pages = [], []
    for seat in range(count):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        contexts.append(context)
        pages.append(page)
        sign_up(page, server.url, new_name("out"))
        row = page.locator("#lobby-rows tr", has_text=name)
        expect(row).to_be_visible()
        row.locator("button.open").click()
        expect(page.locator("#table-view")).to_be_visible()
        page.locator("#buy-in").fill("100")
        page.locator(f"button.sit[data-seat='{seat}']").click()
        expect(page.locator(".seat.me")).to_have_attribute("data-seat", str(seat))
    server.admin("POST", f"/admin/tables/{table_id}/resume", {"reason": "all seated"})
    return table_id, contexts, pages


def test_sit_out_and_leave_on_one_s_turn_fold_at_once(
    scripted: ScriptedServer, browser: Browser
) -> None:
    table_id, contexts, pages = _seat_players(browser, scripted, "Scripted sit out", 3)
    try:
        first, bring, third = pages
        errors: list[str] = []
        for page in pages:
            page.on("pageerror", lambda error: errors.append(str(error)))
        act(bring, "bring_in")

        # Seat 2 leaves on its turn: folded at once; the seat stays until the hand ends.
        expect(third.locator("#actions:not([hidden])")).to_have_count(1)
        started = time.monotonic()
        third.locator("#seat-controls #leave").click()
        expect(first.locator(".seat[data-seat='2'].folded")).to_have_count(1, timeout=10_000)
        took_leave = time.monotonic() - started
        expect(first.locator(".seat[data-seat='2'] .status")).to_contain_text("leaving")
        expect(first.locator("#log")).not_to_contain_text("(out of time)")

        # Seat 0 sits out now on its turn (folding, no free check asked): folded at once; the
        # hand ends (seat 1 wins) and seat 2 is free right after it.
        expect(first.locator("#actions:not([hidden])")).to_have_count(1)
        expect(first.locator("#check-when-free")).not_to_be_checked()
        started = time.monotonic()
        first.locator("#seat-controls #sit-out-now").click()
        expect(bring.locator(".seat[data-seat='0'].folded")).to_have_count(1, timeout=10_000)
        took_sit_out = time.monotonic() - started
        for page in (first, bring):
            expect(page.locator(".seat[data-seat='2']")).to_have_class("seat empty")
        expect(first.locator("#seat-controls #sit-in")).to_be_visible()
        expect(third.locator(".seat.me")).to_have_count(0)
        expect(third.locator("button.sit").first).to_be_visible()
        # Shown with -s: from the click to the fold on another player's page.
        print(f"leave folded in {took_leave:.2f}s, sit out folded in {took_sit_out:.2f}s")
        # Not by the clock (a minute): a tenth of it leaves a loaded machine its time.
        assert max(took_leave, took_sit_out) < CLOCK_AND_BANK / 10, (took_leave, took_sit_out)
        # The server agrees: the hand's record shows the two folds, none by the clock.
        listed = scripted.admin("GET", f"/admin/hands?table={table_id}")
        record = scripted.admin("GET", f"/admin/hands/{listed['hands'][0]['id']}")
        acts = [e["data"] for e in record["events"] if e["kind"] == "action"]
        assert [(a["seat"], a["action"]) for a in acts] == [
            (1, "bring_in"),
            (2, "fold"),
            (0, "fold"),
        ]
        assert not any(a.get("timeout") for a in acts)
        assert not errors, errors
    finally:
        for context in contexts:
            context.close()


def test_a_spent_time_bank_shows_what_is_left(scripted: ScriptedServer, browser: Browser) -> None:
    """A 1 s action clock and a 3 s bank: seat 0 (two seats: its 6d brings in) lets its
    turn run out, so its bank is spent and shows nothing; the hand over, it shows the 2 s
    each hand gives back."""
    _, contexts, pages = _seat_players(
        browser, scripted, "Scripted time bank", 2, action_clock=1, time_bank=3
    )
    try:
        idle, watcher = pages
        expect(watcher.locator(".seat[data-seat='0'] .bank")).to_have_text("bank 3s")
        # Seat 0's clock runs out (1 + 3 s): the bring-in is posted for it, its bank is gone.
        expect(watcher.locator("#actions:not([hidden])")).to_have_count(1, timeout=10_000)
        expect(watcher.locator("#log")).to_contain_text("brings in for 2 (out of time)")
        expect(watcher.locator(".seat[data-seat='0'] .bank")).to_have_count(0)
        expect(idle.locator(".seat.me .bank")).to_have_count(0)
        expect(watcher.locator(".seat.me .bank")).to_have_text("bank 3s")
        act(watcher, "fold")
        for page in pages:
            expect(page.locator(".seat[data-seat='0'] .bank")).to_have_text("bank 2s")
    finally:
        for context in contexts:
            context.close()
