"""What the store keeps of a table's hands and operators' actions, and how its writes fail:
the records the table actor hands over (``server.table.ports.TableStore``) and the store
writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AuditNote",
    "FinishedHand",
    "LiveHandState",
    "StoreUnavailable",
    "TableTakenOver",
]


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
    # The seats dealt in while away at a tournament table (rule 8's tournament variant): the
    # hand killed theirs as it was dealt, and a replay deals it so again.
    absent: tuple[int, ...] = ()
    # A mixed table's hand: its position in the rotation (engine.rotation.Position JSON).
    rotation: dict[str, Any] | None = None


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
    # A mixed table's hand: its position in the rotation (engine.rotation.Position JSON).
    rotation: dict[str, Any] | None = None


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
