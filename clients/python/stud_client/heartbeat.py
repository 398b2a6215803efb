"""When the client pings, and when it takes a server for frozen: a decision on times alone
(no clock of its own, no I/O), so that every pattern of wake-ups and answers can be tried.

A server is judged by its answer to a ping, never by how the heartbeat's wake-ups happen to
fall: a ``pong`` that comes within a heartbeat always counts, however late in it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

# A ping at least this often whatever the server says (a third of the server's default idle
# limit of 60 s; the server's hello may ask for more often).
DEFAULT_KEEPALIVE = 20.0


class Beat(enum.Enum):
    WAIT = "wait"
    PING = "ping"
    LEAVE = "leave"


@dataclass(slots=True)
class Heartbeat:
    """``every``: seconds of silence before a ping. ``silent_after``: seconds without a frame
    after which a server that also left a ping unanswered for ``every`` seconds is left.
    ``keepalive``: seconds between pings whatever is heard (the server's idle limit asks)."""

    every: float
    silent_after: float | None
    keepalive: float = DEFAULT_KEEPALIVE
    heard_at: float = 0.0  # the server's last frame
    pinged_at: float = 0.0  # the client's last ping

    @property
    def tick(self) -> float:
        """How often to look: four times a heartbeat, so a ping goes within a quarter of one."""
        return min(self.every, self.keepalive) / 4

    def connected(self, now: float) -> None:
        self.heard_at = self.pinged_at = now

    def heard(self, now: float) -> None:
        self.heard_at = now

    def decide(self, now: float) -> Beat:
        """What to do at ``now``; a ``PING`` is taken as sent."""
        silent = now - self.heard_at
        unanswered = self.pinged_at > self.heard_at  # nothing heard since the last ping
        if unanswered:
            if (
                self.silent_after is not None
                and now - self.pinged_at >= self.every
                and silent > self.silent_after
            ):
                return Beat.LEAVE
            return Beat.WAIT  # its answer is awaited
        if silent < self.every and now - self.pinged_at < self.keepalive:
            return Beat.WAIT  # the server talks, and no keepalive is due
        self.pinged_at = now
        return Beat.PING


__all__ = ["DEFAULT_KEEPALIVE", "Beat", "Heartbeat"]
