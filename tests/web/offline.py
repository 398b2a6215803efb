"""A browser context that reaches the test server only: what else a page asks for, its
script errors and its console errors are collected as problems (the pages need nothing
from another host and log no error)."""

from __future__ import annotations

from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, Route

VIEWPORT = {"width": 1280, "height": 900}


def offline_context(browser: Browser, url: str, problems: list[str]) -> BrowserContext:
    """Every page of the context: requests outside ``url`` refused, errors in ``problems``."""
    context = browser.new_context(viewport=VIEWPORT)

    def only_the_server(route: Route) -> None:
        asked = route.request.url
        if asked.startswith(url + "/") or asked.startswith(("data:", "blob:")):
            route.continue_()
        else:
            problems.append(f"asked the network for {asked}")
            route.abort()

    def console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or message.type == "error":
            problems.append(f"console {message.type}: {message.text}")

    def watch(page: Page) -> None:
        page.on("console", console)
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))

    context.route("**/*", only_the_server)
    context.on("page", watch)
    return context
