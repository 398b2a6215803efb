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


def _seat_entry(stack: int) -> dict[str, Any]:
    return {
        "stack": stack, "bet": 0, "in_pot": 0, "up": [], "down": [], "down_count": 0,
        "folded": False, "all_in": False, "shown": False,
    }


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
    """Fold the public events; collect each seat's own down cards into ``own``."""
    seats: dict[int, dict[str, Any]] = {}
    state: dict[str, Any] = {
        "viewer": None, "variant": None, "street": None, "pot": 0, "common": [],
        "seats": seats, "to_act": None, "legal": None, "announcements": [],
        "awards": [], "over": False,
    }
    for event in events:
        kind, data, to = event
        if to is not None:
            if kind == "down_cards":
                own[to] = own.get(to, []) + data["cards"]
            continue
        if kind == "turn":
            state["to_act"] = data["seat"]
            state["legal"] = data
        elif kind == "action":
            s = seats[data["seat"]]
            paid = data.get("amount", 0)
            s["stack"] -= paid
            s["in_pot"] += paid
            s["bet"] = data["to"]
            state["pot"] += paid
            if data["action"] == "fold":
                s["folded"] = True
            if data.get("all_in"):
                s["all_in"] = True
            state["to_act"] = None
            state["legal"] = None
        elif kind == "hand_started":
            state["variant"] = data["variant"]
            for entry in data["seats"]:
                seats[entry["seat"]] = _seat_entry(entry["stack"])
        elif kind == "ante":
            s = seats[data["seat"]]
            s["stack"] -= data["amount"]
            s["in_pot"] += data["amount"]
            s["all_in"] = data["all_in"]
            state["pot"] += data["amount"]
        elif kind == "street_dealt":
            state["street"] = data["street"]
            for s in seats.values():
                s["bet"] = 0
            for deal in data["deals"]:
                s = seats[deal["seat"]]
                s["up"] = s["up"] + deal["up"]
                s["down_count"] += deal["down"]
        elif kind == "common_card":
            state["street"] = data["street"]
            state["common"] = state["common"] + [data["card"]]
            for s in seats.values():
                s["bet"] = 0
        elif kind == "uncalled_returned":
            s = seats[data["seat"]]
            s["stack"] += data["amount"]
            s["in_pot"] -= data["amount"]
            s["bet"] -= data["amount"]
            state["pot"] -= data["amount"]
        elif kind == "announcement":
            state["announcements"] = state["announcements"] + [data]
        elif kind == "showdown":
            s = seats[data["seat"]]
            s["down"] = [c for c in data["cards"] if c not in s["up"]]
            s["shown"] = True
            s["hand"] = {k: data[k] for k in ("high", "low") if k in data}
        elif kind == "pot_awarded":
            seats[data["seat"]]["stack"] += data["amount"]
            state["awards"] = state["awards"] + [data]
        elif kind == "hand_ended":
            state["over"] = True
            state["to_act"] = None
            state["legal"] = None
    state["pots"] = pots_of(seats)
    return state


def pots_of(seats: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """The main pot and side pots as the chips stand: layered by what each seat has put in,
    each open to the seats still in that reached its level (public: nothing hidden in it)."""
    numbers = list(seats)
    layers = build_pots(
        [seats[n]["in_pot"] for n in numbers], [not seats[n]["folded"] for n in numbers]
    )
    return [{"amount": p.amount, "eligible": [numbers[i] for i in p.eligible]} for p in layers]


def visible_events(events: Iterable[Event], seat: int | None) -> list[Event]:
    """The events a seat's (or a spectator's) connection receives."""
    return [e for e in events if e.to is None or e.to == seat]
