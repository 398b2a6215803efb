"""What comes out of a hand and of a table: events (what goes in is :mod:`engine.actions`).

Every event is a small frozen record of its own type (a tuple underneath: the engine makes
thousands per second), and names its audience: ``to is None`` means every seat and every
spectator may see it; ``to == seat`` means only that seat (its own down cards). The record
types of the table (seats, the waiting list, clocks) are in :mod:`engine.table_events`;
:data:`EVENT_TYPES` lists every kind of both.

One encoding to the wire and one decoding from it: ``event.data`` is the JSON-ready
``data`` of protocol v1 (cards written as text, ``"As"``), ``event.record()`` the
``{"kind", "data", "to"}`` row of a stored event log, and :func:`decode` (or
:func:`from_record`) makes the record back from either::

    >>> event = Ante(seat=0, amount=1, all_in=False)
    >>> event.kind, event.to, event.data
    ('ante', None, {'seat': 0, 'amount': 1, 'all_in': False})
    >>> decode("ante", {"seat": 0, "amount": 1, "all_in": False}) == event
    True
    >>> DownCards(seat=1, street="third", cards=("As", "Ks")).to
    1

Two records are equal when they are of the same type with the same fields. A kind this
code does not know decodes to :class:`UnknownEvent`, which encodes back to what it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

# The table's record types (engine.table_events) register their kinds too.
import engine.table_events  # noqa: F401
from engine.actions import LegalActions, legal_data
from engine.cards import Opening
from engine.event_base import EVENT_TYPES, Event, UnknownEvent, event_type, new_event

_new = tuple.__new__


def decode(kind: str, data: Mapping[str, Any], to: int | None = None) -> Event:
    """The record of a wire event (or a stored one): ``kind`` and ``data`` as they travel.

    ``to`` is only kept for kinds this code does not know; a known record says its own."""
    cls = EVENT_TYPES.get(kind)
    if cls is None:
        return UnknownEvent(kind, data, to)
    return cls.from_data(data)


def from_record(row: Mapping[str, Any]) -> Event:
    """The record of a stored event log's row ``{"kind", "data", "to"}``."""
    return decode(row["kind"], row["data"], row.get("to"))


def decode_all(rows: Iterable[Mapping[str, Any]]) -> list[Event]:
    return [from_record(row) for row in rows]


# --------------------------------------------------------------------------- hand events


class SeatStack(NamedTuple):
    """A seat and its chips (a hand's start and end)."""

    seat: int
    stack: int


def _stacks(entries: Iterable[Mapping[str, Any]]) -> tuple[SeatStack, ...]:
    return tuple(_new(SeatStack, (e["seat"], e["stack"])) for e in entries)


class _HandStarted(NamedTuple):
    variant: str
    structure: str
    ante: int
    bring_in: int
    small_bet: int
    big_bet: int
    seats: tuple[SeatStack, ...]
    commitment: str | None = None  # SHA-256 of the server seed (engine.fair), hex
    client_seeds: tuple[tuple[int, str], ...] = ()  # (seat, seed) that went into the deck
    method: str | None = None  # how the deck was made; None: stud-deck/1 (or no commitment)
    # Seats dealt in while away, their hands killed once the starting hands are dealt (rule
    # 8's tournament variant, TableConfig.absent_hands); written only when there are some.
    absent: tuple[int, ...] = ()


