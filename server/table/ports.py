"""What a table actor needs of the modules around it and shares with them: its store (the
records it writes are the store's, ``server.store.records``), its settings, and how it
refuses. Here so that the cluster, the websocket and the cardroom need not import the
actor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from engine.errors import Refusal
from server.store.records import AuditNote, FinishedHand, LiveHandState

__all__ = ["CommandRefused", "TableSettings", "TableStore"]

# What a table answers a command it will not carry out, whoever refused it (the actor, the
# engine, the store, the ledger): the one refusal class, under the name the tables use.
CommandRefused = Refusal


class TableStore(Protocol):
    """Where the actor's chips and hands are kept (the database in production)."""

    async def buy_in(self, table_id: int, player: str, amount: int, *, seat: int) -> None:
        """Chips from the player's wallet to the seat (a new seat, or chips added)."""

    async def cash_out(self, table_id: int, player: str, amount: int) -> None:
        """The seat's chips (``amount``, maybe 0) back to the wallet; the seat is freed."""

    async def save_hand(self, hand: FinishedHand) -> None:
        """The finished (or cancelled) hand and the new stacks; the live rows go with it."""

    async def start_hand(self, live: LiveHandState) -> None:
        """The deck and players of the hand about to be dealt, and the time fees collected
        before it (from the seats to the house's revenue)."""

    async def record_action(
        self, table_id: int, number: int, position: int, action: dict[str, Any]
    ) -> None:
        """One action (or time-out) of the hand in progress, before anyone is told of it."""

    async def save_table(
        self, table_id: int, values: dict[str, Any], note: AuditNote | None
    ) -> None:
        """Columns of the table's own row (its settings, an operator's pause or close) and
        the audit entry of the change, in one transaction."""


@dataclass(slots=True)
class TableSettings:
    seat_count: int | None = None
    min_buy_in: int = 20
    max_buy_in: int = 1000
    action_clock: float = 15.0
    time_bank: float = 30.0
    time_bank_refill: float = 2.0  # seconds added back per hand played, up to time_bank
    pause_between_hands: float = 2.0  # after a hand won without a showdown
    # After a showdown: time to read it, at least the pause above (0: that pause; a server's
    # tables take STUD_SHOWDOWN_PAUSE_SECONDS, 5 s, or their own, server.cardroom.takeover).
    showdown_pause: float = 0.0
    waiting_offer: float = 30.0  # how long a freed seat is held for the first waiting player
    sit_out_limit: float = 600.0  # a player sat out longer is removed from the table
    spectator_chat: bool = False  # spectators may chat (seated players always may)
    time_fee: int = 0  # time collection: chips per seated player per period (0: none)
    time_fee_period: float = 1800.0  # seconds
