"""Typed errors of the engine; the server maps each ``code`` to a protocol error.

::

    ValueError
     └── EngineError                (code: a stable string)
          ├── InvalidAction          malformed input: not a card, negative amount, unknown kind
          ├── IllegalAction          well formed, but the rules forbid it now
          │    └── NotYourTurn       another seat is to act
          └── ConfigError            a table or variant setting that cannot be played

Raising any of them leaves the hand exactly as it was.
"""

from __future__ import annotations


class EngineError(ValueError):
    code = "engine_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class InvalidAction(EngineError):
    code = "invalid_action"


class IllegalAction(EngineError):
    code = "illegal_action"


class NotYourTurn(IllegalAction):
    code = "not_your_turn"


class ConfigError(EngineError):
    code = "bad_config"
