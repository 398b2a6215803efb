"""The API documentation pages work without the internet: Swagger UI at ``/docs`` and ReDoc at
``/redoc`` load only files this server serves (the fastapi-offline package's), under a policy
that allows no inline script and that they break nowhere; the site has an icon."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from live_server import LiveServer
from playwright.sync_api import Browser, ConsoleMessage, Page, Route, expect

from server.api.security_headers import PAGE_POLICY, REDOC_POLICY


@pytest.fixture
def offline_page(browser: Browser, demo_server: LiveServer) -> Iterator[tuple[Page, list[str]]]:
    """A page whose network reaches the test server only; what else it asked for, and every
    policy refusal and script error, are collected as problems."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    problems: list[str] = []

    def only_the_server(route: Route) -> None:
        url = route.request.url
        if url.startswith(demo_server.url + "/") or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            problems.append(f"asked the network for {url}")
            route.abort()

    def console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or message.type == "error":
            problems.append(f"console {message.type}: {message.text}")

    context.route("**/*", only_the_server)
    page = context.new_page()
    page.on("console", console)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    try:
        yield page, problems
    finally:
        context.close()


def test_swagger_ui_renders_the_operations_offline(
    demo_server: LiveServer, offline_page: tuple[Page, list[str]]
) -> None:
    page, problems = offline_page
    response = page.goto(demo_server.url + "/docs")
    assert response is not None and response.ok
    assert response.headers["content-security-policy"] == PAGE_POLICY  # the page's own
    expect(page.locator(".opblock").first).to_be_visible(timeout=15_000)
    login = page.locator(".opblock-summary-path", has_text="/auth/login")
    expect(login).to_be_visible()
    assert page.locator(".opblock").count() >= 20
    assert page.locator("script:not([src])").count() == 0
    assert problems == []


def test_redoc_renders_the_operations_offline(
    demo_server: LiveServer, offline_page: tuple[Page, list[str]]
) -> None:
    page, problems = offline_page
    response = page.goto(demo_server.url + "/redoc")
    assert response is not None and response.ok
    assert response.headers["content-security-policy"] == REDOC_POLICY
    menu = page.locator("li[data-item-id^='tag/'], li[data-item-id^='operation/']")
    expect(menu.first).to_be_visible(timeout=20_000)
    assert page.locator("[data-section-id^='operation/']").count() >= 20
    expect(page.get_by_text("/auth/login").first).to_be_attached()
    assert page.locator("script:not([src])").count() == 0
    # The menu's last link, Redocly's, shows this server's icon: nothing from another host.
    logo = page.locator("img[alt='redocly logo']")
    expect(logo).to_have_attribute("src", "/web/favicon.svg")
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=logo.element_handle())
    assert problems == []


def test_the_site_has_an_icon(demo_server: LiveServer) -> None:
    icon = httpx.get(demo_server.url + "/favicon.ico")
    assert icon.status_code == 200
    assert icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.text.startswith("<svg")
    for path in ("/", "/console", "/docs", "/redoc"):
        page = httpx.get(demo_server.url + path).text
        assert '<link rel="icon" href="/favicon.ico" type="image/svg+xml">' in page, path
    for name in ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js"):
        served = httpx.get(f"{demo_server.url}/docs-files/{name}")
        assert served.status_code == 200 and "cdn.redoc.ly" not in served.text, name
    for bad in ("favicon.png", "..%2Fcore.py", "nope.js"):
        assert httpx.get(f"{demo_server.url}/docs-files/{bad}").status_code == 404, bad
