"""The operators' console at ``/console``: an operator pauses a demo table where a person
sits, voids the hand they are playing and credits their wallet, each seen on the person's
own page and in the audit log the console shows; a support account's console changes
nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from live_server import OPERATOR, PASSWORD, SUPPORT, LiveServer
from page_steps import PASSWORD as PLAYER_PASSWORD
from page_steps import new_name, open_table, sign_up
from playwright.sync_api import Browser, BrowserContext, Page, expect

from server.api.security_headers import PAGE_POLICY

DESK = {"width": 1366, "height": 900}
TABLE = "Demo: seven-card stud"
PAGE_OF_LEDGER = 20  # the ledger movements the console shows at first


def _token(url: str, name: str, password: str) -> str:
    response = httpx.post(f"{url}/auth/login", json={"username": name, "password": password})
    response.raise_for_status()
    token: str = response.json()["access_token"]
    return token


def _get(url: str, token: str, path: str) -> Any:
    response = httpx.get(url + path, headers={"Authorization": f"Bearer {token}"})
    response.raise_for_status()
    return response.json()


def _table_id(url: str, name: str) -> int:
    return next(int(t["id"]) for t in httpx.get(f"{url}/tables").json() if t["name"] == name)


def _console(context: BrowserContext, url: str, name: str, errors: list[str]) -> Page:
    """The console signed in as ``name``, its script errors and policy refusals collected
    (not the browser's line for each answer the API refused: the tests cause some)."""
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console",
        lambda message: (
            errors.append(message.text)
            if message.type == "error" and "Failed to load resource" not in message.text
            else None
        ),
    )
    page.goto(url + "/console")
    expect(page.locator("#auth-view")).to_be_visible()
    page.fill("#username", name)
    page.fill("#password", PASSWORD)
    page.click("#login")
    expect(page.locator("#tables-view")).to_be_visible()
    expect(page.locator("#me-name")).to_have_text(name)
    return page


def _confirm(page: Page, reason: str) -> None:
    dialog = page.locator("#dialog")
    expect(dialog).to_be_visible()
    dialog.locator("input[name=reason]").fill(reason)
    page.click("#dialog-ok")


def test_the_console_is_served_under_the_page_policy(staffed_server: LiveServer) -> None:
    response = httpx.get(staffed_server.url + "/console")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["content-security-policy"] == PAGE_POLICY
    assert '<script type="module" src="/web/console.js">' in response.text
    assert "<script>" not in response.text and " on" + "click=" not in response.text


