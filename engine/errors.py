"""Refusals: the engine's, and the base of everyone's.

Every refusal, whoever raises it, is a :class:`Refusal`: a stable code of the protocol's
vocabulary (:class:`engine.protocol.ErrorCode`, what clients branch on) and a message (for
people; it may change). The engine raises the codes it owns there (``OWNERS``); how a code
travels over HTTP is the HTTP layer's (``server.edge.refusals``).

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

from engine.protocol import ErrorCode


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
