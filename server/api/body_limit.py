"""A limit on every HTTP request body, enforced while it is read.

Without one, a body is read whole before the route looks at it: a 100 MB body to the
unauthenticated ``POST /auth/login`` was held in memory, then refused 400. Every body this
API takes is a small JSON object (a table's settings, the largest, are a few KiB), so one
limit holds for every route (``http_body_max_bytes``, 16 KiB by default).

:class:`BodyLimit` refuses a body that says it is larger (``Content-Length``) before any of
it is read, and counts the bytes of one that does not say (chunked) as the route reads
them, refusing it at the first chunk past the limit: ``413 body_too_large``, in the API's
error shape. What is left of a refused body is read by uvicorn and dropped, never held.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engine.protocol import ErrorCode
from server.edge.refusals import error_response


class BodyTooLarge(HTTPException):
    """Raised to the route reading a body past the limit; answered ``413 body_too_large``
    (:mod:`server.api.errors`), as an ``HTTPException`` so that FastAPI's body reading lets it
    through rather than turning it into a 400."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, _message(max_bytes))


def _message(max_bytes: int) -> str:
    return f"the request body is over {max_bytes} bytes"


class BodyLimit:
    """ASGI middleware: at most ``max_bytes`` of body a request (websockets pass as they
    are)."""

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            # Refused before a byte of it is asked for (no "100 Continue" either).
            await self._refuse(scope, receive, send)
            return
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except BodyTooLarge:
            # The app's handlers answer it as a rule; one read outside them lands here.
            if started:
                raise
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(413, ErrorCode.BODY_TOO_LARGE, _message(self.max_bytes))
        await response(scope, receive, send)