def test_an_operator_pauses_voids_and_credits_through_the_console(
    staffed_server: LiveServer, browser: Browser, artifacts: Path
) -> None:
    url = staffed_server.url
    table_id = _table_id(url, TABLE)
    boss = _token(url, OPERATOR, PASSWORD)
    errors: list[str] = []
    player_context = browser.new_context(viewport=DESK)
    console_context = browser.new_context(viewport=DESK)
    try:
        # A person sits at the demo table and waits for their turn: a hand in progress.
        name = new_name("pat")
        player = player_context.new_page()
        sign_up(player, url, name)
        open_table(player, TABLE)
        player.locator("#buy-in").fill("300")
        player.locator("button.sit").first.click()
        expect(player.locator(".seat.me")).to_have_count(1)
        expect(player.locator("#actions:not([hidden]) .act").first).to_be_visible(timeout=30_000)
        player_log = player.locator("#log")

        console = _console(console_context, url, OPERATOR, errors)
        row = console.locator(f"#table-rows tr[data-table='{table_id}']")
        seated = row.locator(f".seated li[data-player='{name}']")
        expect(seated).to_be_visible()
        expect(seated.locator(".stack")).not_to_be_empty()
        expect(row.locator(".street")).not_to_have_text("between hands")
        expect(row.locator(".hand")).not_to_have_text("–")
        expect(row.locator(".idle")).to_contain_text(" s")
        # The player's turn waits on them: past a stuck threshold of 1 s, the table is flagged.
        console.fill("#stuck-after", "1")
        console.dispatch_event("#stuck-after", "change")
        expect(row.locator(".stuck-flag")).to_be_visible()
        expect(row).to_have_class("stuck")
        console.screenshot(path=str(artifacts / "console-tables-1366.png"), full_page=True)
        console.fill("#stuck-after", "")
        console.dispatch_event("#stuck-after", "change")
        expect(row.locator(".stuck-flag")).to_have_count(0)

        # Pause: after the hand in progress; the player's page says so.
        row.locator("button.pause").click()
        _confirm(console, "dealer change")
        expect(console.locator("#notice")).to_contain_text(
            f"{TABLE}: Paused after the hand in progress"
        )
        expect(player_log).to_contain_text(
            "An operator paused the table after this hand: dealer change"
        )
        expect(row.locator(".paused")).to_have_text("paused: dealer change")
        expect(row.locator("button.resume")).to_be_visible()

        # Void: the hand the player is in, at once; their page says who and why, and their
        # stack is back as at the hand's start.
        row.locator("button.void").click()
        _confirm(console, "misdeal reported")
        expect(console.locator("#notice")).to_contain_text(f"{TABLE}: Hand #")
        expect(console.locator("#notice")).to_contain_text("voided")
        expect(player_log).to_contain_text("voided by an operator (misdeal reported)")
        void = _get(url, boss, "/admin/audit?action=hand.void")["entries"][0]
        assert void["target_id"] == str(table_id)
        restored = void["after"]["stacks"][name]
        expect(player.locator(".seat.me .stack")).to_have_text(str(restored))
        expect(console.locator("#notice")).to_contain_text(f"{name} {restored}")
        expect(row.locator(".street")).to_have_text("between hands")

        # Credit: find the player by a prefix of their name; the wallet moves.
        wallet_before = _get(url, _token(url, name, PLAYER_PASSWORD), "/wallet")["balance"]
        console.click("#nav a[data-view=players]")
        console.fill("#prefix", name[:-2])
        console.click("#search-form button")
        found = console.locator(f"#player-rows tr[data-player='{name}']")
        expect(found).to_be_visible()
        expect(console.locator("#players-page")).to_contain_text("of ")
        found.locator("a").click()
        expect(console.locator("#player-name")).to_have_text(name)
        expect(console.locator("#player-balance")).to_have_text(str(wallet_before))
        expect(console.locator("#player-seats")).to_contain_text(TABLE)
        console.fill("#adjust-amount", "250")
        console.fill("#adjust-reason", "tournament prize")
        console.click("#credit")
        expect(console.locator("#notice")).to_contain_text(
            f"Credited 250 to {name}: {wallet_before} → {wallet_before + 250}"
        )
        expect(console.locator("#player-balance")).to_have_text(str(wallet_before + 250))
        expect(console.locator("#player-ledger tr").first).to_contain_text("tournament prize")
        wallet = _get(url, _token(url, name, PLAYER_PASSWORD), "/wallet")["balance"]
        assert wallet == wallet_before + 250
        console.screenshot(path=str(artifacts / "console-player-1366.png"), full_page=True)

        # A refusal shows the API's code and message: a debit past the balance.
        console.fill("#adjust-amount", str(wallet + 1))
        console.fill("#adjust-reason", "too much")
        console.click("#debit")
        expect(console.locator("#notice.fail")).to_contain_text("insufficient_funds: ")
        expect(console.locator("#player-balance")).to_have_text(str(wallet))

        # The audit log lists the three actions, newest first, with who and why.
        console.click("#nav a[data-view=audit]")
        rows = console.locator("#audit-rows tr")
        expect(rows.first).to_be_visible()
        actions = [r.get_attribute("data-action") for r in rows.all()[:3]]
        assert actions == ["player.credit", "hand.void", "table.pause"], actions
        for action, reason in (
            ("player.credit", "tournament prize"),
            ("hand.void", "misdeal reported"),
            ("table.pause", "dealer change"),
        ):
            entry = console.locator(f"#audit-rows tr[data-action='{action}']").first
            expect(entry.locator(".reason")).to_have_text(reason)
            expect(entry).to_contain_text(OPERATOR)
        expect(console.locator("#audit-rows tr[data-action='player.credit']")).to_contain_text(
            f"player {name}"
        )
        console.screenshot(path=str(artifacts / "console-audit-1366.png"), full_page=True)

        # Resume, then the books: balanced.
        console.click("#nav a[data-view=tables]")
        row.locator("button.resume").click()
        _confirm(console, "new dealer seated")
        expect(player_log).to_contain_text("An operator resumed the table: new dealer seated")
        expect(row.locator(".paused")).to_have_count(0)
        # Edit: a setting changed takes effect from the next hand; nothing changed is refused.
        row.locator("button.edit").click()
        console.locator("#dialog input[name=action_clock]").fill("25")
        console.locator("#dialog input[name=showdown_pause]").fill("6")
        console.locator("#dialog input[name=reason]").fill("slower clock")
        console.click("#dialog-ok")
        expect(console.locator("#notice")).to_contain_text(f"{TABLE}: settings saved")
        edited = next(t for t in _get(url, boss, "/admin/tables") if t["id"] == table_id)
        assert edited["action_clock"] == 25 and edited["showdown_pause"] == 6
        row.locator("button.edit").click()
        expect(console.locator("#dialog input[name=action_clock]")).to_have_value("25")
        console.click("#dialog-ok")
        expect(console.locator("#dialog-error")).to_have_text("bad_request: nothing to change")
        console.click("#dialog-cancel")

        # A new table from its rules: the live list shows it.
        console.click("#new-table")
        console.locator("#dialog input[name=name]").fill("Console razz")
        console.locator("#dialog textarea[name=config]").fill('{"variant": "razz"}')
        console.click("#dialog-ok")
        expect(console.locator("#notice")).to_contain_text("opened: Console razz")
        expect(console.locator("#table-rows tr", has_text="Console razz")).to_be_visible()

        console.click("#nav a[data-view=books]")
        expect(console.locator("#books-balanced")).to_have_text("balanced")
        expect(console.locator("#books-tables")).to_contain_text(str(table_id))
        console.screenshot(path=str(artifacts / "console-books-1366.png"), full_page=True)
        assert not errors, errors
    finally:
        player_context.close()
        console_context.close()


