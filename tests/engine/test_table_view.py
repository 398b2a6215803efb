"""The one fold of a table: TablePicture, from events, from a snapshot, from a Table."""

from __future__ import annotations

import doctest
import random

import orjson

import engine.table_view
from engine.cards import Deck
from engine.events import decode
from engine.play import play_random_hand, random_action
from engine.table import Table
from engine.table_events import (
    ChipsAdded,
    HandCancelled,
    HandNumber,
    SatIn,
    SatOut,
    SeatOfferExpired,
    SeatTaken,
    WaitingList,
)
from engine.table_view import TablePicture
from engine.variants import VARIANTS, TableConfig
from engine.views import HandFold, view


def json(value: object) -> object:
    return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))


def settled(snapshot: dict[str, object]) -> object:
    """A hand that is over stays in a fold (a client shows it until the next); the table
    has settled it."""
    hand = snapshot["hand"]
    if isinstance(hand, dict) and hand["over"]:
        snapshot = {**snapshot, "hand": None, "hand_number": None}
    return json(snapshot)


def test_the_docstring() -> None:
    assert doctest.testmod(engine.table_view).failed == 0


def test_a_table_and_the_fold_of_its_events_agree_hand_after_hand() -> None:
    """The engine's Table played by hand, its table events written as the server writes
    them: the fold of those events is the picture of the Table, after every step."""
    rng = random.Random(4)
    table = Table(TableConfig(), 4)
    pictures = {who: TablePicture(4, who) for who in ("ann", "bob", "cat", None)}

    def tell(*events: object) -> None:
        for event in events:
            for picture in pictures.values():
                picture.apply(decode(event.kind, event.data))  # type: ignore[attr-defined]
        for who, picture in pictures.items():
            made = TablePicture.of_table(
                table, who, hand_number=number, waiting=waiting, presence=lambda _: (True, 0.0)
            )
            assert settled(picture.snapshot()) == json(made.snapshot()), who

    number, waiting = 0, ["dan"]
    tell(WaitingList(("dan",)))
    for seat, player in enumerate(("ann", "bob", "cat")):
        table.sit(seat, player, 30)
        tell(SeatTaken(seat, player, 30))
    for number in range(1, 8):
        tell(HandNumber(number))
        hand = table.start_hand(Deck(rng=rng))
        tell(*hand.events)
        table.add_chips(0, 5)
        table.sit_out(2, next_hand=True)
        tell(ChipsAdded(0, 5, True), SatOut(2, True))
        if number == 3:
            cancelled = [(s, hand.starting[i]) for i, s in enumerate(hand.seats)]
            table.cancel_hand()
            tell(HandCancelled(number, "internal_error", tuple(cancelled)))
        else:
            while not hand.is_over():
                events = hand.apply(random_action(hand, rng))
                for event in events:
                    for picture in pictures.values():
                        picture.apply(event)
            table.finish_hand()
            tell()
        for seat, occupant in enumerate(table.seats):
            if occupant is not None and occupant.stack < table.needed_to_play():
                table.add_chips(seat, 30)
                tell(ChipsAdded(seat, 30, False))
        table.sit_in(2)
        tell(SatIn(2))
    waiting = []
    tell(SeatOfferExpired("dan"))


def test_a_fold_kept_event_by_event_is_the_fold_of_the_whole_hand() -> None:
    """``HandFold`` fed one event at a time shows, after each, what the hand's events so far
    fold to, for every viewer; a picture it gave is not changed by the events after it."""
    rng = random.Random(11)
    for variant in sorted(VARIANTS):
        config = TableConfig(variant=VARIANTS[variant])
        hand = play_random_hand(config, [rng.randrange(5, 120) for _ in range(5)], rng)
        fold = HandFold()
        given: list[tuple[int, int | None, dict[str, object], object]] = []
        for count, event in enumerate(hand.events, 1):
            fold.feed((event,))
            for viewer in (None, 0, 3):
                picture = fold.view(viewer)
                assert picture == view(hand.events[:count], viewer), (variant, count, viewer)
                read = fold.view(viewer, pots=False, detached=False)
                assert read == {k: v for k, v in picture.items() if k != "pots"}
                given.append((count, viewer, picture, json(picture)))
        for count, viewer, picture, as_then in given:
            assert json(picture) == as_then, (variant, count, viewer)


def test_a_snapshot_folds_back_to_its_picture() -> None:
    rng = random.Random(9)
    table = Table(TableConfig(), 3)
    for seat, player in enumerate(("ann", "bob", "cat")):
        table.sit(seat, player, 100)
    hand = table.start_hand(Deck(rng=rng))
    for _ in range(5):
        hand.apply(random_action(hand, rng))
    for who in ("ann", "bob", None):
        shown = TablePicture.of_table(table, who, hand_number=1, waiting=["dan"]).snapshot()
        again = TablePicture.of_snapshot(json(shown), who).snapshot()  # type: ignore[arg-type]
        assert json(again) == json(shown)
