"""The betting controls and the dealer's words on the page, in scripted hands (stacked decks):
no-limit presets (half pot, pot, all in) and the amounts they send, the keyboard shortcuts
(not while typing in the chat box), the tab-title alert and the chime on one's turn, the
four-colour deck, a refusal naming the allowed range, and a hi-lo split pot's winner lines."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from page_steps import new_name, sign_up
from playwright.sync_api import Browser, BrowserContext, Page, expect
from scripted_server import ScriptedServer

from engine.cards import Deck

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from decks import stud_deck  # noqa: E402

# Seat 1's 2d brings in; both hold seven cards, so an all-in runs out to a showdown.
NO_LIMIT_HANDS = ["As Ah Kd | 9c | Qs | Jd | 8h", "2c 3c 2d | 5s | 7h | 6s | Qh"]
# Hi-lo: seat 1's 4d brings in; its pair of fours opens fourth street. Seat 0's pair of aces
# takes the high half, seat 1's 7-6-4-2-A the low.
HI_LO_HANDS = ["As Ah Kd | 9c | Qs | Jd | 8h", "2c Ad 4d | 4s | 7h | 6s | Qh"]
DECK: dict[str, list[str]] = {"hands": NO_LIMIT_HANDS}


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScriptedServer]:
    with ScriptedServer(
        Path(tmp_path_factory.mktemp("betting")),
        lambda: Deck(order=stud_deck(DECK["hands"]).order()),
        action_clock_seconds=120,
        time_bank_seconds=0,
        pause_between_hands_seconds=0.5,
    ) as server:
        yield server


def _seat(
    browser: Browser, server: ScriptedServer, table: str, name: str
) -> tuple[BrowserContext, Page, list[dict[str, Any]]]:
    """A player signs up, opens the table and sits in the first free seat with 200; the
    ``act`` commands the page sends are collected."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sent: list[dict[str, Any]] = []

    def watch(ws: Any) -> None:
        def frame(payload: str | bytes) -> None:
            data = json.loads(payload)
            if data.get("type") == "act":
                sent.append(data)

        ws.on("framesent", frame)

    page.on("websocket", watch)
    sign_up(page, server.url, name)
    row = page.locator("#lobby-rows tr", has_text=table)
    expect(row).to_be_visible()
    row.locator("button.open").click()
    expect(page.locator("#table-view")).to_be_visible()
    page.locator("#buy-in").fill("200")
    page.locator("button.sit").first.click()
    expect(page.locator(".seat.me")).to_have_count(1)
    return context, page, sent


def _table(server: ScriptedServer, name: str, config: dict[str, Any]) -> int:
    table = server.admin(
        "POST",
        "/admin/tables",
        {"name": name, "seats": 2, "config": config, "min_buy_in": 20, "max_buy_in": 1000},
    )
    table_id: int = table["id"]
    server.admin("POST", f"/admin/tables/{table_id}/pause", {"reason": "seating"})
    return table_id


def _turn(page: Page) -> None:
    expect(page.locator("#actions:not([hidden]) button.act:not([disabled])").first).to_be_visible(
        timeout=15_000
    )


def _last_log(page: Page, text: str) -> None:
    expect(page.locator("#log li").last).to_contain_text(text, timeout=10_000)


