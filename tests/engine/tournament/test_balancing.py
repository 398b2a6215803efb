"""Balancing a tournament's tables (engine.tournament.balance): tournaments played out hand
boundary by hand boundary, with random tables in a hand, checked after every plan; and the
rules one by one: TDA's move by position for stud, breaking, the final table, waiting for a
table in a hand, and bad input."""

from __future__ import annotations

import hashlib
import math
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.protocol import ErrorCode
from engine.tournament.balance import Move, MoveReason, Plan, TableSeats, plan_moves, tables_of
from engine.tournament.draw import SeatingError, draw_seats, verify

SEED = hashlib.sha256(b"balancing").digest()
TOURNAMENT = 11


def _plan(
    tables: dict[int, TableSeats], seats: int, eliminated: tuple[str, ...] = (), round_: int = 2
) -> Plan:
    return plan_moves(
        tables, seats, eliminated, seed=SEED, tournament_id=TOURNAMENT, draw_round=round_
    )


def _table(
    players: dict[int, str], between: bool = True, opened: tuple[int, ...] = ()
) -> TableSeats:
    return TableSeats(players, between, opened)


def _full(name: str, seats: range) -> dict[int, str]:
    return {seat: f"{name}{seat}" for seat in seats}


def _counts(tables: dict[int, TableSeats]) -> dict[int, int]:
    return {number: len(table.seats) for number, table in tables.items()}


def _open_order(table: TableSeats, seats: int) -> list[int]:
    empty = [seat for seat in range(seats) if seat not in table.seats]
    return [seat for seat in empty if seat not in table.opened] + list(table.opened)


def check_plan(
    before: dict[int, TableSeats],
    seats: int,
    eliminated: tuple[str, ...],
    plan: Plan,
    seed: bytes = SEED,
    keep: frozenset[str] = frozenset(),
) -> None:
    """Replays the plan's moves on the tables as they were and checks every rule (``keep``:
    the players an operator moved, passed over while the giving table has another)."""
    layout = {number: dict(table.seats) for number, table in before.items()}
    opened = {number: _open_order(table, seats) for number, table in before.items()}
    for player in eliminated:
        ((number, seat),) = [
            (n, s) for n, at in layout.items() for s, p in at.items() if p == player
        ]
        del layout[number][seat]
        opened[number].append(seat)
    field = {player for at in layout.values() for player in at.values()}
    occupied = [number for number, at in layout.items() if at]

    movers = Counter(move.player for move in plan.moves)
    assert all(count == 1 for count in movers.values()), "a player moved twice"
    for move in plan.moves:
        assert move.player in field
        assert before[move.from_table].between_hands, "a player was moved out of a hand"
        assert 0 <= move.to_seat < seats
    for move in (m for m in plan.moves if m.reason is MoveReason.BALANCE):
        # TDA 10 A, stud: the short table's last opened seat, taken by position.
        assert move.to_seat == opened[move.to_table][-1]
        at_giver = layout[move.from_table]
        after_seat = [(move.to_seat + k) % seats for k in range(seats)]
        in_order = [s for s in after_seat if s in at_giver]
        assert move.from_seat == next((s for s in in_order if at_giver[s] not in keep), in_order[0])
        assert at_giver.pop(move.from_seat) == move.player
        opened[move.from_table].append(move.from_seat)
        opened[move.to_table].remove(move.to_seat)
        assert move.to_seat not in layout[move.to_table]
        layout[move.to_table][move.to_seat] = move.player
    drawn = [m for m in plan.moves if m.reason is not MoveReason.BALANCE]
    for move in drawn:  # every drawn player stands up, then sits down
        assert layout[move.from_table].pop(move.from_seat) == move.player
    for move in drawn:
        assert move.to_seat not in layout[move.to_table]
        layout[move.to_table][move.to_seat] = move.player
    for number in plan.broken:
        assert not layout.pop(number), "a broken table kept a player"
    assert layout == {n: dict(t.seats) for n, t in plan.tables.items()}

    seated = [player for table in plan.tables.values() for player in table.seats.values()]
    assert len(seated) == len(set(seated)) and set(seated) == field, "a player lost or doubled"
    assert all(0 < len(table.seats) <= seats for table in plan.tables.values())
    assert all(plan.tables[n].between_hands == before[n].between_hands for n in plan.tables)

    needed = math.ceil(len(field) / seats)
    assert len(plan.tables) >= needed, "a table broken the field did not need"
    final_waits = needed == 1 and len(plan.tables) > 1
    if final_waits:
        assert not plan.moves and plan.waiting_for and plan.final_table is None
        assert plan.hold == {n for n in plan.tables if before[n].between_hands}
    else:
        assert not plan.hold
        if len(plan.tables) > needed:
            assert not any(before[n].between_hands for n in plan.tables), "a table could break"
        counts = [len(t.seats) for n, t in plan.tables.items() if n not in plan.waiting_for]
        assert not counts or max(counts) - min(counts) <= 1, "tables out of balance"
    assert not any(before[n].between_hands for n in plan.waiting_for)
    if all(before[n].between_hands for n in occupied):
        assert not plan.waiting_for and len(plan.tables) == needed

    if plan.draw is None:
        assert not drawn
    else:
        assert verify(seed, plan.draw)
        assert {m.player for m in drawn} <= set(plan.draw.draw.players) <= field
        for player, table, seat in plan.draw.placements:
            assert plan.tables[table].seats[seat] == player
    if plan.final_table is not None:
        assert list(plan.tables) == [plan.final_table] == [min(occupied)]
        assert plan.draw is not None and set(plan.draw.draw.players) == field
    elif needed == 1 and len(occupied) > 1:
        assert final_waits, "the field fits one table and no final table was drawn"


