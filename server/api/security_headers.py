"""Security headers on every HTTP answer: the web page's and the API's.

The page (server/web) is files only: no inline script or style, so its Content-Security-Policy
allows scripts, styles and connections from its own origin and nothing else, and no page may
frame it; a Permissions-Policy refuses the browser features it never uses (camera, microphone,
location, payment...). The API documentation pages are files of this server too, the viewers'
code included: Swagger UI (``/docs``) runs under the page's policy; ReDoc (``/redoc``) gets one
of its own that differs only where it needs it: the styles it writes at run time, and its
search worker, which it starts from a blob. (No ``server`` header names what runs it either:
server/cli.py tells uvicorn so.)
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
REDOC_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
# Browser features the page never uses, refused to it and to anything it could embed.
PERMISSIONS_POLICY = (
    "accelerometer=(), camera=(), display-capture=(), geolocation=(), gyroscope=(), "
    "magnetometer=(), microphone=(), midi=(), payment=(), usb=()"
)
COMMON = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "permissions-policy": PERMISSIONS_POLICY,
}


class SecurityHeaders:
    """ASGI middleware: the headers above on every HTTP answer (websockets pass as they are);
    ``policies``: the paths whose answers carry a policy other than the page's."""

    def __init__(self, app: ASGIApp, *, policies: Mapping[str, str]) -> None:
        self.app = app
        self._page = self._headers(PAGE_POLICY)
        self._by_path = {path: self._headers(policy) for path, policy in policies.items()}

    @staticmethod
    def _headers(policy: str) -> list[tuple[bytes, bytes]]:
        headers = {**COMMON, "content-security-policy": policy}
        return [(k.encode(), v.encode()) for k, v in headers.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = self._by_path.get(scope.get("path", ""), self._page)

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [
                    *message.get("headers", []),
                    *((k, v) for k, v in extra if k not in names),
                ]
            await send(message)

        await self.app(scope, receive, with_headers)
