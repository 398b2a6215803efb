"""``stud-verify HAND``: check that a hand you played was dealt from the deck it committed to.

HAND is the hand history as you download it (``GET /hands/{id}``, JSON); ``--commitment`` and
``--seed`` add what your client saw live: the commitment announced before the deal and the
seed it sent, which the record must then hold. The check, step by step (docs/fairness.md):

* ``stud-deck/2`` (:mod:`engine.fair2`): every card opening your seat was sent leads to the
  commitment; the deal order follows from the commitment and the published client seeds; the
  hand is played again, under the rules it was dealt by, on a deck whose opened positions hold
  their cards (the others, cards you never saw); and every event your seat saw, each card and
  each opening's position in it, must be what the history says (at a showdown where a hand
  was mucked, the shown hands only: the award rests on hidden cards).
* ``stud-deck/1`` (:mod:`engine.fair`, older hands): the revealed server seed hashes to the
  commitment; the deck is derived again from it, the client seeds and the hand's identity; the
  hand is played again on that deck; and every event your seat saw must be the history's.

Exit status: 0 and a short report when everything matches; 1 and the first mismatch when
something does not; 2 when the file cannot be read as a hand history.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from engine import fair, fair2
from engine.actions import Action
from engine.cards import Deck, format_card
from engine.errors import EngineError
from engine.events import (
    HAND_EVENT_TYPES,
    Announcement,
    CardsOpened,
    CommonCard,
    DownCards,
    Event,
    HandStarted,
    Muck,
    Showdown,
    StreetDealt,
    announced,
    decode_all,
)
from engine.hand import Hand
from engine.views import visible_events
from server.store.table_config import config_from_json

_WAGERS = frozenset({"complete", "bet", "raise"})
_CARD_KINDS = frozenset({"down_cards", "street_dealt", "common_card", "showdown"})


class Unreadable(Exception):
    """The file is not a hand history this tool can check."""


@dataclass(frozen=True, slots=True)
class Verdict:
    fair: bool
    lines: list[str]


def verify(
    history: Mapping[str, Any], *, commitment: str | None = None, seed: str | None = None
) -> Verdict:
    """Check one downloaded hand history (see the module's docstring). ``commitment``: the one
    the table announced before the deal, as the player's client saw it; ``seed``: the client
    seed the player sent for the hand (each must then be the record's)."""
    try:
        proof = history["fairness"]
        seat = int(history["seat"])
        logged = decode_all(history["events"])
    except (KeyError, TypeError, ValueError) as error:
        raise Unreadable(f"not a hand history as GET /hands/{{id}} gives it ({error})") from None
    if not isinstance(proof, Mapping):
        return _unfair("the hand has no fairness record: nothing shows how its deck was made")
    if proof.get("method") == fair2.METHOD:
        return _verify_openings(proof, seat, logged, commitment=commitment, seed=seed)
    try:
        deal = fair.FairDeal(
            fair.parse_server_seed(proof.get("server_seed")),
            int(proof["table_id"]),
            int(proof["hand"]),
            fair.client_seeds(proof.get("client_seeds", ())),
        )
        config = config_from_json(proof["config"])
    except (KeyError, TypeError, ValueError, EngineError) as error:
        raise Unreadable(f"its fairness record cannot be read: {error}") from None
    if commitment is not None and commitment.lower() != proof.get("commitment"):
        return _unfair(
            f"the commitment announced before the deal was {commitment}, the record's is "
            f"{proof.get('commitment')}"
        )
    if seed is not None and (seat, seed) not in deal.client_seeds:
        return _unfair(f"your client seed {seed!r} did not go into the deck at seat {seat}")
    if proof.get("method") != fair.METHOD:
        return _unfair(f"the deck was derived by {proof.get('method')!r}, not {fair.METHOD}")
    if deal.commitment != proof.get("commitment"):
        return _unfair(
            f"the server seed does not match the commitment: SHA-256 of the seed is "
            f"{deal.commitment}, the commitment {proof.get('commitment')}"
        )
    started = next((e for e in logged if isinstance(e, HandStarted)), None)
    if started is None:
        raise Unreadable("the history has no hand_started event")
    if started.commitment != deal.commitment:
        return _unfair(
            f"the commitment published at the deal ({started.commitment}) is not the "
            f"revealed seed's ({deal.commitment})"
        )
    if started.client_seeds != deal.client_seeds:
        return _unfair("the client seeds of the record are not those published at the deal")
    seen = _judged(logged)
    replayed, failure = _replay(config, started, deal.deck(), seen)
    expected = _judged(visible_events(replayed, seat))
    cards = 0
    for index, (want, got) in enumerate(zip(expected, seen, strict=False)):
        if want != got:
            return _unfair(
                f"event {index + 1} ({got.kind}) differs from the derived deck's: the history "
                f"has {json.dumps(got.data)}, the deck deals {json.dumps(want.data)}"
            )
        if want.kind in _CARD_KINDS:
            cards += _card_count(want)
    if failure is not None:
        return _unfair(f"the hand cannot be played again on the derived deck: {failure}")
    if len(expected) != len(seen):
        return _unfair(
            f"the history has {len(seen)} hand events, the hand played again {len(expected)}"
        )
    return Verdict(
        True,
        [
            f"hand {deal.number} at table {deal.table_id}: fair",
            f"commitment {deal.commitment} matches the revealed server seed",
            f"client seeds: {_seeds(deal)}",
            f"{cards} cards seen by seat {seat} are the derived deck's, event for event",
        ],
    )


def _judged(events: Sequence[Event]) -> list[Event]:
    """The hand's events that show the deal and the play. The dealer's announcements are left
    out: their words change from one server version to the next, and what they say (the
    bring-in card, the boards) is in the dealt cards, which are compared."""
    return [e for e in events if isinstance(e, HAND_EVENT_TYPES) and type(e) is not Announcement]


def _verify_openings(
    proof: Mapping[str, Any],
    seat: int,
    logged: list[Event],
    *,
    commitment: str | None,
    seed: str | None,
) -> Verdict:
    """``stud-deck/2`` (engine.fair2): every opening the seat was sent leads to the commitment;
    the deal order follows from the commitment and the published client seeds; the hand played
    again on a deck whose opened positions hold their cards (the others, cards the seat never
    saw) deals the seat every card it saw, at the position the order gives, event for event."""
    try:
        root = str(proof["commitment"])
        table_id, number = int(proof["table_id"]), int(proof["hand"])
        seeds = fair.client_seeds(proof.get("client_seeds", ()))
        config = config_from_json(proof["config"])
    except (KeyError, TypeError, ValueError, EngineError) as error:
        raise Unreadable(f"its fairness record cannot be read: {error}") from None
    if commitment is not None and commitment.lower() != root:
        return _unfair(
            f"the commitment announced before the deal was {commitment}, the record's is {root}"
        )
    if seed is not None and (seat, seed) not in seeds:
        return _unfair(f"your client seed {seed!r} did not go into the deck at seat {seat}")
    started = next((e for e in logged if isinstance(e, HandStarted)), None)
    if started is None:
        raise Unreadable("the history has no hand_started event")
    if started.commitment != root or started.method != fair2.METHOD:
        return _unfair(
            f"the commitment published at the deal ({started.commitment}, "
            f"{started.method or fair.METHOD}) is not the record's ({root}, {fair2.METHOD})"
        )
    if started.client_seeds != seeds:
        return _unfair("the client seeds of the record are not those published at the deal")
    known: dict[int, int] = {}
    opened = 0
    for event in logged:
        if not isinstance(event, CardsOpened):
            continue
        for opening in event.cards:
            text = f"{format_card(opening.card)} at position {opening.position}"
            if not fair2.verify_opening(opening, root):
                return _unfair(f"the opening of {text} does not lead to the commitment")
            if known.setdefault(opening.position, opening.card) != opening.card:
                return _unfair(f"position {opening.position} was opened to two cards")
            opened += 1
    if len(set(known.values())) != len(known):
        return _unfair("the committed deck holds one card at two positions")
    unopened = sorted(_cards_seen(logged) - {format_card(card) for card in known.values()})
    if unopened:
        return _unfair(f"cards you saw came without their cards_opened: {' '.join(unopened)}")
    deal = fair2.KnownDeal(root, table_id, number, seeds, known)
    seen = _judged(logged)
    replayed, failure = _replay(config, started, deal.deck(), seen)
    expected = _judged(visible_events(replayed, seat))
    ends = [i for i, e in enumerate(seen) if isinstance(e, Muck | Showdown)]
    hidden = any(isinstance(e, Muck) for e in seen)
    if hidden:  # a hand mucked at showdown stays hidden: the award rests on it, unchecked
        seen, expected = seen[: ends[0]], expected[: ends[0]]
    for index, (want, got) in enumerate(zip(expected, seen, strict=False)):
        if _opened(want) != _opened(got):
            return _unfair(
                f"event {index + 1} ({got.kind}) differs from the committed deck's deal "
                f"({want.kind}): the history has {json.dumps(_shown(got))}, the deal gives "
                f"{json.dumps(_shown(want))}"
            )
    if failure is not None:
        return _unfair(f"the hand cannot be played again on the committed deck: {failure}")
    if len(expected) != len(seen):
        return _unfair(
            f"the history has {len(seen)} hand events, the hand played again {len(expected)}"
        )
    shown = [e for e in _judged(logged) if isinstance(e, Showdown)]
    if hidden:
        dealt = _dealt(replayed)
        for event in shown:
            if tuple(event.cards) != dealt.get(event.seat):
                return _unfair(
                    f"seat {event.seat} showed {' '.join(event.cards)}, the committed deck "
                    f"dealt it {' '.join(dealt.get(event.seat, ()))}"
                )
    return Verdict(
        True,
        [
            f"hand {number} at table {table_id}: fair ({fair2.METHOD})",
            f"{opened} card openings lead to the commitment {root}",
            f"client seeds: {', '.join(f'seat {s}: {v}' for s, v in seeds) or 'none'}",
            f"every card seat {seat} saw is the committed card at the position the deal "
            f"order gives, event for event"
            + (" (the award rests on a mucked hand: not checked)" if hidden else ""),
        ],
    )


def _opened(event: Event) -> Event | tuple[Any, ...]:
    """An event as compared: an opening by its card and position only (the replay has no
    salts; each salt and path was checked against the commitment)."""
    if isinstance(event, CardsOpened):
        return (event.street, event.seat, tuple((o.card, o.position) for o in event.cards))
    return event


def _cards_seen(events: list[Event]) -> set[str]:
    """Every card the history shows: the seat's own, the upcards, the common and shown cards."""
    seen: set[str] = set()
    for event in events:
        if isinstance(event, DownCards | Showdown):
            seen.update(event.cards)
        elif isinstance(event, StreetDealt):
            for deal in event.deals:
                seen.update(deal.up)
        elif isinstance(event, CommonCard):
            seen.add(event.card)
    seen.discard("??")
    return seen


def _shown(event: Event) -> dict[str, Any]:
    """An event's data as a mismatch prints it: an opening by its card and position."""
    data = event.data
    if isinstance(event, CardsOpened):
        data["cards"] = [{"card": c["card"], "position": c["position"]} for c in data["cards"]]
    return data


def _dealt(events: list[Event]) -> dict[int, tuple[str, ...]]:
    """Each seat's cards in the order dealt, from the replay's own (unfiltered) events."""
    cards: dict[int, list[str]] = {}
    for event in events:
        if isinstance(event, DownCards):
            cards.setdefault(event.seat, []).extend(event.cards)
        elif isinstance(event, StreetDealt):
            for deal in event.deals:
                cards.setdefault(deal.seat, []).extend(deal.up)
    return {seat: tuple(held) for seat, held in cards.items()}


def _replay(
    config: Any, started: HandStarted, deck: Deck, seen: list[Event]
) -> tuple[list[Event], EngineError | None]:
    """The hand played again on the derived deck with the history's actions: its events,
    and the refusal that stopped it, if one did (the events up to it are compared first)."""
    try:
        # A tournament's hand names the seats dealt in while away: the deal kills their
        # hands again, and the history's actions it made itself are not played twice.
        hand = Hand(config, [(s.seat, s.stack) for s in started.seats], deck, absent=started.absent)
    except EngineError as error:
        return [], error
    made = sum(1 for event in hand.events if event.kind == "action")
    for event in seen:
        if event.kind != "action" or hand.is_over():
            continue
        if made:
            made -= 1
            continue
        data = event.data
        try:
            if data.get("timeout"):
                hand.timeout(data["seat"])
            else:
                amount = data.get("to") if data["action"] in _WAGERS else None
                action = Action(data["seat"], data["action"], amount)
                hand.apply(action, absent=bool(data.get("absent")))
        except EngineError as error:
            return announced(hand.events), error
    return announced(hand.events), None


def _card_count(event: Event) -> int:
    data = event.data
    if "cards" in data:
        return len(data["cards"])
    if "card" in data:
        return 1
    return sum(len(deal.get("cards", ())) for deal in data.get("deals", ()))


def _seeds(deal: fair.FairDeal) -> str:
    return ", ".join(f"seat {seat}: {seed}" for seat, seed in deal.client_seeds) or "none"


def _unfair(reason: str) -> Verdict:
    return Verdict(False, [f"NOT FAIR: {reason}"])


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="stud-verify",
        description="Check a downloaded hand history against the seeds of its deck "
        "(docs/fairness.md).",
    )
    parser.add_argument("hand", help="the hand history as GET /hands/{id} gives it (JSON)")
    parser.add_argument(
        "--commitment", help="the commitment the table announced before the deal (deck_committed)"
    )
    parser.add_argument("--seed", help="the client seed you sent for the hand")
    args = parser.parse_args(argv)
    out = out or sys.stdout
    try:
        with open(args.hand, encoding="utf-8") as handle:
            history = json.load(handle)
        if not isinstance(history, Mapping):
            raise Unreadable("not a JSON object")
        verdict = verify(history, commitment=args.commitment, seed=args.seed)
    except (OSError, ValueError, Unreadable) as error:
        print(f"cannot check {args.hand}: {error}", file=out)
        return 2
    print("\n".join(verdict.lines), file=out)
    return 0 if verdict.fair else 1


if __name__ == "__main__":
    raise SystemExit(main())
