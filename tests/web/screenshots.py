"""The README's pictures of the players' page, made again from the code:

    python tests/web/screenshots.py docs/screenshots

A scripted server (tests/web/scripted_server.py) with house players on the Python client
(passive: they check, call or bring in), and Debian's Chromium at 1280 and 390 px wide: the
lobby, a full table of eight at seventh street, a stud hi-lo showdown with a split pot, and
the hand replayer on that hand. Each picture is one PNG, named for what it shows and its
width; the script fails loudly when a scene does not come about.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[0] / "engine"))
from decks import stud_deck  # noqa: E402
from page_steps import PASSWORD, sign_up  # noqa: E402
from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402
from scripted_server import ScriptedServer  # noqa: E402

from engine.cards import Deck  # noqa: E402
from stud_bots import passive  # noqa: E402
from stud_client import StudClient, TableView  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}
OPEN = {"min_buy_in": 20, "max_buy_in": 1000}
# Stud hi-lo, heads-up: the bring-in (seat 1) makes a seven-six low; seat 0 holds aces with no
# low. They split the pot: aces high, the seven-six low.
HI_LO_HANDS = ["Ah Ad Kc | Qs | Jd | 9s | 8c", "4h 6d 2c | 7s | Ac | Kd | 3h"]
LIMITS = {
    "register_per_address_per_minute": 1000,
    "login_failures_per_address_per_minute": 1000,
    "starting_grants_per_address": 1000,
    "ws_sockets_per_address": 1000,
}


class HousePlayers:
    """Players on the Python client, on an event loop of their own, acting passively."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.loop = asyncio.new_event_loop()
        self.clients: list[StudClient] = []
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, work: Any, timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout)

    def seat(self, names: list[str], table_id: int, buy_in: int) -> None:
        async def one(name: str) -> None:
            client = StudClient(self.url)
            self.clients.append(client)
            await client.register(name, PASSWORD, bot=True)
            await client.login(name, PASSWORD)
            await client.connect()
            table = await client.watch(table_id)
            await table.sit(buy_in)
            asyncio.ensure_future(self._play(client, table_id))

        for name in names:
            self.run(one(name))

    async def _play(self, client: StudClient, table_id: int) -> None:
        table = await client.watch(table_id)
        acted: int | None = None

        def ready(view: TableView) -> bool:
            return view.my_turn and view.turn_seq != acted

        while True:
            view = await table.wait_for(ready)
            acted = view.turn_seq
            assert view.legal is not None
            try:
                await table.act(passive(view.legal))
            except Exception:  # noqa: BLE001 - a turn the clock took; the next one comes
                continue

    def close(self) -> None:
        for client in self.clients:
            self.run(client.close())
        self.loop.call_soon_threadsafe(self.loop.stop)


def shoot(page: Page, out: Path, name: str, width: str) -> None:
    path = out / f"{name}-{width}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"wrote {path}")


@contextmanager
def player_pages(browser: Browser, url: str, name: str) -> Iterator[dict[str, Page]]:
    """The same player signed in at each width (one account, two windows)."""
    contexts = {}
    pages = {}
    for width, (w, h) in WIDTHS.items():
        context = browser.new_context(viewport={"width": w, "height": h})
        contexts[width] = context
        page = context.new_page()
        if not pages:
            sign_up(page, url, name)
        else:
            page.goto(url + "/")
            page.fill("#username", name)
            page.fill("#password", PASSWORD)
            page.click("#login")
            expect(page.locator("#lobby-view")).to_be_visible()
        pages[width] = page
    try:
        yield pages
    finally:
        for context in contexts.values():
            context.close()


def open_table(page: Page, table_name: str) -> None:
    row = page.locator("#lobby-rows tr", has_text=table_name)
    expect(row).to_be_visible(timeout=15_000)
    row.locator("button.open").click()
    expect(page.locator("#table-view")).to_be_visible()


def act_when_asked(page: Page, until: Callable[[], bool], timeout: float = 120) -> None:
    """Check or call on each of the page's turns until ``until()``."""
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, "the scene never came"
        for kind in ("check", "call", "bring_in"):
            button = page.locator(f"#actions:not([hidden]) button.act-{kind}:not([disabled])")
            if button.count():
                button.first.click()
                break
        page.wait_for_timeout(150)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    decks: dict[str, Callable[[], Deck]] = {}
    current = {"deck": "random"}

    def deck() -> Deck:
        make = decks.get(current["deck"])
        return make() if make else Deck()

    with tempfile.TemporaryDirectory() as directory:
        server = ScriptedServer(
            Path(directory),
            deck,
            action_clock_seconds=60,
            pause_between_hands_seconds=1.0,
            **LIMITS,
        )
        server.start()
        house = HousePlayers(server.url)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM,
                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
                )
                scenes(browser, server, house, decks, current, out)
                browser.close()
        finally:
            house.close()
            server.stop()