def _post(url: str, token: str, path: str, body: dict[str, Any]) -> Any:
    response = httpx.post(url + path, json=body, headers={"Authorization": f"Bearer {token}"})
    response.raise_for_status()
    return response.json()


def test_an_operator_pages_players_kicks_suspends_and_unsuspends(
    staffed_server: LiveServer, browser: Browser
) -> None:
    url = staffed_server.url
    boss = _token(url, OPERATOR, PASSWORD)
    errors: list[str] = []
    prefix = new_name("pg")
    for n in range(23):
        httpx.post(
            f"{url}/auth/register",
            json={"username": f"{prefix}x{n:02}", "password": PLAYER_PASSWORD},
        ).raise_for_status()
    # A table between hands: a player who sits there is in no hand, and leaves at once.
    razz = _table_id(url, "Demo: razz")
    _post(url, boss, f"/admin/tables/{razz}/pause", {"reason": "seating"})
    player_context = browser.new_context(viewport=DESK)
    console_context = browser.new_context(viewport=DESK)
    try:
        name = new_name("kit")
        player = player_context.new_page()
        sign_up(player, url, name)
        open_table(player, "Demo: razz")
        player.locator("button.sit").first.click()
        expect(player.locator(".seat.me")).to_have_count(1)
        for n in range(PAGE_OF_LEDGER):
            _post(url, boss, f"/admin/players/{name}/credit", {"amount": 1, "reason": f"r{n}"})

        console = _console(console_context, url, OPERATOR, errors)
        console.click("#nav a[data-view=players]")
        console.fill("#prefix", prefix)
        console.click("#search-form button")
        expect(console.locator("#players-page")).to_have_text("1–20 of 23")
        expect(console.locator("#player-rows tr")).to_have_count(20)
        expect(console.locator("#players-prev")).to_be_disabled()
        console.click("#players-next")
        expect(console.locator("#players-page")).to_have_text("21–23 of 23")
        expect(console.locator("#player-rows tr").first).to_have_attribute(
            "data-player", f"{prefix}x20"
        )
        expect(console.locator("#players-next")).to_be_disabled()

        # The ledger pages on: a grant, a buy-in and the credits, newest first.
        console.goto(f"{url}/console#/players/{name}")
        expect(console.locator("#player-name")).to_have_text(name)
        ledger = console.locator("#player-ledger tr")
        expect(ledger).to_have_count(PAGE_OF_LEDGER)
        console.click("#ledger-more")
        expect(ledger).to_have_count(PAGE_OF_LEDGER + 2)
        expect(ledger.last).to_contain_text("grant")
        expect(console.locator("#ledger-more")).to_be_hidden()

        # Kick: out of the hand-less table at once, cashed out; the player's page sees it.
        console.locator("#player-seats button").click()
        _confirm(console, "abusive chat")
        expect(console.locator("#notice")).to_have_text(f"{name} removed")
        expect(console.locator("#player-seats")).to_have_text("Not seated.")
        expect(player.locator(".seat.me")).to_have_count(0)

        # Suspend: the badge, and the player's token refused; unsuspend lifts it.
        console.click("#suspend")
        _confirm(console, "collusion review")
        expect(console.locator("#notice")).to_have_text(f"{name} suspended")
        expect(console.locator("#player-suspended")).to_be_visible()
        expect(console.locator("#player-account")).to_contain_text(f"by {OPERATOR}: collusion")
        refused = httpx.post(
            f"{url}/auth/login", json={"username": name, "password": PLAYER_PASSWORD}
        )
        assert refused.json()["error"]["code"] == "account_suspended"
        console.click("#unsuspend")
        _confirm(console, "cleared")
        expect(console.locator("#notice")).to_have_text(f"{name} unsuspended")
        expect(console.locator("#player-suspended")).to_be_hidden()
        _token(url, name, PLAYER_PASSWORD)

        console.click("#nav a[data-view=audit]")
        console.fill("#audit-target", name)
        console.click("#audit-form button")
        actions = console.locator("#audit-rows tr")
        expect(actions).to_have_count(PAGE_OF_LEDGER + 3)
        assert [a.get_attribute("data-action") for a in actions.all()[:3]] == [
            "player.unsuspend",
            "player.suspend",
            "player.kick",
        ]
        assert not errors, errors
    finally:
        _post(url, boss, f"/admin/tables/{razz}/resume", {"reason": "seated"})
        player_context.close()
        console_context.close()


