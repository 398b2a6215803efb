"""A mixed table on the players' page: the lobby lists it with its rotation and its filter
finds it; watched, the table shows the game now, the game next and the hands until the
switch, each as the rotation schedules the hand dealt (engine.rotation), and follows the
switch and an operator's new rotation."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_server import OPERATOR, PASSWORD, LiveServer
from page_steps import PASSWORD as PLAYER_PASSWORD
from page_steps import new_name, sign_up
from playwright.sync_api import Browser, Page, expect
from table_players import playing_at

from engine.rotation import Rotation, positions

MIX_NAME = "Mixed stud"
STUD_MIX: dict[str, Any] = {
    "games": [
        {"variant": "seven_card_stud"},
        {"variant": "razz"},
        {"variant": "seven_card_stud_hi_lo"},
    ],
    "hands": 2,
    "stakes": {"ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
}
MIX_TEXT = "Stud mix: Stud / Razz / Stud Hi-Lo, 2 hands each"
# The table's rotation bar, read at one instant (the page redraws on every event).
BAR_NOW = """() => {
    const bar = document.getElementById("rotation-bar");
    const pick = (sel) => bar.querySelector(sel);
    return {
        hidden: bar.hidden,
        hand: pick(".now")?.dataset.hand ?? null,
        text: pick(".rotation-text")?.textContent ?? null,
        now: pick(".game-now")?.dataset.variant ?? null,
        nowTitle: pick(".game-now")?.textContent ?? null,
        count: pick(".now")?.textContent ?? null,
        next: pick(".game-next")?.dataset.variant ?? null,
        left: pick(".countdown")?.dataset.handsLeft ?? null,
        countdown: pick(".countdown")?.textContent ?? null,
        title: document.getElementById("table-game").textContent,
    };
}"""


@dataclass
class Mix:
    url: str
    table_id: int
    boss: str  # an operator's token


def _api(url: str, method: str, path: str, token: str | None = None, **body: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = httpx.request(method, url + path, headers=headers, json=body or None)
    assert response.status_code < 300, response.text
    return response.json()


@pytest.fixture(scope="module")
def mix(staffed_server: LiveServer) -> Iterator[Mix]:
    """A stud-mix table (two hands a game) where three players play as house bots do."""
    url = staffed_server.url
    boss = _api(url, "POST", "/auth/login", username=OPERATOR, password=PASSWORD)["access_token"]
    table_id = _api(url, "POST", "/admin/tables", boss, name=MIX_NAME, rotation=STUD_MIX)["id"]
    players = [new_name("mixer") for _ in range(3)]
    for name in players:
        _api(url, "POST", "/auth/register", username=name, password=PLAYER_PASSWORD)
    with playing_at(url, table_id, players, PLAYER_PASSWORD):
        yield Mix(url, table_id, boss)


def _errors(page: Page) -> list[str]:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


def test_the_lobby_lists_the_mixed_table_with_its_rotation_and_filters_on_it(
    mix: Mix, browser: Browser
) -> None:
    page = browser.new_page()
    errors = _errors(page)
    try:
        sign_up(page, mix.url, new_name("lou"))
        row = page.locator("#lobby-rows tr", has_text=MIX_NAME)
        expect(row.locator("td.game")).to_contain_text(MIX_TEXT)
        expect(row.locator("td.game .now")).to_contain_text("now ")
        rows = page.locator("#lobby-rows tr")
        expect(rows).to_have_count(4)  # the three demo tables and the mix
        page.select_option("#filter-game", "mixed")
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text(MIX_NAME)
        page.select_option("#filter-game", "razz")  # razz alone: not the mix
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("Demo: razz")
        page.select_option("#filter-game", label=MIX_TEXT)  # that rotation
        expect(rows).to_have_count(1)
        expect(rows.first).to_have_attribute("data-mixed", "true")
        page.select_option("#filter-game", "")
        expect(rows).to_have_count(4)
        assert not errors, errors
    finally:
        page.close()


def _expected(hand: int) -> tuple[str, int, str, int]:
    """Hand ``hand``'s game, its count in the game's turn, the game next and the hands of
    this game after it, as the rotation schedules them."""
    rotation = Rotation.from_dict(STUD_MIX)
    position = positions(rotation, [3] * hand)[-1]
    games = [g.variant.name for g in rotation.games]
    following = games[(position.game + 1) % len(games)]
    return games[position.game], position.hand, following, position.of - position.hand


def test_the_table_shows_the_game_now_the_next_and_the_countdown_through_the_switch(
    mix: Mix, browser: Browser, artifacts: Path
) -> None:
    page = browser.new_page()
    errors = _errors(page)
    try:
        sign_up(page, mix.url, new_name("wren"))
        page.locator("#lobby-rows tr", has_text=MIX_NAME).locator("button.watch").click()
        expect(page.locator("#rotation-bar")).to_be_visible(timeout=15_000)
        expect(page.locator("#rotation-bar .rotation-text")).to_have_text(MIX_TEXT)
        # Every state the bar shows is the rotation's for the hand dealt, until two switches.
        seen: dict[int, dict[str, Any]] = {}
        deadline = time.monotonic() + 120
        while len({s["now"] for s in seen.values()}) < 3:
            assert time.monotonic() < deadline, seen
            bar = page.evaluate(BAR_NOW)
            if bar["hand"] is not None:
                seen[int(bar["hand"])] = bar
            page.wait_for_timeout(100)
        for hand, bar in seen.items():
            now, count, following, left = _expected(hand)
            assert (bar["now"], bar["next"], bar["left"]) == (now, following, str(left)), bar
            assert bar["count"].endswith(f"hand {count} of 2"), bar
            assert bar["countdown"] == ("after this hand" if left == 0 else "after 1 more hand")
            assert bar["title"].startswith(bar["nowTitle"]), bar  # the title says the game too
        log = page.locator("#log li.game")
        expect(log.filter(has_text="hand 2 of 2; next: ")).not_to_have_count(0)
        page.screenshot(path=str(artifacts / "mixed-table.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})  # a phone: the bar wraps
        expect(page.locator("#rotation-bar .countdown")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.screenshot(path=str(artifacts / "mixed-table-390.png"), full_page=True)

        # An operator's new rotation waits for the switch: the next game is its first.
        _api(
            mix.url,
            "PUT",
            f"/admin/tables/{mix.table_id}/rotation",
            mix.boss,
            rotation={"games": [{"variant": "five_card_stud"}, {"variant": "razz"}], "hands": 3},
            reason="a new mix",
        )
        bar = page.locator("#rotation-bar")
        expect(bar.locator(".rotation-text")).to_have_text(
            "Stud mix: 5-Card Stud / Razz, 3 hands each"
        )
        expect(bar.locator(".game-next")).to_have_attribute("data-variant", "five_card_stud")
        expect(page.locator("#log li.game", has_text="new rotation from hand #")).to_have_count(1)
        expect(bar.locator(".game-now")).to_have_attribute(
            "data-variant", "five_card_stud", timeout=60_000
        )
        expect(bar.locator(".now")).to_contain_text("hand 1 of 3")
        expect(bar.locator(".game-next")).to_have_attribute("data-variant", "razz")
        expect(bar.locator(".countdown")).to_have_text("after 2 more hands")
        assert not errors, errors
    finally:
        page.close()
