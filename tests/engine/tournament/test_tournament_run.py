"""The director's decisions, played out: whole tournaments of random hands through
``engine.tournament.run``, the tables modelled as the server's tables behave (a hand dealt
only on a permit, to the players seated when it is dealt; a player seated during a hand waits
for the next), every order carried out and checked against the rules: chips kept, nobody
seated twice or lost, nobody moved out of a hand, hand for hand at the bubble, every place
given once and the prizes summing to the pool."""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.tournament.run import (
    AddChips,
    Busted,
    CloseTable,
    Deal,
    Finished,
    Moved,
    OpenTable,
    Order,
    Placed,
    PrizesFixed,
    RemovePlayer,
    RunError,
    SeatPlayer,
    Stakes,
    TournamentRun,
)
from engine.tournament.structure import Level, Structure
from engine.tournament.templates import TEMPLATES

SEED = bytes(range(32))


@dataclass
class ModelTable:
    seats: dict[int, str] = field(default_factory=dict)
    stacks: dict[str, int] = field(default_factory=dict)
    dealt: list[str] | None = None  # the players of the hand in play
    starting: dict[str, int] = field(default_factory=dict)
    number: int = 0
    stakes: Level | None = None
    closed: bool = False


@dataclass
class Model:
    """The tables as the server keeps them, changed only by the director's orders."""

    tables: dict[int, ModelTable] = field(default_factory=dict)
    placed: list[Placed] = field(default_factory=list)
    moved: list[tuple[Moved, float]] = field(default_factory=list)
    hands_ended: dict[int, list[float]] = field(default_factory=dict)
    busted: list[Busted] = field(default_factory=list)
    fixed: list[PrizesFixed] = field(default_factory=list)
    winner: str | None = None
    rounds_seen_hand_for_hand: int = 0
    stakes_told: list[Level] = field(default_factory=list)

    def table(self, number: int) -> ModelTable:
        return self.tables.setdefault(number, ModelTable())

    def carry_out(self, run: TournamentRun, orders: list[Order], at: float) -> list[int]:
        """The orders done; the tables allowed to deal (in order)."""
        dealing: list[int] = []
        for order in orders:
            match order:
                case SeatPlayer(table, seat, player, stack):
                    model = self.table(table)
                    assert not model.closed
                    assert seat not in model.seats, f"seat {seat} of table {table} is taken"
                    assert all(player not in t.seats.values() for t in self.tables.values())
                    assert 0 <= seat < run.spec.seats_per_table and stack > 0
                    model.seats[seat] = player
                    model.stacks[player] = stack
                case RemovePlayer(table, player):
                    model = self.tables[table]
                    assert model.dealt is None or player not in model.dealt, "moved in a hand"
                    (seat,) = [s for s, p in model.seats.items() if p == player]
                    del model.seats[seat]
                    model.stacks.pop(player)
                case Stakes(table, level):
                    self.tables[table].stakes = level
                    self.stakes_told.append(level)
                case Deal(table, number):
                    model = self.tables[table]
                    assert model.dealt is None and number == model.number + 1
                    assert model.stakes is not None
                    dealing.append(table)
                case CloseTable(table):
                    model = self.tables[table]
                    assert model.dealt is None and not model.seats
                    model.closed = True
                case AddChips(table, player, chips, stack):
                    model = self.tables[table]
                    assert model.dealt is None or player not in model.dealt, "chips in a hand"
                    assert player in model.seats.values() and chips > 0
                    model.stacks[player] += chips
                    assert model.stacks[player] == stack
                case OpenTable(table):
                    assert table not in self.tables, f"table {table} opened twice"
                    self.tables[table] = ModelTable()
                case Busted():
                    self.busted.append(order)
                case PrizesFixed():
                    assert not self.fixed, "the prizes fixed twice"
                    self.fixed.append(order)
                case Placed():
                    self.placed.append(order)
                case Finished(winner):
                    self.winner = winner
                case Moved():
                    self.moved.append((order, at))
        return dealing

    def deal(self, run: TournamentRun, table: int, at: float) -> None:
        model = self.tables[table]
        model.number += 1
        model.dealt = sorted(model.seats.values())
        assert len(model.dealt) >= 2
        model.starting = dict(model.stacks)
        assert run.hand_began(table, model.number, at) == []

    def play_out(self, run: TournamentRun, table: int, rng: random.Random) -> None:
        """A hand's result: chips from some players dealt in to others, some all in."""
        model = self.tables[table]
        assert model.dealt is not None
        players = list(model.dealt)
        winner = rng.choice(players)
        for player in players:
            if player == winner:
                continue
            lost = rng.choice([0, 0, 1, model.stacks[player] // 3, model.stacks[player]])
            lost = min(lost, model.stacks[player])
            model.stacks[player] -= lost
            model.stacks[winner] += lost
        model.dealt = None

    def chips(self) -> int:
        return sum(sum(t.stacks.values()) for t in self.tables.values())


def play_tournament(
    spec_name: str, entrants: int, seed: int, hands_levels: bool = False
) -> tuple[Model, TournamentRun]:
    """The template played as a freezeout (its late registration and re-entries left out:
    test_late_entries.py plays those)."""
    spec = dataclasses.replace(
        TEMPLATES[spec_name], late_registration_levels=None, re_entries=0, rebuys=None
    )
    if hands_levels:  # levels of a few hands: many level changes in one tournament
        levels = [
            Level(a, b, s, 2 * s, hands=3)
            for a, b, s in ((5, 10, 30), (10, 20, 60), (20, 40, 120), (40, 80, 240))
        ]
        structure = Structure(spec.structure.starting_chips, tuple(levels))
        spec = dataclasses.replace(
            spec, structure=structure, late_registration_levels=None, re_entries=0
        )
    rng = random.Random(seed)
    players = [f"p{n:04}" for n in range(entrants)]
    pool = entrants * spec.buy_in
    run = TournamentRun(spec, tournament_id=7, seed=SEED, prize_pool=pool)
    model = Model()
    at = 0.0
    dealing = model.carry_out(run, run.start(players, at), at)
    issued = entrants * spec.structure.starting_chips
    for table in dealing:
        model.deal(run, table, at)
    for _ in range(200_000):
        if model.winner is not None:
            break
        in_hand = [n for n, t in model.tables.items() if t.dealt is not None]
        assert in_hand, "no table is dealing and the tournament is not over"
        if run.hand_for_hand:
            model.rounds_seen_hand_for_hand += 1
        table = rng.choice(in_hand)
        at += rng.uniform(5, 90)
        model.play_out(run, table, rng)
        tm = model.tables[table]
        assert model.chips() == issued
        # A player seated during the hand was not dealt in: the same stack at both ends.
        starting = {p: tm.starting.get(p, stack) for p, stack in tm.stacks.items()}
        orders = run.hand_ended(table, tm.number, dict(tm.stacks), starting, at)
        model.hands_ended.setdefault(table, []).append(at)
        if run.hand_for_hand:
            # Hand for hand: nobody deals while any table is still playing the round.
            assert not any(isinstance(o, Deal) for o in orders) or all(
                t.dealt is None for t in model.tables.values()
            )
        for allowed in model.carry_out(run, orders, at):
            model.deal(run, allowed, at)
        if model.winner is not None:
            assert run.chips_in_play() == issued  # the winner's stack: every chip issued
            break
        assert model.chips() == issued
        seated = [p for t in model.tables.values() for p in t.seats.values()]
        assert len(seated) == len(set(seated)) == len(run.stacks)
        if not any(t.dealt is not None for t in model.tables.values()) and model.winner is None:
            wake = run.next_wake(at)
            assert wake is not None, "every table waits and nothing will wake them"
            at = wake
            for allowed in model.carry_out(run, run.wake(at), at):
                model.deal(run, allowed, at)
    assert model.winner is not None
    places = sorted(p.finish.place for p in model.placed)
    assert len(model.placed) == entrants
    # Ties share the best place of their group: places cover 1..entrants with repeats only
    # where players tied.
    assert places[0] == 1 and max(places) <= entrants
    assert sum(p.finish.prize for p in model.placed) == pool
    (first,) = [p for p in model.placed if p.finish.place == 1]
    assert first.finish.player == model.winner
    assert all(t.closed for t in model.tables.values())
    for move, at in model.moved:
        # Within one hand: the table a player left dealt at most the hand that held it up.
        since = at - move.waited
        dealt = [t for t in model.hands_ended.get(move.from_table, []) if since < t <= at]
        assert len(dealt) <= 1, f"{move} at {at}: its table ended hands at {dealt}"
    return model, run


@pytest.mark.parametrize("seed", range(6))
def test_a_sit_and_go_of_nine_plays_to_a_winner(seed: int) -> None:
    play_tournament("stud-sng-9", 9, seed)


@pytest.mark.parametrize("entrants", [2, 3, 8, 17, 40])
def test_fields_of_every_size_play_to_a_winner(entrants: int) -> None:
    play_tournament("stud-mtt-turbo", entrants, entrants)


def test_levels_of_hands_change_the_stakes_at_the_next_hand() -> None:
    model, run = play_tournament("stud-mtt-turbo", 24, 5, hands_levels=True)
    antes = [level.ante for level in model.stakes_told]
    assert antes == sorted(antes) and len(set(antes)) == 4  # every level reached, in order


@pytest.mark.parametrize("seed", range(2))
def test_a_field_of_a_thousand_moves_every_player_within_one_hand(seed: int) -> None:
    """Balancing, breaks and the final table over a long field: every move made at the end
    of the hand that held its table up (or at once), and timed from its own table's wait."""
    model, _ = play_tournament("stud-mtt-turbo", 1000, seed)
    reasons = {move.reason for move, _ in model.moved}
    assert reasons == {"balance", "break", "final_table"}
    assert any(move.waited > 0 for move, _ in model.moved)  # some waited for a hand


def test_the_bubble_is_played_hand_for_hand_across_tables() -> None:
    model, run = play_tournament("stud-mtt-regular", 150, 3)
    assert run.prizes.count(0) == 0 and len(run.prizes) > 8  # more paid than one table seats
    assert model.rounds_seen_hand_for_hand > 0


@settings(max_examples=25, deadline=None)
@given(entrants=st.integers(2, 60), seed=st.integers(0, 2**32))
def test_any_field_plays_to_a_winner_with_its_chips_kept(entrants: int, seed: int) -> None:
    play_tournament("stud-mtt-regular", entrants, seed)


def test_a_hand_without_its_permit_is_refused() -> None:
    spec = TEMPLATES["stud-sng-9"]
    run = TournamentRun(spec, tournament_id=1, seed=SEED, prize_pool=900)
    orders = run.start([f"p{n}" for n in range(9)], 0.0)
    deals = [o for o in orders if isinstance(o, Deal)]
    assert sorted(d.table for d in deals) == [1, 2] and {d.number for d in deals} == {1}
    with pytest.raises(RunError):
        run.hand_began(1, 2, 1.0)
    run.hand_began(1, 1, 1.0)
    with pytest.raises(RunError):
        run.hand_began(1, 1, 2.0)  # the permit was used
    with pytest.raises(RunError, match="did not keep its chips"):
        seated = list(run.tables[1].seats.values())
        run.hand_ended(1, 1, {p: 1 for p in seated}, {p: 1500 for p in seated}, 3.0)


def test_a_paused_tournament_deals_no_hand_until_it_resumes() -> None:
    spec = TEMPLATES["razz-sng-8"]
    run = TournamentRun(spec, tournament_id=1, seed=SEED, prize_pool=800)
    players = [f"p{n}" for n in range(8)]
    start = run.start(players, 0.0)
    assert [type(o).__name__ for o in start[-2:]] == ["Stakes", "Deal"]
    run.hand_began(1, 1, 1.0)
    run.pause(2.0)
    stacks = {p: 1500 for p in players}
    assert run.hand_ended(1, 1, stacks, stacks, 3.0) == []  # paused: no permit
    assert run.resume(60.0) == [Deal(1, 2)]