def test_no_limit_presets_shortcuts_and_turn_alerts(
    scripted: ScriptedServer, browser: Browser, artifacts: Path
) -> None:
    DECK["hands"] = NO_LIMIT_HANDS
    table_id = _table(scripted, "No limit presets", {"structure": "no_limit"})
    ann_name, bob_name = new_name("ann"), new_name("bob")
    contexts = []
    try:
        ann_ctx, ann, ann_sent = _seat(browser, scripted, "No limit presets", ann_name)
        bob_ctx, bob, bob_sent = _seat(browser, scripted, "No limit presets", bob_name)
        contexts += [ann_ctx, bob_ctx]
        # Bob hears a chime on his turns; Ann sees four colours.
        bob.locator(".table-prefs summary").click()
        bob.locator("#setting-sound").check()
        ann.locator(".table-prefs summary").click()
        ann.locator("#setting-fourColour").check()
        scripted.admin("POST", f"/admin/tables/{table_id}/resume", {"reason": "seated"})

        # Bob brings in: his turn shows in the tab title, and chimes.
        _turn(bob)
        expect(bob).to_have_title("● Your turn")
        expect(bob.locator("body")).to_have_attribute("data-chimes", "1")
        expect(ann).to_have_title("Stud")
        expect(bob.locator("button.act-bring_in kbd")).to_have_text("C")
        # Typing in the chat box acts on nothing.
        bob.locator("#chat-text").click()
        bob.keyboard.type("fcr")
        expect(bob.locator("#chat-text")).to_have_value("fcr")
        bob.wait_for_timeout(500)
        assert bob_sent == []
        expect(bob.locator("#actions")).to_be_visible()
        # Out of the box, C brings it in.
        bob.locator("#log").click()
        bob.keyboard.press("c")
        _last_log(ann, f"{bob_name} brings in for 2")
        assert [(f["kind"], f.get("amount")) for f in bob_sent] == [("bring_in", None)]
        expect(bob).to_have_title("Stud")

        # Ann: half the pot after calling 2 into 4 is a completion to 2 + 3; R sends it.
        _turn(ann)
        expect(ann).to_have_title("● Your turn")
        expect(ann.locator("#wager-slider")).to_have_attribute("min", "5")
        expect(ann.locator("#wager-slider")).to_have_attribute("max", "199")
        expect(ann.locator("button.preset[data-preset=half]")).to_have_attribute("data-to", "5")
        expect(ann.locator("button.preset[data-preset=pot]")).to_have_attribute("data-to", "8")
        ann.locator("button.preset[data-preset=half]").click()
        expect(ann.locator("#wager-amount")).to_have_value("5")
        expect(ann.locator("button.act-complete")).to_contain_text("Complete to 5")
        ann.keyboard.press("r")
        _last_log(bob, f"{ann_name} completes to 5")
        assert [(f["kind"], f["amount"]) for f in ann_sent] == [("complete", 5)]

        # Bob: the pot after calling 3 is 12, so a pot-sized raise is to 5 + 12.
        _turn(bob)
        expect(bob.locator("body")).to_have_attribute("data-chimes", "2")
        bob.locator("button.preset[data-preset=pot]").click()
        expect(bob.locator("#wager-slider")).to_have_value("17")
        bob.locator("button.act-raise").click()
        _last_log(ann, f"{bob_name} raises to 17")
        assert [(f["kind"], f.get("amount")) for f in bob_sent][-1] == ("raise", 17)

        # Ann: too much is refused with the range; all in is her whole stack.
        _turn(ann)
        ann.locator("#wager-amount").fill("99999")
        ann.locator("#wager-amount").press("Enter")
        expect(ann.locator("#notice")).to_have_text(
            "bad_amount: raise to 99999 is not allowed: between 29 and 199"
        )
        ann.locator("button.preset[data-preset=all-in]").click()
        expect(ann.locator("button.act-raise")).to_contain_text("Raise to 199")
        ann.screenshot(path=str(artifacts / "betting-no-limit-1280.png"))
        # At phone width the controls wrap: none past the screen's edge.
        ann.set_viewport_size({"width": 390, "height": 844})
        for control in ann.locator("#actions button, #actions input").all():
            box = control.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
        assert ann.evaluate("document.documentElement.scrollWidth") <= 390
        ann.locator("#actions").screenshot(path=str(artifacts / "betting-no-limit-390.png"))
        ann.set_viewport_size({"width": 1280, "height": 900})
        ann.locator("button.act-raise").click()
        _last_log(bob, f"{ann_name} raises to 199 (all in)")
        assert [(f["kind"], f["amount"]) for f in ann_sent] == [
            ("complete", 5),
            ("raise", 99999),
            ("raise", 199),
        ]

        # Bob calls with C: both all in, the cards run out to a showdown.
        _turn(bob)
        expect(bob.locator("button.act-call kbd")).to_have_text("C")
        expect(bob.locator("button.act-fold kbd")).to_have_text("F")
        bob.keyboard.press("c")
        expect(ann.locator("#log")).to_contain_text(f"{bob_name} calls 182 (all in)")
        expect(ann.locator("#log li.win")).to_have_count(1, timeout=15_000)
        expect(ann.locator("#log li.win")).to_have_text(f"{ann_name} wins 400 with a pair of aces")

        # The four-colour deck: diamonds blue, clubs green, hearts red, spades black; kept
        # for the next visit.
        colours = {
            "d": "rgb(31, 95, 214)",
            "c": "rgb(23, 128, 61)",
            "h": "rgb(192, 38, 45)",
            "s": "rgb(27, 27, 27)",
        }
        for suit, colour in colours.items():
            card = ann.locator(f'.card[data-card$="{suit}"]').first
            expect(card).to_have_css("color", colour)
            expect(bob.locator(f'.card[data-card$="{suit}"]').first).to_have_css(
                "color", colours["h"] if suit in "hd" else colours["s"]
            )
        ann.reload()
        expect(ann.locator("#setting-fourColour")).to_be_checked()
        expect(ann.locator("body")).to_have_class("four-colour")
    finally:
        for context in contexts:
            context.close()


