"""What the table actors share with the modules around them: their store, their settings,
what they keep of a hand, and how they refuse. Here so that the store, the cluster, the
websocket and the cardroom need not import the actor."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.errors import Refusal

__all__ = [
    "AuditNote",
    "CommandRefused",
    "FinishedHand",
    "LiveHandState",
    "StoreUnavailable",
    "TableSettings",
    "TableStore",
    "TableTakenOver",
]

# What a table answers a command it will not carry out, whoever refused it (the actor, the
# engine, the store, the ledger): the one refusal class, under the name the tables use.
CommandRefused = Refusal


class TableTakenOver(Exception):
    """Another node runs this table now (its fencing token is newer): stop, write nothing."""


class StoreUnavailable(Exception):
    """The database did not answer: the write did not happen, or happened once (retry it)."""


@dataclass(frozen=True, slots=True)
class LiveHandState:
    """The hand in progress as written ahead of play: enough to deal and replay it again."""

    table_id: int
    number: int
    deck: dict[str, Any]  # {"order": [cards, top first], "seed": seed of the burn scramble}
    players: list[tuple[int, str, int]]  # (seat, player, chips at the start), in seat order
    actions: list[dict[str, Any]] = field(default_factory=list)
    config: dict[str, Any] | None = None  # the rules it was dealt under (None: the table's)
    # Time collection before the deal: player -> the fee taken from their chips (``players``
    # holds the chips after it), and when the period they paid for ends (epoch seconds).
    time_fees: dict[str, int] = field(default_factory=dict)
    time_paid_until: float | None = None


@dataclass(frozen=True, slots=True)
class FinishedHand:
    """What the store keeps of a hand, written in one transaction with the stacks."""

    table_id: int
    number: int
    events: list[dict[str, Any]]
    result: dict[str, Any]
    players: dict[int, str]  # seat -> player
    starting: dict[str, int]  # player -> chips at the start
    stacks: dict[str, int]  # player -> chips at the end
    cancelled: bool = False
    phh: str = ""  # engine.phh_export.export of the hand; "" where PHH cannot express its rules
    config: dict[str, Any] | None = None  # the rules it was dealt under (table config JSON)
    rake: int = 0  # chips raked from its pots for the house: the stacks end that many short
    # Its fair deal's seeds (server.table.dealing): sealed at rest.
    deck: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class AuditNote:
    """An operator's action on a table, for the audit log (``server.accounts.audit_log``),
    written in the transaction of the change. ``changes``: record the written columns'
    values before and after (else ``before`` and ``after`` as given)."""

    operator_id: int
    operator: str
    action: str  # an ``AuditAction`` value
    reason: str | None = None
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    changes: bool = False


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
