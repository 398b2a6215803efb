"""What one seat, or a spectator, can know of a hand: a pure fold over its events.

The server never filters state by hand: it sends each connection the events
visible to it, and this function turns them into a table picture. Down cards
of other seats appear only once a ``showdown`` event shows them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.events import (
    ActionTaken,
    Announcement,
    Ante,
    CommonCard,
    DownCards,
    Event,
    HandEnded,
    HandStarted,
    PotAwarded,
    Showdown,
    StreetDealt,
    Turn,
    UncalledReturned,
)
from engine.pots import pots_in_play


def view(events: Iterable[Event], seat: int | None = None) -> dict[str, Any]:
    """The picture of the hand that ``seat`` (None: a spectator) is entitled to."""
    return views(events, (seat,))[seat]


def views(
    events: Iterable[Event], viewers: Iterable[int | None]
) -> dict[int | None, dict[str, Any]]:
    """Several viewers' pictures at once: the public events are folded only once."""
    fold = HandFold()
    fold.feed(events)
    own = fold.own
    public = fold.public()
    pictures: dict[int | None, dict[str, Any]] = {}
    for viewer in viewers:
        picture = dict(public)
        picture["viewer"] = viewer
        if viewer is not None and viewer in public["seats"]:
            seats = dict(public["seats"])
            mine = dict(seats[viewer])
            mine["down"] = own.get(viewer, [])
            seats[viewer] = mine
            picture["seats"] = seats
        pictures[viewer] = picture
    return pictures


