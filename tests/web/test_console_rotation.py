"""Mixed tables in the operators' console: an operator opens one from a rotation (a bad one
refused in the dialog with the field at fault), sees its rotation in the live list, edits it
(audited, dealt from the next hand at an idle table) and ends it; a support account gets no
such control."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from live_server import OPERATOR, PASSWORD, SUPPORT, LiveServer
from playwright.sync_api import Browser, BrowserContext, Page, expect

DESK = {"width": 1366, "height": 900}
MIX = "Console mix"


def _get(url: str, token: str, path: str) -> Any:
    response = httpx.get(url + path, headers={"Authorization": f"Bearer {token}"})
    response.raise_for_status()
    return response.json()


def _console(context: BrowserContext, url: str, name: str, errors: list[str]) -> Page:
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url + "/console")
    page.fill("#username", name)
    page.fill("#password", PASSWORD)
    page.click("#login")
    expect(page.locator("#tables-view")).to_be_visible()
    return page


def _rotation(console: Page, rotation: Any) -> None:
    console.locator("#dialog textarea[name=rotation]").fill(json.dumps(rotation))


def test_an_operator_opens_a_mixed_table_and_edits_its_rotation(
    staffed_server: LiveServer, browser: Browser, artifacts: Path
) -> None:
    url = staffed_server.url
    boss = httpx.post(
        f"{url}/auth/login", json={"username": OPERATOR, "password": PASSWORD}
    ).json()["access_token"]
    errors: list[str] = []
    context = browser.new_context(viewport=DESK)
    try:
        console = _console(context, url, OPERATOR, errors)
        console.click("#new-mixed-table")
        # The stud mix to start from, eight hands a game.
        offered = json.loads(console.locator("#dialog textarea[name=rotation]").input_value())
        assert [g["variant"] for g in offered["games"]] == [
            "seven_card_stud",
            "razz",
            "seven_card_stud_hi_lo",
        ]
        console.locator("#dialog input[name=name]").fill(MIX)
        _rotation(console, {"games": [{"variant": "razz"}, {"variant": "omaha"}]})
        console.click("#dialog-ok")
        error = console.locator("#dialog-error")
        expect(error).to_contain_text("bad_rotation: ")
        expect(error).to_contain_text("games[1].variant")
        expect(console.locator("#dialog")).to_be_visible()
        _rotation(console, {**offered, "hands": 4})
        console.click("#dialog-ok")
        expect(console.locator("#notice")).to_contain_text(
            f"opened: {MIX} (Stud mix: Stud / Razz / Stud Hi-Lo, 4 hands each)"
        )
        row = console.locator("#table-rows tr", has_text=MIX)
        expect(row.locator(".rotation-text")).to_have_text(
            "Stud mix: Stud / Razz / Stud Hi-Lo, 4 hands each"
        )
        table_id = int(row.get_attribute("data-table") or 0)
        console.screenshot(path=str(artifacts / "console-mixed-1366.png"), full_page=True)

        # Edited: the dialog shows the rotation as stored; an idle table deals it next hand.
        row.locator("button.rotation").click()
        stored = json.loads(console.locator("#dialog textarea[name=rotation]").input_value())
        assert stored["hands"] == 4 and len(stored["games"]) == 3
        _rotation(console, {"games": [{"variant": "razz"}, {"variant": "five_card_stud"}]})
        console.locator("#dialog input[name=reason]").fill("razz night")
        console.click("#dialog-ok")
        expect(console.locator("#notice")).to_have_text(f"{MIX}: rotation saved, from hand 1")
        expect(row.locator(".rotation-text")).to_have_text(
            "Stud mix: Razz / 5-Card Stud, 8 hands each"
        )
        record = next(t for t in _get(url, boss, "/admin/tables") if t["id"] == table_id)
        assert [g["variant"] for g in record["rotation"]["rotation"]["games"]] == [
            "razz",
            "five_card_stud",
        ]
        audit = _get(url, boss, "/admin/audit?action=table.rotation")["entries"]
        assert [e["reason"] for e in audit] == ["razz night"]
        listed = next(t for t in httpx.get(f"{url}/tables").json() if t["id"] == table_id)
        assert listed["rotation"]["games"][0]["variant"] == "razz"

        # Ended: the table plays its own rules alone.
        row.locator("button.rotation").click()
        console.locator("#dialog textarea[name=rotation]").fill("null")
        console.click("#dialog-ok")
        expect(console.locator("#notice")).to_have_text(f"{MIX}: rotation ended, from hand 1")
        expect(row.locator(".rotation-text")).to_have_count(0)
        assert not errors, errors
    finally:
        context.close()


def test_a_support_account_gets_no_rotation_control(
    staffed_server: LiveServer, browser: Browser
) -> None:
    errors: list[str] = []
    context = browser.new_context(viewport=DESK)
    try:
        console = _console(context, staffed_server.url, SUPPORT, errors)
        expect(console.locator("#table-rows tr[data-table]").first).to_be_visible()
        expect(console.locator("#new-mixed-table")).to_be_hidden()
        expect(console.locator("#table-rows button.rotation:visible")).to_have_count(0)
        assert not errors, errors
    finally:
        context.close()
