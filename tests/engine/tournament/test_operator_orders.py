"""An operator's moves, disqualifications and added time, as the director's run takes them:
between the player's hands (at once, or when their hand ends), never seating anyone twice or
two players in a seat, the moved player's chips kept, a disqualified player's chips out of
play and counted, their place nobody's and its prize to the places above; every refusal
changing nothing. Whole tournaments of random hands and random requests check it all."""

from __future__ import annotations

import copy
import dataclasses
import random
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_late_entries import MINUTE, finish_hand
from test_late_entries import started as started_with_options
from test_tournament_run import SEED, Model

from engine.errors import Refusal
from engine.tournament.payouts import forfeit, payouts
from engine.tournament.run import (
    CloseTable,
    Deal,
    Disqualified,
    Finished,
    KillHand,
    Moved,
    Order,
    Placed,
    RemovePlayer,
    SeatPlayer,
    TournamentRun,
)
from engine.tournament.structure import Level, Structure
from engine.tournament.templates import TEMPLATES


@dataclass
class OperatedModel(Model):
    """The tables, and what an operator's requests did to them."""

    removed: dict[str, int] = field(default_factory=dict)
    killed: set[str] = field(default_factory=set)
    moves: list[Moved] = field(default_factory=list)

    def carry_out(self, run: TournamentRun, orders: list[Order], at: float) -> list[int]:
        for order in orders:
            match order:
                case KillHand(table, player):
                    assert player in self.tables[table].seats.values()
                    self.killed.add(player)
                case Disqualified(player, chips):
                    (stack,) = [
                        t.stacks[player] for t in self.tables.values() if player in t.stacks
                    ]
                    assert chips == stack, "the chips removed are the chips they held"
                    self.removed[player] = chips
                case Moved():
                    self.moves.append(order)
        return super().carry_out(run, orders, at)

    def where(self, player: str) -> tuple[int, int] | None:
        for number, table in self.tables.items():
            for seat, sitting in table.seats.items():
                if sitting == player:
                    return number, seat
        return None


def state_of(run: TournamentRun) -> dict[str, Any]:
    """What a refused request must leave as it was."""
    return copy.deepcopy(
        {
            "tables": run.tables,
            "stacks": run.stacks,
            "prizes": run.prizes,
            "moving": run.moving,
            "disqualifying": run.disqualifying,
            "disqualified": run.disqualified,
            "clock": run.clock,
            "round_out": run.round_out,
            "over": run.over,
        }
    )


def started(
    spec_name: str = "stud-sng-9", entrants: int = 9, *, hands: bool = False
) -> tuple[TournamentRun, OperatedModel, list[str]]:
    spec = TEMPLATES[spec_name]
    if hands:
        levels = (Level(5, 10, 30, 60, hands=3), Level(10, 20, 60, 120, hands=3))
        spec = dataclasses.replace(spec, structure=Structure(spec.structure.starting_chips, levels))
    players = [f"p{n:03}" for n in range(entrants)]
    run = TournamentRun(spec, tournament_id=3, seed=SEED, prize_pool=entrants * 100)
    model = OperatedModel()
    for table in model.carry_out(run, run.start(players, 0.0), 0.0):
        model.deal(run, table, 0.0)
    return run, model, players


def end_hand(
    run: TournamentRun, model: OperatedModel, table: int, at: float, lose: dict[str, int]
) -> list[Order]:
    """``table``'s hand ends, each of ``lose`` giving that many chips to the first player
    dealt in who is not losing; the tables then deal as allowed."""
    tm = model.tables[table]
    assert tm.dealt is not None
    winner = next(p for p in tm.dealt if p not in lose)
    for player, chips in lose.items():
        tm.stacks[player] -= chips
        tm.stacks[winner] += chips
    tm.dealt = None
    starting = {p: tm.starting.get(p, stack) for p, stack in tm.stacks.items()}
    orders = run.hand_ended(table, tm.number, dict(tm.stacks), starting, at)
    for allowed in model.carry_out(run, orders, at):
        model.deal(run, allowed, at)
    return orders


