"""A table as one seat or a spectator knows it: the one fold of table and hand events.

:class:`TablePicture` is the reducer. It starts from a table (an empty one, a snapshot,
or the engine's :class:`~engine.table.Table` itself) and takes the table's events one by
one (:meth:`TablePicture.apply`): seats taken and left, chips added, sitting out and in,
the waiting list, clocks, and the hand's events, whose picture is
:func:`engine.views.view`. The server's snapshots are a picture of its ``Table``
(:meth:`TablePicture.of_table`, then :meth:`TablePicture.snapshot`); the Python client
folds the snapshot and the events after it with the same class, so it never re-implements
what the table does between hands (settling a hand: chips added meanwhile join the stack,
"sit out next hand" takes effect)::

    >>> from engine.table_events import SeatTaken, SatOut
    >>> picture = TablePicture(2, me="ann")
    >>> picture.apply(SeatTaken(seat=1, player="ann", stack=200))
    >>> picture.apply(SatOut(seat=1, after_hand=False))
    >>> picture.you, picture.seats[1].sitting_out
    (1, True)

Presence (``connected``) and time banks change without events: a picture keeps what its
snapshot (or its ``Table`` reader) said, and the clock's time bank for the seat to act.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.events import (
    HAND_EVENT_TYPES,
    ActionTaken,
    Ante,
    CommonCard,
    Deal,
    DownCards,
    Event,
    HandEnded,
    HandStarted,
    SeatStack,
    StreetDealt,
    decode,
)
from engine.table_events import (
    ChipsAdded,
    Clock,
    DeckCommitted,
    GameAnnounced,
    HandCancelled,
    HandNumber,
    Leaving,
    OperatorClosed,
    OperatorPaused,
    OperatorResumed,
    RotationChanged,
    SatIn,
    SatOut,
    SeatLeft,
    SeatOfferExpired,
    SeatTaken,
    TablePaused,
    TableRestarted,
    TableSettingsChanged,
    TableUnpaused,
    TimeBank,
    TimeCollected,
    WaitingList,
)
from engine.variants import VARIANTS
from engine.views import HandFold

if TYPE_CHECKING:
    from engine.table import Table

__all__ = ["SeatState", "TablePicture", "picture_events"]


@dataclass(slots=True)
class SeatState:
    """One seat of the table: who sits there and their chips between hands."""

    player: str | None = None
    stack: int = 0
    pending_chips: int = 0  # added during the seat's hand: they join the stack when it ends
    sitting_out: bool = False
    sit_out_next_hand: bool = False
    leaving: bool = False  # leaves when the hand ends
    connected: bool = False
    time_bank: float = 0.0
    removed: str | None = None  # leaving because an operator removed them: why

    def as_dict(self, number: int) -> dict[str, Any]:
        """The seat as a snapshot shows it (``removed`` only when an operator removes them)."""
        if self.player is None:
            return {"seat": number, "player": None}
        seat: dict[str, Any] = {
            "seat": number,
            "player": self.player,
            "stack": self.stack,
            "pending_chips": self.pending_chips,
            "sitting_out": self.sitting_out,
            "sit_out_next_hand": self.sit_out_next_hand,
            "leaving": self.leaving,
            "connected": self.connected,
            "time_bank": self.time_bank,
        }
        if self.removed is not None:
            seat["removed"] = self.removed
        return seat


class TablePicture:
    """The table as ``me`` (a player, or None: a spectator) knows it, folded from events."""

    __slots__ = (
        "seats",
        "me",
        "you",
        "hand_number",
        "hand",
        "dealt",
        "waiting",
        "clock",
        "paused",
        "restarted",
        "operator_pause",
        "closed",
        "rules",
        "committed",
        "game",
        "rotation",
        "_fold",
        "_folded",
    )

    def __init__(self, seat_count: int, me: str | None = None) -> None:
        self.seats: list[SeatState] = [SeatState() for _ in range(seat_count)]
        self.me = me
        self.you: int | None = None  # my seat
        self.hand_number: int | None = None
        self.hand: list[Event] = []  # the events of the hand in progress (or just over)
        self.dealt: int | None = None  # my seat in that hand, if I was dealt in
        self.waiting: list[str] = []
        self.clock: Clock | None = None  # the clock of the seat to act, while it runs
        self.paused = False  # the table waits for its database
        self.restarted = False  # the table was rebuilt: only a fresh snapshot tells it now
        self.operator_pause: str | None = None  # an operator paused the table, for this reason
        self.closed: str | None = None  # an operator closed the table, for this reason
        # The game, stakes and buy-in range as a snapshot shows them (None: not told)
        self.rules: dict[str, Any] | None = None
        # The next hand's commitment, published and not yet dealt: (hand, commitment). A
        # seated client gives that hand a seed (docs/fairness.md), even one that sat down or
        # came back after the commitment was published.
        self.committed: tuple[int, str] | None = None
        # A mixed table: the game of the hand in progress (or the last dealt) and where the
        # rotation stands, as the ``game`` event says it (None: not a mixed table, or not told).
        self.game: dict[str, Any] | None = None
        # A mixed table: its games in turn (each its variant and title), ``unit``, ``hands``
        # and ``from_hand``, as the snapshot's ``rotation`` (its ``game`` apart) or an
        # operator's ``rotation_changed`` says them (None: a table of one game).
        self.rotation: dict[str, Any] | None = None
        # The hand's fold, kept across views: the list of events it folded (``hand``, which
        # only grows until a new hand replaces it) and how far.
        self._fold: HandFold | None = None
        self._folded: list[Event] | None = None

    # ------------------------------------------------------------------ ways in

    @classmethod
    def of_snapshot(cls, snapshot: Mapping[str, Any], me: str | None = None) -> TablePicture:
        """The picture a snapshot (as it travels, or as :meth:`snapshot` made it) shows."""
        picture = cls(len(snapshot["seats"]), me)
        for entry in snapshot["seats"]:
            if entry.get("player") is not None:
                picture.seats[entry["seat"]] = SeatState(
                    entry["player"],
                    entry.get("stack", 0),
                    entry.get("pending_chips", 0),
                    entry.get("sitting_out", False),
                    entry.get("sit_out_next_hand", False),
                    entry.get("leaving", False),
                    entry.get("connected", False),
                    entry.get("time_bank", 0.0),
                    entry.get("removed"),
                )
        picture.you = snapshot.get("you")
        picture.hand_number = snapshot.get("hand_number")
        hand = snapshot.get("hand")
        picture.hand = picture_events(hand) if hand is not None else []
        picture.dealt = hand.get("viewer") if hand is not None else None
        picture.waiting = list(snapshot.get("waiting", ()))
        picture.operator_pause = snapshot.get("operator_pause")
        committed = snapshot.get("deck_committed")
        if committed is not None:
            picture.committed = (committed["hand"], committed["commitment"])
        rotation = snapshot.get("rotation")
        if rotation is not None:
            picture.rotation = {key: value for key, value in rotation.items() if key != "game"}
            if rotation.get("game") is not None:
                picture.game = dict(rotation["game"])
        if "variant" in snapshot:
            picture.rules = {
                "variant": snapshot["variant"],
                "stakes": dict(snapshot.get("stakes") or {}),
                "buy_in": dict(snapshot.get("buy_in") or {}),
            }
        return picture

    @classmethod
    def of_table(
        cls,
        table: Table,
        me: str | None = None,
        *,
        hand_number: int | None = None,
        waiting: Sequence[str] = (),
        presence: Callable[[str], tuple[bool, float]] | None = None,
    ) -> TablePicture:
        """The picture of the engine's table as it stands: what its events folded to.

        ``presence(player)`` says whether the player is connected and their time bank
        (the server's to know; without it: not connected, no time bank)."""
        picture = cls(len(table.seats), me)
        for number, seat in enumerate(table.seats):
            if seat is None:
                continue
            connected, bank = presence(seat.player) if presence is not None else (False, 0.0)
            picture.seats[number] = SeatState(
                seat.player,
                seat.stack,
                seat.pending_chips,
                seat.sitting_out,
                seat.sit_out_next_hand,
                seat.leaving,
                connected,
                bank,
                seat.removed,
            )
            if seat.player == me:
                picture.you = number
        if table.hand is not None:
            picture.hand_number = hand_number
            picture.hand = list(table.hand.events)
            if picture.you is not None and picture.you in table.hand.index_of:
                picture.dealt = picture.you
        picture.waiting = list(waiting)
        return picture

    # ------------------------------------------------------------------ the fold

    def apply(self, event: Event) -> None:
        """Fold one event (a table's or a hand's) into the picture."""
        seats = self.seats
        if type(event) in _HAND_KINDS:
            if isinstance(event, HandStarted):
                self.hand = [event]
                if self.game is not None and self.rules is not None:
                    # A mixed table: each hand has its game, and its stakes (engine.rotation).
                    self.rules["variant"] = event.variant
                    self.rules["stakes"] = {
                        "ante": event.ante,
                        "bring_in": event.bring_in,
                        "small_bet": event.small_bet,
                        "big_bet": event.big_bet,
                        "structure": event.structure,
                    }
                you = self.you
                self.dealt = you if any(you == seat for seat, _ in event.seats) else None
                self.clock = None
                return
            self.hand.append(event)
            if isinstance(event, ActionTaken):
                self.clock = None
            elif isinstance(event, HandEnded):
                self.clock = None
                self._settle(dict(event.stacks))
        elif isinstance(event, SeatTaken):
            seats[event.seat] = SeatState(event.player, event.stack, connected=True)
            if event.player == self.me:
                self.you = event.seat
            if event.player in self.waiting:  # a waiting player took a seat: off the list
                self.waiting.remove(event.player)
        elif isinstance(event, SeatLeft):
            seats[event.seat] = SeatState()
            if event.player == self.me:
                self.you = None
        elif isinstance(event, SatOut):
            if event.after_hand:
                seats[event.seat].sit_out_next_hand = True
            else:
                seats[event.seat].sitting_out = True
        elif isinstance(event, SatIn):
            seats[event.seat].sitting_out = seats[event.seat].sit_out_next_hand = False
        elif isinstance(event, Leaving):
            seats[event.seat].leaving = True
            if event.removed is not None:
                seats[event.seat].removed = event.removed
        elif isinstance(event, ChipsAdded):
            if event.after_hand:
                seats[event.seat].pending_chips += event.amount
            else:
                seats[event.seat].stack += event.amount
        elif isinstance(event, TimeCollected):
            seats[event.seat].stack = event.stack
        elif isinstance(event, HandNumber):
            self.hand_number = event.hand
            self.hand, self.dealt = [], None
            if self.committed is not None and self.committed[0] <= event.hand:
                self.committed = None  # dealt: the seeds for it are in
        elif isinstance(event, DeckCommitted):
            self.committed = (event.hand, event.commitment)
        elif isinstance(event, GameAnnounced):
            self.game = event.encode()
            if self.rules is not None:
                self.rules["variant"] = event.variant
        elif isinstance(event, RotationChanged):
            self.rotation = {
                "games": [{"variant": v, "title": VARIANTS[v].title} for v in event.games],
                "unit": event.unit,
                "hands": event.hands,
                "from_hand": event.from_hand,
            }
        elif isinstance(event, Clock):
            self.clock = event
            seats[event.seat].time_bank = event.time_bank
        elif isinstance(event, TimeBank):
            seats[event.seat].time_bank = event.time_bank
        elif isinstance(event, HandCancelled):
            self.hand, self.dealt = [], None
            self.clock = None
            self._settle(dict(event.stacks or ()))
        elif isinstance(event, WaitingList):
            self.waiting = list(event.waiting)
        elif isinstance(event, SeatOfferExpired):
            if event.player in self.waiting:  # off the list; the seat goes to the next
                self.waiting.remove(event.player)
        elif isinstance(event, TablePaused):
            self.paused = True
        elif isinstance(event, TableUnpaused):
            self.paused = False
        elif isinstance(event, TableRestarted):
            self.restarted = True
        elif isinstance(event, OperatorPaused):
            self.operator_pause = event.reason
        elif isinstance(event, OperatorResumed):
            self.operator_pause = None
        elif isinstance(event, OperatorClosed):
            if not event.after_hand:
                self.closed = event.reason
        elif isinstance(event, TableSettingsChanged):
            count = event.seats  # only empty seats go (the table refuses otherwise)
            self.seats = self.seats[:count] + [SeatState() for _ in range(count - len(self.seats))]
            self.rules = {
                "variant": event.variant,
                "stakes": dict(event.stakes),
                "buy_in": dict(event.buy_in),
            }
        # seat_offered, chat, table_resumed: nothing a picture keeps

    def _settle(self, stacks: Mapping[int, int]) -> None:
        """A hand is over: its stacks, chips added meanwhile, sit-outs asked for (as
        ``engine.table.Table`` settles it; leavers and the broke follow as events)."""
        for number, seat in enumerate(self.seats):
            if seat.player is None:
                continue
            if number in stacks:
                seat.stack = stacks[number]
            seat.stack += seat.pending_chips
            seat.pending_chips = 0
            if seat.sit_out_next_hand:
                seat.sitting_out, seat.sit_out_next_hand = True, False

    # ------------------------------------------------------------------ ways out

    def hand_view(self, *, pots: bool = True, detached: bool = True) -> dict[str, Any] | None:
        """The hand as the seat I was dealt in it may see it (``engine.views.view``; not
        dealt in: as a spectator), or None; ``pots`` and ``detached`` as
        :meth:`engine.views.HandFold.view` takes them. Folded one event at a time: the events
        added since the last call only."""
        hand = self.hand
        if not hand:
            return None
        fold = self._fold
        if fold is None or self._folded is not hand or fold.count > len(hand):
            fold, self._folded = HandFold(), hand
            self._fold = fold
        if fold.count < len(hand):
            fold.feed(hand[fold.count :])
        return fold.view(self.dealt, pots=pots, detached=detached)

    def snapshot(self) -> dict[str, Any]:
        """The table part of a snapshot: seats, ``you``, the hand (its number and picture),
        the waiting list; the server adds the rest (its ``seq``, the stakes, the clock)."""
        hand = self.hand_view()
        return {
            "seats": [seat.as_dict(number) for number, seat in enumerate(self.seats)],
            "you": self.you,
            "hand_number": self.hand_number if hand is not None else None,
            "hand": hand,
            "waiting": list(self.waiting),
        }


_HAND_KINDS = frozenset(HAND_EVENT_TYPES)


def picture_events(picture: Mapping[str, Any]) -> list[Event]:
    """Events that ``engine.views.view(events, picture["viewer"])`` folds into ``picture``.

    A snapshot's hand (seat numbers as JSON strings or ints) comes back as: the hand's
    start, each seat's chips in as one ante, the cards as one deal, the street bets and
    folds as zero-chip actions, the viewer's own down cards, the announcements, showdowns
    and awards so far, the turn, and the end. tests/clients checks the round trip on every
    prefix of random hands of every variant.
    """
    seats = {int(k): v for k, v in picture["seats"].items()}
    viewer = picture.get("viewer")
    won: dict[int, int] = {}
    for award in picture["awards"]:
        won[award["seat"]] = won.get(award["seat"], 0) + award["amount"]
    started = tuple(
        SeatStack(n, s["stack"] + s["in_pot"] - won.get(n, 0)) for n, s in seats.items()
    )
    events: list[Event] = [HandStarted(picture["variant"], "", 0, 0, 0, 0, started)]
    for n, s in seats.items():
        events.append(Ante(n, s["in_pot"], s["all_in"]))
    common: Sequence[str] = picture["common"]
    street = picture["street"]
    if street is not None:
        deals = tuple(Deal(n, tuple(s["up"]), s["down_count"]) for n, s in seats.items())
        events.append(StreetDealt(street, deals))
        for card in common:
            events.append(CommonCard(street, card))
    for n, s in seats.items():
        if s["bet"] or s["folded"]:
            kind = "fold" if s["folded"] else "call"
            events.append(ActionTaken(n, kind, 0, s["bet"], s["stack"]))
    if viewer is not None and viewer in seats and seats[viewer]["down"]:
        events.append(DownCards(viewer, street, tuple(seats[viewer]["down"])))
    for announcement in picture["announcements"]:
        events.append(decode("announcement", announcement))
    for n, s in seats.items():
        if s["shown"]:
            data = {"seat": n, "cards": list(s["up"]) + list(s["down"]), **s.get("hand", {})}
            events.append(decode("showdown", data))
    for award in picture["awards"]:
        events.append(decode("pot_awarded", award))
    if picture["legal"] is not None:
        events.append(decode("turn", picture["legal"]))
    if picture["over"]:
        events.append(HandEnded(tuple(SeatStack(n, s["stack"]) for n, s in seats.items())))
    return events
