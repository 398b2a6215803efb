"""The hand replayer on the players' page, in a scripted hand (a stacked deck): opened from
the session's list and from the hands page, stepped forward and back street by street; the
actions as the dealer says them, the pots and side pot, the showdown; the PHH download is
the hand as the player saw it."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from page_steps import act, new_name, sign_up
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect
from scripted_server import ScriptedServer

from engine import phh, phh_replay
from engine.cards import Deck

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from decks import stud_deck  # noqa: E402

# Seats 0, 1, 2 in the order the players sit. Seat 1's 2c brings in; seat 2's board is high
# from fourth street on. Seat 0 (short) is all in on fourth street with a diamond flush and
# takes the main pot; seat 2's ace-high straight takes the side pot; seat 1's ten-high
# straight is mucked.
HANDS = [
    "2d 3d Jd | 4d | 5h | 6h | 7d",
    "5d 6d 2c | 7h | 8h | 9h | Td",
    "8d 9d Qc | Ah | Kh | Jh | Th",
]
DOWN = [[*h.replace("|", " ").split()[:2], h.split()[-1]] for h in HANDS]
UP = [[c for c in h.replace("|", " ").split() if c not in DOWN[k]] for k, h in enumerate(HANDS)]
TABLE = "Scripted replay"


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScriptedServer]:
    with ScriptedServer(
        Path(tmp_path_factory.mktemp("replay")),
        lambda: Deck(order=stud_deck(HANDS).order()),
        action_clock_seconds=60,
        time_bank_seconds=0,
        pause_between_hands_seconds=0.5,
    ) as server:
        yield server


def _seat(
    browser: Browser, server: ScriptedServer, buy_in: int
) -> tuple[BrowserContext, Page, str]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    name = new_name("rp")
    sign_up(page, server.url, name)
    row = page.locator("#lobby-rows tr", has_text=TABLE)
    expect(row).to_be_visible()
    row.locator("button.open").click()
    expect(page.locator("#table-view")).to_be_visible()
    page.locator("#buy-in").fill(str(buy_in))
    page.locator("button.sit").first.click()
    expect(page.locator(".seat.me")).to_have_count(1)
    return context, page, name


def _cards(seat: Locator) -> list[str]:
    return [c.get_attribute("data-card") or "" for c in seat.locator(".card").all()]


def _said(replayer: Locator, text: str) -> None:
    expect(replayer.locator("#replay-said")).to_contain_text(text)


def test_a_hand_replayed_street_by_street_and_downloaded_as_phh(
    scripted: ScriptedServer, browser: Browser, artifacts: Path
) -> None:
    table_id = scripted.admin(
        "POST", "/admin/tables", {"name": TABLE, "seats": 3, "min_buy_in": 5, "max_buy_in": 500}
    )["id"]
    scripted.admin("POST", f"/admin/tables/{table_id}/pause", {"reason": "seating"})
    contexts = []
    try:
        seated = [_seat(browser, scripted, buy_in) for buy_in in (9, 100, 100)]
        contexts = [c for c, _, _ in seated]
        (short, short_name), (bring, bring_name), (high, high_name) = [(p, n) for _, p, n in seated]
        scripted.admin("POST", f"/admin/tables/{table_id}/resume", {"reason": "all seated"})

        # Hand 1. Third street: 2 brought in, completed to 5, called.
        for page, kind in [
            (bring, "bring_in"),
            (high, "complete"),
            (short, "call"),
            (bring, "call"),
        ]:
            act(page, kind)
        # Fourth: a bet of 5, called all in for 3, raised to 10 and 15, called.
        for page, kind in [(high, "bet"), (short, "call"), (bring, "raise"), (high, "raise")]:
            act(page, kind)
        act(bring, "call")
        # Fifth: a bet of 10, raised to 20 and to 30, called; sixth and seventh checked.
        for page, kind in [(high, "bet"), (bring, "raise"), (high, "raise"), (bring, "call")]:
            act(page, kind)
        for _street in range(2):
            act(high, "check")
            act(bring, "check")
        # Hand 2: brought in, both others fold; no hand after it.
        act(bring, "bring_in")
        scripted.admin("POST", f"/admin/tables/{table_id}/pause", {"reason": "look at it"})
        act(high, "fold")
        act(short, "fold")

        deadline = time.monotonic() + 15
        while (listed := scripted.admin("GET", f"/admin/hands?table={table_id}"))["total"] < 2:
            assert time.monotonic() < deadline, "the hands were not recorded"
            time.sleep(0.1)
        first_id = listed["hands"][-1]["id"]
        record = scripted.admin("GET", f"/admin/hands/{first_id}")
        assert record["result"]["pots"] == [
            {"amount": 27, "eligible": [0, 1, 2]},
            {"amount": 84, "eligible": [1, 2]},
        ]

        # The session's list names each hand's table; the replay opens from it.
        entries = bring.locator("#history li")
        expect(entries).to_have_count(2, timeout=15_000)
        for entry in entries.all():
            expect(entry.locator(".history-table")).to_have_text(TABLE)
        entry = bring.locator('#history li[data-hand-number="1"]')
        expect(entry.locator("button.replay")).to_be_visible(timeout=10_000)
        entry.locator("button.replay").click()
        replayer = bring.locator("#replayer")
        expect(replayer).to_be_visible()
        expect(replayer.locator("h2")).to_have_text(f"Hand #1 · {TABLE}")
        expect(replayer).to_have_attribute("data-street", "start")
        _said(replayer, "antes 1")
        seats = [replayer.locator(f'.replay-seat[data-seat="{n}"]') for n in range(3)]

        forward = replayer.locator("#replay-forward")
        back = replayer.locator("#replay-back")
        forward.click()
        # Third street: bring's own down cards and everyone's upcard; others' down cards hidden.
        expect(replayer).to_have_attribute("data-street", "third")
        assert _cards(seats[1]) == [*DOWN[1][:2], UP[1][0]]
        assert _cards(seats[0]) == ["??", "??", UP[0][0]]
        assert _cards(seats[2]) == ["??", "??", UP[2][0]]
        expect(replayer.locator("#replay-said")).to_contain_text("3rd street")
        steps = [
            f"{bring_name} (you) brings in for 2",
            f"{high_name} completes to 5",
            f"{short_name} calls 5",
            f"{bring_name} (you) calls 3",
        ]
        for text in steps:
            forward.click()
            _said(replayer, text)
        expect(replayer.locator("#replay-pot")).to_have_attribute("data-pot", "18")
        # Back through third street, and forward again.
        for text in reversed(steps[:-1]):
            back.click()
            _said(replayer, text)
        for text in steps[1:]:
            forward.click()
            _said(replayer, text)

        forward.click()
        expect(replayer).to_have_attribute("data-street", "fourth")
        assert _cards(seats[0]) == ["??", "??", *UP[0][:2]]
        assert _cards(seats[1]) == [*DOWN[1][:2], *UP[1][:2]]
        forward.click()
        _said(replayer, f"{high_name} bets 5")
        expect(replayer.locator("#replay-pot")).to_have_text("Pot 23")
        forward.click()
        _said(replayer, f"{short_name} calls 3, all in")
        expect(replayer.locator("#replay-pot")).to_have_text("Pot 26 (main 24, side 2)")
        expect(seats[0].locator(".status")).to_have_text("all in")
        bring.screenshot(path=str(artifacts / "replayer-all-in-1280.png"))
        back.click()
        _said(replayer, f"{high_name} bets 5")
        expect(replayer.locator("#replay-pot")).to_have_text("Pot 23")
        expect(seats[0].locator(".status")).to_have_count(0)
        forward.click()
        for text in [f"{bring_name} (you) raises to 10", f"{high_name} raises to 15"]:
            forward.click()
            _said(replayer, text)
        forward.click()
        _said(replayer, f"{bring_name} (you) calls 5")

        forward.click()
        expect(replayer).to_have_attribute("data-street", "fifth")
        for text in [
            f"{high_name} bets 10",
            f"{bring_name} (you) raises to 20",
            f"{high_name} raises to 30",
            f"{bring_name} (you) calls 10",
        ]:
            forward.click()
            _said(replayer, text)
        expect(replayer.locator("#replay-pot")).to_have_text("Pot 111 (main 27, side 84)")

        # Jump to seventh street: bring's third down card, a hidden one for each other.
        replayer.locator('.replay-streets button[data-street="seventh"]').click()
        expect(replayer).to_have_attribute("data-street", "seventh")
        assert _cards(seats[1]) == [*DOWN[1], *UP[1]]
        assert _cards(seats[0]) == ["??"] * 3 + UP[0]
        assert _cards(seats[2]) == ["??"] * 3 + UP[2]
        expect(replayer.locator("#replay-said")).to_contain_text(f"{high_name}: ")
        assert "2d" not in (replayer.inner_html())  # no card the seat had not seen

        # The showdown: seat 2 shows first, the all-in seat 0 must show, bring mucks.
        replayer.locator('.replay-streets button[data-street="showdown"]').click()
        _said(replayer, f"{high_name} shows")
        _said(replayer, "high: straight, ace high")
        assert sorted(_cards(seats[2])) == sorted(DOWN[2] + UP[2])
        assert _cards(seats[0]) == ["??"] * 3 + UP[0]  # not shown yet
        forward.click()
        _said(replayer, f"{short_name} shows")
        _said(replayer, "flush")
        assert sorted(_cards(seats[0])) == sorted(DOWN[0] + UP[0])
        forward.click()
        _said(replayer, f"{bring_name} (you) mucks")
        forward.click()
        _said(replayer, f"{short_name} wins the main pot: 27 with flush, jack high")
        forward.click()
        _said(replayer, f"{high_name} wins the side pot: 84 with straight, ace high")
        forward.click()
        _said(replayer, "Hand over")
        _said(replayer, f"{short_name} 9 → 27 (+18)")
        expect(forward).to_be_disabled()
        expect(seats[0].locator(".won")).to_have_text("wins 27")
        expect(seats[2].locator(".won")).to_have_text("wins 84")
        bring.screenshot(path=str(artifacts / "replayer-end-1280.png"))

        # Play from the start runs to the end by itself.
        replayer.locator("#replay-first").click()
        expect(replayer).to_have_attribute("data-street", "start")
        replayer.locator("#replay-play").click()
        expect(replayer).to_have_attribute("data-street", "third", timeout=10_000)
        replayer.locator("#replay-play").click()  # pause
        paused = replayer.get_attribute("data-frame")
        bring.wait_for_timeout(2000)
        assert replayer.get_attribute("data-frame") == paused
        replayer.locator(".replay-close").click()
        expect(replayer).to_be_hidden()

        # The short stack's hands page, one hand a page: hand 2, then older, hand 1.
        short.locator("#back").click()
        short.locator("#my-hands").click()
        expect(short.locator("#hands-view")).to_be_visible()
        short.goto(f"{scripted.url}/#/hands?limit=1")
        rows = short.locator("#hands-rows tr")
        expect(rows).to_have_count(1)
        expect(rows.first).to_have_attribute("data-hand-number", "2")
        expect(rows.first).to_contain_text(TABLE)
        short.locator("#hands-older").click()
        expect(rows.first).to_have_attribute("data-hand-number", "1")
        expect(rows.first).to_contain_text("+18")
        short.screenshot(path=str(artifacts / "hands-page-1280.png"))
        short.set_viewport_size({"width": 390, "height": 844})
        expect(rows.first).to_contain_text(TABLE)
        assert short.evaluate("document.documentElement.scrollWidth") <= 390
        short.screenshot(path=str(artifacts / "hands-page-390.png"))
        short.set_viewport_size({"width": 1280, "height": 900})
        rows.first.locator("button.replay").click()
        replayer = short.locator("#replayer")
        expect(replayer).to_be_visible()
        replayer.locator("#replay-last").click()
        _said(replayer, "Hand over")
        short.set_viewport_size({"width": 390, "height": 844})
        assert short.evaluate("document.documentElement.scrollWidth") <= 390
        short.screenshot(path=str(artifacts / "replayer-end-390.png"))
        short.set_viewport_size({"width": 1280, "height": 900})
        # Bring's mucked hand was never seen by seat 0, not even at the end.
        seat1 = replayer.locator('.replay-seat[data-seat="1"]')
        assert _cards(seat1) == ["??"] * 3 + UP[1]
        for card in DOWN[1]:
            assert f'data-card="{card}"' not in replayer.inner_html()
        expect(replayer.locator("#replay-log")).to_contain_text(f"{bring_name} mucks")
        expect(replayer.locator("#replay-log")).to_contain_text(
            f"{short_name} (you) calls 3, all in"
        )

        # The PHH download: the hand as seat 0 saw it, and it replays to the record's stacks.
        with short.expect_download() as waiting:
            replayer.locator("#replay-phh").click()
        download = waiting.value
        assert download.suggested_filename == f"table-{table_id}-hand-1.phh"
        text = Path(download.path()).read_text()
        seen = phh.loads(text)
        full = phh.loads(record["phh"])
        hidden = "".join(DOWN[1][:2])
        expected = [
            a.replace(hidden, "????").replace(f"d dh p2 {DOWN[1][2]}", "d dh p2 ??")
            for a in full.actions
            if not a.startswith("p2 sm")
        ]
        assert [a for a in seen.actions if a != "p2 sm"] == expected
        assert "p2 sm" in seen.actions
        for card in DOWN[1]:
            assert card not in text
        for card in DOWN[0] + DOWN[2]:
            assert card in text
        assert list(seen.finishing_stacks or ()) == [27, 49, 133]
        assert phh_replay.replay(seen) == [27, 49, 133]

        # A hand's own address opens its replay; the arrow keys step; closing it leaves the
        # hands page.
        replayer.locator(".replay-close").click()
        expect(replayer).to_be_hidden()
        short.goto(f"{scripted.url}/#/hands/{first_id}")
        # The hands page, then the hand, fetched in turn: on a loaded machine, seconds.
        expect(replayer).to_be_visible(timeout=20_000)
        expect(replayer.locator("h2")).to_have_text(f"Hand #1 · {TABLE}")
        expect(replayer).to_have_attribute("data-street", "start")
        short.keyboard.press("ArrowRight")
        expect(replayer).to_have_attribute("data-street", "third")
        short.keyboard.press("Escape")
        expect(replayer).to_be_hidden()
        expect(short.locator("#hands-view")).to_be_visible()
        expect(short).to_have_url(re.compile(r"#/hands$"))  # Escape leaves the hand's address
        # And so does its ✕, at once: the next address is not undone by a late close event.
        short.goto(f"{scripted.url}/#/hands/{first_id}")
        expect(replayer).to_be_visible(timeout=20_000)
        replayer.locator(".replay-close").click()
        expect(short).to_have_url(re.compile(r"#/hands$"))
        short.goto(f"{scripted.url}/#/hands/{first_id}")
        expect(replayer).to_be_visible(timeout=20_000)
        expect(short).to_have_url(re.compile(rf"#/hands/{first_id}$"))
    finally:
        for context in contexts:
            context.close()