def test_a_move_between_hands_seats_the_player_at_once_with_their_chips() -> None:
    run, model, _ = started()
    run.pause(1.0)
    end_hand(run, model, 1, 2.0, {})
    end_hand(run, model, 2, 2.0, {})
    player = model.tables[1].seats[min(model.tables[1].seats)]
    chips = model.tables[1].stacks[player]
    free = min(set(range(8)) - set(model.tables[2].seats))
    orders = run.move(player, 2, free, 3.0)
    assert orders == [
        RemovePlayer(1, player),
        SeatPlayer(2, free, player, chips),
        Moved(player, 1, 2, "operator", 0.0),
    ]
    model.carry_out(run, orders, 3.0)
    assert model.where(player) == (2, free) and model.tables[2].stacks[player] == chips
    # Paused: nobody deals until the resume, then both tables do.
    assert {o.table for o in run.resume(4.0) if isinstance(o, Deal)} == {1, 2}


def test_a_move_without_a_table_goes_to_the_table_with_fewest_players_at_its_last_open_seat() -> (
    None
):
    run, model, _ = started()  # 9 players: tables of 5 and 4
    run.pause(1.0)
    end_hand(run, model, 1, 2.0, {})
    end_hand(run, model, 2, 2.0, {})
    big = 1 if len(model.tables[1].seats) == 5 else 2
    small = 3 - big
    player = next(iter(model.tables[big].seats.values()))
    last_open = max(set(range(8)) - set(model.tables[small].seats))  # the draw's empty seats
    orders = run.move(player, None, None, 3.0)
    assert orders[1] == SeatPlayer(small, last_open, player, 1500)


def test_a_player_in_a_hand_moves_when_it_ends_and_before_their_table_deals_again() -> None:
    run, model, _ = started()
    player = model.tables[1].seats[min(model.tables[1].seats)]
    free = min(set(range(8)) - set(model.tables[2].seats))
    assert run.move(player, 2, free, 5.0) == []  # in a hand: it waits
    assert model.where(player)[0] == 1  # type: ignore[index]
    with pytest.raises(Refusal) as twice:
        run.move(player, 2, None, 6.0)
    assert twice.value.code == "move_pending"
    other = model.tables[1].seats[max(model.tables[1].seats)]
    with pytest.raises(Refusal) as held:  # the seat is kept for the first move
        run.move(other, 2, free, 6.0)
    assert held.value.code == "seat_taken"
    orders = end_hand(run, model, 1, 65.0, {player: 100})
    moved = [o for o in orders if isinstance(o, Moved)]
    assert moved == [Moved(player, 1, 2, "operator", 60.0)]
    assert model.where(player) == (2, free) and model.tables[2].stacks[player] == 1400
    kinds = [type(o).__name__ for o in orders]
    assert kinds.index("RemovePlayer") < kinds.index("Deal")  # moved, then table 1 deals
    # Table 2 is in its hand: the player waits for its next deal, not dealt in this one.
    assert player not in (model.tables[2].dealt or [])


@pytest.mark.parametrize(
    ("table", "seat", "code"),
    [
        (9, None, "unknown_tournament_table"),
        (1, None, "already_seated"),
        (2, 8, "bad_seat"),
        (2, -1, "bad_seat"),
        (None, 3, "bad_seat"),
        (2, "taken", "seat_taken"),
    ],
)
def test_a_move_that_cannot_be_made_is_refused_with_nothing_changed(
    table: int | None, seat: int | str | None, code: str
) -> None:
    run, model, _ = started()
    player = model.tables[1].seats[min(model.tables[1].seats)]
    if seat == "taken":
        seat = min(model.tables[2].seats)
    before = state_of(run)
    with pytest.raises(Refusal) as refused:
        run.move(player, table, seat, 5.0)  # type: ignore[arg-type]
    assert refused.value.code == code
    assert state_of(run) == before


