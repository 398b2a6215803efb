"""The table's policies, alone: who the table plays for (absence), whose clock runs and the
banks after a hand (turns), who pays the time fee (time collection); and the moves the
journal writes, read back from the rows the server has stored."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from engine.cards import Deck
from engine.table import SeatingRules, Table
from engine.table_events import TimeBank
from engine.variants import TableConfig, find_variant
from server.bus.memory import table_channel
from server.store.records import LiveHandState
from server.table import absence, dealing, time_collection, turns
from server.table.moves import AbsentAction, PlayerAction, Timeout, move_from_row

GOLDEN = Path(__file__).parents[1] / "golden"


def table_in_hand(players: int = 3, seed: int = 5) -> Table:
    table = Table(TableConfig(variant=find_variant("seven_card_stud")), 6, SeatingRules(20, 500))
    for seat in range(players):
        table.sit(seat, f"p{seat}", 100)
    table.start_hand(Deck(rng=random.Random(seed)))
    return table


def player_to_act(table: Table) -> tuple[int, str]:
    hand = table.hand
    assert hand is not None
    seat = hand.seat_to_act()
    assert seat is not None
    occupant = table.seats[seat]
    assert occupant is not None
    return seat, occupant.player


def never(_player: str) -> bool:
    return False


# ---------------------------------------------------------------------- absence


def test_a_present_seat_to_act_is_nobody_s_to_play() -> None:
    table = table_in_hand()
    assert absence.absent_move(table, checks_when_free=never, on_clock=False) is None
    seat, _ = player_to_act(table)
    assert turns.clocked_seat(table) == seat


def test_a_bring_in_due_is_posted_for_a_seat_gone_from_the_hand() -> None:
    table = table_in_hand()
    seat, _ = player_to_act(table)
    table.sit_out(seat)
    move = absence.absent_move(table, checks_when_free=never, on_clock=False)
    assert move == AbsentAction(seat, "bring_in", "sitting_out", at_once=True)
    assert turns.clocked_seat(table) is None  # the table plays it: no clock


def test_a_free_check_for_who_asked_else_a_fold_and_a_leaver_always_folds() -> None:
    table = table_in_hand()
    hand = table.hand
    assert hand is not None
    while "check" not in hand.legal_actions().kinds:  # to a street where a check is free
        seat, _ = player_to_act(table)
        kinds = hand.legal_actions().kinds
        PlayerAction(seat, "bring_in" if "bring_in" in kinds else "call").apply(hand)
    seat, player = player_to_act(table)
    table.sit_out(seat)
    asked = absence.absent_move(table, checks_when_free={player}.__contains__, on_clock=True)
    assert asked == AbsentAction(seat, "check", "sitting_out", at_once=False)
    assert absence.absent_move(table, checks_when_free=never, on_clock=True) == AbsentAction(
        seat, "fold", "sitting_out", at_once=False
    )
    table.sit_in(seat)
    assert table.leave(seat) is None  # in the hand: leaves after it
    leaving = absence.absent_move(table, checks_when_free={player}.__contains__, on_clock=False)
    assert leaving == AbsentAction(seat, "fold", "leaving", at_once=True)


# ---------------------------------------------------------------------- turns


def test_a_bank_change_is_told_to_the_tenth() -> None:
    assert turns.bank_changed(2, 30.0, 30.04) == []
    assert turns.bank_changed(2, 30.0, 12.26) == [TimeBank(seat=2, time_bank=12.3)]


def test_banks_are_refilled_up_to_full_and_told_for_seats_their_player_still_holds() -> None:
    dealt = {0: "ann", 1: "bob", 2: "cat"}
    banks = {"ann": 10.0, "bob": 29.5, "cat": 0.0}
    seated = {0: "ann", 1: "bob", 2: "dan"}  # cat left, dan sits there now
    new, told = turns.refilled_banks(dealt, banks, seated.get, full=30.0, refill=2.0)
    assert new == {"ann": 12.0, "bob": 30.0, "cat": 2.0}
    assert told == [TimeBank(seat=0, time_bank=12.0), TimeBank(seat=1, time_bank=30.0)]
    assert turns.refilled_banks({3: "eve"}, banks, seated.get, full=30.0, refill=2.0) == ({}, [])


# ---------------------------------------------------------------------- time collection


def table_before_a_deal(stacks: list[int]) -> Table:
    table = Table(TableConfig(variant=find_variant("seven_card_stud")), 6, SeatingRules(1, 500))
    for seat, stack in enumerate(stacks):
        table.sit(seat, f"p{seat}", stack)
    return table


def test_the_fee_is_due_once_a_period_and_a_stack_that_cannot_pay_is_short() -> None:
    table = table_before_a_deal([100, 100, 3])
    paid = {"p1": 1_000.0}
    due = time_collection.fees_due(table, fee=2, period=60.0, now=900.0, paid_until=paid.get)
    assert due.fees == {0: 2}  # p1 has paid until later; p2 cannot pay and still play
    assert due.short == (2,)
    assert due.paid_until == 960.0
    later = time_collection.fees_due(table, fee=2, period=60.0, now=1_000.0, paid_until=paid.get)
    assert later.fees == {0: 2, 1: 2}
    free = time_collection.fees_due(table, fee=0, period=60.0, now=1_000.0, paid_until=paid.get)
    assert free == time_collection.FeesDue()


# ---------------------------------------------------------------------- the journal's rows


def stored_rows() -> list[dict[str, Any]]:
    """Every action row of the kept transcripts: what the server wrote before its moves
    were typed (tests/server/golden was recorded then)."""
    rows = []
    for path in sorted(GOLDEN.glob("*.json")):
        for entry in json.loads(path.read_text()):
            if entry[0] == "store" and entry[1] == "record_action":
                rows.append(entry[2][3])
    return rows


def test_every_stored_row_reads_as_a_move_that_writes_it_again() -> None:
    rows = stored_rows()
    kinds = {type(move_from_row(row)) for row in rows}
    assert kinds == {PlayerAction, AbsentAction, Timeout}
    for row in rows:
        assert move_from_row(row).row() == row


@pytest.mark.parametrize(
    ("row", "move"),
    [
        ({"seat": 1, "timeout": True}, Timeout(1)),
        ({"seat": 2, "kind": "call", "amount": None}, PlayerAction(2, "call")),  # no action_id
        (
            {"seat": 0, "kind": "bet", "amount": 10, "action_id": "a7"},
            PlayerAction(0, "bet", 10, "a7"),
        ),
        (  # before turns played at once were marked
            {"seat": 3, "kind": "fold", "amount": None, "absent": "leaving"},
            AbsentAction(3, "fold", "leaving", at_once=False),
        ),
    ],
)
def test_rows_of_older_versions_read_as_they_were_meant(row: dict[str, Any], move: Any) -> None:
    assert move_from_row(row) == move


def test_a_stored_hand_replays_from_its_rows_to_where_it_was() -> None:
    """The takeover scene's last hand, dealt again from its stored deck and rows by the
    replay, ends with the stacks the table that played it told."""
    transcript = json.loads((GOLDEN / "takeover.json").read_text())
    live = [e[2][0] for e in transcript if e[0] == "store" and e[1] == "start_hand"][-1]
    rows = [
        e[2][3]
        for e in transcript
        if e[0] == "store" and e[1] == "record_action" and e[2][1] == live["number"]
    ]
    ended = [
        e[2]["data"]["stacks"]
        for e in transcript
        if e[0] == "bus" and e[1] == table_channel(7) and e[2].get("kind") == "hand_ended"
    ][-1]
    config = TableConfig(variant=find_variant("seven_card_stud"))
    table = Table(config, 6, SeatingRules(20, 500))
    for seat, player, stack in live["players"]:
        table.sit(seat, player, stack)
    players = [(seat, player, stack) for seat, player, stack in live["players"]]
    stored = LiveHandState(live["table_id"], live["number"], live["deck"], players, rows)
    hand = dealing.replay(config, table.seats, stored)
    assert hand.is_over()
    assert {seat: stack for seat, stack in hand.result().stacks.items()} == {
        line["seat"]: line["stack"] for line in ended
    }
