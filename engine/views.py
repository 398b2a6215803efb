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
    own: dict[int, list[str]] = {}
    public = _fold_public(events, own)
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


def _fold_public(events: Iterable[Event], own: dict[int, list[str]]) -> dict[str, Any]:
    """Fold the public events; collect each seat's own down cards into ``own``.

    The picture's scalars live in local variables until the end: a hand folds some thirty
    events per view, most of them turns and actions, so each step is kept to a few lookups
    (the record's type, then its fields by unpacking).
    """
    seats: dict[int, dict[str, Any]] = {}
    variant: str | None = None
    street: str | None = None
    turn: Turn | None = None
    pot = 0
    common: list[str] = []
    announcements: list[Announcement] = []
    awards: list[PotAwarded] = []
    over = False
    event: Any  # a record, read by unpacking once its type is known
    for event in events:
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
    return {
        "viewer": None,
        "variant": variant,
        "street": street,
        "pot": pot,
        "common": common,
        "seats": seats,
        "to_act": None if turn is None else turn.seat,
        "legal": None if turn is None else turn.encode(),
        "announcements": [a.encode() for a in announcements],
        "awards": [a.encode() for a in awards],
        "over": over,
        "pots": pots_of(seats),
    }


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
