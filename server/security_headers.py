"""Security headers on every HTTP answer: the web page's and the API's.

The page (server/web) is files only: no inline script or style, so its Content-Security-Policy
allows scripts, styles and connections from its own origin and nothing else, and no page may
frame it. The API documentation pages FastAPI serves (``/docs``, ``/redoc``) load their code
from a CDN and start it with one inline script: they get a policy of their own that allows
that CDN and that one script, by its hash.
"""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi import FastAPI
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
CDN = "https://cdn.jsdelivr.net"
COMMON = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def _hashes(html: str) -> str:
    return " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"
        for script in _INLINE_SCRIPT.findall(html)
    )


def docs_policy(app: FastAPI) -> str:
    """The policy of FastAPI's documentation pages: their CDN, and their inline scripts by
    hash (each page is made the same way every time, as ``FastAPI.setup`` makes it)."""
    openapi_url = app.openapi_url or "/openapi.json"
    pages = [
        get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} - Swagger UI",
            oauth2_redirect_url=app.swagger_ui_oauth2_redirect_url,
            init_oauth=app.swagger_ui_init_oauth,
            swagger_ui_parameters=app.swagger_ui_parameters,
        ),
        get_swagger_ui_oauth2_redirect_html(),
        get_redoc_html(openapi_url=openapi_url, title=f"{app.title} - ReDoc"),
    ]
    scripts = _hashes("".join(bytes(page.body).decode() for page in pages))
    return (
        f"default-src 'self'; script-src 'self' {CDN} {scripts}; "
        f"style-src 'self' 'unsafe-inline' {CDN} https://fonts.googleapis.com; "
        f"font-src 'self' https://fonts.gstatic.com; img-src 'self' data: https:; "
        f"worker-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
        f"frame-ancestors 'none'"
    )


def docs_paths(app: FastAPI) -> tuple[str, ...]:
    paths = (app.docs_url, app.redoc_url, app.swagger_ui_oauth2_redirect_url)
    return tuple(path for path in paths if path is not None)


class SecurityHeaders:
    """ASGI middleware: the headers above on every HTTP answer (websockets pass as they are)."""

    def __init__(self, app: ASGIApp, *, docs_paths: tuple[str, ...], docs_csp: str) -> None:
        self.app = app
        self.docs_paths = docs_paths
        page = {**COMMON, "content-security-policy": PAGE_POLICY}
        docs = {**COMMON, "content-security-policy": docs_csp}
        self._page = [(k.encode(), v.encode()) for k, v in page.items()]
        self._docs = [(k.encode(), v.encode()) for k, v in docs.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = self._docs if scope.get("path") in self.docs_paths else self._page

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [
                    *message.get("headers", []),
                    *((k, v) for k, v in extra if k not in names),
                ]
            await send(message)

        await self.app(scope, receive, with_headers)
