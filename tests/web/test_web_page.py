"""The web page served at ``/``: a person signs up, opens a demo table from the lobby, sits
down against the house bots and plays hands to showdown by clicking; what the page shows is
checked against what the server recorded (``GET /hands/{id}``)."""

from __future__ import annotations

import json
import random
import re
import time
import tomllib
from pathlib import Path
from typing import Any

import httpx
from live_server import LiveServer
from page_steps import PASSWORD, new_name, open_table, sign_up
from playwright.sync_api import Browser, Page, WebSocketRoute, expect

from engine.play import play_random_hand
from engine.variants import TableConfig
from engine.views import view

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "server" / "web"


def _act_once(page: Page) -> bool:
    """Click a passive action if it is our turn: check, call, bring in (never fold)."""
    actions = page.locator("#actions:not([hidden])")
    if actions.count() == 0:
        return False
    for kind in ("check", "call", "bring_in", "complete"):
        button = actions.locator(f"button.act-{kind}:not([disabled])")
        if button.count():
            try:
                button.first.click(timeout=2_000)
            except Exception:  # noqa: BLE001 - the turn moved on (timeout) between look and click
                return False
            return True
    return False


def _hand(url: str, token: str, hand_id: int) -> dict[str, Any]:
    response = httpx.get(f"{url}/hands/{hand_id}", headers={"Authorization": f"Bearer {token}"})
    response.raise_for_status()
    hand: dict[str, Any] = response.json()
    return hand


