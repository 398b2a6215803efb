"""The table's event records: seats, stacks, sitting out, the waiting list, clocks, chat.

Hand events (:mod:`engine.events`) say what happens in a hand; these say what happens at
the table around it. Each is a frozen record like the hand's, for everyone to see
(``to`` is None), with the same encoding to protocol v1's ``data``::

    >>> SatOut(seat=1, after_hand=False, busted=True).data
    {'seat': 1, 'after_hand': False, 'busted': True}
    >>> HandCancelled(hand=3, reason="internal_error", stacks=((0, 200),)).data
    {'hand': 3, 'reason': 'internal_error', 'stacks': {'0': 200}}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from engine.event_base import Event, event_type

__all__ = [
    "TABLE_EVENT_TYPES",
    "ChatSaid",
    "ChipsAdded",
    "OperatorClosed",
    "OperatorPaused",
    "OperatorResumed",
    "RotationChanged",
    "Clock",
    "DeckCommitted",
    "GameAnnounced",
    "HandCancelled",
    "HandNumber",
    "Leaving",
    "SatIn",
    "SatOut",
    "SeatLeft",
    "SeatOfferExpired",
    "SeatOffered",
    "SeatTaken",
    "TablePaused",
    "TableRestarted",
    "TableResumed",
    "TableSettingsChanged",
    "TableUnpaused",
    "TimeBank",
    "TimeCollected",
    "WaitingList",
    "chips_by_seat",
]


def chips_by_seat(stacks: Iterable[tuple[int, int]]) -> dict[str, int]:
    """(seat, chips) pairs as the wire writes them: seat numbers as JSON keys."""
    return {str(seat): chips for seat, chips in stacks}


def _pairs(stacks: Mapping[str, int] | None) -> tuple[tuple[int, int], ...] | None:
    if stacks is None:
        return None
    return tuple((int(seat), chips) for seat, chips in stacks.items())


class _SeatTaken(NamedTuple):
    seat: int
    player: str
    stack: int


@event_type
class SeatTaken(Event, _SeatTaken):
    """A player sat down with ``stack`` chips."""

    __slots__ = ()
    kind = "seat_taken"


class _ChipsAdded(NamedTuple):
    seat: int
    amount: int
    after_hand: bool  # true: they join the stack when the seat's hand ends


@event_type
class ChipsAdded(Event, _ChipsAdded):
    __slots__ = ()
    kind = "chips_added"


class _SatOut(NamedTuple):
    seat: int
    after_hand: bool  # true: from the end of the seat's hand
    busted: bool = False  # the table sat a broke player out


@event_type
class SatOut(Event, _SatOut):
    __slots__ = ()
    kind = "sat_out"

    def encode(self) -> dict[str, Any]:
        seat, after_hand, busted = self
        if busted:
            return {"seat": seat, "after_hand": after_hand, "busted": True}
        return {"seat": seat, "after_hand": after_hand}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> SatOut:
        return cls(data["seat"], bool(data.get("after_hand")), bool(data.get("busted", False)))


class _SatIn(NamedTuple):
    seat: int


@event_type
class SatIn(Event, _SatIn):
    __slots__ = ()
    kind = "sat_in"


class _Leaving(NamedTuple):
    seat: int
    removed: str | None = None  # an operator removes the player: why ("kicked", "suspended")


@event_type
class Leaving(Event, _Leaving):
    """The seat leaves when its hand ends."""

    __slots__ = ()
    kind = "leaving"

    def encode(self) -> dict[str, Any]:
        seat, removed = self
        return {"seat": seat} if removed is None else {"seat": seat, "removed": removed}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Leaving:
        return cls(data["seat"], data.get("removed"))


class _SeatLeft(NamedTuple):
    seat: int
    player: str
    cashed_out: int
    removed: str | None = None  # an operator removed the player: why


@event_type
class SeatLeft(Event, _SeatLeft):
    __slots__ = ()
    kind = "seat_left"

    def encode(self) -> dict[str, Any]:
        seat, player, cashed_out, removed = self
        data: dict[str, Any] = {"seat": seat, "player": player, "cashed_out": cashed_out}
        if removed is not None:
            data["removed"] = removed
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> SeatLeft:
        return cls(data["seat"], data["player"], data["cashed_out"], data.get("removed"))


class _TimeCollected(NamedTuple):
    seat: int
    amount: int  # the time fee, taken from the stack
    stack: int  # the stack after it


@event_type
class TimeCollected(Event, _TimeCollected):
    """The house collected its time fee from a seat (a table setting), before a hand."""

    __slots__ = ()
    kind = "time_collected"


class _WaitingList(NamedTuple):
    waiting: tuple[str, ...]  # first first


@event_type
class WaitingList(Event, _WaitingList):
    __slots__ = ()
    kind = "waiting_list"


class _SeatOffered(NamedTuple):
    player: str
    seat: int
    seconds: float  # the seat is held that long for that player


@event_type
class SeatOffered(Event, _SeatOffered):
    __slots__ = ()
    kind = "seat_offered"


class _SeatOfferExpired(NamedTuple):
    player: str


@event_type
class SeatOfferExpired(Event, _SeatOfferExpired):
    """The player did not take the offered seat: off the list, the seat to the next."""

    __slots__ = ()
    kind = "seat_offer_expired"


class _ChatSaid(NamedTuple):
    player: str
    text: str


@event_type
class ChatSaid(Event, _ChatSaid):
    __slots__ = ()
    kind = "chat"


class _HandNumber(NamedTuple):
    hand: int


@event_type
class HandNumber(Event, _HandNumber):
    """A hand is about to be dealt: its number at this table."""

    __slots__ = ()
    kind = "hand_number"


class _GameAnnounced(NamedTuple):
    hand: int
    variant: str
    title: str
    game_hand: int  # this hand's count in the game's turn, from 1
    game_hands: int  # how many hands the turn lasts (0: until the level ends)
    hands_left: int | None  # hands of this game after this one (None: until the level ends)
    next_variant: str  # the game after this turn
    next_title: str
    text: str  # the dealer's words: "Razz, hand 3 of 8" (the next game on a turn's last hand)


@event_type
class GameAnnounced(Event, _GameAnnounced):
    """A mixed table's hand is about to be dealt: its game and where the rotation stands
    (engine.rotation). Told after ``hand_number``, at mixed tables only."""

    __slots__ = ()
    kind = "game"


class _RotationChanged(NamedTuple):
    games: tuple[str, ...]  # the variants in turn (empty: the table plays its own rules alone)
    unit: str | None  # hands, orbit or level (None: no rotation)
    hands: int | None  # unit hands: hands a game lasts
    from_hand: int  # the first hand dealt under it


@event_type
class RotationChanged(Event, _RotationChanged):
    """An operator changed a mixed table's rotation: it is dealt from hand ``from_hand`` on
    (the next switch, or the next hand when the table was idle)."""

    __slots__ = ()
    kind = "rotation_changed"


class _DeckCommitted(NamedTuple):
    hand: int
    commitment: str  # the root of the committed deck (engine.fair2); stud-deck/1: SHA-256 of S


@event_type
class DeckCommitted(Event, _DeckCommitted):
    """The commitment to the server seed of the table's next hand: client seeds for that hand
    are taken from now until it is dealt (docs/fairness.md)."""

    __slots__ = ()
    kind = "deck_committed"


class _Clock(NamedTuple):
    seat: int
    action_clock: float  # seconds
    time_bank: float  # seconds, after the action clock


@event_type
class Clock(Event, _Clock):
    """The seat to act is on the clock."""

    __slots__ = ()
    kind = "clock"


class _TimeBank(NamedTuple):
    seat: int
    time_bank: float  # seconds left


@event_type
class TimeBank(Event, _TimeBank):
    """The seat's time bank changed: spent on a turn, or given some back after a hand."""

    __slots__ = ()
    kind = "time_bank"