def test_moves_of_players_not_playing_or_with_nowhere_to_go_are_refused() -> None:
    run, model, players = started("razz-sng-8", 8)  # one table
    before = state_of(run)
    for player, table, code in (
        ("nobody", None, "not_in_tournament"),
        (players[0], None, "table_full"),  # no other table
        (players[0], 1, "already_seated"),
    ):
        with pytest.raises(Refusal) as refused:
            run.move(player, table, None, 1.0)
        assert refused.value.code == code
    with pytest.raises(Refusal) as unknown:
        run.disqualify("nobody", 1.0)
    assert unknown.value.code == "not_in_tournament"
    assert state_of(run) == before


def test_a_move_to_a_full_table_is_refused() -> None:
    spec = dataclasses.replace(TEMPLATES["stud-sng-9"], seats_per_table=5)
    run = TournamentRun(spec, tournament_id=3, seed=SEED, prize_pool=900)
    run.start([f"p{n}" for n in range(9)], 0.0)  # tables of 5 and 4
    full = next(n for n, t in run.tables.items() if len(t.seats) == 5)
    player = next(p for n, t in run.tables.items() if n != full for p in t.seats.values())
    before = state_of(run)
    with pytest.raises(Refusal) as refused:
        run.move(player, full, None, 1.0)
    assert refused.value.code == "table_full"
    assert state_of(run) == before


def test_a_disqualified_player_in_a_hand_has_it_killed_and_leaves_when_it_ends() -> None:
    run, model, players = started()
    player = model.tables[2].seats[min(model.tables[2].seats)]
    assert run.disqualify(player, 5.0) == [KillHand(2, player)]
    model.carry_out(run, [KillHand(2, player)], 5.0)
    with pytest.raises(Refusal) as twice:
        run.disqualify(player, 6.0)
    assert twice.value.code == "already_disqualified"
    with pytest.raises(Refusal) as moved:
        run.move(player, 1, None, 6.0)
    assert moved.value.code == "already_disqualified"
    orders = end_hand(run, model, 2, 30.0, {player: 200})  # their ante and bring-in lost
    assert [o for o in orders if isinstance(o, Disqualified)] == [Disqualified(player, 1300)]
    assert model.where(player) is None
    assert run.chips_removed == 1300
    assert run.chips_in_play() + run.chips_removed == run.chips_issued == 9 * 1500
    # 9 entrants paying 3 places: the 9th place paid nothing, the prizes are as they were;
    # the next player out finishes 8th.
    assert run.prizes == payouts(900, 9, "sit_and_go")
    loser = next(p for p in model.tables[1].dealt or [] if p != player)
    orders = end_hand(run, model, 1, 40.0, {loser: model.tables[1].stacks[loser]})
    (placed,) = [o.finish for o in orders if isinstance(o, Placed)]
    assert (placed.player, placed.place) == (loser, 8)


def test_a_disqualification_in_the_money_gives_the_place_prize_to_the_places_above() -> None:
    run, model, players = started("razz-sng-8", 8)
    prizes = run.prizes
    assert len(prizes) == 3 and prizes[1] > 0
    at = 10.0
    # Out until three are left: 8th to 4th.
    while len(run.stacks) > 3:
        table = model.tables[1]
        assert table.dealt is not None
        loser = table.dealt[0]
        end_hand(run, model, 1, at, {loser: table.stacks[loser]})
        at += 10
    run.pause(at)
    end_hand(run, model, 1, at, {})
    third = sorted(run.stacks)[0]
    orders = run.disqualify(third, at + 1)
    assert Disqualified(third, run.disqualified[third]) in orders
    assert run.prizes[:3] == forfeit(prizes, 3)[:3] and run.prizes[2] == 0
    model.carry_out(run, orders, at + 1)
    for allowed in model.carry_out(run, run.resume(at + 2), at + 2):
        model.deal(run, allowed, at + 2)
    table = model.tables[1]
    assert table.dealt is not None and len(table.dealt) == 2
    loser, winner = table.dealt
    orders = end_hand(run, model, 1, at + 3, {loser: table.stacks[loser]})
    finishes = {o.finish.player: o.finish for o in orders if isinstance(o, Placed)}
    assert finishes[loser].place == 2 and finishes[winner].place == 1
    assert Finished(winner) in orders and CloseTable(1) in orders
    paid = sum(o.finish.prize for o in model.placed)
    assert paid == run.prize_pool  # the forfeited prize went to players, not lost
    assert third not in {o.finish.player for o in model.placed}