@st.composite
def eliminations(draw: st.DrawFn, tables: dict[int, TableSeats]) -> tuple[str, ...]:
    """Players out at the tables that just finished a hand: never a whole table."""
    out: list[str] = []
    for table in tables.values():
        if table.between_hands and len(table.seats) > 1:
            players = sorted(table.seats.values())
            out += draw(st.lists(st.sampled_from(players), unique=True, max_size=len(players) - 1))
    return tuple(out)


@given(
    data=st.data(),
    seats=st.integers(2, 9),
    players=st.integers(2, 70),
    seed=st.binary(min_size=32, max_size=32),
)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_tournament_played_out_keeps_every_rule_at_every_hand_boundary(
    data: st.DataObject, seats: int, players: int, seed: bytes
) -> None:
    seating = draw_seats(seed, TOURNAMENT, [f"p{i}" for i in range(players)], seats)
    tables = tables_of(seating)
    draw_round, formed_final = 2, len(tables) == 1
    for _ in range(6 * players + 20):
        field = sum(len(table.seats) for table in tables.values())
        if field == 1:
            break
        ending = data.draw(st.sampled_from(sorted(tables)), label="table ending a hand")
        everyone = data.draw(st.booleans(), label="every table between hands")
        tables = {
            number: TableSeats(
                table.seats,
                everyone or number == ending or data.draw(st.booleans()),
                table.opened,
            )
            for number, table in tables.items()
        }
        out = data.draw(eliminations(tables), label="eliminated")
        plan = plan_moves(
            tables, seats, out, seed=seed, tournament_id=TOURNAMENT, draw_round=draw_round
        )
        check_plan(tables, seats, out, plan, seed)
        if plan.draw is not None:
            assert plan.draw.draw.round == draw_round
            draw_round += 1
        formed_final = formed_final or plan.final_table is not None
        tables = plan.tables
    field = sum(len(table.seats) for table in tables.values())
    if field <= seats and len(tables) == 1:
        assert formed_final, "the field came to one table without a final table draw"