class _HandCancelled(NamedTuple):
    hand: int | None
    reason: str
    stacks: tuple[tuple[int, int], ...] | None = None  # (seat, chips): every chip back
    detail: str | None = None  # why a stored hand could not be resumed (event logs)
    server_seed: str | None = None  # a provably fair deck's seed, revealed (engine.fair)


@event_type
class HandCancelled(Event, _HandCancelled):
    """The hand is void, every chip back. In a stored event log it carries only the reason
    (and a ``detail``); on the wire also the hand and the stacks. A hand dealt from a
    provably fair deck reveals its server seed here, as ``hand_ended`` would have."""

    __slots__ = ()
    kind = "hand_cancelled"

    def encode(self) -> dict[str, Any]:
        hand, reason, stacks, detail, server_seed = self
        data: dict[str, Any] = {}
        if hand is not None:
            data["hand"] = hand
        data["reason"] = reason
        if detail is not None:
            data["detail"] = detail
        if stacks is not None:
            data["stacks"] = chips_by_seat(stacks)
        if server_seed is not None:
            data["server_seed"] = server_seed
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> HandCancelled:
        stacks = _pairs(data.get("stacks"))
        return cls(
            data.get("hand"), data["reason"], stacks, data.get("detail"), data.get("server_seed")
        )


