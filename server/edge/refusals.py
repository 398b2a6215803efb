"""How a refusal looks on the wire to a caller over HTTP: the one JSON shape
``{"error": {"code": ..., "message": ...}}`` with the code's status (and when to try again,
or how to authenticate), for the HTTP API's routes and the websocket's handshake alike; and
the refusals of a node that sheds work or whose database does not answer."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from fastapi.responses import JSONResponse
from sqlalchemy.exc import TimeoutError as SQLAlchemyTimeoutError

from engine.errors import Refusal
from engine.protocol import ErrorCode

__all__ = [
    "HTTP_STATUS",
    "ServerBusy",
    "error_body",
    "error_response",
    "http_status",
    "outage_refusal",
    "refusal_response",
]

# The status an HTTP answer with each code has: 400 unless listed (docs/protocol.md).
HTTP_STATUS: Final[Mapping[ErrorCode, int]] = {
    ErrorCode.NOT_AUTHENTICATED: 401,
    ErrorCode.BAD_TOKEN: 401,
    ErrorCode.TOKEN_EXPIRED: 401,
    ErrorCode.TOKEN_REVOKED: 401,
    ErrorCode.BAD_CREDENTIALS: 401,
    ErrorCode.ACCOUNT_SUSPENDED: 401,
    ErrorCode.NOT_OPERATOR: 403,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.UNKNOWN_HAND: 404,
    ErrorCode.NO_PHH: 404,
    ErrorCode.NO_DECK: 404,
    ErrorCode.DECK_NOT_PUBLISHED: 403,
    ErrorCode.UNKNOWN_WALLET: 404,
    ErrorCode.UNKNOWN_PLAYER: 404,
    ErrorCode.UNKNOWN_TABLE: 404,
    ErrorCode.UNKNOWN_NODE: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.BODY_TOO_LARGE: 413,
    ErrorCode.UNKNOWN_PARAMETER: 422,
    ErrorCode.USERNAME_TAKEN: 409,
    ErrorCode.TABLE_NAME_TAKEN: 409,
    ErrorCode.CONFLICT: 409,
    ErrorCode.INSUFFICIENT_FUNDS: 409,
    ErrorCode.TABLE_SHUT: 409,
    ErrorCode.TABLE_ALREADY_PAUSED: 409,
    ErrorCode.TABLE_NOT_PAUSED: 409,
    ErrorCode.NO_HAND_IN_PROGRESS: 409,
    ErrorCode.SEATS_IN_USE: 409,
    ErrorCode.ALREADY_SUSPENDED: 409,
    ErrorCode.NOT_SUSPENDED: 409,
    ErrorCode.NOT_SEATED: 409,
    ErrorCode.TOURNAMENT_TABLE: 409,
    ErrorCode.NOT_NEXT_HAND: 409,
    ErrorCode.UNKNOWN_TOURNAMENT: 404,
    ErrorCode.TOURNAMENT_NAME_TAKEN: 409,
    ErrorCode.REGISTRATION_CLOSED: 409,
    ErrorCode.ALREADY_REGISTERED: 409,
    ErrorCode.TOURNAMENT_FULL: 409,
    ErrorCode.NOT_REGISTERED: 409,
    ErrorCode.TOURNAMENT_STARTED: 409,
    ErrorCode.TOURNAMENT_OVER: 409,
    ErrorCode.TOURNAMENT_HAS_ENTRIES: 409,
    ErrorCode.TOURNAMENT_NOT_STARTED: 409,
    ErrorCode.UNKNOWN_REQUEST: 404,
    ErrorCode.TOURNAMENT_PAUSED: 409,
    ErrorCode.TOURNAMENT_NOT_PAUSED: 409,
    ErrorCode.NOT_IN_TOURNAMENT: 409,
    ErrorCode.UNKNOWN_TOURNAMENT_TABLE: 409,
    ErrorCode.MOVE_PENDING: 409,
    ErrorCode.ALREADY_DISQUALIFIED: 409,
    ErrorCode.LEVEL_NOT_TIMED: 409,
    ErrorCode.DISQUALIFIED: 409,
    ErrorCode.NOT_PLAYING: 409,
    ErrorCode.NOT_FINAL_TABLE: 409,
    ErrorCode.DEAL_OFFER_STANDING: 409,
    ErrorCode.NO_DEAL_OFFER: 409,
    ErrorCode.TOURNAMENT_NOT_FINISHED: 409,
    ErrorCode.RE_ENTRIES_USED: 409,
    ErrorCode.REBUYS_CLOSED: 409,
    ErrorCode.STACK_TOO_BIG: 409,
    ErrorCode.ADD_ON_CLOSED: 409,
    ErrorCode.ADD_ON_TAKEN: 409,
    ErrorCode.INTERNAL_ERROR: 500,
    ErrorCode.NOT_READY: 503,
    # an operator's command to a table that cannot take it now (try again)
    ErrorCode.TABLE_BUSY: 503,
    ErrorCode.TABLE_CLOSED: 503,
    ErrorCode.TABLE_RESTARTING: 503,
    ErrorCode.TABLE_MOVED: 503,
    ErrorCode.TABLE_UNAVAILABLE: 503,
    ErrorCode.NODE_UNAVAILABLE: 503,
    ErrorCode.DATABASE_UNAVAILABLE: 503,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.SERVER_BUSY: 503,
    ErrorCode.TOO_MANY_CONNECTIONS: 429,
}


def http_status(code: ErrorCode) -> int:
    """The HTTP status ``code`` travels with in an HTTP answer."""
    return HTTP_STATUS.get(code, 400)


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
    return error_response(http_status(refusal.code), refusal.code, refusal.message, headers)


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
