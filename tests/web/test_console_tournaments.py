"""The console's tournaments tab: an operator makes a sit-and-go from a shipped format, sees
it fill and start (its tables, players, levels and clock), pauses and resumes it, adds time
to its level, moves and disqualifies players, each answered in the console and written in
the audit log; a support account's tab changes nothing."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from live_server import OPERATOR, PASSWORD, SUPPORT, LiveServer
from page_steps import PASSWORD as PLAYER_PASSWORD
from page_steps import new_name
from playwright.sync_api import Browser, Page, expect
from test_console import DESK, _console, _get, _token

TEMPLATE = "stud-sng-9"  # nine players on two tables


def _confirm(page: Page, reason: str, **fields: str) -> None:
    dialog = page.locator("#dialog")
    expect(dialog).to_be_visible()
    for name, value in fields.items():
        dialog.locator(f"[name={name}]").fill(value)
    dialog.locator("input[name=reason]").fill(reason)
    page.click("#dialog-ok")


def _fill_the_field(url: str, tournament_id: int, players: int) -> None:
    for _ in range(players):
        name = new_name("sng")
        registered = httpx.post(
            f"{url}/auth/register", json={"username": name, "password": PLAYER_PASSWORD}
        )
        registered.raise_for_status()
        token = _token(url, name, PLAYER_PASSWORD)
        entry = httpx.post(
            f"{url}/tournaments/{tournament_id}/register",
            json={"request_id": "enter"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert entry.status_code == 201, entry.text


def _running(url: str, tournament_id: int) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        details: dict[str, Any] = httpx.get(f"{url}/tournaments/{tournament_id}").json()
        if details["status"] == "running":
            return details
        assert time.monotonic() < deadline, f"the sit-and-go never started: {details}"
        time.sleep(0.2)


def test_an_operator_makes_pauses_and_resumes_a_tournament_from_the_console(
    staffed_server: LiveServer, browser: Browser, artifacts: Path
) -> None:
    url = staffed_server.url
    boss = _token(url, OPERATOR, PASSWORD)
    errors: list[str] = []
    context = browser.new_context(viewport=DESK)
    try:
        console = _console(context, url, OPERATOR, errors)
        console.click("#nav a[data-view=tournaments]")
        expect(console.locator("#tournaments-view")).to_be_visible()

        # Made from a shipped format: listed, taking entries.
        name = new_name("Console SNG ")
        console.click("#new-tournament")
        console.locator("#dialog select[name=template]").select_option(TEMPLATE)
        console.locator("#dialog input[name=name]").fill(name)
        console.click("#dialog-ok")
        expect(console.locator("#notice")).to_contain_text(f"created: {name}")
        row = console.locator("#tournament-rows tr", has_text=name)
        expect(row).to_be_visible()
        expect(row.locator(".status")).to_have_text("registering")
        expect(row.locator(".entrants")).to_have_text("0 / 9")
        tournament_id = int(row.get_attribute("data-tournament") or 0)
        assert tournament_id

        # Nine players enter: it starts on two tables.
        _fill_the_field(url, tournament_id, 9)
        _running(url, tournament_id)
        row.locator("a.name").click()
        expect(console.locator("#tournament-view")).to_be_visible()
        expect(console.locator("#tournament-name")).to_have_text(name)
        expect(console.locator("#tournament-state .status")).to_have_text("running")
        expect(console.locator(".tournament-table")).to_have_count(2)
        expect(console.locator(".tournament-table tr[data-player]")).to_have_count(9)
        expect(console.locator("#tournament-totals")).to_contain_text("Players left9")
        expect(console.locator("#tournament-clock")).to_contain_text("Level1")
        expect(console.locator("#tournament-levels tr.current")).to_have_count(1)
        expect(console.locator("#tournament-standings tr")).to_have_count(9)
        console.screenshot(path=str(artifacts / "console-tournament-1366.png"), full_page=True)

        # Pause, then resume: the director takes each; the tab says so.
        console.click("#tournament-pause")
        _confirm(console, "dinner break")
        expect(console.locator("#notice")).to_contain_text(f"{name}: Paused")
        expect(console.locator("#tournament-state .status")).to_have_text("paused")
        expect(console.locator("#tournament-clock")).to_contain_text("(paused)")
        expect(console.locator("#tournament-pause")).to_be_hidden()
        console.click("#tournament-resume")
        _confirm(console, "back from dinner")
        expect(console.locator("#notice")).to_contain_text(f"{name}: Resumed")
        expect(console.locator("#tournament-state .status")).to_have_text("running")

        # Time added to the level; a move and a disqualification, now or after the hand.
        console.click("#tournament-add-time")
        _confirm(console, "a long dispute", minutes="3")
        expect(console.locator("#notice")).to_contain_text(f"{name}: 3 min added")
        players = console.locator(".tournament-table tr[data-player]")
        mover = players.nth(0).get_attribute("data-player")
        players.nth(0).locator("button.move").click()
        _confirm(console, "seat change")
        expect(console.locator("#notice")).to_contain_text(f"{mover}: moved")
        cheat = players.nth(8).get_attribute("data-player")
        players.nth(8).locator("button.disqualify").click()
        _confirm(console, "collusion")
        expect(console.locator("#notice")).to_contain_text(f"{cheat}: disqualified")
        # A refusal stays in the dialog with its code: a seat that no table has.
        second = console.locator(".tournament-table").nth(1)
        second_number = second.get_attribute("data-table-number")
        to = "1" if second_number != "1" else "2"
        second.locator("tr[data-player]").first.locator("button.move").click()
        _confirm(console, "bad seat", table=to, seat="9")
        expect(console.locator("#dialog-error")).to_contain_text("bad_seat: ")
        console.click("#dialog-cancel")

        audit = _get(url, boss, f"/admin/audit?target_id={tournament_id}")["entries"]
        actions = [entry["action"] for entry in audit]
        for action in (
            "tournament.create",
            "tournament.pause",
            "tournament.resume",
            "tournament.add_time",
            "tournament.move",
            "tournament.disqualify",
        ):
            assert action in actions, actions
        paused = next(e for e in audit if e["action"] == "tournament.pause")
        assert paused["reason"] == "dinner break" and paused["actor"] == OPERATOR
        assert not errors, errors
    finally:
        context.close()

    # A support account reads the tab: no control that changes anything.
    support_errors: list[str] = []
    support_context = browser.new_context(viewport=DESK)
    try:
        support = _console(support_context, url, SUPPORT, support_errors)
        support.goto(f"{url}/console#/tournaments/{tournament_id}")
        expect(support.locator("#tournament-name")).to_have_text(name)
        expect(support.locator(".tournament-table").first).to_be_visible()
        expect(support.locator("#tournament-pause")).to_be_hidden()
        expect(support.locator("button.disqualify").first).to_be_hidden()
        expect(support.locator("#new-tournament")).to_be_hidden()
        assert not support_errors, support_errors
    finally:
        support_context.close()
