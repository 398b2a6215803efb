"""What can go wrong, as two small exceptions: the server said no, or the line dropped.

Branch on ``ServerError.code`` (stable: an :class:`engine.protocol.ErrorCode`, listed in
docs/protocol.md), never on the message.
"""

from __future__ import annotations

from engine.protocol import ErrorCode

__all__ = ["ConnectionLost", "ErrorCode", "ServerError", "StudError"]


class StudError(Exception):
    """Every error this client raises."""


class ServerError(StudError):
    """A refusal from the server, over HTTP or the websocket; nothing changed there.

    ``code`` is the :class:`ErrorCode` the server sent (equal to its string), or the raw
    string when the server (or a proxy in front of it: ``http_502``) sent one this client
    does not know.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code: ErrorCode | str = _known(code)
        self.message = message
        self.status = status  # the HTTP status, None for a websocket error frame
        self.retry_after = retry_after  # seconds, when the server said when to try again


def _known(code: str) -> ErrorCode | str:
    try:
        return ErrorCode(code)
    except ValueError:
        return code


class ConnectionLost(StudError):
    """The websocket dropped before the answer came: the command may or may not have run.

    The client reconnects by itself; ``Table.act`` retries with the same action id, which
    the server answers once.
    """
