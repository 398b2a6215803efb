"""How a refusal looks on the wire to a caller over HTTP: the one JSON shape
``{"error": {"code": ..., "message": ...}}`` with the code's status (and when to try again,
or how to authenticate), for the HTTP API's routes and the websocket's handshake alike; and
the refusals of a node that sheds work or whose database does not answer."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from fastapi.responses import JSONResponse
from sqlalchemy.exc import TimeoutError as SQLAlchemyTimeoutError

from engine.errors import ErrorCode, Refusal

__all__ = ["ServerBusy", "error_body", "error_response", "outage_refusal", "refusal_response"]

# A refused token tells the client how to authenticate (RFC 6750).
_BEARER_CHALLENGE = {"WWW-Authenticate": "Bearer"}
_CHALLENGED = frozenset(
    {
        ErrorCode.NOT_AUTHENTICATED,
        ErrorCode.BAD_TOKEN,
        ErrorCode.TOKEN_EXPIRED,
        ErrorCode.TOKEN_REVOKED,
        ErrorCode.ACCOUNT_SUSPENDED,
    }
)


def error_body(code: ErrorCode, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def error_response(
    status_code: int, code: ErrorCode, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(code, message), status_code=status_code, headers=headers)


def refusal_response(refusal: Refusal) -> JSONResponse:
    """A refusal's HTTP answer: its status, its code, and when to try again if it says."""
    headers = _BEARER_CHALLENGE if refusal.code in _CHALLENGED else None
    retry_after = getattr(refusal, "retry_after", None)
    if isinstance(retry_after, int | float):  # a limit: when to try again (RFC 9110)
        headers = {"Retry-After": str(max(1, math.ceil(retry_after)))}
    return error_response(refusal.code.http_status, refusal.code, refusal.message, headers)


class ServerBusy(Refusal):
    """The node sheds the call at once, to be tried again shortly: every database connection
    of its pool is in use (its bound, from the settings), or its event loop is behind
    (:mod:`server.edge.overload`)."""

    code = ErrorCode.SERVER_BUSY
    retry_after = 1


def outage_refusal(error: BaseException | None = None) -> Refusal:
    """What a caller is told when the database did not answer (or, ``server_busy``, the
    node had no connection free for it in time): try again, nothing changed."""
    if isinstance(error, SQLAlchemyTimeoutError):  # the pool's wait, not the database's
        return ServerBusy("the server is busy: no database connection was free; try again")
    return Refusal(
        "the database did not answer in time; try again", code=ErrorCode.DATABASE_UNAVAILABLE
    )
