"""What one seat, or a spectator, can know of a hand: a pure fold over its events.

The server never filters state by hand: it sends each connection the events
visible to it, and this function turns them into a table picture. Down cards
of other seats appear only once a ``showdown`` event shows them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.events import Event
from engine.pots import build_pots


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
    events per view, most of them turns and actions, so each step is kept to a few lookups.
    """
    seats: dict[int, dict[str, Any]] = {}
    variant: str | None = None
    street: str | None = None
    to_act: int | None = None
    legal: dict[str, Any] | None = None
    pot = 0
    common: list[str] = []
    announcements: list[dict[str, Any]] = []
    awards: list[dict[str, Any]] = []
    over = False
    for kind, data, to in events:
        if to is not None:
            if kind == "down_cards":
                own[to] = own.get(to, []) + data["cards"]
            continue
        if kind == "turn":
            to_act = data["seat"]
            legal = data
        elif kind == "action":
            s = seats[data["seat"]]
            if "amount" in data:
                paid = data["amount"]
                s["stack"] -= paid
                s["in_pot"] += paid
                pot += paid
            if data["action"] == "fold":
                s["folded"] = True
            if "all_in" in data and data["all_in"]:
                s["all_in"] = True
            s["bet"] = data["to"]
            to_act = legal = None
        elif kind == "announcement":
            announcements.append(data)
        elif kind == "street_dealt":
            street = data["street"]
            for s in seats.values():
                s["bet"] = 0
            for deal in data["deals"]:
                s = seats[deal["seat"]]
                s["up"] += deal["up"]  # the seat's own list (from hand_started), not an event's
                s["down_count"] += deal["down"]
        elif kind == "ante":
            s = seats[data["seat"]]
            amount = data["amount"]
            s["stack"] -= amount
            s["in_pot"] += amount
            s["all_in"] = data["all_in"]
            pot += amount
        elif kind == "hand_started":
            variant = data["variant"]
            for entry in data["seats"]:
                seats[entry["seat"]] = {
                    "stack": entry["stack"], "bet": 0, "in_pot": 0, "up": [], "down": [],
                    "down_count": 0, "folded": False, "all_in": False, "shown": False,
                }
        elif kind == "common_card":
            street = data["street"]
            common = common + [data["card"]]
            for s in seats.values():
                s["bet"] = 0
        elif kind == "uncalled_returned":
            s = seats[data["seat"]]
            amount = data["amount"]
            s["stack"] += amount
            s["in_pot"] -= amount
            s["bet"] -= amount
            pot -= amount
        elif kind == "showdown":
            s = seats[data["seat"]]
            s["down"] = [c for c in data["cards"] if c not in s["up"]]
            s["shown"] = True
            s["hand"] = {k: data[k] for k in ("high", "low") if k in data}
        elif kind == "pot_awarded":
            seats[data["seat"]]["stack"] += data["amount"]
            awards.append(data)
        elif kind == "hand_ended":
            over = True
            to_act = legal = None
    return {
        "viewer": None, "variant": variant, "street": street, "pot": pot, "common": common,
        "seats": seats, "to_act": to_act, "legal": legal, "announcements": announcements,
        "awards": awards, "over": over, "pots": pots_of(seats),
    }


def pots_of(seats: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """The main pot and side pots as the chips stand: layered by what each seat has put in,
    each open to the seats still in that reached its level (public: nothing hidden in it)."""
    # The usual picture: every seat still in has put in the same, so one pot holds it all.
    level = 0
    total = 0
    for entry in seats.values():
        chips = entry["in_pot"]
        total += chips
        if chips and not entry["folded"]:
            if not level:
                level = chips
            elif chips != level:
                level = -1
    if level > 0:
        eligible: list[int] = []
        for number, entry in seats.items():
            if entry["in_pot"] == level and not entry["folded"]:
                eligible.append(number)
        return [{"amount": total, "eligible": eligible}]
    numbers = list(seats)
    chips_in: list[int] = []
    live: list[bool] = []
    for entry in seats.values():
        chips_in.append(entry["in_pot"])
        live.append(not entry["folded"])
    return [
        {"amount": pot.amount, "eligible": [numbers[i] for i in pot.eligible]}
        for pot in build_pots(chips_in, live)
    ]


def visible_events(events: Iterable[Event], seat: int | None) -> list[Event]:
    """The events a seat's (or a spectator's) connection receives."""
    return [e for e in events if e.to is None or e.to == seat]
