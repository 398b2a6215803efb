"""A finished tournament checked afterwards (engine.tournament.check): random tournaments
journaled as the director journals them, their hands played where the run seated their
players, check out; a forged seed, seat, chip, fact, place or prize is named."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import Refusal
from engine.fair import commitment
from engine.tournament.check import (
    Fact,
    PlayedHand,
    Standing,
    TournamentMismatch,
    check_tournament,
    replay,
)
from engine.tournament.journal import REMOVED
from engine.tournament.run import Disqualified, TournamentRun
from engine.tournament.spec import TournamentSpec
from engine.tournament.structure import Level
from engine.tournament.templates import TEMPLATES

SEED = bytes(range(32))


@dataclasses.dataclass
class Played:
    """A tournament as the cardroom publishes it once over."""

    spec: TournamentSpec
    journal: list[Fact]
    hands: list[PlayedHand]
    standings: list[Standing]


def operate(run: TournamentRun, journal: list[Fact], rng: random.Random, at: float) -> None:
    """An operator's request journaled as the director journals it, if the run takes it: a
    move, a disqualification (its chips' record after it), time added, a pause or resume."""
    player = rng.choice(sorted(run.stacks))
    kind, data = rng.choice(
        [
            ("moved", {"player": player}),
            ("moved", {"player": player, "table": rng.choice(sorted(run.tables))}),
            ("disqualified", {"player": player}),
            ("time_added", {"minutes": 2.5}),
            ("paused" if run.clock is not None and not run.clock.paused else "resumed", {}),
        ]
    )
    fact = Fact(len(journal) + 1, kind, at, data)
    try:
        orders = replay(run, fact)
    except Refusal:
        return  # refused: nothing changed, nothing journaled
    journal.append(fact)
    for order in orders:
        if isinstance(order, Disqualified):
            chips = {"player": order.player, "chips": order.chips}
            journal.append(Fact(len(journal) + 1, REMOVED, at, chips))


def play(spec_name: str, entrants: int, seed: int, *, requests: bool = False) -> Played:
    """A tournament played out: each hand a table was allowed, its chips moved at random,
    journaled as one fact (the director's ``hand``); a wake when every table waits; with
    ``requests``, an operator's requests between them."""
    spec = TEMPLATES[spec_name]
    rng = random.Random(seed)
    players = [f"p{n:03}" for n in range(entrants)]
    pool = entrants * spec.buy_in
    run = TournamentRun(spec, tournament_id=7, seed=SEED, prize_pool=pool)
    journal = [Fact(1, "started", 0.0, {"players": players, "prize_pool": pool})]
    replay(run, journal[0])
    hands: list[PlayedHand] = []
    at = 0.0
    while not run.over:
        at += rng.uniform(5, 90)
        if requests and rng.random() < 0.2:
            operate(run, journal, rng, at)
            continue
        allowed = [number for number, state in run.tables.items() if state.allowed]
        if not allowed and run.clock is not None and run.clock.paused:
            journal.append(Fact(len(journal) + 1, "resumed", at, {}))
            replay(run, journal[-1])
            continue
        if not allowed:
            wake = run.next_wake(at)
            assert wake is not None
            at = max(at, wake)
            journal.append(Fact(len(journal) + 1, "woke", at, {}))
            replay(run, journal[-1])
            continue
        table = rng.choice(allowed)
        state = run.tables[table]
        starting = {player: run.stacks[player] for player in state.seats.values()}
        stacks = dict(starting)
        winner = rng.choice(sorted(stacks))
        for player in stacks:
            if player != winner:
                lost = min(stacks[player], rng.choice([0, 1, stacks[player] // 2, stacks[player]]))
                stacks[player] -= lost
                stacks[winner] += lost
        seats = {seat: (p, starting[p], stacks[p]) for seat, p in state.seats.items()}
        level = spec.structure.entries[state.stakes] if state.stakes is not None else None
        assert isinstance(level, Level)  # the stakes a table is told are a level's
        game, stakes = spec.game_of(level), dict(level.table_stakes())
        hands.append(PlayedHand(table, state.next_hand, seats, game, stakes))
        data = {"table": table, "number": state.next_hand, "stacks": stacks, "starting": starting}
        journal.append(Fact(len(journal) + 1, "hand", at, data))
        for order in replay(run, journal[-1]):
            if isinstance(order, Disqualified):  # at the end of their hand
                chips = {"player": order.player, "chips": order.chips}
                journal.append(Fact(len(journal) + 1, REMOVED, at, chips))
    standings = [Standing(f.player, f.place, f.prize) for f in run.finishes]
    standings += [Standing(player, None, 0) for player in run.disqualified]
    return Played(spec, journal, hands, standings)


def check(played: Played, seed: bytes = SEED, committed: str | None = None) -> list[str]:
    return check_tournament(
        played.spec,
        tournament_id=7,
        seed=seed,
        committed=committed or commitment(SEED),
        journal=played.journal,
        hands=played.hands,
        standings=played.standings,
    ).lines


def test_a_multi_table_tournament_checks_out() -> None:
    played = play("stud-mtt-turbo", 20, 1)
    lines = check(played)
    assert "the start drew 20 players to 3 tables" in lines[1] and "later draw" in lines[1]
    assert lines[2].startswith(f"{len(played.hands)} hands: each player sat where")


@settings(max_examples=15, deadline=None)
@given(entrants=st.integers(2, 30), seed=st.integers(0, 2**32))
def test_any_tournament_played_checks_out(entrants: int, seed: int) -> None:
    check(play("stud-sng-9" if entrants <= 9 else "stud-mtt-turbo", entrants, seed))


def test_a_tournament_with_moves_disqualifications_and_added_time_checks_out() -> None:
    played = [play("stud-mtt-turbo", 24, seed, requests=True) for seed in range(4)]
    kinds = [fact.kind for p in played for fact in p.journal]
    assert {"moved", "disqualified", REMOVED, "time_added", "paused"} <= set(kinds)
    for tournament in played:
        check(tournament)


def _alone(played: Played) -> list[int]:
    """The chips_removed records alone after their fact (it disqualified one player), of
    some chips."""
    journal = played.journal
    return [
        i
        for i, f in enumerate(journal)
        if f.kind == REMOVED
        and f.data["chips"]
        and journal[i - 1].kind != REMOVED
        and (i + 1 == len(journal) or journal[i + 1].kind != REMOVED)
    ]


def test_chips_removed_that_were_not_the_players_are_named() -> None:
    played = next(
        p
        for p in (play("stud-mtt-turbo", 24, seed, requests=True) for seed in range(40))
        if _alone(p)
    )
    index = _alone(played)[0]
    fact = played.journal[index]
    forged = dict(fact.data, chips=fact.data["chips"] - 1)
    played.journal[index] = dataclasses.replace(fact, data=forged)
    with pytest.raises(TournamentMismatch, match="out of play, but the fact before it takes"):
        check(played)
    played.journal[index] = fact
    del played.journal[index]
    played.journal[index:] = [dataclasses.replace(f, seq=f.seq - 1) for f in played.journal[index:]]
    with pytest.raises(TournamentMismatch, match="no chips_removed record follows it"):
        check(played)


def forged_seat(played: Played) -> None:
    """Two players of a hand swapped: not where the draws sat them."""
    hand = next(h for h in played.hands if len(h.seats) >= 3)
    (a, pa), (b, pb) = list(hand.seats.items())[:2]
    seats = {**hand.seats, a: pb, b: pa}
    played.hands[played.hands.index(hand)] = dataclasses.replace(hand, seats=seats)


def forged_chips(played: Played) -> None:
    fact = next(f for f in played.journal if f.kind == "hand")
    stacks = dict(fact.data["stacks"])
    rich = max(stacks, key=lambda p: stacks[p])
    stacks[rich] -= 1
    stacks[min(stacks)] += 1
    index = played.journal.index(fact)
    played.journal[index] = dataclasses.replace(fact, data={**fact.data, "stacks": stacks})


def dropped_fact(played: Played) -> None:
    played.journal.pop(len(played.journal) // 2)


def renumbered_facts(played: Played) -> None:
    last = played.journal[-1]
    played.journal[-1] = dataclasses.replace(last, seq=last.seq + 1)


def forged_place(played: Played) -> None:
    first = next(s for s in played.standings if s.place == 1)
    played.standings[played.standings.index(first)] = dataclasses.replace(first, place=2)


def forged_prize(played: Played) -> None:
    last = max(played.standings, key=lambda s: s.place or 0)
    played.standings[played.standings.index(last)] = dataclasses.replace(last, prize=1)


def hand_unjournaled(played: Played) -> None:
    hand = played.hands[-1]
    played.hands.append(dataclasses.replace(hand, number=hand.number + 1))


def field_not_paid(played: Played) -> None:
    started = played.journal[0]
    data = {**started.data, "prize_pool": started.data["prize_pool"] + 10}
    played.journal[0] = dataclasses.replace(started, data=data)


@pytest.mark.parametrize(
    ("forge", "reason"),
    [
        (forged_seat, "but the draws and moves seated"),
        (forged_chips, "the journal says from"),
        (dropped_fact, "the journal goes from fact"),
        (renumbered_facts, "the journal goes from fact"),
        (forged_place, "by the journal, but the tournament records 2nd"),
        (forged_prize, "by the journal, but the tournament records"),
        (hand_unjournaled, "was played but is not in the journal"),
        (field_not_paid, "paid a buy-in of"),
    ],
)
def test_a_forgery_is_named(forge: Callable[[Played], None], reason: str) -> None:
    played = play("stud-mtt-turbo", 12, 4)
    forge(played)
    with pytest.raises(TournamentMismatch, match=reason):
        check(played)


def test_a_seed_is_checked_against_its_commitment_and_the_draws() -> None:
    played = play("stud-sng-9", 9, 2)
    with pytest.raises(TournamentMismatch, match="does not match the commitment"):
        check(played, seed=bytes(32))
    other = bytes(range(1, 33))  # committed to, but drawing other seats
    with pytest.raises(TournamentMismatch, match="but the draws and moves seated"):
        check(played, seed=other, committed=commitment(other))


def test_a_mixed_tournament_checks_out_and_a_hand_of_another_game_does_not() -> None:
    played = play("stud-mix-turbo", 16, 3)
    assert len({hand.game for hand in played.hands}) >= 2
    check(played)
    index, hand = next((i, h) for i, h in enumerate(played.hands) if h.game == "razz")
    played.hands[index] = dataclasses.replace(hand, game="seven_card_stud")
    with pytest.raises(TournamentMismatch) as mismatch:
        check(played)
    assert f"hand {hand.number} at table {hand.table} was dealt seven_card_stud at level" in str(
        mismatch.value
    )
    assert str(mismatch.value).endswith("of razz")
    played.hands[index] = dataclasses.replace(hand, stakes={**(hand.stakes or {}), "ante": 7})
    with pytest.raises(TournamentMismatch, match="stakes no level of the structure has"):
        check(played)
