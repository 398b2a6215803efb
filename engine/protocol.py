"""The protocol's vocabulary of refusals, which the server and its clients both import.

Every refusal a client can receive, a websocket ``error`` frame or an HTTP answer
(``{"error": {"code", "message"}}``), carries one of these codes, as its string; clients
branch on the code, never on the message. Each code has one owner (:data:`OWNERS`): the
part of the software that decides it, the lowest layer that raises it (a layer above may
pass it on, or raise it for the same reason). docs/protocol.md lists every code with its
owner, and a test holds the list, the owners and the raise sites to this module. How a code
travels over HTTP (its status) is the HTTP layer's, ``server.edge.refusals``; the engine's
refusals are ``engine.errors``.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final

__all__ = ["OWNERS", "ErrorCode"]


class ErrorCode(StrEnum):
    """Every code a client can receive; equal to its string on the wire. Who raises each is
    :data:`OWNERS`."""

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
    BAD_TOURNAMENT = "bad_tournament"
    UNKNOWN_TABLE = "unknown_table"
    UNKNOWN_NODE = "unknown_node"
    ALREADY_AUTHENTICATED = "already_authenticated"
    TOO_MANY_CONNECTIONS = "too_many_connections"

    # a table that cannot take the command now: try again
    TABLE_BUSY = "table_busy"
    TABLE_CLOSED = "table_closed"
    TABLE_RESTARTING = "table_restarting"
    TABLE_MOVED = "table_moved"
    TABLE_UNAVAILABLE = "table_unavailable"
    NODE_UNAVAILABLE = "node_unavailable"
    DATABASE_UNAVAILABLE = "database_unavailable"
    UNKNOWN_COMMAND = "unknown_command"
    BAD_COMMAND = "bad_command"

    # an operator's table operations (the back office)
    TABLE_SHUT = "table_shut"
    TABLE_ALREADY_PAUSED = "table_already_paused"
    TABLE_NOT_PAUSED = "table_not_paused"
    NO_HAND_IN_PROGRESS = "no_hand_in_progress"
    SEATS_IN_USE = "seats_in_use"
    # a tournament director's commands to its tables
    NOT_NEXT_HAND = "not_next_hand"

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
    CHIPS_IN_PLAY = "chips_in_play"
    TOURNAMENT_TABLE = "tournament_table"
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
    BAD_STRUCTURE = "bad_structure"
    BAD_ROTATION = "bad_rotation"

    # tournaments: registering, and an operator's changes
    UNKNOWN_TOURNAMENT = "unknown_tournament"
    TOURNAMENT_NAME_TAKEN = "tournament_name_taken"
    REGISTRATION_CLOSED = "registration_closed"
    ALREADY_REGISTERED = "already_registered"
    TOURNAMENT_FULL = "tournament_full"
    NOT_REGISTERED = "not_registered"
    TOURNAMENT_STARTED = "tournament_started"
    TOURNAMENT_OVER = "tournament_over"
    TOURNAMENT_HAS_ENTRIES = "tournament_has_entries"
    TOURNAMENT_NOT_STARTED = "tournament_not_started"
    UNKNOWN_REQUEST = "unknown_request"
    # a running tournament's director refusing a request
    TOURNAMENT_PAUSED = "tournament_paused"
    TOURNAMENT_NOT_PAUSED = "tournament_not_paused"
    # an operator moving, disqualifying, adding time (a running tournament's director)
    NOT_IN_TOURNAMENT = "not_in_tournament"
    UNKNOWN_TOURNAMENT_TABLE = "unknown_tournament_table"
    MOVE_PENDING = "move_pending"
    ALREADY_DISQUALIFIED = "already_disqualified"
    LEVEL_NOT_TIMED = "level_not_timed"
    DISQUALIFIED = "disqualified"
    # a deal at the final table
    NOT_PLAYING = "not_playing"
    NOT_FINAL_TABLE = "not_final_table"
    DEAL_OFFER_STANDING = "deal_offer_standing"
    NO_DEAL_OFFER = "no_deal_offer"
    BAD_DEAL = "bad_deal"
    TOURNAMENT_NOT_FINISHED = "tournament_not_finished"
    # a running tournament's director refusing an entry, a rebuy or an add-on
    RE_ENTRIES_USED = "re_entries_used"
    REBUYS_CLOSED = "rebuys_closed"
    STACK_TOO_BIG = "stack_too_big"
    ADD_ON_CLOSED = "add_on_closed"
    ADD_ON_TAKEN = "add_on_taken"


OWNERS: Final[Mapping[ErrorCode, str]] = {
    # the engine (engine/): its refusals of actions, seats, decks, rules and hand histories
    ErrorCode.SEATS_IN_USE: "engine",
    ErrorCode.BAD_AMOUNT: "engine",
    ErrorCode.BAD_BUY_IN: "engine",
    ErrorCode.BAD_SEAT: "engine",
    ErrorCode.SEAT_TAKEN: "engine",
    ErrorCode.SEAT_RESERVED: "engine",
    ErrorCode.SEAT_EMPTY: "engine",
    ErrorCode.TABLE_FULL: "engine",
    ErrorCode.ALREADY_SEATED: "engine",
    ErrorCode.NOT_SEATED: "engine",
    ErrorCode.CHIPS_IN_PLAY: "engine",
    ErrorCode.TOURNAMENT_TABLE: "engine",
    ErrorCode.BAD_CLIENT_SEED: "engine",
    ErrorCode.UNKNOWN_ACTION: "engine",
    ErrorCode.NOT_IN_HAND: "engine",
    ErrorCode.NOT_YOUR_TURN: "engine",
    ErrorCode.ACTION_NOT_ALLOWED: "engine",
    ErrorCode.HAND_OVER: "engine",
    ErrorCode.ENGINE_ERROR: "engine",
    ErrorCode.INVALID_ACTION: "engine",
    ErrorCode.ILLEGAL_ACTION: "engine",
    ErrorCode.BAD_CONFIG: "engine",
    ErrorCode.UNKNOWN_VARIANT: "engine",
    ErrorCode.BAD_SEAT_COUNT: "engine",
    ErrorCode.BAD_SEATS: "engine",
    ErrorCode.NOT_ENOUGH_PLAYERS: "engine",
    ErrorCode.TOO_MANY_PLAYERS: "engine",
    ErrorCode.HAND_IN_PROGRESS: "engine",
    ErrorCode.BAD_CARD: "engine",
    ErrorCode.BAD_DECK: "engine",
    ErrorCode.BAD_PHH: "engine",
    ErrorCode.BAD_VARIANT: "engine",
    ErrorCode.BAD_STRUCTURE: "engine",
    ErrorCode.BAD_ROTATION: "engine",
    # accounts and their money (server.accounts)
    ErrorCode.BAD_TOKEN: "accounts",
    ErrorCode.TOKEN_EXPIRED: "accounts",
    ErrorCode.TOKEN_REVOKED: "accounts",
    ErrorCode.BAD_CREDENTIALS: "accounts",
    ErrorCode.ACCOUNT_SUSPENDED: "accounts",
    ErrorCode.UNKNOWN_WALLET: "accounts",
    ErrorCode.USERNAME_TAKEN: "accounts",
    ErrorCode.RESERVED_USERNAME: "accounts",
    ErrorCode.WEAK_PASSWORD: "accounts",
    ErrorCode.INSUFFICIENT_FUNDS: "accounts",
    ErrorCode.SERVER_BUSY: "accounts",
    ErrorCode.UNKNOWN_PLAYER: "accounts",
    # what the cardroom keeps (server.store)
    ErrorCode.UNKNOWN_HAND: "store",
    ErrorCode.NO_PHH: "store",
    ErrorCode.NO_DECK: "store",
    ErrorCode.DECK_NOT_PUBLISHED: "store",
    ErrorCode.TABLE_NAME_TAKEN: "store",
    # a table actor (server.table)
    ErrorCode.BAD_FIELD: "table",
    ErrorCode.TABLE_BUSY: "table",
    ErrorCode.TABLE_CLOSED: "table",
    ErrorCode.TABLE_MOVED: "table",
    ErrorCode.DATABASE_UNAVAILABLE: "table",
    ErrorCode.UNKNOWN_COMMAND: "table",
    ErrorCode.BAD_COMMAND: "table",
    ErrorCode.TABLE_SHUT: "table",
    ErrorCode.TABLE_ALREADY_PAUSED: "table",
    ErrorCode.TABLE_NOT_PAUSED: "table",
    ErrorCode.NO_HAND_IN_PROGRESS: "table",
    ErrorCode.NOT_NEXT_HAND: "table",
    ErrorCode.BAD_CHAT: "table",
    ErrorCode.SEED_WINDOW_CLOSED: "table",
    ErrorCode.CHAT_NOT_ALLOWED: "table",
    ErrorCode.BAD_ACTION_ID: "table",
    ErrorCode.NO_HAND: "table",
    # the cardroom of a node (server.cardroom)
    ErrorCode.ALREADY_SUSPENDED: "cardroom",
    ErrorCode.NOT_SUSPENDED: "cardroom",
    ErrorCode.UNKNOWN_TABLE: "cardroom",
    ErrorCode.TABLE_RESTARTING: "cardroom",
    ErrorCode.TABLE_UNAVAILABLE: "cardroom",
    ErrorCode.UNKNOWN_NODE: "cardroom",
    ErrorCode.NODE_UNAVAILABLE: "cardroom",
    # tournaments (server.tournaments)
    ErrorCode.UNKNOWN_TOURNAMENT: "tournaments",
    ErrorCode.TOURNAMENT_NAME_TAKEN: "tournaments",
    ErrorCode.REGISTRATION_CLOSED: "engine",  # the director's run judges them in play too
    ErrorCode.ALREADY_REGISTERED: "engine",  # the director's run judges them in play too
    ErrorCode.TOURNAMENT_FULL: "engine",  # the director's run judges them in play too
    ErrorCode.NOT_REGISTERED: "engine",  # the director's run judges them in play too
    ErrorCode.TOURNAMENT_STARTED: "tournaments",
    ErrorCode.TOURNAMENT_OVER: "engine",  # the director's run judges them in play too
    ErrorCode.TOURNAMENT_HAS_ENTRIES: "tournaments",
    ErrorCode.TOURNAMENT_NOT_STARTED: "tournaments",
    ErrorCode.UNKNOWN_REQUEST: "tournaments",
    ErrorCode.TOURNAMENT_PAUSED: "engine",
    ErrorCode.TOURNAMENT_NOT_PAUSED: "engine",
    ErrorCode.NOT_IN_TOURNAMENT: "engine",
    ErrorCode.UNKNOWN_TOURNAMENT_TABLE: "engine",
    ErrorCode.MOVE_PENDING: "engine",
    ErrorCode.ALREADY_DISQUALIFIED: "engine",
    ErrorCode.LEVEL_NOT_TIMED: "engine",
    ErrorCode.DISQUALIFIED: "engine",
    ErrorCode.NOT_PLAYING: "engine",
    ErrorCode.NOT_FINAL_TABLE: "engine",
    ErrorCode.DEAL_OFFER_STANDING: "engine",
    ErrorCode.NO_DEAL_OFFER: "engine",
    ErrorCode.BAD_DEAL: "engine",
    ErrorCode.TOURNAMENT_NOT_FINISHED: "tournaments",
    ErrorCode.RE_ENTRIES_USED: "engine",
    ErrorCode.REBUYS_CLOSED: "engine",
    ErrorCode.STACK_TOO_BIG: "engine",
    ErrorCode.ADD_ON_CLOSED: "engine",
    ErrorCode.ADD_ON_TAKEN: "engine",
    # the websocket and the node's limits (server.edge)
    ErrorCode.NOT_AUTHENTICATED: "edge",
    ErrorCode.RATE_LIMITED: "edge",
    ErrorCode.BAD_JSON: "edge",
    ErrorCode.FRAME_TOO_LARGE: "edge",
    ErrorCode.BAD_VERSION: "edge",
    ErrorCode.UNKNOWN_TYPE: "edge",
    ErrorCode.BAD_TABLE: "edge",
    ErrorCode.BAD_TOURNAMENT: "edge",
    ErrorCode.ALREADY_AUTHENTICATED: "edge",
    ErrorCode.TOO_MANY_CONNECTIONS: "edge",
    # the HTTP API (server.api)
    ErrorCode.UNKNOWN_PARAMETER: "api",
    ErrorCode.NOT_OPERATOR: "api",
    ErrorCode.FORBIDDEN: "api",
    ErrorCode.NOT_FOUND: "api",
    ErrorCode.METHOD_NOT_ALLOWED: "api",
    ErrorCode.CONFLICT: "api",
    ErrorCode.NOT_READY: "api",
    ErrorCode.BODY_TOO_LARGE: "api",
    # any of them: a request that does not parse, a bug
    ErrorCode.BAD_REQUEST: "any",
    ErrorCode.INTERNAL_ERROR: "any",
}
"""Who decides each code: ``engine``, a package of the server (``accounts``, ``store``,
``table``, ``cardroom``, ``tournaments``, ``edge``, ``api``), or ``any`` of them."""
