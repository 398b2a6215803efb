"""Every refusal of the HTTP API: a status and a stable code, in one JSON shape.

``{"error": {"code": "username_taken", "message": "..."}}``: clients branch on ``code``
(stable), people read ``message`` (may change). The codes::

    400 bad_request         the body or query does not parse or validate
    400 bad_config          a table setting the engine refuses (admin)
    401 not_authenticated   no bearer token
    401 bad_token           a token the server never issued
    401 token_expired       a token past its time to live
    401 token_revoked       a token logged out
    401 bad_credentials     wrong username or password (never says which)
    403 not_operator        an operator-only endpoint
    404 not_found           no such route or resource
    404 unknown_hand        no such hand among yours (GET /hands/{id})
    405 method_not_allowed
    409 username_taken      (whatever the case of its letters)
    409 table_name_taken
    409 insufficient_funds  a movement of chips that would overdraw a wallet
    500 internal_error
    503 not_ready           readiness: the database is unreachable or not migrated
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

_STATUS_CODES = {
    400: "bad_request",
    401: "not_authenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    422: "bad_request",
    500: "internal_error",
    503: "not_ready",
}


class Refusal(Exception):
    """A request the server refuses: a stable ``code`` and the HTTP status it travels with.

    Domain modules subclass it (``InsufficientFunds`` in the ledger) so that the code is
    decided where the refusal is; the table actors and the websocket reuse the same codes.
    """

    status_code: int = 400
    code: str = "bad_request"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status_code: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status_code is not None:
            self.status_code = status_code
        self.headers = headers


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def error_response(
    status_code: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(code, message), status_code=status_code, headers=headers)


async def _refusal(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Refusal)
    return error_response(exc.status_code, exc.code, exc.message, exc.headers)


async def _http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _STATUS_CODES.get(exc.status_code, f"http_{exc.status_code}")
    return error_response(exc.status_code, code, str(exc.detail), exc.headers)


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    parts = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
        parts.append(f"{where}: {error.get('msg', 'invalid')}" if where else error.get("msg", ""))
    return error_response(400, "bad_request", "; ".join(parts) or "bad request")


async def _unexpected(_request: Request, _exc: Exception) -> JSONResponse:
    # The server still logs the traceback; the client learns nothing of the inside.
    return error_response(500, "internal_error", "internal server error")


def install_error_handlers(app: FastAPI) -> None:
    """Route every refusal, ours or the framework's, through the one JSON shape."""
    app.add_exception_handler(Refusal, _refusal)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _unexpected)
