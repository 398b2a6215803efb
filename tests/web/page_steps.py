"""Steps the browser tests take on the players' page: sign up, open a table."""

from __future__ import annotations

import itertools
import time

from playwright.sync_api import Page, expect

PASSWORD = "web-tests-pw"
_names = itertools.count(1)


def new_name(prefix: str) -> str:
    """A name no other test of the run has taken."""
    return f"{prefix}{next(_names)}{int(time.time() * 1000) % 100000}"


def sign_up(page: Page, url: str, name: str) -> None:
    page.goto(url + "/")
    page.fill("#username", name)
    page.fill("#password", PASSWORD)
    page.click("#signup")
    expect(page.locator("#lobby-view")).to_be_visible()
    expect(page.locator("#me-name")).to_have_text(name)


def open_table(page: Page, table_name: str) -> None:
    """Open the table from the lobby and wait for its house bots."""
    row = page.locator("#lobby-rows tr", has_text=table_name)
    expect(row).to_be_visible()
    row.locator("button.open").click()
    expect(page.locator("#table-view")).to_be_visible()
    expect(page.locator(".seat[data-player]")).to_have_count(3, timeout=15_000)


def act(page: Page, kind: str) -> None:
    """Click the turn's button of this kind once it is offered."""
    button = page.locator(f"#actions:not([hidden]) button.act-{kind}:not([disabled])")
    expect(button).to_have_count(1, timeout=15_000)
    button.click()