def test_a_short_stud_table_is_filled_by_position_from_the_biggest_table() -> None:
    """TDA 10 A: the last seat to open at the short table is filled, by the player in the
    seat of that number at the table that gives."""
    tables = {
        1: _table(_full("a", range(9))),
        2: _table({0: "b0", 1: "b1", 3: "b3", 4: "b4", 7: "b7", 8: "b8"}, opened=(6, 2, 5)),
        3: _table(_full("c", range(1, 9))),
    }
    plan = _plan(tables, 9)
    assert plan.moves == (Move("a5", 1, 5, 2, 5, MoveReason.BALANCE),)
    assert _counts(plan.tables) == {1: 8, 2: 7, 3: 8}
    assert plan.tables[1].opened == (5,)
    assert plan.tables[2].opened == (6, 2)
    assert plan.draw is None and not plan.broken
    check_plan(tables, 9, (), plan)


def test_the_player_after_an_empty_seat_of_that_number_moves() -> None:
    tables = {
        1: _table({s: f"a{s}" for s in (0, 1, 2, 3, 4, 6, 7, 8, 9)}),
        2: _table({s: f"b{s}" for s in (0, 1, 2, 3, 4, 8, 9)}, opened=(7, 6, 5)),
    }
    plan = _plan(tables, 10)
    assert plan.moves == (Move("a6", 1, 6, 2, 5, MoveReason.BALANCE),)
    check_plan(tables, 10, (), plan)


def test_a_player_an_operator_moved_is_passed_over_while_another_can_move() -> None:
    tables = {
        1: _table({s: f"a{s}" for s in (0, 1, 2, 3, 4, 6, 7, 8, 9)}),
        2: _table({s: f"b{s}" for s in (0, 1, 2, 3, 4, 8, 9)}, opened=(7, 6, 5)),
    }
    plan = plan_moves(
        tables, 10, seed=SEED, tournament_id=TOURNAMENT, draw_round=2, keep={"a6", "b0"}
    )
    assert plan.moves == (Move("a7", 1, 7, 2, 5, MoveReason.BALANCE),)
    check_plan(tables, 10, (), plan, keep=frozenset({"a6", "b0"}))
    everyone = {f"a{s}" for s in range(10)}
    plan = plan_moves(tables, 10, seed=SEED, tournament_id=TOURNAMENT, draw_round=2, keep=everyone)
    assert plan.moves == (Move("a6", 1, 6, 2, 5, MoveReason.BALANCE),)  # nobody else to give
    check_plan(tables, 10, (), plan, keep=frozenset(everyone))


def test_a_player_eliminated_opens_the_seat_filled_next() -> None:
    tables = {1: _table(_full("a", range(8))), 2: _table(_full("b", range(8)))}
    plan = _plan(tables, 8, ("b6", "b2"))
    assert plan.moves == (Move("a2", 1, 2, 2, 2, MoveReason.BALANCE),)
    assert _counts(plan.tables) == {1: 7, 2: 7}
    assert plan.tables[2].opened == (6,)


def test_a_player_in_a_hand_is_never_moved_the_plan_waits_for_the_hand() -> None:
    tables = {1: _table(_full("a", range(8)), between=False), 2: _table(_full("b", range(6)))}
    waiting = _plan(tables, 8)
    assert not waiting.moves and waiting.waiting_for == {1} and not waiting.hold
    assert waiting.tables == {
        n: TableSeats(t.seats, t.between_hands, (6, 7) if n == 2 else ()) for n, t in tables.items()
    }
    finished = {1: _table(_full("a", range(8))), 2: waiting.tables[2]}
    plan = _plan(finished, 8)
    assert plan.moves == (Move("a7", 1, 7, 2, 7, MoveReason.BALANCE),)


def test_a_table_in_a_hand_takes_a_player_who_waits_for_its_next_deal() -> None:
    tables = {1: _table(_full("a", range(8))), 2: _table(_full("b", range(6)), between=False)}
    plan = _plan(tables, 8)
    assert plan.moves == (Move("a7", 1, 7, 2, 7, MoveReason.BALANCE),)
    assert not plan.waiting_for