def test_a_support_account_reads_but_cannot_change_anything(
    staffed_server: LiveServer, browser: Browser, artifacts: Path
) -> None:
    url = staffed_server.url
    boss = _token(url, OPERATOR, PASSWORD)
    audit_before = _get(url, boss, "/admin/audit")["entries"]
    errors: list[str] = []
    context = browser.new_context(viewport=DESK)
    try:
        # A player's account is not staff: the console signs it out at once.
        name = new_name("sam")
        httpx.post(
            f"{url}/auth/register", json={"username": name, "password": PLAYER_PASSWORD}
        ).raise_for_status()
        page = context.new_page()
        page.goto(url + "/console")
        page.fill("#username", name)
        page.fill("#password", PLAYER_PASSWORD)
        page.click("#login")
        expect(page.locator("#auth-error")).to_have_text(f"{name} is not a staff account")
        expect(page.locator("#nav")).to_be_hidden()
        page.close()

        console = _console(context, url, SUPPORT, errors)
        expect(console.locator("#me-role")).to_have_text("support")
        rows = console.locator("#table-rows tr[data-table]")
        expect(rows).to_have_count(len(_get(url, boss, "/admin/tables/live")))
        expect(rows.first.locator(".seated li").first).to_be_visible()
        assert console.locator("#table-rows button:visible").count() == 0
        expect(console.locator("#new-table")).to_be_hidden()
        console.screenshot(path=str(artifacts / "console-support-1366.png"), full_page=True)

        console.click("#nav a[data-view=players]")
        console.fill("#prefix", name)
        console.click("#search-form button")
        console.locator(f"#player-rows tr[data-player='{name}'] a").click()
        expect(console.locator("#player-name")).to_have_text(name)
        expect(console.locator("#player-balance")).not_to_be_empty()
        for control in ("#adjust-form", "#suspend", "#unsuspend"):
            expect(console.locator(control)).to_be_hidden()

        # Shown the operators' buttons anyway, the API refuses, and the console says why.
        console.click("#nav a[data-view=tables]")
        # Once the view is shown: showing it marks the page read-only again.
        expect(console.locator("#tables-view")).to_be_visible()
        console.evaluate("document.body.classList.remove('read-only')")
        console.locator("#table-rows tr[data-table] button.pause").first.click()
        _confirm(console, "not mine to pause")
        expect(console.locator("#dialog-error")).to_contain_text("not_operator: ")
        expect(console.locator("#dialog")).to_be_visible()
        console.click("#dialog-cancel")
        expect(console.locator("#table-rows .paused")).to_have_count(0)

        assert _get(url, boss, "/admin/audit")["entries"] == audit_before
        assert _get(url, boss, f"/admin/audit?actor={SUPPORT}")["entries"] == []
        assert not errors, errors
    finally:
        context.close()


