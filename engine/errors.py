"""One error vocabulary for the engine, the server and its clients.

Every refusal, whoever raises it, is a :class:`Refusal`: a stable :class:`ErrorCode` (what
clients branch on) and a message (for people; it may change). The codes travel as their
strings, over HTTP (``{"error": {"code", "message"}}``) and the websocket (an ``error``
frame); docs/protocol.md lists every one, and a test holds that list to this enumeration.

::

    Exception
     └── Refusal                    (code: ErrorCode, message)
          ├── EngineError            (also a ValueError)
          │    ├── InvalidAction     malformed input: not a card, negative amount, unknown kind
          │    │    └── PhhError     a hand history that cannot be read or replayed
          │    ├── IllegalAction     well formed, but the rules forbid it now
          │    │    └── NotYourTurn  another seat is to act
          │    └── ConfigError       a table or variant setting that cannot be played
          └── the server's refusals  (server.edge.refusals, server.table.ports, server.edge.ws, ...)

Raising any of them changes nothing: not the hand, not the table, not a wallet.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Every code a client can receive; equal to its string on the wire."""

    # HTTP: requests, accounts and tokens
    BAD_REQUEST = "bad_request"
    UNKNOWN_PARAMETER = "unknown_parameter"
    NOT_AUTHENTICATED = "not_authenticated"
    BAD_TOKEN = "bad_token"
    TOKEN_EXPIRED = "token_expired"
    TOKEN_REVOKED = "token_revoked"
    BAD_CREDENTIALS = "bad_credentials"
    ACCOUNT_SUSPENDED = "account_suspended"
    ALREADY_SUSPENDED = "already_suspended"
    NOT_SUSPENDED = "not_suspended"
    NOT_OPERATOR = "not_operator"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    UNKNOWN_HAND = "unknown_hand"
    NO_PHH = "no_phh"
    NO_DECK = "no_deck"
    DECK_NOT_PUBLISHED = "deck_not_published"
    UNKNOWN_WALLET = "unknown_wallet"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    USERNAME_TAKEN = "username_taken"
    RESERVED_USERNAME = "reserved_username"
    WEAK_PASSWORD = "weak_password"
    TABLE_NAME_TAKEN = "table_name_taken"
    CONFLICT = "conflict"
    INSUFFICIENT_FUNDS = "insufficient_funds"
    INTERNAL_ERROR = "internal_error"
    NOT_READY = "not_ready"
    RATE_LIMITED = "rate_limited"
    SERVER_BUSY = "server_busy"
    BODY_TOO_LARGE = "body_too_large"

    # the websocket's frames
    BAD_JSON = "bad_json"
    FRAME_TOO_LARGE = "frame_too_large"
    BAD_VERSION = "bad_version"
    UNKNOWN_TYPE = "unknown_type"
    BAD_FIELD = "bad_field"
    BAD_TABLE = "bad_table"
    UNKNOWN_TABLE = "unknown_table"
    ALREADY_AUTHENTICATED = "already_authenticated"
    TOO_MANY_CONNECTIONS = "too_many_connections"

    # a table that cannot take the command now: try again
    TABLE_BUSY = "table_busy"
    TABLE_CLOSED = "table_closed"
    TABLE_RESTARTING = "table_restarting"
    TABLE_MOVED = "table_moved"
    TABLE_UNAVAILABLE = "table_unavailable"
    DATABASE_UNAVAILABLE = "database_unavailable"
    UNKNOWN_COMMAND = "unknown_command"
    BAD_COMMAND = "bad_command"

    # an operator's table operations (the back office)
    TABLE_SHUT = "table_shut"
    TABLE_ALREADY_PAUSED = "table_already_paused"
    TABLE_NOT_PAUSED = "table_not_paused"
    NO_HAND_IN_PROGRESS = "no_hand_in_progress"
    SEATS_IN_USE = "seats_in_use"

    # seats, chips and the waiting list
    BAD_AMOUNT = "bad_amount"
    BAD_BUY_IN = "bad_buy_in"
    BAD_SEAT = "bad_seat"
    SEAT_TAKEN = "seat_taken"
    SEAT_RESERVED = "seat_reserved"
    SEAT_EMPTY = "seat_empty"
    TABLE_FULL = "table_full"
    ALREADY_SEATED = "already_seated"
    NOT_SEATED = "not_seated"
    BAD_CHAT = "bad_chat"
    BAD_CLIENT_SEED = "bad_client_seed"
    SEED_WINDOW_CLOSED = "seed_window_closed"
    CHAT_NOT_ALLOWED = "chat_not_allowed"
    UNKNOWN_PLAYER = "unknown_player"

    # actions
    BAD_ACTION_ID = "bad_action_id"
    NO_HAND = "no_hand"
    UNKNOWN_ACTION = "unknown_action"
    NOT_IN_HAND = "not_in_hand"
    NOT_YOUR_TURN = "not_your_turn"
    ACTION_NOT_ALLOWED = "action_not_allowed"
    HAND_OVER = "hand_over"

    # the engine as a library: configurations, decks, hand histories
    ENGINE_ERROR = "engine_error"
    INVALID_ACTION = "invalid_action"
    ILLEGAL_ACTION = "illegal_action"
    BAD_CONFIG = "bad_config"
    UNKNOWN_VARIANT = "unknown_variant"
    BAD_SEAT_COUNT = "bad_seat_count"
    BAD_SEATS = "bad_seats"
    NOT_ENOUGH_PLAYERS = "not_enough_players"
    TOO_MANY_PLAYERS = "too_many_players"
    HAND_IN_PROGRESS = "hand_in_progress"
    BAD_CARD = "bad_card"
    BAD_DECK = "bad_deck"
    BAD_PHH = "bad_phh"
    BAD_VARIANT = "bad_variant"

    @property
    def http_status(self) -> int:
        """The HTTP status the code travels with in an HTTP answer (400 unless listed)."""
        return _HTTP_STATUS.get(self, 400)


_HTTP_STATUS: dict[ErrorCode, int] = {
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
    ErrorCode.INTERNAL_ERROR: 500,
    ErrorCode.NOT_READY: 503,
    # an operator's command to a table that cannot take it now (try again)
    ErrorCode.TABLE_BUSY: 503,
    ErrorCode.TABLE_CLOSED: 503,
    ErrorCode.TABLE_RESTARTING: 503,
    ErrorCode.TABLE_MOVED: 503,
    ErrorCode.TABLE_UNAVAILABLE: 503,
    ErrorCode.DATABASE_UNAVAILABLE: 503,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.SERVER_BUSY: 503,
    ErrorCode.TOO_MANY_CONNECTIONS: 429,
}


class Refusal(Exception):
    """Something refused, with nothing changed: a stable ``code`` and a ``message``.

    A subclass names the code it usually carries; a raise site may name another
    (``IllegalAction("the hand is over", code=ErrorCode.HAND_OVER)``).
    """

    code: ErrorCode = ErrorCode.BAD_REQUEST

    def __init__(self, message: str, *, code: ErrorCode | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class EngineError(Refusal, ValueError):
    code = ErrorCode.ENGINE_ERROR


class InvalidAction(EngineError):
    code = ErrorCode.INVALID_ACTION


class IllegalAction(EngineError):
    code = ErrorCode.ILLEGAL_ACTION


class NotYourTurn(IllegalAction):
    code = ErrorCode.NOT_YOUR_TURN


class ConfigError(EngineError):
    code = ErrorCode.BAD_CONFIG


class PhhError(InvalidAction):
    """A hand history that cannot be read, or that the rules cannot replay (docs/phh.md)."""

    code = ErrorCode.BAD_PHH