def test_the_fewest_players_table_between_hands_breaks_into_free_seats_at_random() -> None:
    """Nine seats, 20 players at four tables once c3 is out: they fit at three. Tables 2 and 4
    have the fewest between hands (5); table 4, the higher, breaks; table 3, smaller still, is
    in a hand. The shares: 7, 7 and 6 (the odd players to the tables with the most)."""
    tables = {
        1: _table(_full("a", range(7))),
        2: _table(_full("b", range(5))),
        3: _table(_full("c", range(4)), between=False),
        4: _table(_full("d", range(2, 7))),
    }
    plan = _plan(tables, 9, ("c3",), round_=5)
    assert plan.broken == (4,)
    assert _counts(plan.tables) == {1: 7, 2: 7, 3: 6}
    assert {m.player for m in plan.moves} == {f"d{s}" for s in range(2, 7)}
    assert all(m.reason is MoveReason.BREAK for m in plan.moves)
    assert plan.draw is not None and plan.draw.draw.round == 5 and verify(SEED, plan.draw)
    quotas = {q.table: (q.count, q.seats) for q in plan.draw.draw.quotas}
    assert quotas == {2: (2, (5, 6, 7, 8)), 3: (3, (3, 4, 5, 6, 7, 8))}
    check_plan(tables, 9, ("c3",), plan)


def test_a_table_in_a_hand_above_its_share_keeps_its_players_until_the_hand_ends() -> None:
    tables = {
        1: _table(_full("a", range(8)), between=False),
        2: _table(_full("b", range(3)), between=False),
        3: _table(_full("c", range(5))),
    }
    plan = _plan(tables, 8, ("c0", "c1"))
    assert plan.broken == (3,) and plan.waiting_for == {1}
    assert _counts(plan.tables) == {1: 8, 2: 6}
    check_plan(tables, 8, ("c0", "c1"), plan)
    later = _plan({1: _table(_full("a", range(8))), 2: plan.tables[2]}, 8)
    assert [m.reason for m in later.moves] == [MoveReason.BALANCE]
    assert _counts(later.tables) == {1: 7, 2: 7} and not later.waiting_for


def test_tables_in_a_hand_one_above_every_share_keep_their_players() -> None:
    """18 players at three 8-seat tables share 6, 6, 6; tables 1 and 2, in a hand, hold 7
    each: nobody can give before their hands end, and table 3 keeps its 4."""
    tables = {
        1: _table(_full("a", range(7)), between=False),
        2: _table(_full("b", range(7)), between=False),
        3: _table(_full("c", range(4))),
    }
    plan = _plan(tables, 8)
    assert not plan.moves and plan.waiting_for == {1, 2}
    assert _counts(plan.tables) == {1: 7, 2: 7, 3: 4}
    tables[2] = _table(_full("b", range(7)))
    plan = _plan(tables, 8)
    # table 3's last opened seat is 7, empty at table 2 too: the next seat round the table
    assert plan.moves == (Move("b0", 2, 0, 3, 7, MoveReason.BALANCE),)
    assert plan.waiting_for == {1} and _counts(plan.tables) == {1: 7, 2: 6, 3: 5}


def test_a_break_waits_while_every_table_is_in_a_hand() -> None:
    tables = {
        1: _table(_full("a", range(5)), between=False),
        2: _table(_full("b", range(3)), between=False),
        3: _table(_full("c", range(2)), between=False),
    }
    plan = _plan(tables, 8)
    assert not plan.moves and not plan.broken and plan.waiting_for == {1, 2, 3}
    tables[3] = _table(_full("c", range(2)))
    plan = _plan(tables, 8)
    assert plan.broken == (3,) and _counts(plan.tables) == {1: 5, 2: 5}
    check_plan(tables, 8, (), plan)


