"""``stud-verify HAND``: check that a hand you played was dealt from the deck it committed to;
``stud-verify --tournament``: check a whole finished tournament.

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

``stud-verify --server URL --tournament ID`` (or a file ``--save`` kept): a whole finished
tournament (:func:`verify_tournament`), from ``GET /tournaments/{id}/record`` and its hands:
each hand as above, from the table's view (everyone's: upcards and shown cards), then the seat
draws' seed, the journal played again, the seats each hand was dealt at, the places and prizes
(:mod:`engine.tournament.check`).

Exit status: 0 and a short report when everything matches; 1 and the first mismatch when
something does not; 2 when the file cannot be read as a hand history or a tournament's record
(or the record cannot be downloaded).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import httpx

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
    HandEnded,
    HandStarted,
    Muck,
    Showdown,
    StreetDealt,
    announced,
    decode_all,
)
from engine.hand import Hand
from engine.tournament import check
from engine.tournament.check import Fact, PlayedHand, Standing
from engine.tournament.spec import TournamentSpec
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
        seat = None if history["seat"] is None else int(history["seat"])
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
            f"{cards} cards seen by {_viewer(seat)} are the derived deck's, event for event",
        ],
    )


def _judged(events: Sequence[Event]) -> list[Event]:
    """The hand's events that show the deal and the play. The dealer's announcements are left
    out: their words change from one server version to the next, and what they say (the
    bring-in card, the boards) is in the dealt cards, which are compared."""
    return [e for e in events if isinstance(e, HAND_EVENT_TYPES) and type(e) is not Announcement]


def _verify_openings(
    proof: Mapping[str, Any],
    seat: int | None,
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
            f"every card {_viewer(seat)} saw is the committed card at the position the deal "
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


def _viewer(seat: int | None) -> str:
    """Whose view a history is: a seat's, or the table's for everyone (a spectator's)."""
    return "everyone at the table" if seat is None else f"seat {seat}"


def _seeds(deal: fair.FairDeal) -> str:
    return ", ".join(f"seat {seat}: {seed}" for seat, seed in deal.client_seeds) or "none"


def _unfair(reason: str) -> Verdict:
    return Verdict(False, [f"NOT FAIR: {reason}"])


# ---------------------------------------------------------------------- a whole tournament


def is_tournament(document: Mapping[str, Any]) -> bool:
    """Whether a downloaded file is a tournament's record (with its hands), not a hand's."""
    return "journal" in document and "draw" in document


def verify_tournament(document: Mapping[str, Any], *, commitment: str | None = None) -> Verdict:
    """Check a finished tournament: its record (``GET /tournaments/{id}/record``) with its
    ``hands`` the list of every hand (``GET /tournaments/{id}/hands``, page after page).
    ``commitment``: the seat draw's commitment as published before the start, if you noted
    it (the record's must then be it). Each hand's deal and play as :func:`verify` checks a
    hand (as everyone at its table saw it); the seed, the draws, the journal, the places and
    the prizes as :func:`engine.tournament.check.check_tournament` does."""
    try:
        spec = TournamentSpec.from_dict(document["spec"])
        draw = document["draw"]
        seed = bytes.fromhex(str(draw["seed"]))
        committed = str(draw["commitment"])
        journal = [
            Fact(int(f["seq"]), str(f["kind"]), float(f["at"]), f["data"])
            for f in document["journal"]
        ]
        standings = [
            Standing(str(e["player"]), e.get("place"), e.get("prize")) for e in document["entries"]
        ]
        numbers = {int(t["table_id"]): int(t["table"]) for t in document["tables"]}
        histories = document["hands"]
        tournament_id = int(document["id"])
    except (KeyError, TypeError, ValueError, EngineError) as error:
        raise Unreadable(
            f"not a tournament's record as GET /tournaments/{{id}}/record gives it "
            f"with its hands ({error})"
        ) from None
    if not isinstance(histories, list):
        raise Unreadable("its hands are not listed: fetch them (GET /tournaments/{id}/hands)")
    if commitment is not None and commitment.lower() != committed:
        return _unfair(
            f"the seat draw's commitment published before the start was {commitment}, the "
            f"record's is {committed}"
        )
    hands: list[PlayedHand] = []
    for history in histories:
        if not isinstance(history, Mapping):
            raise Unreadable("a hand of the tournament is not a JSON object")
        where = f"hand {history.get('number')} (hand id {history.get('id')})"
        if history.get("seat") is not None:
            raise Unreadable(f"{where} is a player's view: the record's hands are everyone's")
        verdict = verify(history)
        if not verdict.fair:
            return _unfair(f"{where}: {verdict.lines[0].removeprefix('NOT FAIR: ')}")
        try:
            hands.append(_played(history, numbers))
        except (KeyError, TypeError, ValueError) as error:
            raise Unreadable(f"{where} cannot be read: {error}") from None
        except check.TournamentMismatch as error:
            return _unfair(f"{where}: {error}")
    try:
        checked = check.check_tournament(
            spec,
            tournament_id=tournament_id,
            seed=seed,
            committed=committed,
            journal=journal,
            hands=hands,
            standings=standings,
        )
    except check.TournamentMismatch as error:
        return _unfair(str(error))
    return Verdict(
        True,
        [
            f"tournament {tournament_id} ({document.get('name')}): fair",
            f"{len(hands)} hands dealt from their committed decks and played by the rules",
            *checked.lines,
        ],
    )


def _played(history: Mapping[str, Any], numbers: Mapping[int, int]) -> PlayedHand:
    """A checked hand as the tournament's: its table's number, each seat's player and the
    chips it started and ended with, which must be the ones its events show."""
    table_id = int(history["table_id"])
    if table_id not in numbers:
        raise check.TournamentMismatch(f"table {table_id} is not one of the tournament's")
    events = decode_all(history["events"])
    started = next((e for e in events if isinstance(e, HandStarted)), None)
    ended = next((e for e in events if isinstance(e, HandEnded)), None)
    before = {s.seat: s.stack for s in started.seats} if started is not None else {}
    after = {seat: stack for seat, stack in ended.stacks} if ended is not None else before
    seats: dict[int, tuple[str, int, int]] = {}
    for part in history["players"]:
        seat = int(part["seat"])
        chips = (int(part["starting"]), int(part["ending"]))
        if chips != (before.get(seat), after.get(seat)):
            raise check.TournamentMismatch(
                f"{part['player']} at seat {seat} is listed from {chips[0]} chips to {chips[1]}"
                f", the hand's events from {before.get(seat)} to {after.get(seat)}"
            )
        seats[seat] = (str(part["player"]), *chips)
    if set(seats) != set(before):
        raise check.TournamentMismatch("its players are not the seats it dealt in")
    if started is None:
        return PlayedHand(numbers[table_id], int(history["number"]), seats)
    stakes = {
        "ante": started.ante,
        "bring_in": started.bring_in,
        "small_bet": started.small_bet,
        "big_bet": started.big_bet,
    }
    return PlayedHand(numbers[table_id], int(history["number"]), seats, started.variant, stakes)


async def download_tournament(client: httpx.AsyncClient, tournament_id: int) -> dict[str, Any]:
    """A finished tournament's record with every hand (``client``: the cardroom's address as
    its base URL), as :func:`verify_tournament` takes it and ``--save`` keeps it."""
    record = await _get(client, f"/tournaments/{tournament_id}/record")
    hands: list[Any] = []
    after: int | None = None
    while True:
        params = {"limit": 200, **({"after": after} if after is not None else {})}
        page = await _get(client, f"/tournaments/{tournament_id}/hands", params)
        hands.extend(page["hands"])
        after = page["next_after"]
        if after is None:
            return {**record, "hands": hands}


async def _get(
    client: httpx.AsyncClient, path: str, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    answer = await client.get(path, params=params)
    if answer.status_code != 200:
        try:
            detail = answer.json()["error"]["message"]
        except (ValueError, KeyError, TypeError):
            detail = answer.text[:200]
        raise Unreadable(f"GET {path} answered {answer.status_code}: {detail}")
    body = answer.json()
    if not isinstance(body, dict):
        raise Unreadable(f"GET {path} did not answer a JSON object")
    return body


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="stud-verify",
        description="Check a downloaded hand history against the seeds of its deck, or a "
        "whole finished tournament (docs/fairness.md).",
    )
    parser.add_argument(
        "file",
        nargs="?",
        help="a hand history as GET /hands/{id} gives it (JSON), or a tournament's record "
        "with its hands as --save keeps it",
    )
    parser.add_argument(
        "--commitment",
        help="the commitment announced before the deal (deck_committed); for a tournament, "
        "its seat draw's (draw_commitment) as published before the start",
    )
    parser.add_argument("--seed", help="the client seed you sent for the hand")
    parser.add_argument(
        "--tournament", type=int, help="a finished tournament's id, to download from --server"
    )
    parser.add_argument("--server", help="the cardroom's address, e.g. https://stud.example")
    parser.add_argument("--save", help="with --tournament: keep what was downloaded in this file")
    args = parser.parse_args(argv)
    out = out or sys.stdout
    if (args.file is None) == (args.tournament is None) or (
        (args.tournament is None) != (args.server is None)
    ):
        parser.error("give a file, or --tournament with --server")
    source = args.file or f"tournament {args.tournament} at {args.server}"
    try:
        if args.tournament is not None:
            document = asyncio.run(_download(args.server, args.tournament))
            if args.save:
                with open(args.save, "w", encoding="utf-8") as handle:
                    json.dump(document, handle)
        else:
            with open(args.file, encoding="utf-8") as handle:
                document = json.load(handle)
        if not isinstance(document, Mapping):
            raise Unreadable("not a JSON object")
        if is_tournament(document):
            verdict = verify_tournament(document, commitment=args.commitment)
        else:
            verdict = verify(document, commitment=args.commitment, seed=args.seed)
    except (OSError, ValueError, Unreadable, httpx.HTTPError) as error:
        print(f"cannot check {source}: {error}", file=out)
        return 2
    print("\n".join(verdict.lines), file=out)
    return 0 if verdict.fair else 1


async def _download(server: str, tournament_id: int) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=server, timeout=60) as client:
        return await download_tournament(client, tournament_id)


if __name__ == "__main__":
    raise SystemExit(main())