@event_type
class HandStarted(Event, _HandStarted):
    """A hand begins: its game and stakes, and each dealt seat's chips; for a provably fair
    deck (engine.fair), the commitment to its server seed and the client seeds it used; the
    seats dealt in while away (rule 8's tournament variant), when there are some."""

    __slots__ = ()
    kind = "hand_started"

    def encode(self) -> dict[str, Any]:
        variant, structure, ante, bring_in, small_bet, big_bet, seats, committed, seeds, method = (
            self[:10]
        )
        data: dict[str, Any] = {
            "variant": variant,
            "structure": structure,
            "ante": ante,
            "bring_in": bring_in,
            "small_bet": small_bet,
            "big_bet": big_bet,
            "seats": [{"seat": seat, "stack": stack} for seat, stack in seats],
        }
        if committed is not None:
            data["commitment"] = committed
            data["client_seeds"] = [{"seat": seat, "seed": seed} for seat, seed in seeds]
            if method is not None:
                data["method"] = method
        if self.absent:
            data["absent"] = list(self.absent)
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> HandStarted:
        return cls(
            data["variant"],
            data.get("structure", "fixed_limit"),
            data.get("ante", 0),
            data.get("bring_in", 0),
            data.get("small_bet", 0),
            data.get("big_bet", 0),
            _stacks(data["seats"]),
            data.get("commitment"),
            tuple((e["seat"], e["seed"]) for e in data.get("client_seeds", ())),
            data.get("method"),
            tuple(data.get("absent", ())),
        )


class _Ante(NamedTuple):
    seat: int
    amount: int
    all_in: bool


@event_type
class Ante(Event, _Ante):
    __slots__ = ()
    kind = "ante"


class _DownCards(NamedTuple):
    seat: int
    street: str
    cards: tuple[str, ...]


@event_type
class DownCards(Event, _DownCards):
    """A seat's own down cards of a street: for that seat's eyes only."""

    __slots__ = ()
    kind = "down_cards"

    @property
    def to(self) -> int | None:
        return self.seat


class _CardsOpened(NamedTuple):
    street: str
    cards: tuple[Opening, ...]
    seat: int | None = None  # whose own down cards these are; None: cards everyone saw


@event_type
class CardsOpened(Event, _CardsOpened):
    """Cards of a ``stud-deck/2`` deal (engine.fair2) opened against the commitment, sent with
    the cards to whoever saw them: a seat its own down cards, everyone the upcards and the
    cards shown at showdown. A card never shown is never opened."""

    __slots__ = ()
    kind = "cards_opened"

    @property
    def to(self) -> int | None:
        return self.seat

    def encode(self) -> dict[str, Any]:
        street, cards, seat = self
        data: dict[str, Any] = {"street": street, "cards": [c.encode() for c in cards]}
        if seat is not None:
            data["seat"] = seat
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> CardsOpened:
        cards = tuple(Opening.decode(c) for c in data["cards"])
        return cls(data["street"], cards, data.get("seat"))


class Deal(NamedTuple):
    """What one seat is dealt on a street, as everyone sees it."""

    seat: int
    up: tuple[str, ...]
    down: int  # how many down cards
    dead: bool = False  # dealt to a folded seat (SCS 12)


class _StreetDealt(NamedTuple):
    street: str
    deals: tuple[Deal, ...]


@event_type
class StreetDealt(Event, _StreetDealt):
    __slots__ = ()
    kind = "street_dealt"

    def encode(self) -> dict[str, Any]:
        deals: list[dict[str, Any]] = []
        for seat, up, down, dead in self[1]:
            entry: dict[str, Any] = {"seat": seat, "up": list(up), "down": down}
            if dead:
                entry["dead"] = True
            deals.append(entry)
        return {"street": self[0], "deals": deals}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> StreetDealt:
        deals = tuple(
            Deal(d["seat"], tuple(d["up"]), d["down"], bool(d.get("dead", False)))
            for d in data["deals"]
        )
        return cls(data["street"], deals)


class _CommonCard(NamedTuple):
    street: str
    card: str


@event_type
class CommonCard(Event, _CommonCard):
    """A card dealt face up to the middle for all (the deck ran short)."""

    __slots__ = ()
    kind = "common_card"


class _DeckProcedure(NamedTuple):
    street: str
    procedure: str


@event_type
class DeckProcedure(Event, _DeckProcedure):
    __slots__ = ()
    kind = "deck_procedure"