def test_hi_lo_split_pot_winner_lines_and_the_dealers_words(
    scripted: ScriptedServer, browser: Browser, artifacts: Path
) -> None:
    DECK["hands"] = HI_LO_HANDS
    table_id = _table(scripted, "Hi-lo split", {"variant": "seven_card_stud_hi_lo"})
    ann_name, bob_name = new_name("ann"), new_name("bob")
    contexts = []
    try:
        ann_ctx, ann, _ = _seat(browser, scripted, "Hi-lo split", ann_name)
        bob_ctx, bob, _ = _seat(browser, scripted, "Hi-lo split", bob_name)
        contexts += [ann_ctx, bob_ctx]
        scripted.admin("POST", f"/admin/tables/{table_id}/resume", {"reason": "seated"})
        _turn(bob)
        expect(ann.locator("#announce")).to_have_text(f"{bob_name} to bring it in with the 4♦")
        bob.keyboard.press("c")
        # Fixed limit: the usual buttons, one a total; R completes.
        _turn(ann)
        expect(ann.locator("#wager-slider")).to_have_count(0)
        expect(ann.locator("button.act-complete")).to_have_text("Complete to 5R")
        ann.keyboard.press("r")
        _turn(bob)
        bob.keyboard.press("c")
        # Fourth street: Bob's pair of fours opens, said once.
        _turn(bob)
        expect(ann.locator("#announce")).to_have_text(f"{bob_name}'s pair of fours is high")
        for _street in range(4):  # fourth to seventh: check it down
            _turn(bob)
            bob.keyboard.press("c")
            _turn(ann)
            ann.keyboard.press("c")
        high = f"{ann_name} wins 6, high, with a pair of aces"
        low = f"{bob_name} wins 6, low, with 7-6-4-2-A"
        expect(ann.locator("#log li.win")).to_have_text([high, low], timeout=15_000)
        expect(ann.locator("#announce")).to_have_text(f"{high} · {low}")
        expect(ann.locator("#history .history-won")).to_have_text(f"{high}; {low}")
        dealer = [t for t in ann.locator("#log li.dealer").all_inner_texts() if "Dealer:" in t]
        assert dealer[0] == f"Dealer: {bob_name} to bring it in with the 4♦"
        assert f"Dealer: {bob_name}'s pair of fours is high" in dealer
        assert f"Dealer: {bob_name}'s pair of fours" not in dealer
        assert not [line for line in dealer if line.endswith(("high is high", "low is low"))]
        ann.screenshot(path=str(artifacts / "hi-lo-split-pot-1280.png"), full_page=True)
    finally:
        for context in contexts:
            context.close()


def test_pot_limit_presets_stop_at_the_pot(scripted: ScriptedServer, browser: Browser) -> None:
    """Pot limit: the pot preset is the turn's max_to, and nothing goes past it."""
    DECK["hands"] = NO_LIMIT_HANDS
    table_id = _table(scripted, "Pot limit presets", {"structure": "pot_limit"})
    ann_name, bob_name = new_name("ann"), new_name("bob")
    contexts = []
    try:
        ann_ctx, ann, ann_sent = _seat(browser, scripted, "Pot limit presets", ann_name)
        bob_ctx, bob, _ = _seat(browser, scripted, "Pot limit presets", bob_name)
        contexts += [ann_ctx, bob_ctx]
        scripted.admin("POST", f"/admin/tables/{table_id}/resume", {"reason": "seated"})
        _turn(bob)
        bob.keyboard.press("c")
        # Ann faces the bring-in: antes 2 and the bring-in 2, call 2: the pot is 2 + 6.
        _turn(ann)
        expect(ann.locator("#wager-slider")).to_have_attribute("max", "8")
        expect(ann.locator("button.preset[data-preset=half]")).to_have_attribute("data-to", "5")
        expect(ann.locator("button.preset[data-preset=pot]")).to_have_attribute("data-to", "8")
        all_in = ann.locator("button.preset[data-preset=all-in]")
        expect(all_in).to_have_text("Max")
        expect(all_in).to_have_attribute("data-to", "8")
        ann.locator("button.preset[data-preset=pot]").click()
        ann.keyboard.press("r")
        _last_log(bob, f"{ann_name} completes to 8")
        assert [(f["kind"], f["amount"]) for f in ann_sent] == [("complete", 8)]
    finally:
        for context in contexts:
            context.close()
