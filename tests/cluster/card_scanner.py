"""Which cards a frame showed to whom, judged against the server's own hand records.

The truth of a hand (``HandTruth``) is read from the operator's record of it: every seat's
down cards (the ``down_cards`` events and the player each went to), the up cards, the cards
each ``showdown`` showed, and who folded or mucked. The frames under test (``Recorded``: the
raw text a connection received, and the player it is signed in as) supply only the moments:
the ``seq`` at which each hand began (its ``hand_number`` event), each street was dealt (its
``street_dealt`` or ``common_card`` event: a seat's own down cards come with the ``seq`` of
that event) and each seat was shown (its ``showdown`` event).

A frame is judged card by card: every card it names, in any field, at any depth, in any
string (``"As"``, an announcement's words, a PHH line such as ``AsKs7h``), must be one the
connection may see at the frame's ``seq``: a card of the hand dealt at or before that
``seq`` that is face up, or down to the connection's own player's seat, or down to a seat
shown at or before that ``seq``. Anything else is a ``Leak``: another seat's down card before
its showdown, a folded or mucked hand's card at any time, any card before it is dealt, a card
the hand never dealt, or a card in a frame that belongs to no hand.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

# A run of one or more cards ("As", "AsKs7h"), not inside a longer word or number.
CARD_RUN = re.compile(r"(?<![A-Za-z0-9])((?:[2-9TJQKA][cdhs])+)(?![A-Za-z0-9])")

# What any card in a frame's raw text looks like, wherever it is (an escaped character too).
MAYBE_CARD = re.compile(r"[2-9TJQKA][cdhs]|\\u")


def cards_in(value: Any) -> set[str]:
    """Every card named anywhere in a decoded JSON value: its strings, keys included."""
    found: set[str] = set()
    for text in _strings(value):
        for run in CARD_RUN.findall(text):
            found.update(run[i : i + 2] for i in range(0, len(run), 2))
    return found


# Fields of a provably fair deal: seeds a client chose and hashes, never cards.
SEED_FIELDS = frozenset({"seed", "client_seeds", "server_seed", "commitment"})


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            if key not in SEED_FIELDS:
                yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


@dataclass(frozen=True)
class HandTruth:
    """One hand as its record has it (every card, for the operator)."""

    table: int
    number: int
    players: Mapping[int, str]  # seat -> the player dealt there
    down: Mapping[int, frozenset[str]]  # seat -> its down cards
    up: frozenset[str]  # every card dealt face up (common cards too)
    shown: Mapping[int, frozenset[str]]  # seat -> the cards its showdown showed
    folded: frozenset[int]
    mucked: frozenset[int]
    streets: Mapping[str, str]  # card -> the street it was dealt on
    misaddressed: tuple[str, ...] = ()  # down cards the record says went to others too

    @classmethod
    def from_events(
        cls,
        table: int,
        number: int,
        events: Iterable[Mapping[str, Any]],
        players: Mapping[int, str] | None = None,
    ) -> HandTruth:
        """From ``GET /admin/hands/{id}/events``: each event's ``kind``, ``data``, ``to`` and
        ``audience``. A seat's player is taken from ``players`` (the hand's list of players)
        if given, else from the audience of its down cards."""
        named: dict[int, str] = dict(players or {})
        down: defaultdict[int, set[str]] = defaultdict(set)
        up: set[str] = set()
        shown: dict[int, frozenset[str]] = {}
        folded: set[int] = set()
        mucked: set[int] = set()
        streets: dict[str, str] = {}
        misaddressed: list[str] = []
        for event in events:
            kind, data = event["kind"], event["data"]
            if kind == "down_cards":
                seat = int(data["seat"])
                if event["to"] != seat:
                    misaddressed += data["cards"]
                if players is None:
                    named[seat] = str(event["audience"])
                down[seat].update(data["cards"])
                streets.update(dict.fromkeys(data["cards"], data["street"]))
            elif kind == "street_dealt":
                for deal in data["deals"]:
                    up.update(deal["up"])
                    streets.update(dict.fromkeys(deal["up"], data["street"]))
            elif kind == "common_card":
                up.add(data["card"])
                streets[data["card"]] = data["street"]
            elif kind == "showdown":
                shown[int(data["seat"])] = frozenset(data["cards"])
            elif kind == "action" and data["action"] == "fold":
                folded.add(int(data["seat"]))
            elif kind == "muck":
                mucked.add(int(data["seat"]))
        return cls(
            table,
            number,
            named,
            {seat: frozenset(cards) for seat, cards in down.items()},
            frozenset(up),
            shown,
            frozenset(folded),
            frozenset(mucked),
            streets,
            tuple(misaddressed),
        )

    def owner_of(self, card: str) -> int | None:
        """The seat that holds ``card`` face down, if one does."""
        for seat, cards in self.down.items():
            if card in cards:
                return seat
        return None

    def seat_of(self, player: str | None) -> int | None:
        for seat, name in self.players.items():
            if name == player:
                return seat
        return None


@dataclass(frozen=True)
class Recorded:
    """One frame as a connection received it."""

    connection: str
    player: str | None  # signed in as (None: a logged-out socket)
    text: str


@dataclass(frozen=True)
class Leak:
    connection: str
    player: str | None
    table: int | None
    hand: int | None
    seq: int | None
    card: str
    why: str
    text: str

    def __str__(self) -> str:
        return (
            f"{self.connection} ({self.player or 'logged out'}) table {self.table} hand "
            f"{self.hand} seq {self.seq}: {self.card} {self.why}\n    {self.text[:400]}"
        )


@dataclass
class Report:
    """What a scan found, and what it looked at (so that a pass is not vacuous)."""

    leaks: list[Leak] = field(default_factory=list)
    frames: int = 0
    frames_with_cards: int = 0
    cards_checked: int = 0  # card mentions judged
    own_down_seen: Counter[tuple[str, int, int]] = field(default_factory=Counter)
    # (connection, table, hand) -> mentions of the connection's own down cards
    shown_seen: int = 0  # other seats' down cards seen at or after their showdown
    snapshots_with_own_down: int = 0
    problems: list[str] = field(default_factory=list)  # records and frames that disagree


class Timeline:
    """When, by ``seq``, each hand of each table began, each street of it was dealt and each
    seat of it was shown: read from the public events of every connection (they must
    agree)."""

    KINDS = ('"hand_number"', '"street_dealt"', '"common_card"', '"showdown"')  # as JSON

    def __init__(self) -> None:
        self.starts: dict[int, dict[int, int]] = defaultdict(dict)  # table -> seq -> hand
        self.showdowns: dict[tuple[int, int], int] = {}  # (table, seq) -> seat
        self.deals: dict[tuple[int, int], str] = {}  # (table, seq) -> street
        self.problems: list[str] = []
        self._sorted: dict[int, tuple[list[int], list[int]]] = {}
        self._dealt: dict[tuple[int, int, str], int] | None = None

    def add(self, frame: Mapping[str, Any]) -> None:
        if frame.get("type") != "event" or frame.get("private"):
            return
        table, seq, kind, data = frame["table"], frame["seq"], frame["kind"], frame["data"]
        if kind == "hand_number":
            known = self.starts[table].setdefault(seq, data["hand"])
            if known != data["hand"]:
                self.problems.append(f"table {table} seq {seq}: hand {known} and {data['hand']}")
        elif kind == "showdown":
            known = self.showdowns.setdefault((table, seq), data["seat"])
            if known != data["seat"]:
                self.problems.append(f"table {table} seq {seq}: showdown of {known} and {data}")
        elif kind in ("street_dealt", "common_card"):
            self.deals[(table, seq)] = data["street"]

    def hand_at(self, table: int, seq: int) -> int | None:
        """The hand a frame of ``seq`` belongs to: the last one begun at or before it."""
        if table not in self._sorted:
            ordered = sorted(self.starts.get(table, {}).items())
            self._sorted[table] = ([s for s, _ in ordered], [h for _, h in ordered])
        seqs, hands = self._sorted[table]
        at = bisect.bisect_right(seqs, seq)
        return hands[at - 1] if at else None

    def dealt_at(self, table: int, hand: int, street: str) -> int | None:
        """The ``seq`` of the event that dealt ``street`` in ``hand``."""
        if self._dealt is None:
            self._dealt = {}
            for (t, seq), dealt in self.deals.items():
                number = self.hand_at(t, seq)
                if number is not None:
                    self._dealt[(t, number, dealt)] = seq
        return self._dealt.get((table, hand, street))

    def shown_at(self, table: int, hand: int, seat: int) -> int | None:
        """The ``seq`` of the showdown event of ``seat`` in ``hand``."""
        for (t, seq), shown in self.showdowns.items():
            if t == table and shown == seat and self.hand_at(table, seq) == hand:
                return seq
        return None


def _place(frame: Mapping[str, Any]) -> tuple[int | None, int | None, bool]:
    """The table and ``seq`` a frame speaks of, and whether it is a snapshot."""
    if frame.get("type") == "event":
        return frame.get("table"), frame.get("seq"), False
    result = frame.get("result")
    if (
        frame.get("type") == "reply"
        and isinstance(result, Mapping)
        and result.get("type") == "snapshot"
    ):
        return result.get("table"), result.get("seq"), True
    return None, None, False


def scan(frames: Iterable[Recorded], truths: Mapping[tuple[int, int], HandTruth]) -> Report:
    """Judge every card of every frame; see the module's docstring."""
    report = Report()
    decoded = []
    for recorded in frames:
        report.frames += 1
        # Only a frame whose raw text could name a card, or mark a moment, is decoded.
        text = recorded.text
        if MAYBE_CARD.search(text) or any(kind in text for kind in Timeline.KINDS):
            decoded.append((recorded, json.loads(recorded.text)))
    timeline = Timeline()
    for _, frame in decoded:
        timeline.add(frame)
    report.problems.extend(timeline.problems)
    shown_at: dict[tuple[int, int, int], int | None] = {}
    for truth in truths.values():
        for seat in truth.shown:
            seq = timeline.shown_at(truth.table, truth.number, seat)
            shown_at[(truth.table, truth.number, seat)] = seq
            if seq is None:
                report.problems.append(
                    f"table {truth.table} hand {truth.number}: no frame showed seat {seat}"
                )
        if truth.misaddressed:
            report.problems.append(
                f"table {truth.table} hand {truth.number}: the record sent the down cards "
                f"{' '.join(truth.misaddressed)} to more than their seat"
            )
        for seat in truth.folded | truth.mucked:
            if seat in truth.shown:
                report.problems.append(
                    f"table {truth.table} hand {truth.number}: seat {seat} folded or mucked "
                    "and was shown"
                )
    for recorded, frame in decoded:
        _judge(recorded, frame, timeline, truths, shown_at, report)
    return report