class _Announcement(NamedTuple):
    topic: str  # the wire's "kind": bring_in, pair, possible_flush, ...
    seat: int
    text: str
    card: str | None = None


@event_type
class Announcement(Event, _Announcement):
    """The dealer's words: who brings it in, who opens, pairs and possibles on board."""

    __slots__ = ()
    kind = "announcement"

    def encode(self) -> dict[str, Any]:
        topic, seat, text, card = self
        if card is None:
            return {"kind": topic, "seat": seat, "text": text}
        return {"kind": topic, "seat": seat, "card": card, "text": text}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Announcement:
        return cls(data["kind"], data["seat"], data["text"], data.get("card"))


class _Turn(NamedTuple):
    seat: int
    kinds: tuple[str, ...]
    call: int
    bring_in: int
    wager: str | None
    min_to: int
    max_to: int
    to_choices: tuple[int, ...]


@event_type
class Turn(Event, _Turn):
    """The seat to act and its legal actions: the fields of :class:`LegalActions`."""

    __slots__ = ()
    kind = "turn"

    @property
    def legal(self) -> LegalActions:
        return _new(LegalActions, self)

    def encode(self) -> dict[str, Any]:
        return legal_data(self)

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Turn:
        return cls(
            data["seat"],
            tuple(data.get("kinds", ())),
            data.get("call", 0),
            data.get("bring_in", 0),
            data.get("wager"),
            data.get("min_to", 0),
            data.get("max_to", 0),
            tuple(data.get("to_choices", ())),
        )


class _ActionTaken(NamedTuple):
    seat: int
    action: str
    amount: int | None  # chips put in (none on a check or a fold)
    total: int  # the seat's street total after it (the wire's "to")
    stack: int
    all_in: bool = False
    timeout: bool = False  # the table acted for the seat, its clock out
    dead_seat: bool = False  # folded unfaced: still dealt to (SCS 12)
    # The table acted for a player gone from the hand (sitting out, leaving) when their turn
    # came: it was played at once, and no turn was announced for it (:func:`announced`).
    absent: bool = False


@event_type
class ActionTaken(Event, _ActionTaken):
    """A seat acted: ``action`` is the kind, ``total`` its street total after it."""

    __slots__ = ()
    kind = "action"

    def encode(self) -> dict[str, Any]:
        seat, action, amount, to, stack, all_in, timeout, dead_seat, absent = self
        data: dict[str, Any] = {"seat": seat, "action": action}
        if timeout:
            data["timeout"] = True
        if absent:
            data["absent"] = True
        if dead_seat:
            data["dead_seat"] = True
        if amount is not None:
            data["amount"] = amount
        data["to"] = to
        data["stack"] = stack
        if all_in:
            data["all_in"] = True
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> ActionTaken:
        return cls(
            data["seat"],
            data["action"],
            data.get("amount"),
            data.get("to", 0),
            data.get("stack", 0),
            bool(data.get("all_in", False)),
            bool(data.get("timeout", False)),
            bool(data.get("dead_seat", False)),
            bool(data.get("absent", False)),
        )


class _UncalledReturned(NamedTuple):
    seat: int
    amount: int


@event_type
class UncalledReturned(Event, _UncalledReturned):
    __slots__ = ()
    kind = "uncalled_returned"


class _Showdown(NamedTuple):
    seat: int
    cards: tuple[str, ...]
    high: str | None
    low: str | None
    judged: tuple[str, ...]  # which of "high" and "low" the hand is shown for


@event_type
class Showdown(Event, _Showdown):
    """A hand shown, with the words for its value (None: it cannot be valued)."""

    __slots__ = ()
    kind = "showdown"

    def encode(self) -> dict[str, Any]:
        seat, cards, high, low, judged = self
        data: dict[str, Any] = {"seat": seat, "cards": list(cards)}
        for half in judged:
            data[half] = high if half == "high" else low
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Showdown:
        judged = tuple(half for half in ("high", "low") if half in data)
        return cls(data["seat"], tuple(data["cards"]), data.get("high"), data.get("low"), judged)


