"""The pot picture on the page in a scripted hand (a stacked deck): bets not yet called make
no side pot; a player all in does, and at the hand's end the page's pots are the engine's."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from page_steps import act, new_name, sign_up
from playwright.sync_api import Browser, BrowserContext, Page, expect
from scripted_server import ScriptedServer

from engine.cards import Deck

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from decks import stud_deck  # noqa: E402

# Seats 0, 1, 2 in the order the players sit. Seat 1's 2c brings in; seat 2's A-Q is the high
# board on fourth street. Everyone holds seven cards, so the hand can go to a showdown.
HANDS = [
    "2d 3d Jc | 4h | 5h | 6h | Tc",
    "5d 6d 2c | 7h | 8h | 9h | Td",
    "8d 9d Qc | Ah | Kh | Jh | Th",
]
TABLE = "Scripted side pot"


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScriptedServer]:
    with ScriptedServer(
        Path(tmp_path_factory.mktemp("scripted")),
        lambda: Deck(order=stud_deck(HANDS).order()),
        action_clock_seconds=60,
        time_bank_seconds=0,
        pause_between_hands_seconds=0.5,
    ) as server:
        yield server


def _seat(browser: Browser, server: ScriptedServer, buy_in: int) -> tuple[BrowserContext, Page]:
    """A new player signs up, opens the scripted table and sits in the first free seat."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sign_up(page, server.url, new_name("pot"))
    row = page.locator("#lobby-rows tr", has_text=TABLE)
    expect(row).to_be_visible()
    row.locator("button.open").click()
    expect(page.locator("#table-view")).to_be_visible()
    page.locator("#buy-in").fill(str(buy_in))
    page.locator("button.sit").first.click()
    expect(page.locator(".seat.me")).to_have_count(1)
    return context, page


def test_side_pot_shows_only_once_a_player_is_all_in(
    scripted: ScriptedServer, browser: Browser
) -> None:
    """Bets not yet called make no side pot on the page; an all-in does, and the hand's pots
    at its end are the ones the engine paid."""
    table = scripted.admin(
        "POST", "/admin/tables", {"name": TABLE, "seats": 3, "min_buy_in": 5, "max_buy_in": 500}
    )
    table_id = table["id"]
    scripted.admin("POST", f"/admin/tables/{table_id}/pause", {"reason": "seating"})
    contexts = []
    try:
        pages = []
        for buy_in in (9, 100, 100):  # seat 0 is short: all in on fourth street
            context, page = _seat(browser, scripted, buy_in)
            contexts.append(context)
            pages.append(page)
        short, bring, high = pages
        scripted.admin("POST", f"/admin/tables/{table_id}/resume", {"reason": "all seated"})

        for p in pages:
            print(
                "DEBUG",
                p.locator("#seats").inner_text().replace("\n", " | "),
                p.locator("#street").inner_text(),
                p.locator("#notice").inner_text(),
            )
        act(bring, "bring_in")
        act(high, "complete")
        # Seat 0 has put in its ante, seat 1 the bring-in, seat 2 a completion: bets not yet
        # called, and nobody all in: one pot.
        expect(short.locator("#actions:not([hidden])")).to_have_count(1)
        expect(short.locator("#pot")).to_have_text("10")
        expect(short.locator("#side-pots")).to_have_text("")
        act(short, "call")
        act(bring, "call")
        expect(short.locator("#street")).not_to_have_text("Third street", timeout=10_000)
        expect(short.locator("#pot")).to_have_text("18")
        expect(short.locator("#side-pots")).to_have_text("")

        act(high, "bet")  # fourth street: A-Q high bets 5
        expect(short.locator("#side-pots")).to_have_text("")
        act(short, "call")  # all in for 3: seat 1 may still call, so it is in both pots
        for page in pages:
            expect(page.locator("#pot")).to_have_text("26")
            expect(page.locator("#side-pots")).to_have_text("(main 24, side 2)")
        act(bring, "call")
        for page in pages:
            expect(page.locator("#pot")).to_have_text("31")
            expect(page.locator("#side-pots")).to_have_text("(main 27, side 4)")

        # No next hand: the page keeps this one's picture. Check it down; the page's pots at
        # the end are the engine's.
        scripted.admin("POST", f"/admin/tables/{table_id}/pause", {"reason": "look at it"})
        for _street in range(3):  # fifth, sixth and seventh
            act(high, "check")
            act(bring, "check")
        for page in pages:
            expect(page.locator("#history li")).to_have_count(1, timeout=15_000)
            expect(page.locator("#side-pots")).to_have_text("(main 27, side 4)")
        listed = scripted.admin("GET", f"/admin/hands?table={table_id}")
        assert listed["total"] == 1
        record = scripted.admin("GET", f"/admin/hands/{listed['hands'][0]['id']}")
        assert record["result"]["pots"] == [
            {"amount": 27, "eligible": [0, 1, 2]},
            {"amount": 4, "eligible": [1, 2]},
        ]
    finally:
        for context in contexts:
            context.close()
