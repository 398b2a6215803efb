"""A seated player's controls on the page, in scripted hands (a stacked deck), with every
request outside the test server blocked and no console error: "Sit out next hand" keeps the
hand in progress; advance actions (check/fold, check, call any, fold to any bet) play at the
turn and clear when the action changes; chips added while seated, within the buy-in range;
the pause after a showdown, an operator's table setting, long enough to read it."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from page_steps import act, new_name, sign_up
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, Route, expect
from scripted_server import ScriptedServer

from engine.cards import Deck

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from decks import stud_deck  # noqa: E402

# Seats 0, 1, 2 in the order the players sit: seat 1's 2c brings in, then seat 2 acts, then
# seat 0. Fourth and fifth streets: seat 2 (an ace, then ace-king high) acts first.
HANDS = [
    "2d 3d Jc | 4h | 5h | 6h | Tc",
    "5d 6d 2c | 7h | 8h | 9h | Td",
    "8d 9d Qc | Ah | Kh | Jh | Th",
]


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScriptedServer]:
    with ScriptedServer(
        Path(tmp_path_factory.mktemp("seats")),
        lambda: Deck(order=stud_deck(HANDS).order()),
        action_clock_seconds=60,
        time_bank_seconds=0,
        pause_between_hands_seconds=0.5,
    ) as server:
        yield server


class Player:
    """One player's browser page, its network held to the test server; what else it asked
    for and every console error or script error are its ``problems``; the ``act`` commands
    it sent are ``acts``."""

    def __init__(self, browser: Browser, server: ScriptedServer) -> None:
        self.context: BrowserContext = browser.new_context(viewport={"width": 1280, "height": 900})
        self.problems: list[str] = []
        self.acts: list[dict[str, Any]] = []
        self.context.route("**/*", self._only_the_server(server.url))
        self.page: Page = self.context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        self.page.on("websocket", self._watch)
        self.name = new_name("seat")
        sign_up(self.page, server.url, self.name)

    def _only_the_server(self, url: str) -> Any:
        def route(route: Route) -> None:
            asked = route.request.url
            if asked.startswith((url + "/", url.replace("http", "ws", 1) + "/", "data:", "blob:")):
                route.continue_()
            else:
                self.problems.append(f"asked the network for {asked}")
                route.abort()

        return route

    def _console(self, message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or message.type == "error":
            self.problems.append(f"console {message.type}: {message.text}")

    def _watch(self, ws: Any) -> None:
        def frame(payload: str | bytes) -> None:
            data = json.loads(payload)
            if data.get("type") == "act":
                self.acts.append(data)

        ws.on("framesent", frame)

    def sit(self, table: str, seat: int, buy_in: int = 100) -> None:
        row = self.page.locator("#lobby-rows tr", has_text=table)
        expect(row).to_be_visible()
        row.locator("button.open").click()
        expect(self.page.locator("#table-view")).to_be_visible()
        self.page.locator("#buy-in").fill(str(buy_in))
        self.page.locator(f"button.sit[data-seat='{seat}']").click()
        expect(self.page.locator(".seat.me")).to_have_attribute("data-seat", str(seat))

    def advance(self, kind: str) -> None:
        """Tick an advance action while another seat acts."""
        box = self.page.locator(f"#advance:not([hidden]) input[data-advance='{kind}']")
        expect(box).to_have_count(1)
        box.check()

    def sent(self, kinds: list[str]) -> None:
        """Wait until the page has sent these actions, and no others."""
        deadline = time.monotonic() + 10
        while [a["kind"] for a in self.acts] != kinds and time.monotonic() < deadline:
            self.page.wait_for_timeout(50)
        assert [a["kind"] for a in self.acts] == kinds, self.acts

    def close(self) -> None:
        self.context.close()


def _table(server: ScriptedServer, name: str, seats: int, **settings: Any) -> int:
    """A new table, paused while the players sit (``settings``: an operator's PATCH)."""
    created = server.admin(
        "POST", "/admin/tables", {"name": name, "seats": seats, "min_buy_in": 20, "max_buy_in": 500}
    )
    table_id = int(created["id"])
    if settings:
        server.admin("PATCH", f"/admin/tables/{table_id}", settings)
    server.admin("POST", f"/admin/tables/{table_id}/pause", {"reason": "seating"})
    return table_id


def _players(
    browser: Browser, server: ScriptedServer, name: str, count: int, **settings: Any
) -> tuple[int, list[Player]]:
    table_id = _table(server, name, count, **settings)
    players = [Player(browser, server) for _ in range(count)]
    for seat, player in enumerate(players):
        player.sit(name, seat)
    server.admin("POST", f"/admin/tables/{table_id}/resume", {"reason": "all seated"})
    return table_id, players


def _first_hand_actions(server: ScriptedServer, table_id: int) -> list[tuple[int, str]]:
    """The actions of the table's first hand, as the server recorded them."""
    listed = server.admin("GET", f"/admin/hands?table={table_id}")["hands"]
    first = min(listed, key=lambda hand: hand["number"])
    record = server.admin("GET", f"/admin/hands/{first['id']}")
    events = record["events"]
    return [(e["data"]["seat"], e["data"]["action"]) for e in events if e["kind"] == "action"]


def test_sit_out_next_hand_keeps_the_hand_in_progress(
    scripted: ScriptedServer, browser: Browser
) -> None:
    table_id, players = _players(browser, scripted, "Scripted sit out next", 3)
    first, bring, third = players
    try:
        page = first.page
        expect(page.locator(".seat.me .cards .card")).to_have_count(3)
        # The default: "Sit out next hand", ticked during the hand; nothing is folded.
        expect(page.locator("#seat-controls #sit-out-next")).not_to_be_checked()
        page.locator("#seat-controls #sit-out-next").check()
        expect(page.locator("#seat-controls #sit-out-next")).to_be_checked()
        expect(page.locator("#seat-controls #sit-out-now")).to_be_visible()  # only if asked
        status = bring.page.locator(".seat[data-seat='0'] .status")
        expect(status).to_have_text("sits out next hand")
        # Taken back (a sit_in), and asked again.
        page.locator("#seat-controls #sit-out-next").uncheck()
        expect(status).to_have_count(0)
        page.locator("#seat-controls #sit-out-next").check()
        expect(status).to_have_text("sits out next hand")
        act(bring.page, "bring_in")
        act(third.page, "fold")
        # Seat 0 is still in: its turn comes and it plays it (the hand kept, not folded).
        expect(bring.page.locator(".seat[data-seat='0'].folded")).to_have_count(0)
        act(page, "complete")
        act(bring.page, "fold")
        expect(page.locator(".seat.me.winner")).to_have_count(1)
        # The hand over, seat 0 sits out; the next hand is dealt to seats 1 and 2 only.
        expect(page.locator("#seat-controls #sit-in")).to_be_visible()
        expect(bring.page.locator(".seat[data-seat='0'] .status")).to_contain_text("sitting out")
        expect(bring.page.locator("#log")).to_contain_text("Hand #2")
        expect(bring.page.locator(".seat[data-seat='1'] .cards .card")).to_have_count(3)
        expect(bring.page.locator(".seat[data-seat='0'] .cards .card")).to_have_count(0)
        assert _first_hand_actions(scripted, table_id) == [
            (1, "bring_in"),
            (2, "fold"),
            (0, "complete"),
            (1, "fold"),
        ]
        for player in players:
            assert player.problems == [], player.problems
    finally:
        for player in players:
            player.close()


def test_advance_actions_play_at_the_turn_and_clear_when_the_action_changes(
    scripted: ScriptedServer, browser: Browser
) -> None:
    table_id, players = _players(browser, scripted, "Scripted advance", 3)
    first, bring, third = players
    try:
        # Third street, seat 1 to bring in: the others tick what they will do.
        expect(first.page.locator("#advance:not([hidden])")).to_have_count(1)
        first.advance("call_any")
        third.advance("check")  # free now: nothing is bet yet
        expect(bring.page.locator("#advance")).to_be_hidden()  # its turn: it decides
        act(bring.page, "bring_in")
        bring.advance("check_fold")
        # The bring-in is a bet: seat 2's "Check" is gone, and nothing was played for it.
        expect(third.page.locator("#advance input[data-advance='check']")).to_have_count(0)
        expect(third.page.locator("#advance input:checked")).to_have_count(0)
        expect(
            third.page.locator("#actions:not([hidden]) button.act-call:not([disabled])")
        ).to_have_count(1)
        assert third.acts == []
        act(third.page, "complete")  # a raise: seat 0's "Call any" stays
        # Seat 0 calls the completion at its turn, seat 1 folds to it: neither clicked.
        expect(third.page.locator(".seat[data-seat='1'].folded")).to_have_count(1)
        expect(third.page.locator("#log")).to_contain_text(f"{first.name} calls 5")
        first.sent(["call"])
        bring.sent(["bring_in", "fold"])

        # Fourth street, seat 2 (queen high) first: seat 0 folds to any bet, for the rest of
        # the hand; where a check is free, it checks.
        expect(first.page.locator("#street")).to_have_text("4th street")
        first.advance("fold_any")
        act(third.page, "check")
        expect(first.page.locator("#street")).to_have_text("5th street")
        first.sent(["call", "check"])
        # Fifth street, seat 2 first again: the box is still ticked, and folds to its bet.
        expect(first.page.locator("#advance input[data-advance='fold_any']")).to_be_checked()
        act(third.page, "bet")
        expect(third.page.locator(".seat[data-seat='0'].folded")).to_have_count(1)
        first.sent(["call", "check", "fold"])
        # The next hand starts with nothing ticked.
        expect(first.page.locator("#log")).to_contain_text("Hand #2")
        expect(first.page.locator("#advance:not([hidden])")).to_have_count(1)
        expect(first.page.locator("#advance input:checked")).to_have_count(0)
        assert _first_hand_actions(scripted, table_id) == [
            (1, "bring_in"),
            (2, "complete"),
            (0, "call"),
            (1, "fold"),
            (2, "check"),
            (0, "check"),
            (2, "bet"),
            (0, "fold"),
        ]
        for player in players:
            assert player.problems == [], player.problems
    finally:
        for player in players:
            player.close()


def test_chips_are_added_while_seated_within_the_buy_in_range(
    scripted: ScriptedServer, browser: Browser
) -> None:
    _table(scripted, "Scripted add chips", 2)  # paused: no hand, chips join at once
    player = Player(browser, scripted)
    try:
        page = player.page
        player.sit("Scripted add chips", 0, buy_in=100)
        balance = page.locator("#wallet-balance")
        before = scripted.settings.starting_bankroll - 100  # the buy-in paid
        expect(balance).to_have_attribute("data-balance", str(before))
        controls = page.locator("#seat-controls")
        expect(controls).to_contain_text("Add chips (up to 400)")
        page.locator("#add-chips-amount").fill("150")
        page.locator("#add-chips").click()
        expect(page.locator(".seat.me .stack")).to_have_text("250")
        expect(controls).to_contain_text("Add chips (up to 250)")
        expect(balance).to_have_attribute("data-balance", str(before - 150))
        # Past the maximum buy-in on the table: refused, with its code; nothing changes.
        page.locator("#add-chips-amount").fill("300")
        page.locator("#add-chips").click()
        expect(page.locator("#notice")).to_contain_text("bad_buy_in")
        expect(page.locator("#notice")).to_contain_text("1 to 250")
        expect(page.locator(".seat.me .stack")).to_have_text("250")
        expect(balance).to_have_attribute("data-balance", str(before - 150))
        page.locator("#add-chips-amount").fill("250")
        page.locator("#add-chips").click()
        expect(page.locator(".seat.me .stack")).to_have_text("500")
        expect(page.locator("#add-chips")).to_have_count(0)  # the maximum is on the table
        assert player.problems == [], player.problems
    finally:
        player.close()


# The log's lines as they come, with the time each came (performance.now, in ms).
_TIME_THE_LOG = """() => {
  window.logTimes = [];
  new MutationObserver((changes) => {
    for (const change of changes) for (const node of change.addedNodes)
      window.logTimes.push({ text: node.textContent, at: performance.now() });
  }).observe(document.getElementById("log"), { childList: true });
}"""


def test_a_showdown_stays_on_the_table_for_its_pause(
    scripted: ScriptedServer, browser: Browser
) -> None:
    """An operator sets the table's showdown pause to 3 s (the pause between hands is 0.5):
    the next hand comes no sooner than that after the cards are shown, and the winner's
    line and the shown hands stay up until then."""
    table_id = _table(scripted, "Scripted showdown", 2, showdown_pause=3)
    listed = next(t for t in scripted.admin("GET", "/admin/tables") if t["id"] == table_id)
    assert listed["showdown_pause"] == 3.0
    players = [Player(browser, scripted) for _ in range(2)]
    try:
        for seat, player in enumerate(players):
            player.sit("Scripted showdown", seat)
        watcher = players[0].page
        watcher.evaluate(_TIME_THE_LOG)
        scripted.admin("POST", f"/admin/tables/{table_id}/resume", {"reason": "all seated"})
        # Both check and call down to the showdown.
        for _ in range(40):
            if "shows" in (watcher.locator("#log").text_content() or ""):
                break
            for player in players:
                buttons = player.page.locator(
                    "#actions:not([hidden]) button:is(.act-bring_in, .act-check, .act-call)"
                    ":not([disabled])"
                )
                if buttons.count():
                    lines = watcher.locator("#log li").count()
                    buttons.first.click()
                    expect(watcher.locator("#log li")).not_to_have_count(lines, timeout=10_000)
                    break
            else:
                watcher.wait_for_timeout(100)
        expect(watcher.locator("#log")).to_contain_text("shows")
        expect(watcher.locator(".seat .hand-name")).to_have_count(1)  # the loser mucks
        expect(watcher.locator("#announce")).to_contain_text("wins")
        expect(watcher.locator("#log")).to_contain_text("Hand #2", timeout=15_000)
        times = watcher.evaluate("() => window.logTimes")
        shown = next(t["at"] for t in times if " shows " in t["text"])
        dealt = next(t["at"] for t in times if t["text"].startswith("Hand #2"))
        print(f"the showdown stayed {(dealt - shown) / 1000:.2f}s")
        assert dealt - shown >= 2900, (dealt - shown, times)
        for player in players:
            assert player.problems == [], player.problems
    finally:
        for player in players:
            player.close()
