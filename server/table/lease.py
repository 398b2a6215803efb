"""A node's right to speak for a table it runs: its lease, as the cardroom last renewed it
(``server.cardroom.cluster``), checked by the table's publisher before every event."""

from __future__ import annotations

import time


class LeaseProof:
    """How long this node may still speak for one table: until its lease, last made sure of
    at ``renewed`` (monotonic, taken before Redis was asked, so never late), may have
    lapsed; never again once lost. A node frozen past its lease wakes with its proof gone,
    and says nothing more of the table before its lease round finds out who runs it now.
    ``seconds`` None: a lease that cannot lapse (one node alone)."""

    def __init__(self, seconds: float | None, renewed: float) -> None:
        self.seconds = seconds
        self.renewed = renewed
        self.lost = False

    def renew(self, at: float) -> None:
        self.renewed = max(self.renewed, at)

    def lose(self) -> None:
        self.lost = True

    def holds(self) -> bool:
        if self.lost:
            return False
        return self.seconds is None or time.monotonic() < self.renewed + self.seconds
