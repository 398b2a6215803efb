"""The lobby, the wallet in the header and watching a table, on the players' page: the games
as players say them, stakes with ante and bring-in, average pot and hands per hour as
``GET /tables`` has them, the filters; the balance after a buy-in; a spectator's table; the
seats at phone and desk widths, eight of them, every name whole."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_server import OPERATOR, PASSWORD, LiveServer
from page_steps import PASSWORD as PLAYER_PASSWORD
from page_steps import new_name, open_table, sign_up
from playwright.sync_api import Browser, Page, expect
from table_players import playing_at

from engine.variants import VARIANTS

PHONE = {"width": 390, "height": 844}
DESK = {"width": 1280, "height": 900}
EIGHT = "Eight at the table"
POT_LIMIT = "Pot-limit five"
DEMO = "Demo: seven-card stud"
PLAYED = re.compile(r" (brings in for|calls|checks|bets|completes to|raises to|folds)\b")


@dataclass
class Room:
    url: str
    eight_id: int
    players: list[str]  # the eight players at EIGHT, by their long names


def _api(url: str, method: str, path: str, token: str | None = None, **body: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = httpx.request(method, url + path, headers=headers, json=body or None)
    assert response.status_code < 300, response.text
    return response.json()


def _token(url: str, name: str, password: str) -> str:
    token: str = _api(url, "POST", "/auth/login", username=name, password=password)["access_token"]
    return token


@pytest.fixture(scope="module")
def room(staffed_server: LiveServer) -> Iterator[Room]:
    """Two more tables than the demo's: eight players with long names playing at one (as
    house bots do, through the public client: table_players.py), a pot-limit five-card stud
    table empty."""
    url = staffed_server.url
    boss = _token(url, OPERATOR, PASSWORD)
    eight = _api(url, "POST", "/admin/tables", boss, name=EIGHT, seats=8, config={})["id"]
    _api(
        url,
        "POST",
        "/admin/tables",
        boss,
        name=POT_LIMIT,
        seats=6,
        config={
            "variant": "five_card_stud",
            "structure": "pot_limit",
            "ante": 2,
            "bring_in": 3,
            "small_bet": 10,
            "big_bet": 20,
        },
    )
    players = [f"player-{n}-with-a-rather-long-name" for n in range(1, 9)]
    for name in players:
        _api(url, "POST", "/auth/register", username=name, password=PLAYER_PASSWORD)
    with playing_at(url, eight, players, PLAYER_PASSWORD):
        deadline = time.monotonic() + 60
        while True:
            line = next(t for t in _api(url, "GET", "/tables") if t["id"] == eight)
            if line["seats_taken"] == 8 and line["hands_per_hour"] > 0:
                break
            assert time.monotonic() < deadline, f"the eight did not sit and play: {line}"
            time.sleep(0.2)
        yield Room(url, eight, players)


def _errors(page: Page) -> list[str]:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


def _row(page: Page, name: str) -> Any:
    return page.locator("#lobby-rows tr", has_text=name)


def test_the_page_names_every_game_as_the_engine_titles_it(room: Room, browser: Browser) -> None:
    page = browser.new_page()
    try:
        page.goto(room.url + "/")
        titles = page.evaluate("""async () => (await import("/web/games.js")).VARIANT_TITLES""")
        assert titles == {name: v.title for name, v in VARIANTS.items()}
        listed = {t["variant"]: t["variant_title"] for t in _api(room.url, "GET", "/tables")}
        assert all(titles[v] == title for v, title in listed.items())
    finally:
        page.close()


def test_the_lobby_shows_games_stakes_players_and_the_tables_pace(
    room: Room, browser: Browser, artifacts: Path
) -> None:
    context = browser.new_context(viewport=DESK)
    page = context.new_page()
    errors = _errors(page)
    try:
        sign_up(page, room.url, new_name("lia"))
        games = {
            DEMO: "Seven-Card Stud",
            "Demo: stud hi-lo": "Stud Hi-Lo (8 or better)",
            "Demo: razz": "Razz",
            EIGHT: "Seven-Card Stud",
            POT_LIMIT: "Five-Card Stud",
        }
        for table, game in games.items():
            expect(_row(page, table).locator("td.game")).to_have_text(game)
        expect(_row(page, DEMO).locator("td.stakes")).to_have_text("5/10, ante 1, bring-in 2")
        expect(_row(page, POT_LIMIT).locator("td.stakes")).to_have_text(
            "Pot limit, min bet 10, ante 2, bring-in 3"
        )
        expect(_row(page, EIGHT).locator("td.players")).to_have_text("8/8 seated")
        expect(_row(page, POT_LIMIT).locator("td.players")).to_have_text("0/6 seated")

        # Average pot and hands per hour as GET /tables has them (the lobby refreshes every
        # five seconds, the numbers move as hands end: compared until one refresh agrees).
        deadline = time.monotonic() + 30
        while True:
            listed = next(t for t in _api(room.url, "GET", "/tables") if t["name"] == EIGHT)
            row = _row(page, EIGHT)
            shown = (
                row.locator("td.avg-pot").inner_text(),
                row.locator("td.hands-hour").inner_text(),
            )
            if listed["average_pot"] > 0 and shown == (
                str(listed["average_pot"]),
                str(listed["hands_per_hour"]),
            ):
                break
            assert time.monotonic() < deadline, (shown, listed)
            page.wait_for_timeout(300)
        expect(page.locator("#lobby-view table.lobby thead")).to_contain_text("Avg pot")
        expect(page.locator("#lobby-view table.lobby thead")).to_contain_text("Hands/h")
        page.screenshot(path=str(artifacts / "lobby-tables-1280.png"), full_page=True)

        # The filters: by game, by stakes, both, and back to every table.
        rows = page.locator("#lobby-rows tr")
        expect(rows).to_have_count(5)
        page.select_option("#filter-game", "razz")
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("Demo: razz")
        page.select_option("#filter-game", "")
        page.select_option("#filter-stakes", "Pot limit, min bet 10")
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text(POT_LIMIT)
        page.select_option("#filter-stakes", "5/10")
        expect(rows).to_have_count(4)
        page.select_option("#filter-game", "seven_card_stud")
        expect(rows).to_have_count(2)
        assert {r.locator("td.table-name").inner_text() for r in rows.all()} == {DEMO, EIGHT}
        page.select_option("#filter-game", "five_card_stud")
        expect(rows).to_have_count(0)
        expect(page.locator("#lobby-empty")).to_have_text("No table matches these filters.")
        # A refresh of the lobby keeps the choice.
        page.wait_for_timeout(5500)
        expect(page.locator("#filter-game")).to_have_value("five_card_stud")
        expect(rows).to_have_count(0)
        page.select_option("#filter-game", "")
        page.select_option("#filter-stakes", "")
        expect(rows).to_have_count(5)

        # Phone width: every column there (a card per table), nothing wider than the screen.
        page.set_viewport_size(PHONE)
        for table, game in games.items():
            expect(_row(page, table).locator("td.game")).to_be_visible()
            expect(_row(page, table).locator("td.game")).to_have_text(game)
        for cell in ("stakes", "players", "avg-pot", "hands-hour"):
            expect(_row(page, EIGHT).locator(f"td.{cell}")).to_be_visible()
        for button in ("watch", "open"):
            box = _row(page, EIGHT).locator(f"button.{button}").bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.screenshot(path=str(artifacts / "lobby-tables-390.png"), full_page=True)
        assert not errors, errors
    finally:
        context.close()


def _fill_buy_in(page: Page, amount: str) -> None:
    """Type the buy-in; again if a redraw of the seat controls (each event) came between
    the test's focus and its keystrokes (a person's typing keeps the focus: app.js)."""
    field = page.locator("#buy-in")
    for _ in range(20):
        field.fill(amount)
        if field.input_value() == amount:
            return
    raise AssertionError("the buy-in could not be typed")


def _balance(page: Page) -> int:
    text = page.locator("#wallet-balance").get_attribute("data-balance") or ""
    return int(text)


def test_the_header_shows_the_wallet_and_its_movements(
    room: Room, browser: Browser, artifacts: Path
) -> None:
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    errors = _errors(page)
    try:
        name = new_name("wes")
        sign_up(page, room.url, name)
        token = _token(room.url, name, PLAYER_PASSWORD)
        expect(page.locator("#wallet-balance")).to_have_text("10,000")
        open_table(page, DEMO)
        _fill_buy_in(page, "300")
        page.locator("button.sit").first.click()
        expect(page.locator(".seat.me")).to_have_count(1)
        expect(page.locator("#wallet-balance")).to_have_text("9,700")
        assert _balance(page) == _api(room.url, "GET", "/wallet", token)["balance"] == 9_700

        page.click("#wallet-button")
        panel = page.locator("#wallet-panel")
        expect(panel).to_be_visible()
        first = panel.locator("li").first
        expect(first).to_have_attribute("data-kind", "buy_in")
        expect(first).to_contain_text("−300")
        expect(first).to_contain_text(f"at {DEMO}")
        expect(panel.locator("li").nth(1)).to_have_attribute("data-kind", "grant")
        box = panel.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
        page.screenshot(path=str(artifacts / "wallet-390.png"))
        page.keyboard.press("Escape")
        expect(panel).to_be_hidden()

        # Leaving (folding the hand it is in): the stack goes back to the wallet, and the
        # header says so.
        page.click("#seat-controls #leave")
        deadline = time.monotonic() + 60
        while page.locator(".seat.me").count():
            assert time.monotonic() < deadline, "the player did not leave"
            fold = page.locator("#actions:not([hidden]) button.act-fold:not([disabled])")
            if fold.count():
                # The turn may move on between look and click.
                with contextlib.suppress(Exception):
                    fold.first.click(timeout=2_000)
            page.wait_for_timeout(100)
        deadline = time.monotonic() + 15
        while _balance(page) == 9_700:
            assert time.monotonic() < deadline, "the header kept the balance before leaving"
            page.wait_for_timeout(200)
        assert _balance(page) == _api(room.url, "GET", "/wallet", token)["balance"]
        page.click("#wallet-button")
        expect(panel.locator("li").first).to_have_attribute("data-kind", "cash_out")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert not errors, errors
    finally:
        context.close()


def test_the_wallet_panel_pages_back_through_older_movements(room: Room, browser: Browser) -> None:
    context = browser.new_context(viewport=DESK)
    page = context.new_page()
    errors = _errors(page)
    try:
        name = new_name("pam").ljust(32, "x")
        sign_up(page, room.url, name)
        expect(page.locator("#wallet-balance")).to_have_text("10,000")
        boss = _token(room.url, OPERATOR, PASSWORD)
        for n in range(1, 12):
            _api(
                room.url,
                "POST",
                f"/admin/players/{name}/credit",
                boss,
                amount=n,
                reason=f"prize {n}",
            )
        page.click("#wallet-button")  # opening the panel reads the wallet afresh
        expect(page.locator("#wallet-balance")).to_have_text("10,066")
        entries = page.locator("#wallet-entries li")
        expect(entries).to_have_count(10)
        assert [e.get_attribute("data-amount") for e in entries.all()] == [
            str(n) for n in range(11, 1, -1)
        ]
        expect(entries.first).to_contain_text("+11")
        expect(entries.first).to_contain_text("prize 11")
        page.click("#wallet-more")
        expect(entries).to_have_count(12)
        expect(entries.nth(10)).to_contain_text("prize 1")
        expect(entries.nth(11)).to_have_attribute("data-kind", "grant")
        expect(page.locator("#wallet-more")).to_be_hidden()
        # A click elsewhere closes it.
        page.click("#lobby-view h2")
        expect(page.locator("#wallet-panel")).to_be_hidden()
        # A name as long as names go: the header still fits a phone.
        page.set_viewport_size(PHONE)
        page.click("#wallet-button")
        panel = page.locator("#wallet-panel").bounding_box()
        assert panel is not None and panel["x"] >= 0 and panel["x"] + panel["width"] <= 390
        expect(page.locator("#me-name")).to_have_text(name)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert not errors, errors
    finally:
        context.close()


SEATS_NOW = """() => [...document.querySelectorAll(".seat")].map((seat) => {
    const name = seat.querySelector(".name");
    const box = seat.getBoundingClientRect();
    return {
        player: seat.dataset.player || null, title: name.title, text: name.innerText,
        cut: name.scrollWidth > name.clientWidth || name.scrollHeight > name.clientHeight,
        box: [box.left, box.top, box.right, box.bottom],
    };
})"""


def _seat_names_whole(page: Page, seats: int) -> None:
    """Every seat's name is shown whole (its title says it too); no two seats overlap.
    Read at one instant: the page redraws the seats on every event."""
    shown: list[dict[str, Any]] = page.evaluate(SEATS_NOW)
    assert len(shown) == seats
    for seat in shown:
        if seat["player"]:
            assert seat["title"] == seat["player"] and not seat["cut"], seat
            assert seat["player"] in seat["text"], seat
    for i, a in enumerate(shown):
        for b in shown[i + 1 :]:
            (al, at, ar, ab), (bl, bt, br, bb) = a["box"], b["box"]
            apart = ar <= bl + 0.5 or br <= al + 0.5 or ab <= bt + 0.5 or bb <= at + 0.5
            assert apart, (a, b)
    width = page.evaluate("window.innerWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_a_spectator_watches_a_full_table_from_the_lobby(
    room: Room, browser: Browser, artifacts: Path
) -> None:
    context = browser.new_context(viewport=DESK)
    page = context.new_page()
    errors = _errors(page)
    try:
        sign_up(page, room.url, new_name("sam"))
        _row(page, EIGHT).locator("button.watch").click()
        expect(page).to_have_url(f"{room.url}/#/watch/{room.eight_id}")
        expect(page.locator("#table-view")).to_be_visible()
        seated = page.locator(".seat[data-player]")
        expect(seated).to_have_count(8, timeout=15_000)
        assert {s.get_attribute("data-player") for s in seated.all()} == set(room.players)
        expect(page.locator("#table-game")).to_have_text(
            "Seven-Card Stud · 5/10, ante 1, bring-in 2"
        )
        # The play goes on before the spectator's eyes: upcards, and the dealer's lines.
        expect(page.locator(".seat .card:not(.back)").first).to_be_visible(timeout=20_000)
        played = page.locator("#log li").filter(has_text=PLAYED)
        expect(played).not_to_have_count(0, timeout=20_000)
        # Nothing that acts: no seat to pick, no buy-in, no turn; only "Sit".
        expect(page.locator("#actions")).to_be_hidden()
        expect(page.locator("button.sit")).to_have_count(0)
        expect(page.locator("#buy-in")).to_have_count(0)
        expect(page.locator("#seat-controls button")).to_have_count(1)
        expect(page.locator("#sit-down")).to_have_text("Sit")

        for size, label in ((DESK, "1280"), (PHONE, "390")):
            page.set_viewport_size(size)
            page.wait_for_timeout(200)
            _seat_names_whole(page, 8)
            page.screenshot(path=str(artifacts / f"table-eight-{label}.png"), full_page=True)

        # "Sit" at a full table: the waiting list is offered.
        page.click("#sit-down")
        expect(page).to_have_url(f"{room.url}/#/table/{room.eight_id}")
        expect(page.locator("#seat-controls")).to_contain_text("Join waiting list")
        assert not errors, errors
    finally:
        context.close()


def test_a_spectator_at_a_table_with_room_sits_down_from_watching(
    room: Room, browser: Browser
) -> None:
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    errors = _errors(page)
    try:
        sign_up(page, room.url, new_name("tom"))
        _row(page, DEMO).locator("button.watch").click()
        expect(page.locator(".seat[data-player]")).to_have_count(3, timeout=15_000)
        expect(page.locator(".seat.empty")).not_to_have_count(0)
        expect(page.locator("button.sit")).to_have_count(0)
        page.click("#sit-down")
        expect(page.locator("button.sit").first).to_be_visible()
        page.locator("button.sit").first.click()
        expect(page.locator(".seat.me")).to_have_count(1)
        expect(page.locator("#seat-controls #leave")).to_be_visible()
        _seat_names_whole(page, 8)
        assert not errors, errors
    finally:
        context.close()
