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

from engine.fair import commitment
from engine.tournament.check import (
    Fact,
    PlayedHand,
    Standing,
    TournamentMismatch,
    check_tournament,
    replay,
)
from engine.tournament.run import TournamentRun
from engine.tournament.spec import TournamentSpec
from engine.tournament.templates import TEMPLATES

SEED = bytes(range(32))


@dataclasses.dataclass
class Played:
    """A tournament as the cardroom publishes it once over."""

    spec: TournamentSpec
    journal: list[Fact]
    hands: list[PlayedHand]
    standings: list[Standing]


def play(spec_name: str, entrants: int, seed: int) -> Played:
    """A tournament played out: each hand a table was allowed, its chips moved at random,
    journaled as one fact (the director's ``hand``); a wake when every table waits."""
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
        allowed = [number for number, state in run.tables.items() if state.allowed]
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
        hands.append(PlayedHand(table, state.next_hand, seats))
        data = {"table": table, "number": state.next_hand, "stacks": stacks, "starting": starting}
        journal.append(Fact(len(journal) + 1, "hand", at, data))
        replay(run, journal[-1])
    standings = [Standing(f.player, f.place, f.prize) for f in run.finishes]
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
