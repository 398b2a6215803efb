"""A sit-and-go on the players' page: the tournaments' list and one tournament's details, a
player registering from the page (and taking the entry back, and registering again), the
page going to the player's table when the tournament starts, the tournament's bar at the
table (the level, the next level, the players left, the average stack, the player's place),
the player folding to the end of their tournament, and their place and prize on the page, as
the server paid them, then the results. The other entrants registered over HTTP and played by
``tournament_players.py`` (the public websocket protocol alone)."""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_server import OPERATOR, PASSWORD, LiveServer
from page_steps import PASSWORD as PLAYER_PASSWORD
from page_steps import new_name, sign_up
from playwright.sync_api import Browser, Page, expect

PLAYERS = 3


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = LiveServer(
        Path(tmp_path_factory.mktemp("tournament")),
        STUD_ACTION_CLOCK_SECONDS="30",
        STUD_TIME_BANK_SECONDS="0",
        STUD_PAUSE_BETWEEN_HANDS_SECONDS="0.3",
        STUD_SHOWDOWN_PAUSE_SECONDS="0.3",
    )
    server.create_operator()
    with server.running():
        yield server


def _api(url: str, method: str, path: str, token: str | None = None, **body: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = httpx.request(method, url + path, headers=headers, json=body or None)
    assert response.status_code < 300, response.text
    return response.json()


def _token(url: str, name: str, password: str) -> str:
    token: str = _api(url, "POST", "/auth/login", username=name, password=password)["access_token"]
    return token


def _sit_and_go(url: str, name: str) -> dict[str, Any]:
    """Three players at one table, few chips, levels of a few hands."""
    boss = _token(url, OPERATOR, PASSWORD)
    spec = copy.deepcopy(_api(url, "GET", "/tournaments/templates")["stud-sng-9"])
    spec.update(min_entrants=PLAYERS, max_entrants=PLAYERS, seats_per_table=PLAYERS)
    spec["structure"] = {
        "starting_chips": 60,
        "entries": [
            {"ante": 2, "bring_in": 5, "small_bet": 10, "big_bet": 20, "hands": 3},
            {"ante": 5, "bring_in": 10, "small_bet": 20, "big_bet": 40, "hands": 3},
            {"ante": 10, "bring_in": 20, "small_bet": 40, "big_bet": 80, "hands": 3},
        ],
    }
    made: dict[str, Any] = _api(url, "POST", "/admin/tournaments", boss, name=name, spec=spec)
    return made


def _play_on(page: Page) -> None:
    """The player's turn, if it is theirs: fold, else check, else bring in."""
    for kind in ("fold", "check", "bring_in"):
        button = page.locator(f"#actions:not([hidden]) button.act-{kind}:not([disabled])")
        if button.count():
            button.first.click()
            return


def test_a_player_registers_on_the_page_plays_out_and_reads_their_place_and_prize(
    server: LiveServer, browser: Browser, artifacts: Path
) -> None:
    url = server.url
    title = f"Page SNG {new_name('t')}"
    sng = _sit_and_go(url, title)
    bots = [new_name("bot") for _ in range(PLAYERS - 1)]

    def enter(bot: str) -> None:
        token = _token(url, bot, PLAYER_PASSWORD)
        _api(url, "POST", f"/tournaments/{sng['id']}/register", token, request_id=bot)

    for bot in bots:
        _api(url, "POST", "/auth/register", username=bot, password=PLAYER_PASSWORD)
    enter(bots[1])
    playing = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).with_name("tournament_players.py")),
            url,
            str(sng["id"]),
        ]
        + bots,
        env={**os.environ, "STUD_PLAYERS_PASSWORD": PLAYER_PASSWORD},
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    me = new_name("web")
    try:
        sign_up(page, url, me)
        page.click("#to-tournaments")
        row = page.locator("#tournament-rows tr", has_text=title)
        expect(row.locator(".entrants")).to_have_text(f"{PLAYERS - 2}/{PLAYERS}")
        row.locator("button.open-tournament").click()
        detail = page.locator("#tournament-detail")
        expect(detail.locator("h2")).to_have_text(title)
        expect(detail.locator(".levels li")).to_have_count(3)
        # Register, take it back (refunded), register again.
        balance = page.locator("#wallet-balance")
        expect(balance).not_to_have_attribute("data-balance", "")
        before = int(balance.get_attribute("data-balance") or 0)
        page.click("#tournament-register")
        expect(detail.locator(".registered")).to_be_visible()
        wallet = _api(url, "GET", "/wallet", _token(url, me, PLAYER_PASSWORD))["balance"]
        assert wallet == before - sng["buy_in"] - sng["fee"]
        page.click("#tournament-unregister")
        expect(page.locator("#tournament-register")).to_be_visible()
        assert _api(url, "GET", "/wallet", _token(url, me, PLAYER_PASSWORD))["balance"] == before
        page.click("#tournament-register")
        expect(detail.locator(".entrants")).to_have_text(f"{PLAYERS - 1}/{PLAYERS} entrants")
        # The last entrant over HTTP: the field is full, the sit-and-go starts.
        enter(bots[0])

        # The start: the page goes to the player's table, the tournament's bar above it.
        expect(page.locator("#table-view")).to_be_visible(timeout=20_000)
        expect(page.locator(".seat.me")).to_be_visible(timeout=20_000)
        bar = page.locator("#tournament-bar")
        expect(bar).to_be_visible()
        expect(bar).to_contain_text(title)
        expect(page.locator("#t-left")).to_have_text(re.compile(r"^[1-3] left$"))
        expect(page.locator("#t-level")).to_have_text(re.compile(r"^Level \d+: \d+/\d+, ante \d+$"))
        expect(page.locator("#t-next")).to_have_text(
            re.compile(r"^(Next \d+/\d+ in \d+ hands?|Last level)$")
        )
        expect(page.locator("#t-place")).to_have_text(re.compile(r"^you: \d(st|nd|rd) "))
        page.screenshot(path=str(artifacts / "tournament-table.png"))

        # Fold to the end of the player's tournament.
        result = page.locator("#tournament-result[data-place]")
        deadline = time.monotonic() + 180
        while not result.is_visible():
            assert time.monotonic() < deadline, "the player's tournament never ended"
            _play_on(page)
            page.wait_for_timeout(150)
        place = int(result.get_attribute("data-place") or 0)
        prize = int(result.get_attribute("data-prize") or -1)
        page.screenshot(path=str(artifacts / "tournament-result.png"))

        # As the server placed and paid the player.
        deadline = time.monotonic() + 60
        while True:
            details = _api(url, "GET", f"/tournaments/{sng['id']}")
            if details["status"] == "finished":
                break
            assert time.monotonic() < deadline, "the tournament never finished"
            time.sleep(0.2)
        (mine,) = [e for e in details["entries"] if e["player"] == me and e["status"] == "out"]
        assert (place, prize) == (mine["place"], mine["prize"])
        word = {1: "1st", 2: "2nd", 3: "3rd"}[place]
        expect(result).to_contain_text(f"You finished {word} · prize {prize:,}")

        # The results, from the table's "Results".
        result.locator("a").click()
        expect(page.locator("#tournament-detail")).to_be_visible()
        entries = page.locator("#tournament-entries li")
        expect(entries).to_have_count(PLAYERS)
        for entry in [e for e in details["entries"] if e["status"] == "out"]:
            line = page.locator(f'#tournament-entries li[data-player="{entry["player"]}"]')
            expect(line).to_have_attribute("data-place", str(entry["place"]))
            expect(line).to_have_attribute("data-prize", str(entry["prize"]))
        expect(page.locator("#tournament-detail-result")).to_have_attribute(
            "data-place", str(place)
        )
        page.screenshot(path=str(artifacts / "tournament-results.png"))
        assert not errors, errors
    finally:
        page.close()
        playing.kill()
        playing.wait(15)


def test_a_mixed_tournaments_page_shows_the_game_of_each_level(
    server: LiveServer, browser: Browser
) -> None:
    url = server.url
    title = f"Stud mix {new_name('t')}"
    boss = _token(url, OPERATOR, PASSWORD)
    _api(url, "POST", "/admin/tournaments", boss, name=title, template="stud-mix-turbo")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        sign_up(page, url, new_name("web"))
        page.click("#to-tournaments")
        row = page.locator("#tournament-rows tr", has_text=title)
        expect(row).to_contain_text("Mixed: Seven-Card Stud, Razz, Stud Hi-Lo")
        row.locator("button.open-tournament").click()
        levels = page.locator("#tournament-detail .levels li")
        expect(levels.nth(0)).to_have_text(
            "Level 1: Seven-Card Stud 30/60, ante 5, bring-in 10 · 5 min"
        )
        expect(levels.nth(1)).to_have_attribute("data-game", "razz")
        expect(levels.nth(2)).to_contain_text("Level 3: Stud Hi-Lo (8 or better) 75/150")
        assert not errors, errors
    finally:
        page.close()