def _judge(
    recorded: Recorded,
    frame: Mapping[str, Any],
    timeline: Timeline,
    truths: Mapping[tuple[int, int], HandTruth],
    shown_at: Mapping[tuple[int, int, int], int | None],
    report: Report,
) -> None:
    """Judge the cards of one frame into ``report``."""
    cards = cards_in(frame)
    if not cards:
        return
    report.frames_with_cards += 1
    table, seq, snapshot = _place(frame)

    def leak(card: str, why: str, hand: int | None = None) -> None:
        report.leaks.append(
            Leak(recorded.connection, recorded.player, table, hand, seq, card, why, recorded.text)
        )

    if table is None or seq is None:
        for card in sorted(cards):
            leak(card, "named in a frame of no table")
        return
    hand = timeline.hand_at(table, seq)
    truth = None if hand is None else truths.get((table, hand))
    if hand is None or truth is None:
        for card in sorted(cards):
            leak(card, "named in a frame of no recorded hand", hand)
        return
    mine = truth.seat_of(recorded.player)
    if frame.get("kind") == "showdown" and frame.get("type") == "event":
        seat = frame["data"]["seat"]
        if frozenset(frame["data"]["cards"]) != truth.shown.get(seat):
            report.problems.append(f"{recorded.text}: not the record's showdown of {seat}")
    for card in sorted(cards):
        report.cards_checked += 1
        street = truth.streets.get(card)
        dealt = None if street is None else timeline.dealt_at(table, hand, street)
        if street is not None and (dealt is None or seq < dealt):
            leak(card, f"was dealt on {street} street, at seq {dealt}", hand)
            continue
        owner = truth.owner_of(card)
        if owner is not None and owner == mine:
            report.own_down_seen[(recorded.connection, table, hand)] += 1
            report.snapshots_with_own_down += snapshot
            continue
        if card in truth.up:
            continue
        if owner is None:
            leak(card, "was never dealt face up nor down in this hand", hand)
            continue
        when = shown_at.get((table, hand, owner))
        if card in truth.shown.get(owner, frozenset()) and when is not None and seq >= when:
            report.shown_seen += 1
            continue
        if owner in truth.folded:
            why = f"is a down card of seat {owner}, which folded"
        elif owner in truth.mucked:
            why = f"is a down card of seat {owner}, which mucked"
        elif when is not None:
            why = f"is a down card of seat {owner}, shown only at seq {when}"
        else:
            why = f"is a down card of seat {owner}, never shown"
        leak(card, why, hand)


def history_leaks(player: str, truth: HandTruth, history: Any) -> list[Leak]:
    """The cards of a player's own history of a finished hand (``GET /hands/{id}``: its
    events, its PHH file) that the player never saw: every card in it must be an up card,
    one of the player's own down cards, or a card a showdown showed."""
    allowed = set(truth.up).union(*truth.shown.values())
    mine = truth.seat_of(player)
    if mine is not None:
        allowed |= truth.down.get(mine, frozenset())
    text = json.dumps(history)
    leaks = []
    for card in sorted(cards_in(history) - allowed):
        owner = truth.owner_of(card)
        why = "was never dealt in this hand" if owner is None else f"is a down card of seat {owner}"
        leaks.append(
            Leak(
                f"GET /hands (as {player})",
                player,
                truth.table,
                truth.number,
                None,
                card,
                why,
                text,
            )
        )
    return leaks
