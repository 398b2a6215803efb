"""What the table and the replayer say, in scripted hands (a stacked deck), on pages that reach
nothing but the server and log no error: a hi-lo scoop is one line ("scoops"), the bring-in
is said as a duty before the act and the act after it, a time-out reads the same live and in
the replayer, the replayer's log has no empty line for cards face down, "hands this session"
lists only hands the player was dealt, an operator's pause shows as a banner until it ends,
and the operators' console finds a hand and replays it with every card."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from offline import offline_context
from page_steps import new_name, sign_up
from playwright.sync_api import Browser, BrowserContext, Page, expect
from scripted_server import ScriptedServer

from engine.cards import Deck

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from decks import stud_deck  # noqa: E402
from server_helpers import PASSWORD as OPERATOR_PASSWORD  # noqa: E402

# Seat 0's 3s brings in. Seat 0 makes a steel wheel: a straight flush for high and 5-4-3-2-A
# for low, the whole pot; seat 1 has no low.
HANDS = ["As 2s 3s | 4s | 5s | 9d | Td", "Kc Kd Qh | Qc | 8c | 7c | Jh"]
HIGH = "a straight flush, five high"
LOW = "5-4-3-2-A"
TURN = "#actions:not([hidden]) button.act:not([disabled])"


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScriptedServer]:
    with ScriptedServer(
        Path(tmp_path_factory.mktemp("dealer")),
        lambda: Deck(order=stud_deck(HANDS).order()),
        action_clock_seconds=120,
        time_bank_seconds=0,
        pause_between_hands_seconds=0.5,
    ) as server:
        yield server


@pytest.fixture
def offline(browser: Browser, scripted: ScriptedServer) -> Iterator[tuple[Any, list[str]]]:
    """New offline contexts on demand (``offline[0]()``), their problems in ``offline[1]``."""
    problems: list[str] = []
    contexts: list[BrowserContext] = []

    def new() -> BrowserContext:
        contexts.append(offline_context(browser, scripted.url, problems))
        return contexts[-1]

    try:
        yield new, problems
    finally:
        for context in contexts:
            context.close()


def _paused_table(server: ScriptedServer, name: str, seats: int, **settings: Any) -> int:
    table = server.admin(
        "POST",
        "/admin/tables",
        {
            "name": name,
            "seats": seats,
            "config": {"variant": "seven_card_stud_hi_lo"},
            "min_buy_in": 20,
            "max_buy_in": 500,
        },
    )
    table_id = int(table["id"])
    if settings:
        server.admin("PATCH", f"/admin/tables/{table_id}", settings)
    server.admin("POST", f"/admin/tables/{table_id}/pause", {"reason": "seating"})
    return table_id


def _sit(context: BrowserContext, server: ScriptedServer, table: str, seat: int) -> Page:
    page = context.new_page()
    sign_up(page, server.url, new_name("say"))
    row = page.locator("#lobby-rows tr", has_text=table)
    expect(row).to_be_visible()
    row.locator("button.open").click()
    expect(page.locator("#table-view")).to_be_visible()
    page.locator("#buy-in").fill("100")
    page.locator(f"button.sit[data-seat='{seat}']").click()
    expect(page.locator(".seat.me")).to_have_attribute("data-seat", str(seat))
    return page


def _name(page: Page) -> str:
    return page.locator("#me-name").inner_text()


def _play_out(pages: list[Page], watcher: Page) -> None:
    """Whoever has the turn checks or calls (C) until the winners are said."""
    deadline = time.monotonic() + 60
    while not watcher.locator("#log li.win").count():
        assert time.monotonic() < deadline, "the hand did not end"
        for page in pages:
            if page.locator(TURN).count():
                page.keyboard.press("c")
        watcher.wait_for_timeout(100)


def _log(page: Page) -> list[str]:
    return [line.strip() for line in page.locator("#log li").all_inner_texts()]


def _replay_from_history(page: Page) -> None:
    """Open the session's last hand in the replayer, at its end."""
    button = page.locator("#history li").first.locator("button.replay")
    expect(button).to_be_visible(timeout=10_000)
    button.click()
    expect(page.locator("#replayer")).to_be_visible()
    page.locator("#replay-last").click()


def _no_empty_lines(page: Page) -> list[str]:
    lines = [t.strip() for t in page.locator("#replay-log li").all_inner_texts()]
    assert lines
    assert not [line for line in lines if line.endswith(":")], lines
    return lines