def scenes(
    browser: Browser,
    server: ScriptedServer,
    house: HousePlayers,
    decks: dict[str, Callable[[], Deck]],
    current: dict[str, str],
    out: Path,
) -> None:
    tables: dict[str, tuple[dict[str, Any], int]] = {
        "Eight-handed": ({"variant": "seven_card_stud"}, 8),
        "Hi-lo split": ({"variant": "seven_card_stud_hi_lo"}, 2),
        "Razz": ({"variant": "razz"}, 8),
        "No-limit five-card": ({"variant": "five_card_stud", "structure": "no_limit"}, 6),
    }
    ids = {}
    for name, (config, seats) in tables.items():
        body = {"name": name, "config": config, "seats": seats, **OPEN}
        made = server.admin("POST", "/admin/tables", body)
        ids[name] = made["id"]
    server.admin("POST", f"/admin/tables/{ids['Hi-lo split']}/pause", {"reason": "seating"})
    house.seat([f"house{n}" for n in range(1, 4)], ids["Razz"], 200)

    # A full table of eight at seventh street: seven house players and the page's player.
    house.seat([f"bot{n}" for n in range(1, 8)], ids["Eight-handed"], 200)
    with player_pages(browser, server.url, "ann") as pages:
        for page in pages.values():
            shoot(page, out, "lobby", width_of(page))
        desk = pages["desktop"]
        open_table(desk, "Eight-handed")
        desk.locator("#buy-in").fill("200")
        desk.locator("button.sit").first.click()
        expect(desk.locator(".seat.me")).to_have_count(1, timeout=15_000)
        open_table(pages["phone"], "Eight-handed")

        def seventh() -> bool:
            on_seventh = "7" in desk.locator("#street").inner_text()
            asked = desk.locator("#actions:not([hidden])").count() > 0
            return on_seventh and asked

        act_when_asked(desk, seventh)
        # Eight players' last cards are more than the deck holds: one common card.
        expect(desk.locator("#common .card")).to_have_count(1, timeout=10_000)
        for page in pages.values():
            shoot(page, out, "table-seventh-street", width_of(page))
        server.admin("POST", f"/admin/tables/{ids['Eight-handed']}/pause", {"reason": "done"})
        act_when_asked(desk, lambda: desk.locator("#actions:not([hidden])").count() == 0)

    # Stud hi-lo, heads-up, on a stacked deck: a split pot at the showdown.
    current["deck"] = "hi-lo"
    decks["hi-lo"] = lambda: Deck(order=stud_deck(HI_LO_HANDS).order())
    with player_pages(browser, server.url, "bea") as pages:
        desk = pages["desktop"]
        open_table(desk, "Hi-lo split")
        desk.locator("#buy-in").fill("200")
        desk.locator("button.sit").first.click()
        expect(desk.locator(".seat.me")).to_have_count(1, timeout=15_000)
        house.seat(["carl"], ids["Hi-lo split"], 200)
        open_table(pages["phone"], "Hi-lo split")
        server.admin("POST", f"/admin/tables/{ids['Hi-lo split']}/resume", {"reason": "go"})
        expect(desk.locator("#hand-number")).not_to_have_text("–", timeout=15_000)
        # One hand: the page keeps its picture once it ends.
        server.admin("POST", f"/admin/tables/{ids['Hi-lo split']}/pause", {"reason": "one"})
        act_when_asked(desk, lambda: desk.locator("#history li").count() >= 1)
        for page in pages.values():
            expect(page.locator("#log")).to_contain_text("low", timeout=15_000)
            shoot(page, out, "hi-lo-split-showdown", width_of(page))
        for page in pages.values():
            page.locator("#history li button.replay, #history li .replay").first.click()
            replay = page.locator("#replayer")
            expect(replay).to_be_visible(timeout=15_000)
            for _ in range(9):
                page.keyboard.press("ArrowRight")
            shoot(page, out, "replayer", width_of(page))


def width_of(page: Page) -> str:
    size = page.viewport_size
    assert size is not None
    return "phone" if size["width"] < 600 else "desktop"


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/screenshots"))
