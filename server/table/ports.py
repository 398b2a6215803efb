"""What a table actor needs of the modules around it and shares with them: its store (the
records it writes are the store's, ``server.store.records``), its settings and their
defaults, and how it refuses. Here so that the cluster, the websocket and the cardroom need
not import the actor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from engine.errors import Refusal
from server.store.records import AuditNote, FinishedHand, LiveHandState

__all__ = ["TABLE_DEFAULTS", "CommandRefused", "TableDefaults", "TableSettings", "TableStore"]

# What a table answers a command it will not carry out, whoever refused it (the actor, the
# engine, the store, the ledger): the one refusal class, under the name the tables use.
CommandRefused = Refusal


class TableStore(Protocol):
    """Where the actor's chips and hands are kept (the database in production)."""

    async def buy_in(self, table_id: int, player: str, amount: int, *, seat: int) -> None:
        """Chips from the player's wallet to the seat (a new seat, or chips added)."""

    async def cash_out(self, table_id: int, player: str, amount: int) -> None:
        """The seat's chips (``amount``, maybe 0) back to the wallet; the seat is freed."""

    async def seat_entrant(self, table_id: int, player: str, chips: int, *, seat: int) -> None:
        """A tournament's player seated with their tournament chips: the seat alone, no
        ledger (tournament chips are not money)."""

    async def give_up_seat(self, table_id: int, player: str, chips: int) -> None:
        """A tournament's player taken away with their chips (their seat freed), no ledger."""

    async def add_entrant_chips(
        self, table_id: int, player: str, chips: int, *, stack: int
    ) -> None:
        """A tournament's player's chips bought (a rebuy, an add-on): their seat's chips to
        ``stack``, no ledger (the director took the money into the prize pool)."""

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


class TableDefaults(BaseModel):
    """How a table plays where its own record says nothing: the one source of these
    defaults. A bare :class:`TableSettings` takes them (:data:`TABLE_DEFAULTS`), and so do a
    node's settings of the same names (``STUD_ACTION_CLOCK_SECONDS``...:
    ``server.settings.Settings`` is one of these, ``Settings.tables`` this part of it), which
    every table of the node plays (``server.cardroom.takeover``)."""

    model_config = ConfigDict(
        frozen=True, validate_default=True, validate_by_name=True, validate_by_alias=True
    )

    # The time to act, and the time bank on top of it.
    action_clock_seconds: float = Field(default=15.0, gt=0)
    time_bank_seconds: float = Field(default=30.0, ge=0)
    # The pause between hands (after a hand won without a showdown).
    pause_between_hands_seconds: float = Field(default=2.0, ge=0)
    # After a showdown, time to read it (a table's own ``showdown_pause`` comes first); never
    # shorter than the pause between hands.
    showdown_pause_seconds: float = Field(default=5.0, ge=0, le=60)
    # How long a freed seat is held for the first player on the waiting list.
    waiting_offer_seconds: float = Field(default=30.0, gt=0)
    # How long a player may sit out before being cashed out.
    sit_out_limit_seconds: float = Field(default=600.0, gt=0)


TABLE_DEFAULTS = TableDefaults()


@dataclass(slots=True)
class TableSettings:
    """One table's rules of play, as its actor takes them. A node's tables take their
    records' and the node's :class:`TableDefaults` (``server.cardroom.takeover``)."""

    seat_count: int | None = None
    min_buy_in: int = 20
    max_buy_in: int = 1000
    action_clock: float = TABLE_DEFAULTS.action_clock_seconds
    time_bank: float = TABLE_DEFAULTS.time_bank_seconds
    time_bank_refill: float = 2.0  # seconds added back per hand played, up to time_bank
    pause_between_hands: float = TABLE_DEFAULTS.pause_between_hands_seconds
    # After a showdown: time to read it, at least the pause above (0: that pause, for a table
    # on its own; a node's tables take their own, or TableDefaults.showdown_pause_seconds).
    showdown_pause: float = 0.0
    waiting_offer: float = TABLE_DEFAULTS.waiting_offer_seconds  # a freed seat held this long
    sit_out_limit: float = TABLE_DEFAULTS.sit_out_limit_seconds  # sat out longer: removed
    spectator_chat: bool = False  # spectators may chat (seated players always may)
    time_fee: int = 0  # time collection: chips per seated player per period (0: none)
    time_fee_period: float = 1800.0  # seconds