def test_disqualifying_one_of_the_last_two_makes_the_other_the_winner() -> None:
    run, model, players = started("razz-sng-8", 8)
    at = 10.0
    while len(run.stacks) > 2:
        table = model.tables[1]
        assert table.dealt is not None
        loser = table.dealt[0]
        end_hand(run, model, 1, at, {loser: table.stacks[loser]})
        at += 10
    table = model.tables[1]
    cheat, other = sorted(table.dealt or [])
    assert run.disqualify(cheat, at) == [KillHand(1, cheat)]
    orders = end_hand(run, model, 1, at + 5, {})
    assert Disqualified(cheat, run.disqualified[cheat]) in orders
    assert Finished(other) in orders and run.over
    (first,) = [o.finish for o in orders if isinstance(o, Placed)]
    assert first.player == other and first.place == 1
    assert first.prize == run.prize_pool - sum(o.finish.prize for o in model.placed[:-1])
    assert sum(o.finish.prize for o in model.placed) == run.prize_pool


def test_time_added_lengthens_the_level_in_play() -> None:
    run, model, _ = started()
    assert run.clock is not None
    before = run.clock.read(60.0)
    assert run.add_time(120.0, 60.0) == []
    after = run.clock.read(60.0)
    assert after.seconds_left == pytest.approx(before.seconds_left + 120.0)  # type: ignore[operator]
    for seconds in (0.0, -5.0):
        with pytest.raises(Refusal) as refused:
            run.add_time(seconds, 61.0)
        assert refused.value.code == "bad_request"


def test_time_cannot_be_added_to_a_level_of_hands() -> None:
    run, _, _ = started(hands=True)
    before = state_of(run)
    with pytest.raises(Refusal) as refused:
        run.add_time(60.0, 5.0)
    assert refused.value.code == "level_not_timed"
    assert state_of(run) == before