def test_the_final_table_is_drawn_when_the_field_fits_one_table() -> None:
    tables = {
        2: _table(_full("a", range(4))),
        3: _table(_full("b", range(5))),
        5: _table(_full("c", range(3))),
    }
    out = ("a1", "b2", "c0")
    plan = _plan(tables, 9, out, round_=7)
    assert plan.final_table == 2 and list(plan.tables) == [2] and plan.broken == (3, 5)
    assert plan.draw is not None and plan.draw.draw.round == 7 and verify(SEED, plan.draw)
    assert sorted(plan.tables[2].seats.values()) == sorted(
        {p for t in tables.values() for p in t.seats.values()} - set(out)
    )
    assert all(m.reason is MoveReason.FINAL_TABLE for m in plan.moves)
    check_plan(tables, 9, out, plan)


def test_the_final_table_waits_for_every_hand_and_holds_the_finished_tables() -> None:
    tables = {
        1: _table(_full("a", range(4))),
        2: _table(_full("b", range(3)), between=False),
        3: _table(_full("c", range(2))),
    }
    plan = _plan(tables, 9)
    assert not plan.moves and plan.final_table is None and plan.draw is None
    assert plan.waiting_for == {2} and plan.hold == {1, 3}


def test_one_table_from_the_start_is_not_drawn_again() -> None:
    tables = tables_of(draw_seats(SEED, TOURNAMENT, "abcdef", 8))
    plan = _plan(tables, 8, ("a", "b"))
    assert not plan.moves and plan.final_table is None and list(plan.tables) == [1]


def test_the_plan_changes_nothing_it_was_given() -> None:
    seats = _full("a", range(9))
    tables = {1: _table(seats), 2: _table(_full("b", range(5)))}
    _plan(tables, 9, ("a0",))
    assert tables[1].seats == _full("a", range(9)) and tables[1].opened == ()


@pytest.mark.parametrize(
    ("tables", "seats", "out", "field", "code"),
    [
        ({1: _table({0: "a"}), 2: _table({0: "a"})}, 9, (), "tables", ErrorCode.ALREADY_SEATED),
        ({1: _table({9: "a"})}, 9, (), "tables", ErrorCode.BAD_SEAT),
        ({1: _table({-1: "a"})}, 9, (), "tables", ErrorCode.BAD_SEAT),
        ({1: _table({0: "a"}, opened=(0,))}, 9, (), "tables", ErrorCode.BAD_SEAT),
        ({1: _table({0: "a"}, opened=(1, 1))}, 9, (), "tables", ErrorCode.BAD_SEAT),
        ({0: _table({0: "a"})}, 9, (), "tables", ErrorCode.INVALID_ACTION),
        ({1: _table({0: "a b"})}, 9, (), "tables", ErrorCode.INVALID_ACTION),
        ({1: _table({0: "a", 1: "b"})}, 9, ("c",), "eliminated", ErrorCode.NOT_SEATED),
        ({1: _table({0: "a", 1: "b"})}, 9, ("a", "a"), "eliminated", ErrorCode.NOT_SEATED),
        ({1: _table({0: "a"})}, 1, (), "seats_per_table", ErrorCode.BAD_SEAT_COUNT),
    ],
)
def test_bad_input_is_refused_with_the_field_at_fault(
    tables: dict[int, TableSeats], seats: int, out: tuple[str, ...], field: str, code: ErrorCode
) -> None:
    with pytest.raises(SeatingError) as refused:
        _plan(tables, seats, out)
    assert (refused.value.field, refused.value.code) == (field, code)


def test_a_bad_seed_or_round_is_refused() -> None:
    tables = {1: _table({0: "a"})}
    with pytest.raises(SeatingError) as refused:
        plan_moves(tables, 9, seed=b"short", tournament_id=1, draw_round=2)
    assert refused.value.field == "seed"
    with pytest.raises(SeatingError) as refused:
        plan_moves(tables, 9, seed=SEED, tournament_id=1, draw_round=0)
    assert refused.value.field == "round"