def test_the_page_and_its_files_are_served(demo_server: LiveServer) -> None:
    page = httpx.get(demo_server.url + "/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/web/app.js">' in page.text
    for name, media in (
        ("app.js", "text/javascript"),
        ("page.js", "text/javascript"),
        ("protocol.js", "text/javascript"),
        ("style.css", "text/css"),
        ("cards.js", "text/javascript"),
        ("replayer.js", "text/javascript"),
        ("replayer.css", "text/css"),
        ("console.js", "text/javascript"),
        ("console_tournaments.js", "text/javascript"),
        ("console.css", "text/css"),
    ):
        response = httpx.get(f"{demo_server.url}/web/{name}")
        assert response.status_code == 200, name
        assert response.headers["content-type"].startswith(media)
        assert response.text == (WEB / name).read_text()
    for bad in ("nope.js", "..%2Fapp.py", ".hidden.js", "index.py"):
        assert httpx.get(f"{demo_server.url}/web/{bad}").status_code == 404, bad
    # Every file of the page ships in the wheel as package data.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = project["tool"]["setuptools"]["package-data"]["server"]
    shipped = {p for pattern in patterns for p in (ROOT / "server").glob(pattern)}
    assert set(WEB.iterdir()) <= shipped


def test_a_person_plays_hands_to_showdown_against_house_bots(
    demo_server: LiveServer, browser: Browser, artifacts: Path
) -> None:
    url = demo_server.url
    name = new_name("ann")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        sign_up(page, url, name)
        page.screenshot(path=str(artifacts / "lobby-1280.png"), full_page=True)
        open_table(page, "Demo: seven-card stud")
        page.locator("#buy-in").fill("300")
        page.locator("button.sit").first.click()
        me = page.locator(".seat.me")
        expect(me).to_have_count(1)
        expect(me.locator(".name")).to_contain_text(name)
        expect(page.locator("#seat-controls #leave")).to_be_visible()

        page.fill("#chat-text", "good luck all")
        page.click("#chat-form button")
        expect(page.locator("#chat li", has_text="good luck all")).to_be_visible()

        # Play by clicking until three hands have ended; look at the table mid-hand.
        checked_midhand = shot_turn = shot_showdown = False
        deadline = time.monotonic() + 150
        while page.locator("#history li").count() < 3:
            assert time.monotonic() < deadline, "three hands were not played in time"
            if page.locator("#actions:not([hidden])").count():
                if not shot_turn:
                    expect(page.locator("#actions .act").first).to_be_visible()
                    expect(page.locator(".seat.to-act.me .clock")).to_contain_text("s")
                    page.screenshot(path=str(artifacts / "table-turn-1280.png"), full_page=True)
                    shot_turn = True
                if not checked_midhand and page.locator(".seat.me .card").count() >= 4:
                    # Own down cards face up; others' down cards face down; upcards shown.
                    mine = page.locator(".seat.me .card.down")
                    assert mine.count() >= 2
                    assert "??" not in [c.get_attribute("data-card") for c in mine.all()]
                    others = page.locator(".seat[data-player]:not(.me):not(.folded)")
                    assert others.locator(".card.back").count() >= 2
                    assert others.locator(".card:not(.back)").count() >= 1
                    checked_midhand = True
                _act_once(page)
            elif (
                not shot_showdown
                and page.locator(".seat .hand-name").count()
                and page.locator(".seat.winner").count()
                and page.locator(".seat.me .card").count()
            ):
                page.screenshot(path=str(artifacts / "table-showdown-1280.png"), full_page=True)
                shot_showdown = True
            page.wait_for_timeout(80)
        assert checked_midhand and shot_turn

        # The session's hand history against the server's records.
        token = httpx.post(
            f"{url}/auth/login", json={"username": name, "password": PASSWORD}
        ).json()["access_token"]
        entries = page.locator("#history li")
        expect(entries.first).not_to_have_attribute("data-hand-id", "", timeout=10_000)
        expect(entries.nth(2)).not_to_have_attribute("data-hand-id", "", timeout=10_000)
        showdowns = 0
        for entry in entries.all()[:3]:
            hand = _hand(url, token, int(entry.get_attribute("data-hand-id") or 0))
            assert hand["number"] == int(entry.get_attribute("data-hand-number") or 0)
            seat = hand["seat"]
            events = hand["events"]
            down = [
                c
                for e in events
                if e["kind"] == "down_cards" and e["to"] == seat
                for c in e["data"]["cards"]
            ]
            up = [
                c
                for e in events
                if e["kind"] == "street_dealt"
                for d in e["data"]["deals"]
                if d["seat"] == seat
                for c in d["up"]
            ]
            assert (entry.get_attribute("data-my-down") or "").split() == down
            assert (entry.get_attribute("data-my-up") or "").split() == up
            names = {p["seat"]: p["player"] for p in hand["players"]}
            winners = {names[e["data"]["seat"]] for e in events if e["kind"] == "pot_awarded"}
            assert set((entry.get_attribute("data-winners") or "").split(",")) == winners
            assert int(entry.get_attribute("data-net") or "x") == hand["net"]
            shown = [e["data"] for e in events if e["kind"] == "showdown"]
            if shown:
                showdowns += 1
                for award in (e["data"] for e in events if e["kind"] == "pot_awarded"):
                    text = f"{names[award['seat']]} wins {award['amount']}"
                    expect(entry.locator(".history-won")).to_contain_text(text)
                    winner_show = next((s for s in shown if s["seat"] == award["seat"]), None)
                    if winner_show and winner_show.get("high"):
                        expect(entry.locator(".history-won")).to_contain_text(winner_show["high"])
        assert showdowns >= 2, "calling down against a calling station reaches showdown"

        # One hand replayed, from the server's hand history (tests/web/test_replayer.py
        # steps through one street by street).
        entries.first.locator("button.replay").click()
        replayer = page.locator("#replayer")
        expect(replayer).to_be_visible()
        replayer.locator("#replay-last").click()
        expect(replayer.locator(".replay-seat.me .card.down")).not_to_have_count(0)
        expect(replayer.locator("#replay-log")).to_contain_text("Hand over")
        replayer.locator(".replay-close").click()
        expect(replayer).to_be_hidden()
        # Its deal checked in the browser against its seeds (docs/fairness.md); the page gave
        # the hands after its first a seed of its own.
        entries.first.locator("button.verify").click()
        detail = page.locator("#hand-detail")
        expect(detail).to_have_attribute("data-fair", "true")
        expect(detail).to_contain_text("stud-deck/2")
        expect(detail).to_contain_text("leads to the commitment")
        expect(detail).to_contain_text("✓ your client seed went into the deck")
        expect(detail).to_contain_text("cards sit in the deal order street by street")
        assert "✗" not in detail.inner_text()
        detail.screenshot(path=str(artifacts / "hand-verified-1280.png"))
        expect(detail.locator("a.download")).to_have_attribute("download", re.compile(r"\.json$"))
        # Stacks on the page are the server's: the lobby agrees on who sits.
        lobby = {t["name"]: t for t in httpx.get(f"{url}/tables").json()}
        assert lobby["Demo: seven-card stud"]["seats_taken"] == 4

        # Phone width: nothing overflows sideways, and the buttons fit.
        page.set_viewport_size({"width": 390, "height": 844})
        deadline = time.monotonic() + 60
        while not page.locator("#actions:not([hidden]) .act").count():
            assert time.monotonic() < deadline, "no turn came at phone width"
            page.wait_for_timeout(80)
        width = page.evaluate("document.documentElement.scrollWidth")
        wide = page.evaluate(
            "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect()"
            ".right > 391).map(e => e.tagName + '.' + e.className + '#' + e.id).slice(0, 12)"
        )
        assert width <= 390, f"the page is {width} px wide at 390 px: {wide}"
        for button in page.locator("#actions .act").all():
            box = button.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
        page.screenshot(path=str(artifacts / "table-turn-390.png"), full_page=True)
        page.screenshot(path=str(artifacts / "table-viewport-390.png"))
        _act_once(page)
        page.evaluate("window.scrollTo(0, 0)")
        page.click("#back")
        expect(page.locator("#lobby-view")).to_be_visible()
        page.screenshot(path=str(artifacts / "lobby-390.png"), full_page=True)
        assert not errors, errors
    finally:
        context.close()


def test_a_gap_in_seq_makes_the_page_resync(
    demo_server: LiveServer, browser: Browser, artifacts: Path
) -> None:
    """One public event lost on the way: the page sees the gap, sends resync, and shows the
    table as the server has it."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sent: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    snapshots: list[int] = []  # the seq of each snapshot the page was sent

    def relay(route: WebSocketRoute) -> None:
        server = route.connect_to_server()

        def to_server(message: str | bytes) -> None:
            sent.append(json.loads(message))
            server.send(message)

        def to_page(message: str | bytes) -> None:
            frame = json.loads(message)
            result = frame.get("result")
            if (
                frame.get("type") == "reply"
                and isinstance(result, dict)
                and result.get("type") == "snapshot"
            ):
                snapshots.append(result["seq"])
            # An event after the snapshot (those before it are in it, and the page drops them).
            if (
                not dropped
                and snapshots
                and frame.get("type") == "event"
                and not frame.get("private")
                and frame["seq"] > snapshots[0]
                and frame.get("kind") in ("action", "turn", "clock")
            ):
                dropped.append(frame)
                return
            route.send(message)

        route.on_message(to_server)
        server.on_message(to_page)

    page.route_web_socket("**/ws", relay)
    try:
        sign_up(page, demo_server.url, new_name("eve"))
        open_table(page, "Demo: razz")
        deadline = time.monotonic() + 30
        while not any(f.get("type") == "resync" for f in sent):
            assert time.monotonic() < deadline, "no resync after a gap"
            page.wait_for_timeout(50)
        assert dropped
        resync = next(f for f in sent if f.get("type") == "resync")
        assert resync["table"] == dropped[0]["table"]
        # After the fresh snapshot the page follows the table again: hands go on.
        first = page.locator("#hand-number").inner_text()
        expect(page.locator("#hand-number")).not_to_have_text(first, timeout=30_000)
        expect(page.locator(".seat[data-player]")).to_have_count(3)
    finally:
        context.close()


def test_the_page_reconnects_after_a_drop_and_plays_on(
    demo_server: LiveServer, browser: Browser
) -> None:
    """The connection drops mid-game: the page reconnects, signs in again, resyncs the table
    and the player is still seated and still plays."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    routes: list[WebSocketRoute] = []

    def relay(route: WebSocketRoute) -> None:
        server = route.connect_to_server()
        routes.append(route)
        route.on_message(server.send)
        server.on_message(route.send)

    page.route_web_socket("**/ws", relay)
    try:
        name = new_name("cat")
        sign_up(page, demo_server.url, name)
        open_table(page, "Demo: stud hi-lo")
        page.locator("button.sit").first.click()
        expect(page.locator(".seat.me")).to_have_count(1)
        expect(page.locator(".seat.me .card")).not_to_have_count(0, timeout=20_000)
        routes[0].close()
        expect(page.locator("#notice")).to_contain_text("reconnecting")
        deadline = time.monotonic() + 60
        while len(routes) < 2 or page.locator("#history li").count() < 1:
            assert time.monotonic() < deadline, "no hand played after the reconnect"
            _act_once(page)
            page.wait_for_timeout(80)
        expect(page.locator(".seat.me .name")).to_contain_text(name)
        expect(page.locator("#notice")).not_to_contain_text("reconnecting")
    finally:
        context.close()


def test_the_page_splits_main_and_side_pots_as_the_engine_does(
    demo_server: LiveServer, browser: Browser
) -> None:
    """The page's main and side pots (protocol.js) agree with engine.views on real hands."""
    rng = random.Random(5)
    cases = []
    while len(cases) < 40:
        stacks = [rng.randint(3, 60) for _ in range(rng.randint(2, 8))]
        hand = play_random_hand(TableConfig(), stacks, rng)
        picture = view(hand.events, None)
        cases.append((picture["seats"], picture["pots"]))
    assert sum(len(pots) > 1 for _, pots in cases) >= 5, "side pots must occur"
    page = browser.new_page()
    try:
        page.goto(demo_server.url + "/")
        for seats, pots in cases:
            computed = page.evaluate(
                """async (seats) => {
                    const { sidePots } = await import("/web/protocol.js");
                    return sidePots(seats);
                }""",
                {str(n): s for n, s in seats.items()},
            )
            assert computed == pots, (seats, pots)
    finally:
        page.close()


def test_the_page_seeds_the_hand_committed_while_it_was_away(
    demo_server: LiveServer, browser: Browser
) -> None:
    """The line drops as the next hand's commitment is published: the page never sees
    ``deck_committed``. Back, the snapshot carries the commitment and the page gives that very
    hand its seed (docs/fairness.md), which the server takes for it."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    routes: list[WebSocketRoute] = []
    armed: list[bool] = []
    lost: list[int] = []
    sent: list[tuple[int, dict[str, Any]]] = []  # (route, frame) the page sent
    replies: list[tuple[int, dict[str, Any]]] = []

    def relay(route: WebSocketRoute) -> None:
        server = route.connect_to_server()
        number = len(routes)
        routes.append(route)

        def up(message: str | bytes) -> None:
            frame = json.loads(message)
            sent.append((number, frame))
            server.send(message)

        def down(message: str | bytes) -> None:
            frame = json.loads(message)
            if armed and frame.get("type") == "event" and frame.get("kind") == "deck_committed":
                armed.clear()
                lost.append(frame["data"]["hand"])
                route.close()
                return
            replies.append((number, frame))
            route.send(message)

        route.on_message(up)
        server.on_message(down)

    page.route_web_socket("**/ws", relay)
    try:
        sign_up(page, demo_server.url, new_name("dee"))
        open_table(page, "Demo: razz")
        page.locator("button.sit").first.click()
        expect(page.locator(".seat.me")).to_have_count(1)
        expect(page.locator(".seat.me .card")).not_to_have_count(0, timeout=20_000)
        armed.append(True)
        deadline = time.monotonic() + 60

        def seeded() -> bool:
            ids = {
                f["id"]
                for n, f in sent
                if n >= 1 and f.get("type") == "client_seed" and lost and f["hand"] == lost[0]
            }
            return any(
                n >= 1 and f.get("type") == "reply" and f.get("id") in ids for n, f in replies
            )

        while not seeded():
            assert time.monotonic() < deadline, (lost, len(routes))
            _act_once(page)
            page.wait_for_timeout(80)
        [reply] = [
            f
            for n, f in replies
            if n >= 1
            and f.get("type") == "reply"
            and any(g.get("id") == f.get("id") and g.get("type") == "client_seed" for _, g in sent)
        ][:1]
        assert reply["result"] == {"hand": lost[0]}
    finally:
        context.close()