def play_with_requests(spec_name: str, entrants: int, seed: int) -> OperatedModel:
    """A whole tournament of random hands with random requests between them; every order
    checked by the model, every refusal leaving the run as it was."""
    rng = random.Random(seed)
    run, model, players = started(spec_name, entrants)
    issued = run.chips_issued
    at = 0.0
    for _ in range(100_000):
        if run.over:
            break
        if rng.random() < 0.3:
            player = rng.choice(sorted(run.stacks) if rng.random() < 0.8 else players)
            before = state_of(run)
            roll = rng.random()
            try:
                if roll < 0.5:
                    table = rng.choice([None, None, *run.tables, 99])
                    seat = None if table is None or rng.random() < 0.5 else rng.randrange(-1, 9)
                    orders = run.move(player, table, seat, at)
                elif roll < 0.58:
                    orders = run.disqualify(player, at)
                elif roll < 0.8:
                    orders = run.add_time(rng.choice([30.0, 600.0]), at)
                elif run.clock is not None and run.clock.paused:
                    orders = run.resume(at)
                else:
                    orders = run.pause(at)
            except Refusal:
                assert state_of(run) == before
                continue
            for allowed in model.carry_out(run, orders, at):
                model.deal(run, allowed, at)
            continue
        in_hand = [n for n, t in model.tables.items() if t.dealt is not None]
        if not in_hand:
            assert run.clock is not None
            if run.clock.paused:
                orders = run.resume(at)
            else:
                wake = run.next_wake(at)
                assert wake is not None, "every table waits and nothing will wake them"
                at = wake
                orders = run.wake(at)
            for allowed in model.carry_out(run, orders, at):
                model.deal(run, allowed, at)
            continue
        table = rng.choice(in_hand)
        at += rng.uniform(5, 90)
        tm = model.tables[table]
        dealt = tm.dealt or []
        alive = [p for p in dealt if p not in model.killed] or dealt
        lose = {
            p: min(tm.stacks[p], rng.choice([0, 1, tm.stacks[p] // 3, tm.stacks[p]]))
            for p in dealt
            if p != alive[0] and rng.random() < 0.6
        }
        lose = {p: c for p, c in lose.items() if c}
        # The winner of the hand is one who plays it (a killed hand folds at its turn).
        winner = alive[0]
        tm.stacks = {p: tm.stacks[p] - lose.get(p, 0) for p in tm.stacks}
        tm.stacks[winner] += sum(lose.values())
        tm.dealt = None
        starting = {p: tm.starting.get(p, stack) for p, stack in tm.stacks.items()}
        orders = run.hand_ended(table, tm.number, dict(tm.stacks), starting, at)
        for allowed in model.carry_out(run, orders, at):
            model.deal(run, allowed, at)
        if not run.over:
            assert model.chips() + sum(model.removed.values()) == issued
            seated = [p for t in model.tables.values() for p in t.seats.values()]
            assert len(seated) == len(set(seated)) == len(run.stacks)
    assert run.over and model.winner is not None
    assert set(model.removed) == set(run.disqualified)
    placed = [o.finish.player for o in model.placed]
    assert len(placed) == len(set(placed)) == entrants - len(model.removed)
    assert not set(placed) & set(model.removed)
    assert sum(o.finish.prize for o in model.placed) == run.prize_pool
    assert run.chips_in_play() + run.chips_removed == issued
    assert all(t.closed or not t.seats for t in model.tables.values())
    return model


def test_tournaments_with_requests_play_to_a_winner() -> None:
    models = [play_with_requests("stud-mtt-regular", 40, seed) for seed in range(6)]
    models += [play_with_requests("stud-sng-9", 9, seed) for seed in range(6)]
    moves = [m for model in models for m in model.moves if m.reason == "operator"]
    assert any(m.waited == 0 for m in moves) and any(m.waited > 0 for m in moves)
    assert sum(len(model.removed) for model in models) > 3
    assert any(model.killed for model in models)


@settings(max_examples=20, deadline=None)
@given(entrants=st.integers(2, 50), seed=st.integers(0, 2**32))
def test_any_field_with_requests_keeps_its_chips_and_places(entrants: int, seed: int) -> None:
    play_with_requests("stud-mtt-regular", entrants, seed)


def test_a_disqualified_player_out_of_chips_may_not_rebuy_nor_enter_again() -> None:
    play = started_with_options(4, seats=8, late_registration_levels=2, re_entries=1)
    (table,) = play.run.tables
    finish_hand(play, table, {"p1": None})  # out of chips in the rebuy period: may rebuy
    assert "p1" in play.run.waiting
    orders = play.run.disqualify("p1", play.at)
    assert orders[0] == Disqualified("p1", 0) and "p1" not in play.run.waiting
    play.carry_out(orders)
    for kind in ("rebuy", "enter"):
        refused = play.buy(kind, "p1")
        assert isinstance(refused, Refusal) and refused.code == "already_disqualified"
    # A player disqualified before the prizes are fixed: the field's last place is nobody's.
    dealt = play.model.tables[table].dealt
    assert dealt is not None
    cheat = dealt[0]
    chips = play.run.stacks[cheat]
    assert play.run.disqualify(cheat, play.at) == [KillHand(table, cheat)]
    orders = finish_hand(play, table)
    assert [o for o in orders if isinstance(o, Disqualified)] == [Disqualified(cheat, chips)]
    play.at = 60 * MINUTE  # nothing more to buy: the prizes fixed from the 4 entries
    at_end = play.run.wake(play.at)
    play.carry_out(at_end)
    while not play.run.over:
        dealt = next(t.dealt for t in play.model.tables.values() if t.dealt is not None)
        assert dealt is not None
        finish_hand(
            play, next(n for n, t in play.model.tables.items() if t.dealt), {dealt[0]: None}
        )
    placed = {o.finish.player: o.finish for o in play.model.placed}
    assert set(placed) == {"p0", "p2", "p3"} - {cheat}  # p1 and the cheat take no place
    assert sorted(f.place for f in placed.values()) == [1, 2]
    assert sum(f.prize for f in placed.values()) == play.run.prize_pool
    assert play.run.chips_removed == chips
