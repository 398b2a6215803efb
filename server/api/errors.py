"""Every refusal of the HTTP API: a status and a stable code, in one JSON shape.

``{"error": {"code": "username_taken", "message": "..."}}``: clients branch on ``code``
(stable), people read ``message`` (may change). The codes are :class:`engine.protocol.ErrorCode`,
the one list of every code a client can receive (HTTP and websocket alike), each with the HTTP
status it travels with (:attr:`~server.edge.refusals.http_status`); docs/protocol.md lists
them. A refusal is any :class:`~engine.errors.Refusal`: domain modules subclass it
(``InsufficientFunds`` in the ledger) so that the code is decided where the refusal is, and the
table actors and the websocket raise the same class with the same codes. The shape itself,
shared with the websocket's handshake, is :mod:`server.edge.refusals`; here, the handlers
that route every refusal of a route through it.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as SQLAlchemyTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.db.session import is_outage
from server.edge.refusals import error_response, http_status, outage_refusal, refusal_response

log = logging.getLogger(__name__)

__all__ = ["install_error_handlers"]

# The framework's own refusals (no such route, a bad method) by status.
_STATUS_CODES = {
    400: ErrorCode.BAD_REQUEST,
    401: ErrorCode.NOT_AUTHENTICATED,
    403: ErrorCode.FORBIDDEN,
    404: ErrorCode.NOT_FOUND,
    405: ErrorCode.METHOD_NOT_ALLOWED,
    409: ErrorCode.CONFLICT,
    413: ErrorCode.BODY_TOO_LARGE,
    422: ErrorCode.BAD_REQUEST,
    500: ErrorCode.INTERNAL_ERROR,
    503: ErrorCode.NOT_READY,
}

_CODES = frozenset(code.value for code in ErrorCode)


async def _refusal(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Refusal)
    metrics = getattr(request.app.state, "metrics", None)
    if metrics is not None:  # refusals by code, whoever answered them (/metrics)
        metrics.refused(exc.code, "http")
    return refusal_response(exc)


async def _http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    default = ErrorCode.BAD_REQUEST if exc.status_code < 500 else ErrorCode.INTERNAL_ERROR
    code = _STATUS_CODES.get(exc.status_code, default)
    return error_response(exc.status_code, code, str(exc.detail), exc.headers)


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    """A body or parameter the schemas refuse: ``bad_request``, or the code a rule's
    validator named as its error's type (``weak_password`` from server/api/schemas.py)."""
    assert isinstance(exc, RequestValidationError)
    parts = []
    code = ErrorCode.BAD_REQUEST
    for error in exc.errors():
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
        parts.append(f"{where}: {error.get('msg', 'invalid')}" if where else error.get("msg", ""))
        if code is ErrorCode.BAD_REQUEST and error.get("type") in _CODES:
            code = ErrorCode(error["type"])
    return error_response(http_status(code), code, "; ".join(parts) or "bad request")


async def _database_error(request: Request, exc: Exception) -> JSONResponse:
    """A database that did not answer is the caller's 503, not a bug: no traceback."""
    if is_outage(exc):
        return refusal_response(outage_refusal(exc))  # 503; server_busy with its Retry-After
    log.error("a request failed", exc_info=exc)  # a refused statement: a bug, logged
    return await _unexpected(request, exc)


async def _unexpected(_request: Request, _exc: Exception) -> JSONResponse:
    # The server still logs the traceback; the client learns nothing of the inside.
    return error_response(500, ErrorCode.INTERNAL_ERROR, "internal server error")


def install_error_handlers(app: FastAPI) -> None:
    """Route every refusal, ours or the framework's, through the one JSON shape."""
    app.add_exception_handler(Refusal, _refusal)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    for outage in (DBAPIError, SQLAlchemyTimeoutError, OSError, TimeoutError):
        app.add_exception_handler(outage, _database_error)
    app.add_exception_handler(Exception, _unexpected)
