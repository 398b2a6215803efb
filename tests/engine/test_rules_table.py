"""The table across hands: who is dealt in, table stakes, sitting out, leaving."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from decks import play

from engine.actions import Action
from engine.cards import Deck
from engine.errors import IllegalAction, InvalidAction
from engine.table import Table
from engine.variants import TableConfig

STUD = TableConfig()  # ante 1, bring-in 2


def table(*stacks: int, config: TableConfig = STUD) -> Table:
    t = Table(config)
    for number, chips in enumerate(stacks):
        t.sit(number, f"p{number}", chips)
    return t


def deck(seed: int = 1) -> Deck:
    return Deck(rng=random.Random(seed))


def fold_out(t: Table) -> None:
    """Finish the current hand quickly: everyone but the bring-in folds."""
    hand = t.hand
    assert hand is not None
    while not hand.is_over():
        legal = hand.legal_actions()
        play(hand, f"{legal.seat} {'bring_in' if 'bring_in' in legal.kinds else 'fold'}")


def test_scs2_seat_sitting_out_is_not_dealt_in() -> None:
    """SCS 2: the dealer deals to every seat that antes and to no seat that has not (a seated
    player who wants no hand sits out)."""
    t = table(100, 100, 100)
    t.sit_out(1)
    hand = t.start_hand(deck())
    assert hand.seats == [0, 2]
    assert [e.data["seat"] for e in hand.events if e.kind == "ante"] == [0, 2]
    fold_out(t)
    t.sit_in(1)
    t.finish_hand()
    assert t.dealt_in() == [0, 1, 2]


def test_scs11_ante_and_bring_in_needed_to_be_dealt_in() -> None:
    """SCS 11: a player needs at least the ante plus the bring-in to receive a hand."""
    t = table(100, 2, 3)
    assert t.dealt_in() == [0, 2]


def test_scs11_alternate_ante_alone_is_enough() -> None:
    """SCS 11 alternate (`eligibility="ante"`): the ante alone is enough to be dealt in."""
    t = table(100, 1, 3, config=replace(STUD, eligibility="ante"))
    assert t.dealt_in() == [0, 1, 2]
    hand = t.start_hand(deck())
    assert hand.stacks[1] == 0


def test_table_stakes_chips_added_during_a_hand_wait_for_its_end() -> None:
    """Table stakes (Robert's glossary, RULES.md): chips bought during a hand do not play in it."""
    t = table(100, 100)
    hand = t.start_hand(deck())
    t.add_chips(0, 500)
    assert hand.stacks[0] == 99
    assert t.seats[0] is not None and t.seats[0].pending_chips == 500
    fold_out(t)
    t.finish_hand()
    seat = t.seats[0]
    assert seat is not None and seat.stack == hand.result().stacks[0] + 500
    t.add_chips(1, 10)  # between hands: at once
    assert t.seats[1] is not None and t.seats[1].stack == hand.result().stacks[1] + 10


def test_leaving_during_a_hand_takes_effect_after_it() -> None:
    """RULES.md: a player who leaves during a hand plays it out (on the clock) and leaves after."""
    t = table(100, 100, 100)
    t.start_hand(deck())
    assert t.leave(2) is None
    fold_out(t)
    departures = t.finish_hand()
    assert [(number, player) for number, player, _ in departures] == [(2, "p2")]
    assert t.seats[2] is None
    seat = t.seats[1]
    assert seat is not None
    assert t.leave(1) == seat.stack  # between hands: at once, with the chips
    assert t.seats[1] is None


def test_a_cancelled_hand_gives_every_chip_back_and_settles_the_table() -> None:
    """A voided hand (a server fault): stacks go back to where the hand began; chips added
    meanwhile join them, and who asked to leave leaves, as after any hand."""
    t = table(100, 100, 100)
    hand = t.start_hand(deck())
    legal = hand.legal_actions()
    assert legal.seat is not None
    hand.apply(Action(legal.seat, "bring_in"))
    t.add_chips(0, 50)
    assert t.leave(2) is None
    departures = t.cancel_hand()
    assert departures == [(2, "p2", 100)]
    assert [s.stack if s else None for s in t.seats[:3]] == [150, 100, None]
    assert t.hand is None and t.hands_played == 0
    assert t.cancel_hand() == []  # nothing in progress: nothing to do


def test_sit_out_next_hand() -> None:
    """RULES.md: "sit out next hand" keeps the player in the current hand only."""
    t = table(100, 100, 100)
    hand = t.start_hand(deck())
    t.sit_out(0, next_hand=True)
    assert 0 in hand.seats and not hand.is_over()
    fold_out(t)
    t.finish_hand()
    assert t.dealt_in() == [1, 2]
    second = t.start_hand(deck(2))
    assert second.seats == [1, 2]


def test_a_hand_needs_two_players_sitting_in() -> None:
    """SCS 2: no hand is dealt with fewer than two players dealt in."""
    t = table(100, 100)
    t.sit_out(1)
    with pytest.raises(IllegalAction):
        t.start_hand(deck())


def test_seating_errors_are_typed() -> None:
    """Malformed or illegal seating raises typed errors and changes nothing."""
    t = table(100)
    with pytest.raises(IllegalAction):
        t.sit(0, "someone", 50)
    with pytest.raises(IllegalAction):
        t.sit(1, "p0", 50)
    with pytest.raises(InvalidAction):
        t.sit(99, "x", 50)
    with pytest.raises(InvalidAction):
        t.sit(1, "x", 0)
    assert [s.player if s else None for s in t.seats][:2] == ["p0", None]


def test_time_collection_takes_the_fee_from_the_stack_between_hands() -> None:
    from engine.table_events import TimeCollected
    from engine.table_view import TablePicture

    t = table(50, 40)
    picture = TablePicture(len(t.seats), "p0")
    for event in t.sit(2, "p2", 30):
        picture.apply(event)
    events = t.collect_time(0, 3)
    assert events == [TimeCollected(seat=0, amount=3, stack=47)]
    assert events[0].data == {"seat": 0, "amount": 3, "stack": 47}
    assert t.seats[0] is not None and t.seats[0].stack == 47
    picture.apply(TimeCollected(seat=2, amount=4, stack=26))
    assert picture.seats[2].stack == 26
    for bad in (0, -1, True):
        with pytest.raises(InvalidAction):
            t.collect_time(1, bad)
    with pytest.raises(IllegalAction):
        t.collect_time(1, 41)  # more than the stack
    assert t.seats[1] is not None and t.seats[1].stack == 40
    t.start_hand(deck())
    with pytest.raises(IllegalAction):
        t.collect_time(0, 1)  # not during the seat's hand
