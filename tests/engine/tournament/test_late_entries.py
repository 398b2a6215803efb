"""Late entries, re-entries, rebuys and the add-on in the director's run
(``engine.tournament.run``): whole tournaments of random hands with players entering late,
re-entering, rebuying (in a hand, between hands, out of chips) and taking the add-on at
random, every order carried out on the tables' model and checked: the chips in play are the
chips issued, nobody sits twice, tables idle are within one player, a late entrant sits at a
table with the fewest players, a refusal changes nothing, the prizes are fixed once from the
final field and pool, and every entry is placed once, the later out the better."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import random
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tournament_run import SEED, Model

from engine.errors import Refusal
from engine.protocol import ErrorCode
from engine.tournament.payouts import payouts
from engine.tournament.run import (
    REBUY_WAIT_SECONDS,
    AddChips,
    Busted,
    Deal,
    OpenTable,
    Order,
    Placed,
    PrizesFixed,
    RemovePlayer,
    SeatPlayer,
    TournamentRun,
)
from engine.tournament.spec import Rebuys, TournamentSpec
from engine.tournament.structure import Break, Level, Structure

MINUTE = 60.0
SPEC = TournamentSpec(
    kind="scheduled",
    variant="seven_card_stud",
    betting="fixed_limit",
    seats_per_table=6,
    structure=Structure(
        1000,
        (
            Level(5, 10, 20, 40, minutes=10),
            Break(minutes=5),
            Level(10, 20, 40, 80, minutes=10),
            Break(minutes=5),  # the add-on's break
            Level(20, 40, 80, 160, minutes=10),
            Level(40, 80, 160, 320, minutes=10),
            Level(80, 160, 320, 640, minutes=10),
        ),
    ),
    buy_in=100,
    fee=10,
    min_entrants=2,
    max_entrants=80,
    payout_table="scheduled",
    late_registration_levels=2,
    re_entries=1,
    rebuys=Rebuys(levels=2, chips=1000, add_on_chips=2000),
)


@dataclass
class Play:
    """A tournament in play on the tables' model, with what the checks need to remember."""

    run: TournamentRun
    model: Model = field(default_factory=Model)
    at: float = 0.0
    bought: int = 0  # entries, rebuys and add-ons: each paid the buy-in into the pool
    hands: int = 0
    out_in_hand: dict[tuple[str, int], int] = field(default_factory=dict)  # entry -> hand
    refusals: list[ErrorCode] = field(default_factory=list)
    bought_kinds: list[str] = field(default_factory=list)  # what each purchase did

    def carry_out(self, orders: list[Order]) -> None:
        for table in self.model.carry_out(self.run, orders, self.at):
            self.model.deal(self.run, table, self.at)
        self.check()

    def start(self, players: list[str]) -> None:
        self.bought = len(players)
        self.carry_out(self.run.start(players, self.at))

    def buy(self, kind: str, player: str) -> list[Order] | Refusal:
        """``run.enter``, ``run.rebuy`` or ``run.add_on``: its orders carried out, or its
        refusal, which changed nothing."""
        before = copy.deepcopy(vars(self.run))
        try:
            orders: list[Order] = getattr(self.run, kind)(player, self.at)
        except Refusal as refusal:
            assert vars(self.run) == before, f"a refused {kind} changed the run"
            self.refusals.append(refusal.code)
            return refusal
        self.bought += 1
        if kind == "enter":
            self.bought_kinds.append("re-entry" if self.run.entries[player] > 1 else "entry")
        elif any(isinstance(o, SeatPlayer) and o.player == player for o in orders):
            self.bought_kinds.append("rebuy out of chips")
        else:
            added = any(isinstance(o, AddChips) for o in orders)
            self.bought_kinds.append(f"{kind} {'at once' if added else 'after the hand'}")
        if kind == "enter":
            seated = [o for o in orders if isinstance(o, SeatPlayer) and o.player == player]
            opened = [o.table for o in orders if isinstance(o, OpenTable)]
            counts = {
                number: len(state.seats)
                for number, state in before["tables"].items()
                if len(state.seats) < self.run.spec.seats_per_table
            }
            if opened:
                assert not counts and seated[0].table == opened[0]
            else:
                assert counts[seated[0].table] == min(counts.values())
        self.carry_out(orders)
        return orders

    def end_a_hand(self, rng: random.Random) -> None:
        in_hand = [n for n, t in self.model.tables.items() if t.dealt is not None]
        table = rng.choice(in_hand)
        self.at += rng.uniform(5, 90)
        model = self.model.tables[table]
        assert model.dealt is not None
        winner = rng.choice(model.dealt)
        for player in model.dealt:  # now and then a player loses every chip
            stack = model.stacks[player]
            lost = stack if rng.random() < 0.1 else rng.choice([0, 1, stack // 4, stack // 2])
            if player != winner:
                model.stacks[player] -= lost
                model.stacks[winner] += lost
        model.dealt = None
        starting = {p: model.starting.get(p, stack) for p, stack in model.stacks.items()}
        in_before = set(self.run.stacks)
        self.hands += 1
        orders = self.run.hand_ended(table, model.number, dict(model.stacks), starting, self.at)
        for player in in_before - set(self.run.stacks):
            self.out_in_hand[player, self.run.entries[player]] = self.hands
        self.carry_out(orders)

    def check(self) -> None:
        run, model = self.run, self.model
        seated = [p for t in model.tables.values() if not t.closed for p in t.seats.values()]
        assert len(seated) == len(set(seated)), "a player seated twice"
        assert run.prize_pool == self.bought * run.spec.buy_in
        left = run.chips_issued - run.chips_removed  # a disqualified player's left play
        if run.over:  # the winner holds every chip left, the tables are closed
            assert not seated and run.chips_in_play() == left
            return
        assert set(seated) == set(run.stacks) and not set(run.waiting) & set(seated)
        assert model.chips() + sum(run.pending.values()) == left
        idle = all(t.dealt is None for t in model.tables.values())
        counts = [len(t.seats) for t in model.tables.values() if not t.closed]
        if idle and counts:
            assert max(counts) - min(counts) <= 1, f"tables idle and not balanced: {counts}"


def play_with_options(
    spec: TournamentSpec, players: int, seed: int, *, buy_rate: float = 0.25
) -> Play:
    rng = random.Random(seed)
    play = Play(TournamentRun(spec, tournament_id=7, seed=SEED, prize_pool=players * 100))
    play.start([f"p{n:03}" for n in range(players)])
    newcomers = (f"late{n:03}" for n in itertools.count())
    run, model = play.run, play.model
    for _ in range(100_000):
        if model.winner is not None:
            break
        idle = not any(t.dealt is not None for t in model.tables.values())
        for _ in range(5 if idle else 1):  # a break: time for a few
            if rng.random() < buy_rate and model.winner is None:
                kind = rng.choice(["enter", "enter", "rebuy", "add_on"])
                known = sorted(run.entries)  # anyone who entered, in or out
                out = sorted(set(run.entries) - set(run.stacks))
                if kind == "enter":  # a newcomer, or a player out (a re-entry) or in
                    known = [next(newcomers)] if rng.random() < 0.5 else (out or known)
                else:  # mostly players in, now and then one out
                    known = sorted(run.stacks) if rng.random() < 0.8 else (out or known)
                player = rng.choice(known)
                if not isinstance(play.buy(kind, player), Refusal) and kind == "add_on":
                    play.buy(kind, player)  # once only
        if run.waiting and rng.random() < 0.3:
            play.buy("rebuy", min(run.waiting))
        if model.winner is not None:
            break
        if any(t.dealt is not None for t in model.tables.values()):
            play.end_a_hand(rng)
            continue
        wake = run.next_wake(play.at)
        assert wake is not None, "every table waits and nothing will wake them"
        play.at = max(play.at, wake)
        play.carry_out(run.wake(play.at))
    assert model.winner is not None and run.over
    check_the_finish(play)
    return play


def check_the_finish(play: Play) -> None:
    run, model = play.run, play.model
    (fixed,) = model.fixed
    entries = {(player, n) for player, count in run.entries.items() for n in range(1, count + 1)}
    assert fixed.entrants == len(entries) == run.entrants
    assert fixed.prizes == payouts(run.prize_pool, run.entrants, run.spec.payout_table)
    placed = [(p.finish.player, p.entry) for p in model.placed]
    assert len(placed) == len(set(placed)) and set(placed) == entries, "an entry not placed once"
    assert {(b.player, b.entry) for b in model.busted} <= entries
    assert sum(p.finish.prize for p in model.placed) == run.prize_pool
    by_place = sorted(model.placed, key=lambda p: p.finish.place)
    prizes = [p.finish.prize for p in by_place]
    assert prizes == sorted(prizes, reverse=True)
    assert by_place[0].finish.player == model.winner and by_place[0].finish.place == 1
    # Out before the prizes were fixed: placed then, the later out the better.
    busted = {(b.player, b.entry) for b in model.busted}
    early = {(p.finish.player, p.entry): p.finish.place for p in model.placed}
    early = {entry: place for entry, place in early.items() if entry in busted}
    for (a, place_a), (b, place_b) in itertools.combinations(early.items(), 2):
        hand_a, hand_b = play.out_in_hand[a], play.out_in_hand[b]
        if hand_a < hand_b:
            assert place_a > place_b, f"{a} out in hand {hand_a}, {b} in {hand_b}"
        elif hand_b < hand_a:
            assert place_b > place_a, f"{b} out in hand {hand_b}, {a} in {hand_a}"


def test_tournaments_with_every_option_play_to_a_winner() -> None:
    """Every kind of purchase made and every refusal met, across a few tournaments."""
    bought: set[str] = set()
    refused: set[ErrorCode] = set()
    for seed in range(8):
        for spec in (SPEC, dataclasses.replace(SPEC, rebuys=None)):
            play = play_with_options(spec, 5 + seed * 3, seed)
            bought.update(play.bought_kinds)
            refused.update(play.refusals)
    assert bought == {
        "entry",
        "re-entry",
        "rebuy at once",
        "rebuy after the hand",
        "rebuy out of chips",
        "add_on at once",
        "add_on after the hand",
    }
    assert refused == {
        ErrorCode.ALREADY_REGISTERED,
        ErrorCode.REGISTRATION_CLOSED,
        ErrorCode.RE_ENTRIES_USED,
        ErrorCode.NOT_REGISTERED,
        ErrorCode.REBUYS_CLOSED,
        ErrorCode.STACK_TOO_BIG,
        ErrorCode.ADD_ON_CLOSED,
        ErrorCode.ADD_ON_TAKEN,
    }


@settings(max_examples=30, deadline=None)
@given(players=st.integers(2, 30), seed=st.integers(0, 2**32), buy_rate=st.floats(0, 0.6))
def test_any_field_with_late_entries_and_rebuys_keeps_its_chips(
    players: int, seed: int, buy_rate: float
) -> None:
    play_with_options(SPEC, players, seed, buy_rate=buy_rate)


@pytest.mark.parametrize(
    "changes",
    [
        {"rebuys": None},  # late registration and re-entries only
        {"late_registration_levels": None, "re_entries": 0},  # rebuys and the add-on only
        {"rebuys": Rebuys(levels=3, chips=500)},  # rebuys past late registration, no add-on
    ],
)
def test_each_option_alone_plays_to_a_winner(changes: dict[str, object]) -> None:
    for seed in range(4):
        play_with_options(dataclasses.replace(SPEC, **changes), 7, seed)


# ---------------------------------------------------------------------- step by step


def started(players: int, *, seats: int = 4, **changes: object) -> Play:
    spec = dataclasses.replace(SPEC, seats_per_table=seats, **changes)
    play = Play(TournamentRun(spec, tournament_id=3, seed=SEED, prize_pool=players * 100))
    play.start([f"p{n}" for n in range(players)])
    return play


def finish_hand(play: Play, table: int, losses: dict[str, int] | None = None) -> list[Order]:
    """Table ``table``'s hand ends: each player in ``losses`` loses that much (all of it
    for None) to the first player dealt who loses nothing."""
    model = play.model.tables[table]
    assert model.dealt is not None
    losses = losses or {}
    winner = next(p for p in model.dealt if p not in losses)
    for player, lost in losses.items():
        lost = model.stacks[player] if lost is None else lost
        model.stacks[player] -= lost
        model.stacks[winner] += lost
    model.dealt = None
    starting = {p: model.starting.get(p, stack) for p, stack in model.stacks.items()}
    orders = play.run.hand_ended(table, model.number, dict(model.stacks), starting, play.at)
    play.carry_out(orders)
    return orders


def test_a_late_entrant_sits_at_a_table_with_the_fewest_players_or_at_a_new_one() -> None:
    play = started(7)  # tables of 4 and 3
    assert sorted(len(t.seats) for t in play.run.tables.values()) == [3, 4]
    orders = play.buy("enter", "late1")
    assert isinstance(orders, list)
    (seat,) = [o for o in orders if isinstance(o, SeatPlayer)]
    assert len(play.run.tables[seat.table].seats) == 4 and play.run.entrants == 8
    assert play.run.prize_pool == 800 and play.run.chips_issued == 8000
    orders = play.buy("enter", "late2")  # both tables full: a third opens
    assert isinstance(orders, list)
    assert orders[:2] == [OpenTable(3), SeatPlayer(3, orders[1].seat, "late2", 1000)]
    # The new table deals once the tables between hands give it players.
    for table in (1, 2):
        assert any(isinstance(o, RemovePlayer) for o in finish_hand(play, table))
    assert sorted(len(t.seats) for t in play.run.tables.values()) == [3, 3, 3]
    assert play.model.tables[3].dealt is not None


def test_a_re_entry_is_a_new_entry_placed_on_its_own_when_the_prizes_are_fixed() -> None:
    play = started(4, seats=8, rebuys=None, re_entries=1)
    (table,) = play.run.tables
    dealt = play.model.tables[table].dealt
    assert dealt is not None
    first = dealt[0]
    orders = finish_hand(play, table, {first: None})
    assert Busted(first, 1) in orders and not any(isinstance(o, Placed) for o in orders)
    assert play.buy("enter", first) != [] and play.run.entries[first] == 2
    play.at += 30
    finish_hand(play, table)  # seated during this hand: dealt in from the next
    orders = finish_hand(play, table, {first: None})  # out again, no re-entry left
    assert Busted(first, 2) in orders
    refused = play.buy("enter", first)
    assert isinstance(refused, Refusal) and refused.code is ErrorCode.RE_ENTRIES_USED
    play.at = 26 * MINUTE  # levels 1 and 2 (and the break) over: late registration too
    refused = play.buy("enter", "too-late")
    assert isinstance(refused, Refusal) and refused.code is ErrorCode.REGISTRATION_CLOSED
    orders = finish_hand(play, table)
    (fixed,) = [o for o in orders if isinstance(o, PrizesFixed)]
    assert fixed.entrants == 5 and sum(fixed.prizes) == 500
    places = {(o.finish.player, o.entry): o.finish.place for o in orders if isinstance(o, Placed)}
    assert places == {(first, 2): 4, (first, 1): 5}  # the later out, the better


def test_chips_bought_during_a_hand_are_added_when_it_ends() -> None:
    play = started(3, seats=8, late_registration_levels=None, re_entries=0)
    (table,) = play.run.tables
    orders = play.buy("rebuy", "p0")  # at the starting chips, in the hand: after it
    assert orders == [] and play.run.pending == {"p0": 1000}
    refused = play.buy("rebuy", "p0")  # 1,000 + 1,000 bought: above the starting chips
    assert isinstance(refused, Refusal) and refused.code is ErrorCode.STACK_TOO_BIG
    orders = finish_hand(play, table, {"p0": None})  # out of chips in it: plays on with them
    assert orders[0] == AddChips(table, "p0", 1000, 1000)
    assert Deal(table, 2) in orders and play.run.stacks["p0"] == 1000
    assert not play.run.pending and play.run.chips_issued == 4000


def test_a_player_out_of_chips_may_rebuy_for_a_while_then_is_out() -> None:
    play = started(4, seats=8, late_registration_levels=None, re_entries=0)
    (table,) = play.run.tables
    finish_hand(play, table, {"p1": None, "p2": None})
    assert set(play.run.waiting) == {"p1", "p2"}
    assert play.run.next_wake(play.at) == play.at + REBUY_WAIT_SECONDS
    orders = play.buy("rebuy", "p1")  # seated again, with the rebuy's chips
    assert isinstance(orders, list)
    assert [o for o in orders if isinstance(o, SeatPlayer)][0].player == "p1"
    refused = play.buy("enter", "p2")  # still in: the rebuy is theirs to take
    assert isinstance(refused, Refusal) and refused.code is ErrorCode.ALREADY_REGISTERED
    play.at += REBUY_WAIT_SECONDS
    orders = play.run.wake(play.at)
    assert orders[0] == Busted("p2", 1)
    play.carry_out(orders)
    refused = play.buy("rebuy", "p2")
    assert isinstance(refused, Refusal) and refused.code is ErrorCode.NOT_REGISTERED
    refused = play.buy("add_on", "p0")
    assert isinstance(refused, Refusal) and refused.code is ErrorCode.ADD_ON_CLOSED


def test_the_add_on_is_taken_once_in_its_level_whatever_the_stack() -> None:
    play = started(3, seats=8, late_registration_levels=None, re_entries=0)
    (table,) = play.run.tables
    finish_hand(play, table, {"p1": 300})
    play.at = 26 * MINUTE  # the rebuys over: the break of the add-on
    refused = play.buy("rebuy", "p1")
    assert isinstance(refused, Refusal) and refused.code is ErrorCode.REBUYS_CLOSED
    assert play.run.pending == {} and play.model.tables[table].dealt is not None
    assert play.buy("add_on", "p0") == []  # in the hand: after it
    refused = play.buy("add_on", "p0")
    assert isinstance(refused, Refusal) and refused.code is ErrorCode.ADD_ON_TAKEN
    refused = play.buy("add_on", "nobody")
    assert isinstance(refused, Refusal) and refused.code is ErrorCode.NOT_REGISTERED
    orders = finish_hand(play, table)
    assert AddChips(table, "p0", 2000, play.run.stacks["p0"]) in orders
    assert play.model.tables[table].dealt is None  # the break: no hand dealt
    play.at = 41 * MINUTE  # the add-on's level over: the prizes fixed at the next fact
    refused = play.buy("add_on", "p2")
    assert isinstance(refused, Refusal) and refused.code is ErrorCode.ADD_ON_CLOSED
    orders = play.run.wake(play.at)
    assert orders[0] == PrizesFixed(payouts(400, 3, "scheduled"), 3)
    assert orders[-1] == Deal(table, 3)