class _Muck(NamedTuple):
    seat: int


@event_type
class Muck(Event, _Muck):
    __slots__ = ()
    kind = "muck"


class _PotAwarded(NamedTuple):
    seat: int
    pot: int
    amount: int
    half: str
    odd_chips: tuple[str, ...] = ()


@event_type
class PotAwarded(Event, _PotAwarded):
    __slots__ = ()
    kind = "pot_awarded"

    def encode(self) -> dict[str, Any]:
        seat, pot, amount, half, odd_chips = self
        data: dict[str, Any] = {"seat": seat, "pot": pot, "amount": amount, "half": half}
        if odd_chips:
            data["odd_chips"] = list(odd_chips)
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> PotAwarded:
        odd = tuple(data.get("odd_chips", ()))
        return cls(data["seat"], data["pot"], data["amount"], data["half"], odd)


class _RakeTaken(NamedTuple):
    amount: int  # every chip raked from the hand
    pots: tuple[int, ...]  # the chips raked from each pot, main pot first


@event_type
class RakeTaken(Event, _RakeTaken):
    """The house took its rake from the pots before they were split (a table setting)."""

    __slots__ = ()
    kind = "rake"


class _HandEnded(NamedTuple):
    stacks: tuple[SeatStack, ...]
    server_seed: str | None = None  # a provably fair deck's seed, revealed (hex)


@event_type
class HandEnded(Event, _HandEnded):
    """The hand is over: each seat's chips; for a provably fair deck, its server seed."""

    __slots__ = ()
    kind = "hand_ended"

    def encode(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "stacks": [{"seat": seat, "stack": stack} for seat, stack in self[0]]
        }
        if self[1] is not None:
            data["server_seed"] = self[1]
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> HandEnded:
        return cls(_stacks(data["stacks"]), data.get("server_seed"))


HAND_EVENT_TYPES = tuple(cls for cls in EVENT_TYPES.values() if cls.__module__ == __name__)
"""The record types a :class:`~engine.hand.Hand` emits."""
HAND_EVENTS = frozenset(cls.kind for cls in HAND_EVENT_TYPES)


def announced(events: Iterable[Event]) -> list[Event]:
    """The events as they are told: without the turn of a seat the table played at once for
    a player gone from the hand (the turn answered by an ``absent`` action). No one was
    asked to act, so no one is told a turn: the table, the hand's record, its replay and
    a verifier's all leave it out.

    >>> from engine.actions import LegalActions
    >>> turn = new_event(Turn, LegalActions(2, ("fold", "call"), 5, 2, "raise", 10, 10, (10,)))
    >>> fold = ActionTaken(2, "fold", None, 0, 95, absent=True)
    >>> [e.kind for e in announced([turn, fold])], [e.kind for e in announced([turn])]
    (['action'], ['turn'])
    """
    told: list[Event] = []
    turn = -1  # where in ``told`` the turn not yet answered is
    for event in events:
        cls = type(event)
        if cls is Turn:
            turn = len(told)
        elif cls is ActionTaken:
            if event.absent and turn >= 0 and told[turn].seat == event.seat:  # type: ignore[attr-defined]
                del told[turn]
            turn = -1
        told.append(event)
    return told


__all__ = [
    "EVENT_TYPES",
    "HAND_EVENTS",
    "HAND_EVENT_TYPES",
    "ActionTaken",
    "Announcement",
    "Ante",
    "CardsOpened",
    "CommonCard",
    "Deal",
    "DeckProcedure",
    "DownCards",
    "Event",
    "HandEnded",
    "HandStarted",
    "Muck",
    "PotAwarded",
    "RakeTaken",
    "SeatStack",
    "Showdown",
    "StreetDealt",
    "Turn",
    "UncalledReturned",
    "UnknownEvent",
    "announced",
    "decode",
    "decode_all",
    "event_type",
    "from_record",
    "new_event",
]