class _TableRestarted(NamedTuple):
    cancelled_hand: int | None
    stacks: tuple[tuple[int, int], ...]  # (seat, chips)


@event_type
class TableRestarted(Event, _TableRestarted):
    """The table's actor was rebuilt (its hand in progress, if any, cancelled): resync."""

    __slots__ = ()
    kind = "table_restarted"

    def encode(self) -> dict[str, Any]:
        return {"cancelled_hand": self[0], "stacks": chips_by_seat(self[1])}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> TableRestarted:
        return cls(data.get("cancelled_hand"), _pairs(data.get("stacks", {})) or ())


class _TableResumed(NamedTuple):
    hand: int | None
    node: str
    resumed: bool


@event_type
class TableResumed(Event, _TableResumed):
    """Another node runs the table now; ``resumed``: its hand in progress goes on."""

    __slots__ = ()
    kind = "table_resumed"


class _TablePaused(NamedTuple):
    reason: str


@event_type
class TablePaused(Event, _TablePaused):
    """The table waits for its database; no clock runs."""

    __slots__ = ()
    kind = "table_paused"


class _TableUnpaused(NamedTuple):
    seconds: float


@event_type
class TableUnpaused(Event, _TableUnpaused):
    __slots__ = ()
    kind = "table_unpaused"


class _OperatorPaused(NamedTuple):
    reason: str
    after_hand: bool  # true: the hand in progress finishes first


@event_type
class OperatorPaused(Event, _OperatorPaused):
    """An operator paused the table: no new hand is dealt until they resume it. (Not
    ``table_paused``, which is the database being away.)"""

    __slots__ = ()
    kind = "operator_paused"


class _OperatorResumed(NamedTuple):
    reason: str


@event_type
class OperatorResumed(Event, _OperatorResumed):
    """The operator's pause is over: hands are dealt again."""

    __slots__ = ()
    kind = "operator_resumed"


class _OperatorClosed(NamedTuple):
    reason: str
    after_hand: bool  # true: closes when the hand in progress ends; false: closed now


@event_type
class OperatorClosed(Event, _OperatorClosed):
    """An operator closed the table: everyone is cashed out (``seat_left`` each), for good."""

    __slots__ = ()
    kind = "operator_closed"


class _TableSettingsChanged(NamedTuple):
    seats: int
    variant: str
    stakes: Mapping[str, Any]  # ante, bring_in, small_bet, big_bet, structure (as a snapshot)
    buy_in: Mapping[str, int]  # min, max
    action_clock: float
    time_bank: float
    config: Mapping[str, Any]  # every rule, as GET /admin/tables shows it


@event_type
class TableSettingsChanged(Event, _TableSettingsChanged):
    """The table's settings as they are from now on (an operator changed them; a hand in
    progress finished under the old ones). The seat count may have changed."""

    __slots__ = ()
    kind = "table_settings"

    def encode(self) -> dict[str, Any]:
        seats, variant, stakes, buy_in, action_clock, time_bank, config = self
        return {
            "seats": seats,
            "variant": variant,
            "stakes": dict(stakes),
            "buy_in": dict(buy_in),
            "action_clock": action_clock,
            "time_bank": time_bank,
            "config": dict(config),
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> TableSettingsChanged:
        return cls(
            data["seats"],
            data["variant"],
            dict(data["stakes"]),
            dict(data["buy_in"]),
            data["action_clock"],
            data["time_bank"],
            dict(data["config"]),
        )


TABLE_EVENT_TYPES = (
    SeatTaken,
    ChipsAdded,
    TimeCollected,
    SatOut,
    SatIn,
    Leaving,
    SeatLeft,
    WaitingList,
    SeatOffered,
    SeatOfferExpired,
    ChatSaid,
    HandNumber,
    DeckCommitted,
    Clock,
    TimeBank,
    HandCancelled,
    TableRestarted,
    TableResumed,
    TablePaused,
    TableUnpaused,
    OperatorPaused,
    OperatorResumed,
    OperatorClosed,
    TableSettingsChanged,
    GameAnnounced,
    RotationChanged,
)