def test_a_scoop_the_bring_in_the_pause_banner_and_the_session_s_hands(
    scripted: ScriptedServer, offline: tuple[Any, list[str]], artifacts: Path
) -> None:
    new_context, problems = offline
    table = "Scripted scoop"
    table_id = _paused_table(scripted, table, 3)
    ann, bob, cat = (_sit(new_context(), scripted, table, seat) for seat in range(3))
    ann_name, bob_name = _name(ann), _name(bob)

    # Paused by the operator: every seat sees it, and why.
    for page in (ann, bob, cat):
        expect(page.locator("#pause-banner")).to_be_visible()
        expect(page.locator("#pause-banner")).to_have_text(
            "Paused by an operator: seating. No new hand until the table resumes."
        )
    # Cat sits out: the hand is dealt to Ann and Bob only.
    cat.locator("#seat-controls #sit-out-next").click()  # between hands: at once
    expect(ann.locator(".seat[data-seat='2'] .status")).to_contain_text("sitting out")
    scripted.admin("POST", f"/admin/tables/{table_id}/resume", {"reason": "seated"})
    for page in (ann, bob, cat):
        expect(page.locator("#pause-banner")).to_be_hidden()

    # The bring-in: said as Ann's to make, then the act.
    expect(ann.locator(TURN).first).to_be_visible(timeout=15_000)
    duty = f"{ann_name} to bring it in with the 3♠"
    expect(bob.locator("#announce")).to_have_text(duty)
    ann.keyboard.press("c")
    expect(bob.locator("#log")).to_contain_text(f"{ann_name} brings in for 2")
    expect(bob.locator("#announce")).not_to_contain_text("bring it in")
    said = _log(bob)
    assert said.index(f"Dealer: {duty}") < said.index(f"{ann_name} brings in for 2")
    assert not [line for line in said if line.endswith("brings it in") or "brings it in " in line]

    # Ann scoops: one line, in the log, the announcement, her seat and the session's hands.
    _play_out([ann, bob], ann)
    scoop = f"{ann_name} scoops 6, high with {HIGH} and low with {LOW}"
    for page in (ann, bob, cat):
        expect(page.locator("#log li.win")).to_have_text([scoop], timeout=10_000)
    expect(ann.locator("#announce")).to_have_text(scoop)
    expect(bob.locator(".seat[data-seat='0'] .won")).to_have_text("scoops 6")
    expect(ann.locator("#history li")).to_have_count(1)
    expect(ann.locator("#history .history-won")).to_have_text(scoop)
    expect(bob.locator("#history li")).to_have_count(1)
    # Cat sat the hand out: not one of Cat's hands this session.
    expect(cat.locator("#history li")).to_have_count(0)
    ann.screenshot(path=str(artifacts / "scoop-1280.png"), full_page=True)

    # An operator pauses the table: the banner says so until the table resumes.
    scripted.admin("POST", f"/admin/tables/{table_id}/pause", {"reason": "short break"})
    for page in (ann, cat):
        expect(page.locator("#pause-banner")).to_be_visible()
        expect(page.locator("#pause-banner")).to_contain_text("short break")
    expect(ann.locator("#log")).to_contain_text("An operator paused the table")
    ann.screenshot(path=str(artifacts / "operator-pause-1280.png"), full_page=True)

    # The replayer: the scoop on one step, and no empty line for a card face down.
    _replay_from_history(ann)
    lines = _no_empty_lines(ann)
    assert f"{ann_name} (you) scoops the pot: 6, high with {HIGH} and low with {LOW}" in lines
    assert f"{bob_name}: a card face down" in lines  # seventh street, Bob's down card
    expect(ann.locator(".replay-seat[data-seat='0'] .won")).to_have_text("scoops 6")
    ann.locator(".replay-close").click()

    scripted.admin("POST", f"/admin/tables/{table_id}/resume", {"reason": "back"})
    for page in (ann, cat):
        expect(page.locator("#pause-banner")).to_be_hidden()
    expect(ann.locator("#log")).to_contain_text("An operator resumed the table: back")
    assert problems == []