def test_an_operator_drains_and_undrains_a_node_through_the_console(
    staffed_server: LiveServer, browser: Browser, artifacts: Path
) -> None:
    url = staffed_server.url
    boss = _token(url, OPERATOR, PASSWORD)
    (node,) = _get(url, boss, "/admin/nodes")
    demo_tables = len(httpx.get(f"{url}/tables").json())
    assert node["tables"] == demo_tables and not node["draining"]
    errors: list[str] = []
    context = browser.new_context(viewport=DESK)
    try:
        console = _console(context, url, OPERATOR, errors)
        console.click("#nav a[data-view='nodes']")
        row = console.locator(f"#node-rows tr[data-node='{node['node']}']")
        expect(row.locator(".tables")).to_have_text(str(demo_tables))
        expect(row.locator(".state")).to_have_text("serving")
        expect(row.locator(".heard")).to_have_text("this node")
        row.locator("button.drain").click()
        _confirm(console, "kernel update")
        expect(console.locator("#notice")).to_contain_text(f"Node {node['node']} drains")
        # Alone, it has nowhere to move its tables: draining, not drained, and they play on.
        expect(row.locator(".state")).to_have_text("draining")
        console.screenshot(path=str(artifacts / "console-nodes-1366.png"), full_page=True)
        (after,) = _get(url, boss, "/admin/nodes")
        assert after["draining"] and not after["drained"] and after["tables"] == demo_tables
        row.locator("button.undrain").click()
        _confirm(console, "update postponed")
        expect(row.locator(".state")).to_have_text("serving")
        audit = _get(url, boss, "/admin/audit?target_kind=node")["entries"]
        assert [(e["action"], e["reason"], e["actor"]) for e in audit[:2]] == [
            ("node.undrain", "update postponed", OPERATOR),
            ("node.drain", "kernel update", OPERATOR),
        ]
        assert errors == []
    finally:
        context.close()