class HandFold:
    """The public fold of a hand, kept as its events come: a picture after each new event
    costs one step of the fold, not the whole hand again (a client's view of its table).
    ``own`` collects each seat's own down cards.

    The picture's scalars live in local variables while events are folded: a hand folds some
    thirty events, most of them turns and actions, so each step is kept to a few lookups
    (the record's type, then its fields by unpacking).
    """

    __slots__ = (
        "count",
        "own",
        "seats",
        "variant",
        "street",
        "turn",
        "pot",
        "common",
        "announcements",
        "awards",
        "over",
    )

    def __init__(self) -> None:
        self.count = 0  # events folded
        self.own: dict[int, list[str]] = {}
        self.seats: dict[int, dict[str, Any]] = {}
        self.variant: str | None = None
        self.street: str | None = None
        self.turn: Turn | None = None
        self.pot = 0
        self.common: list[str] = []
        self.announcements: list[Announcement] = []
        self.awards: list[PotAwarded] = []
        self.over = False

    def feed(self, events: Iterable[Event]) -> None:
        """Fold these events, after those folded already."""
        own = self.own
        seats = self.seats
        variant = self.variant
        street = self.street
        turn = self.turn
        pot = self.pot
        common = self.common
        announcements = self.announcements
        awards = self.awards
        over = self.over
        count = self.count
        event: Any  # a record, read by unpacking once its type is known
        for event in events:
            count += 1
            cls = type(event)
            if cls is Turn:
                turn = event
            elif cls is ActionTaken:
                seat, action, paid, total, _, all_in, _, _, _ = event
                s = seats[seat]
                if paid is not None:
                    s["stack"] -= paid
                    s["in_pot"] += paid
                    pot += paid
                if action == "fold":
                    s["folded"] = True
                if all_in:
                    s["all_in"] = True
                s["bet"] = total
                turn = None
            elif cls is DownCards:
                seat, _, cards = event
                own[seat] = own.get(seat, []) + list(cards)
            elif cls is Announcement:
                announcements.append(event)
            elif cls is StreetDealt:
                street, deals = event
                for s in seats.values():
                    s["bet"] = 0
                for seat, up, down, _ in deals:
                    s = seats[seat]
                    s["up"] += up  # the seat's own list (from hand_started), not an event's
                    s["down_count"] += down
            elif cls is Ante:
                seat, amount, all_in = event
                s = seats[seat]
                s["stack"] -= amount
                s["in_pot"] += amount
                s["all_in"] = all_in
                pot += amount
            elif cls is HandStarted:
                variant = event[0]
                for seat, stack in event[6]:
                    seats[seat] = {
                        "stack": stack,
                        "bet": 0,
                        "in_pot": 0,
                        "up": [],
                        "down": [],
                        "down_count": 0,
                        "folded": False,
                        "all_in": False,
                        "shown": False,
                    }
            elif cls is CommonCard:
                street, card = event
                common = common + [card]
                for s in seats.values():
                    s["bet"] = 0
            elif cls is UncalledReturned:
                seat, amount = event
                s = seats[seat]
                s["stack"] += amount
                s["in_pot"] -= amount
                s["bet"] -= amount
                pot -= amount
            elif cls is Showdown:
                seat, cards, high, low, judged = event
                s = seats[seat]
                s["down"] = [c for c in cards if c not in s["up"]]
                s["shown"] = True
                s["hand"] = {half: high if half == "high" else low for half in judged}
            elif cls is PotAwarded:
                seats[event[0]]["stack"] += event[2]
                awards.append(event)
            elif cls is HandEnded:
                over = True
                turn = None
        self.variant = variant
        self.street = street
        self.turn = turn
        self.pot = pot
        self.common = common
        self.over = over
        self.count = count

    def public(self, *, pots: bool = True) -> dict[str, Any]:
        """The public picture (no viewer's own cards); its seats are the fold's own.
        ``pots`` false: without the picture's ``pots`` (a reader that does not show them)."""
        turn = self.turn
        seats = self.seats
        picture = {
            "viewer": None,
            "variant": self.variant,
            "street": self.street,
            "pot": self.pot,
            "common": self.common,
            "seats": seats,
            "to_act": None if turn is None else turn.seat,
            "legal": None if turn is None else turn.encode(),
            "announcements": [a.encode() for a in self.announcements],
            "awards": [a.encode() for a in self.awards],
            "over": self.over,
        }
        if pots:
            picture["pots"] = pots_of(seats)
        return picture

    def view(
        self, viewer: int | None, *, pots: bool = True, detached: bool = True
    ) -> dict[str, Any]:
        """The picture ``viewer`` (None: a spectator) is entitled to, as :func:`view` gives
        it: nothing in it is the fold's, so more events change nothing of it. ``detached``
        false: the seats' entries and lists are the fold's own (not to be changed, and read
        before the next event: a reader that copies what it keeps); ``pots`` as in
        :meth:`public`."""
        picture = self.public(pots=pots)
        own = self.own.get(viewer, ()) if viewer is not None else ()
        seats: dict[int, dict[str, Any]] = {}
        for number, entry in self.seats.items():
            if detached:
                seat = dict(entry)
                seat["up"] = list(entry["up"])
                seat["down"] = list(entry["down"])
                if "hand" in entry:
                    seat["hand"] = dict(entry["hand"])
            elif number == viewer:
                seat = dict(entry)
            else:
                seat = entry
            if number == viewer:
                seat["down"] = list(own)
            seats[number] = seat
        picture["viewer"] = viewer
        picture["common"] = list(self.common) if detached else self.common
        picture["seats"] = seats
        return picture


def pots_of(seats: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """The main pot and side pots as the chips stand (:func:`engine.pots.pots_in_play`): a
    side pot only where a seat still in is all in (public: nothing hidden in it)."""
    numbers = list(seats)
    chips_in: list[int] = []
    live: list[bool] = []
    all_in: list[bool] = []
    for entry in seats.values():
        chips_in.append(entry["in_pot"])
        live.append(not entry["folded"])
        all_in.append(entry["all_in"])
    return [
        {"amount": pot.amount, "eligible": [numbers[i] for i in pot.eligible]}
        for pot in pots_in_play(chips_in, live, all_in)
    ]


def visible_events(events: Iterable[Event], seat: int | None) -> list[Event]:
    """The events a seat's (or a spectator's) connection receives."""
    return [e for e in events if e.to is None or e.to == seat]
