"""What can go wrong, as two small exceptions: the server said no, or the line dropped.

Branch on ``ServerError.code`` (stable, listed in docs/protocol.md and server/errors.py),
never on the message.
"""

from __future__ import annotations

__all__ = ["ConnectionLost", "ServerError", "StudError"]


class StudError(Exception):
    """Every error this client raises."""


class ServerError(StudError):
    """A refusal from the server, over HTTP or the websocket; nothing changed there."""

    def __init__(self, code: str, message: str, *, status: int | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status  # the HTTP status, None for a websocket error frame


class ConnectionLost(StudError):
    """The websocket dropped before the answer came: the command may or may not have run.

    The client reconnects by itself; ``Table.act`` retries with the same action id, which
    the server answers once.
    """
