"""Browser tests of the web page: a real demo server (house bots) and Debian's Chromium
driven by Playwright. Screenshots go to tests/web/artifacts/ (git-ignored)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients"))
from live_server import SUPPORT, LiveServer  # noqa: E402
from playwright.sync_api import Browser, Playwright, sync_playwright  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DEMO = {
    "STUD_DEMO": "true",
    "STUD_DEMO_THINK_SECONDS": "0.05",
    "STUD_ACTION_CLOCK_SECONDS": "20",
    "STUD_TIME_BANK_SECONDS": "30",
    "STUD_PAUSE_BETWEEN_HANDS_SECONDS": "1",
}


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / ".gitignore").write_text("*\n")  # test output, never committed
    return ARTIFACTS


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = LiveServer(Path(tmp_path_factory.mktemp("web")), **DEMO)
    with server.running():
        yield server


@pytest.fixture(scope="module")
def staffed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A demo server with an operator (``OPERATOR``) and a support account (``SUPPORT``)."""
    server = LiveServer(Path(tmp_path_factory.mktemp("console")), **DEMO)
    server.create_operator()
    server.create_operator(SUPPORT, role="support")
    with server.running():
        yield server


# Module scope: Playwright's sync API keeps an event loop running in this thread while it
# is open, which asyncio tests collected after these would trip over.
@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    # Never skipped: CI installs Debian's chromium (.ci/run); a missing browser fails here.
    assert Path(CHROMIUM).exists(), "install Chromium: apt-get install -y chromium"
    browser = playwright.chromium.launch(
        executable_path=CHROMIUM,
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    )
    try:
        yield browser
    finally:
        browser.close()