def test_a_time_out_reads_alike_live_and_replayed_and_the_console_replays_every_card(
    scripted: ScriptedServer, offline: tuple[Any, list[str]], artifacts: Path
) -> None:
    new_context, problems = offline
    table = "Scripted time-out"
    table_id = _paused_table(scripted, table, 2, action_clock=1, time_bank=0)
    ann, bob = (_sit(new_context(), scripted, table, seat) for seat in range(2))
    ann_name, bob_name = _name(ann), _name(bob)
    scripted.admin("POST", f"/admin/tables/{table_id}/resume", {"reason": "seated"})

    # Ann lets her clock run out: the table brings it in for her.
    expect(bob.locator("#log")).to_contain_text(
        f"{ann_name} brings in for 2 (out of time)", timeout=15_000
    )
    # One hand only; Bob's clock runs out too: his turn is folded for him.
    scripted.admin("POST", f"/admin/tables/{table_id}/pause", {"reason": "one hand"})
    expect(ann.locator("#log")).to_contain_text(f"{bob_name} folds (out of time)", timeout=15_000)
    expect(ann.locator("#history li")).to_have_count(1, timeout=10_000)
    _replay_from_history(ann)
    lines = _no_empty_lines(ann)
    assert f"{ann_name} (you) brings in for 2 (out of time)" in lines
    # Ann's replay: Bob's down cards stay face down.
    expect(ann.locator(f".replay-seat[data-player='{bob_name}'] .card.back")).to_have_count(2)

    # The console: the hand found by player, by table and by id, replayed with every card.
    console = new_context().new_page()
    console.goto(scripted.url + "/console")
    console.fill("#username", "boss")
    console.fill("#password", OPERATOR_PASSWORD)
    console.click("#login")
    expect(console.locator("#tables-view")).to_be_visible()
    console.locator("#nav a[data-view='hands']").click()
    expect(console.locator("#hands-view")).to_be_visible()
    console.fill("#hands-player", ann_name)
    console.click("#hands-search")
    rows = console.locator("#hand-rows tr[data-hand-id]")
    expect(rows).to_have_count(1)
    expect(rows.first.locator("a.replay")).to_have_attribute(
        "href", f"#/hands/{rows.first.get_attribute('data-hand-id')}?player={ann_name}"
    )
    hand_id = rows.first.get_attribute("data-hand-id")
    expect(rows.first).to_contain_text(f"{table} (#{table_id})")
    expect(rows.first.locator(f"li[data-player='{bob_name}'] a")).to_have_attribute(
        "href", f"#/players/{bob_name}"
    )
    rows.first.locator("a.replay").click()
    replayer = console.locator("#replayer")
    expect(replayer).to_be_visible()
    expect(replayer.locator("h2")).to_have_text(f"Hand #1 · {table}")
    console.locator("#replay-last").click()
    expect(replayer.locator(f".replay-seat[data-player='{bob_name}'] .card.down")).to_have_count(2)
    console.screenshot(path=str(artifacts / "console-hand-replay-1366.png"))
    expect(
        replayer.locator(f".replay-seat[data-player='{bob_name}'] .card[data-card='Kc']")
    ).to_have_count(1)
    expect(console.locator("#replay-log")).to_contain_text(
        f"{ann_name} brings in for 2 (out of time)"
    )
    expect(console.locator("#replay-log")).to_contain_text(f"{bob_name} folds (out of time)")
    with console.expect_download() as download:
        console.click("#replay-phh")
    assert download.value.suggested_filename == f"table-{table_id}-hand-1.phh"
    phh = Path(download.value.path()).read_text()
    assert "Kc" in phh and "As" in phh  # every card, Bob's unshown down cards too
    console.locator(".replay-close").click()
    expect(replayer).to_be_hidden()
    assert console.evaluate("location.hash") == f"#/hands?player={ann_name}"

    # By time: nothing ended after tomorrow; everything since yesterday.
    for day, count in (("tomorrow", 0), ("yesterday", 1)):
        local = console.evaluate(
            """(day) => {
                const t = new Date(Date.now() + (day === "tomorrow" ? 1 : -1) * 86400000);
                const pad = (n) => String(n).padStart(2, "0");
                return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}`
                    + `T${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`;
            }""",
            day,
        )
        console.fill("#hands-since", local)
        console.click("#hands-search")
        expect(rows).to_have_count(count)
        assert "since=" in console.evaluate("location.hash")
    expect(console.locator("#hands-since")).not_to_have_value("")
    console.fill("#hands-since", "")
    # By table: the table's hands, from the table's link in the row.
    rows.first.locator(f"a[href='#/hands?table={table_id}']").click()
    expect(console.locator("#hands-table")).to_have_value(str(table_id))
    expect(rows).to_have_count(1)
    # By id.
    console.fill("#hand-id", str(hand_id))
    console.click("#hand-open")
    expect(replayer).to_be_visible()
    expect(replayer.locator("h2")).to_have_text(f"Hand #1 · {table}")
    console.locator(".replay-close").click()
    # From the player's page: the hand in their list opens in the replayer.
    console.goto(f"{scripted.url}/console#/players/{ann_name}")
    link = console.locator(f"#player-hands tr[data-hand-id='{hand_id}'] a.hand-link")
    expect(link).to_be_visible()
    link.click()
    expect(replayer).to_be_visible()
    expect(replayer.locator("h2")).to_have_text(f"Hand #1 · {table}")
    assert problems == []
