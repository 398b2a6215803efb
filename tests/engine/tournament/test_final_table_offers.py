"""Deals at the final table, through the director's state (``engine.tournament.run`` and
``engine.tournament.offers``): a proposal's amounts worked out at a hand boundary and shown,
no hand dealt while it stands, the deal made when every player left accepts (the amounts
and the amount played for summing to the prizes still to pay, the stacks untouched), the
offer withdrawn on a decline or once its time is over, the refusals changing nothing; and
whole tournaments with deals proposed, accepted and declined at random, every chip of the
prize pool paid once."""

from __future__ import annotations

import copy
import random
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tournament_run import SEED, Model

from engine.errors import Refusal
from engine.protocol import ErrorCode
from engine.tournament.deals import chip_chop, icm
from engine.tournament.offers import (
    DEAL_OFFER_SECONDS,
    DealDesk,
    DealMade,
    DealOffered,
    DealWithdrawn,
)
from engine.tournament.run import Deal, Finished, Order, Placed, TournamentRun
from engine.tournament.templates import TEMPLATES

PLAYERS = ["ann", "bob", "cat"]
POOL = 3000  # three entrants of a sit-and-go: 65% and 35%, 1,950 and 1,050


def one_table(players: list[str] = PLAYERS) -> tuple[TournamentRun, Model]:
    """A sit-and-go on one table (its final table from the start), its first hand allowed."""
    run = TournamentRun(TEMPLATES["razz-sng-8"], tournament_id=3, seed=SEED, prize_pool=POOL)
    model = Model()
    assert model.carry_out(run, run.start(players, 0.0), 0.0) == [1]
    return run, model


def play_hand(
    run: TournamentRun, model: Model, at: float, moves: dict[str, int] | None = None
) -> list[Order]:
    """Table 1's allowed hand dealt and ended, ``moves`` chips won (+) and lost (-)."""
    model.deal(run, 1, at)
    table = model.tables[1]
    for player, change in (moves or {}).items():
        table.stacks[player] += change
    assert sum(table.stacks.values()) == sum(table.starting.values())
    table.dealt = None
    orders = run.hand_ended(1, table.number, dict(table.stacks), dict(table.starting), at)
    model.carry_out(run, orders, at)
    return orders


T = TypeVar("T")


def of(kind: type[T], orders: list[Order]) -> list[T]:
    return [order for order in orders if isinstance(order, kind)]


def state(run: TournamentRun) -> tuple[object, ...]:
    """What a refusal must leave as it was."""
    desk = run.deals
    tables = {n: (dict(t.seats), t.next_hand, t.in_hand, t.allowed) for n, t in run.tables.items()}
    return (
        (desk.proposal, desk.offer, set(desk.accepted), list(desk.made), desk.proposed),
        (dict(run.stacks), tables, list(run.finishes)),
    )


def test_a_deal_proposed_during_a_hand_is_shown_at_its_end_and_made_when_all_accept() -> None:
    run, model = one_table()
    assert run.prizes == (1950, 1050)
    # Hand 1 was allowed at the start: the proposal waits for its end.
    assert run.propose_deal("bob", "icm", 300, DEAL_OFFER_SECONDS, 1.0) == []
    assert run.deals.proposal is not None and run.deals.offer is None
    orders = play_hand(run, model, 10.0, {"ann": +500, "cat": -500})
    (offered,) = of(DealOffered, orders)
    assert not of(Deal, orders), "a hand dealt while the offer stands"
    offer = offered.offer
    seats = sorted(run.tables[1].seats.items())
    assert [s.player for s in offer.shares] == [player for _, player in seats]
    chips = [s.chips for s in offer.shares]
    assert dict(zip([s.player for s in offer.shares], chips, strict=True)) == {
        "ann": 2000,
        "bob": 1500,
        "cat": 1000,
    }
    assert offer.prizes == (1950, 1050)
    amounts = tuple(s.amount for s in offer.shares)
    assert amounts == icm(chips, [1950, 1050], played_for=300)
    assert sum(amounts) + offer.played_for == POOL
    assert (offer.shown_at, offer.expires_at) == (10.0, 10.0 + DEAL_OFFER_SECONDS)
    assert run.next_wake(11.0) == offer.expires_at

    assert run.accept_deal("ann", 1, 20.0) == []
    assert run.accept_deal("ann", 1, 21.0) == []  # again: nothing more
    assert run.accept_deal("cat", 1, 22.0) == []
    stacks = dict(run.stacks)
    orders = run.accept_deal("bob", 1, 23.0)
    assert orders[0] == DealMade(offer)
    assert of(Deal, orders) == [Deal(1, 2)]  # play goes on
    assert run.stacks == stacks  # a deal moves no chip
    assert run.deals.prizes_now(run.prizes) == (300, 0)
    assert run.next_wake(24.0) is None
    model.carry_out(run, orders, 23.0)

    # Play on to a winner: the player out takes nothing more, the winner the 300.
    orders = play_hand(run, model, 30.0, {"ann": +1000, "cat": -1000})
    (out,) = of(Placed, orders)
    assert (out.finish.player, out.finish.place, out.finish.prize) == ("cat", 3, 0)
    orders = play_hand(run, model, 40.0, {"ann": +1500, "bob": -1500})
    placed = [o.finish for o in of(Placed, orders)]
    assert [(f.player, f.place, f.prize) for f in placed] == [("bob", 2, 0), ("ann", 1, 300)]
    assert of(Finished, orders) == [Finished("ann")]
    paid = sum(run.deals.dealt(p) for p in PLAYERS) + sum(f.prize for f in run.finishes)
    assert paid == POOL


def test_a_deal_proposed_between_hands_is_shown_at_once() -> None:
    run, model = one_table()
    play_hand(run, model, 5.0)
    run.pause(6.0)
    play_hand(run, model, 7.0)  # the hand allowed before the pause, played out
    assert not run.tables[1].busy
    orders = run.propose_deal("cat", "chip_chop", 0, 30.0, 8.0)
    (offered,) = of(DealOffered, orders)
    offer = offered.offer
    assert [s.amount for s in offer.shares] == list(chip_chop([1500] * 3, [1950, 1050]))
    assert offer.expires_at == 38.0
    assert run.resume(9.0) == []  # resumed, yet no hand while the offer stands
    for player in PLAYERS:
        orders = run.accept_deal(player, 1, 10.0)
    assert of(DealMade, orders) and of(Deal, orders) == [Deal(1, 3)]
    # Nothing played for: the prizes still to pay are none, the tournament plays on.
    assert run.deals.prizes_now(run.prizes) == (0, 0)
    with pytest.raises(Refusal) as refused:
        run.propose_deal("ann", "icm", 0, 30.0, 11.0)
    assert refused.value.code is ErrorCode.BAD_DEAL


def test_one_decline_withdraws_the_offer_and_play_goes_on() -> None:
    run, model = one_table()
    run.propose_deal("ann", "icm", 0, DEAL_OFFER_SECONDS, 1.0)
    play_hand(run, model, 2.0)
    run.accept_deal("ann", 1, 3.0)
    orders = run.decline_deal("bob", 1, 4.0)
    assert orders == [DealWithdrawn(1, "declined", "bob"), Deal(1, 2)]
    assert not run.deals.standing and run.deals.made == []
    assert run.next_wake(5.0) is None
    with pytest.raises(Refusal) as refused:
        run.accept_deal("cat", 1, 5.0)
    assert refused.value.code is ErrorCode.NO_DEAL_OFFER
    # A new proposal is the next deal, with a number of its own.
    model.carry_out(run, orders, 4.0)
    assert run.propose_deal("cat", "icm", 0, DEAL_OFFER_SECONDS, 6.0) == []
    assert run.deals.proposal is not None and run.deals.proposal.number == 2
    # A proposal may be declined before its amounts are shown.
    assert run.decline_deal("ann", 2, 7.0) == [DealWithdrawn(2, "declined", "ann")]
    orders = play_hand(run, model, 8.0)
    assert not of(DealOffered, orders) and of(Deal, orders) == [Deal(1, 3)]


def test_an_offer_not_accepted_in_time_is_withdrawn_when_the_director_wakes() -> None:
    run, model = one_table()
    run.propose_deal("ann", "chip_chop", 100, 60.0, 1.0)
    play_hand(run, model, 2.0)
    assert run.next_wake(3.0) == 62.0
    run.accept_deal("ann", 1, 3.0)
    run.accept_deal("bob", 1, 4.0)
    assert run.wake(61.9) == []  # still standing: no hand
    before = state(run)
    with pytest.raises(Refusal) as refused:
        run.accept_deal("cat", 1, 62.0)  # too late, though not yet withdrawn
    assert refused.value.code is ErrorCode.NO_DEAL_OFFER
    assert state(run) == before
    assert run.wake(62.0) == [DealWithdrawn(1, "timeout"), Deal(1, 2)]
    assert run.deals.made == [] and run.next_wake(63.0) is None


def test_a_proposal_waiting_for_the_hand_that_ends_the_tournament_is_dropped() -> None:
    run, model = one_table(["ann", "bob"])
    run.propose_deal("ann", "icm", 0, 60.0, 1.0)
    orders = play_hand(run, model, 2.0, {"ann": +1500, "bob": -1500})
    assert of(Finished, orders) == [Finished("ann")]
    assert orders[-1] == DealWithdrawn(1, "over")
    assert not run.deals.standing


def test_refusals_change_nothing() -> None:
    run, model = one_table()

    def refused(code: ErrorCode, call: str, *args: object) -> None:
        before = state(run)
        with pytest.raises(Refusal) as refusal:
            getattr(run, call)(*args)
        assert refusal.value.code is code, refusal.value.message
        assert state(run) == before

    refused(ErrorCode.NOT_PLAYING, "propose_deal", "eve", "icm", 0, 60.0, 1.0)
    refused(ErrorCode.BAD_DEAL, "propose_deal", "ann", "split", 0, 60.0, 1.0)
    refused(ErrorCode.BAD_DEAL, "propose_deal", "ann", "icm", 0, 0.0, 1.0)
    # At most first place's lead over second: 1,950 - 1,050.
    refused(ErrorCode.BAD_DEAL, "propose_deal", "ann", "icm", 901, 60.0, 1.0)
    refused(ErrorCode.BAD_DEAL, "propose_deal", "ann", "icm", -1, 60.0, 1.0)
    refused(ErrorCode.NO_DEAL_OFFER, "accept_deal", "ann", 1, 1.0)
    refused(ErrorCode.NO_DEAL_OFFER, "decline_deal", "ann", 1, 1.0)
    run.propose_deal("ann", "icm", 900, 60.0, 1.0)
    refused(ErrorCode.DEAL_OFFER_STANDING, "propose_deal", "bob", "chip_chop", 0, 60.0, 2.0)
    refused(ErrorCode.NO_DEAL_OFFER, "accept_deal", "bob", 1, 2.0)  # not shown yet
    play_hand(run, model, 3.0)
    refused(ErrorCode.NO_DEAL_OFFER, "accept_deal", "bob", 2, 4.0)
    refused(ErrorCode.NO_DEAL_OFFER, "decline_deal", "bob", 2, 4.0)
    refused(ErrorCode.NOT_PLAYING, "accept_deal", "eve", 1, 4.0)
    refused(ErrorCode.DEAL_OFFER_STANDING, "propose_deal", "cat", "icm", 0, 60.0, 4.0)


def test_no_deal_before_the_final_table() -> None:
    spec = TEMPLATES["stud-sng-9"]
    run = TournamentRun(spec, tournament_id=9, seed=SEED, prize_pool=900)
    run.start([f"p{n}" for n in range(9)], 0.0)
    assert len(run.tables) == 2
    with pytest.raises(Refusal) as refused:
        run.propose_deal("p0", "chip_chop", 0, 60.0, 1.0)
    assert refused.value.code is ErrorCode.NOT_FINAL_TABLE
    assert not run.deals.standing and run.deals.proposed == 0


def test_icm_is_refused_for_more_than_ten_players() -> None:
    desk = DealDesk()
    stacks = {f"p{n}": 100 + n for n in range(11)}
    with pytest.raises(Refusal) as refused:
        desk.propose("p0", "icm", 0, 60.0, stacks=stacks, prizes=[500, 300, 200])
    assert refused.value.code is ErrorCode.BAD_DEAL and "at most 10" in refused.value.message
    assert not desk.standing and desk.proposed == 0
    desk.propose("p0", "chip_chop", 0, 60.0, stacks=stacks, prizes=[500, 300, 200])
    (offer,) = [desk.show(stacks, [500, 300, 200], 1.0).offer]
    assert sum(s.amount for s in offer.shares) == 1000


@settings(max_examples=30, deadline=None)
@given(entrants=st.integers(2, 8), seed=st.integers(0, 2**32))
def test_tournaments_with_deals_pay_the_pool_exactly(entrants: int, seed: int) -> None:
    """Random hands, and at random moments a deal proposed (either method, an amount played
    for or none), accepted by all, declined, or left to run out of time; whatever happens,
    no hand is dealt while an offer stands, a deal moves no chip, and the deals and the
    places pay the pool exactly once the tournament is over."""
    rng = random.Random(seed)
    players = [f"p{n}" for n in range(entrants)]
    spec = copy.deepcopy(TEMPLATES["razz-sng-8"])
    pool = entrants * spec.buy_in
    run = TournamentRun(spec, tournament_id=5, seed=SEED, prize_pool=pool)
    model = Model()
    at = 0.0
    allowed = model.carry_out(run, run.start(players, at), at)
    issued = entrants * spec.structure.starting_chips
    offers = made = 0
    for _ in range(5_000):
        if model.winner is not None:
            break
        at += rng.uniform(1, 30)
        if rng.random() < 0.3 and not run.deals.standing:
            left = len(run.stacks)
            prizes = run.deals.prizes_now(run.prizes)[:left]
            gap = prizes[0] - (prizes[1] if len(prizes) > 1 else 0)
            method = rng.choice(["icm", "chip_chop"])
            try:
                orders = run.propose_deal(
                    rng.choice(sorted(run.stacks)), method, rng.randint(0, gap), 60.0, at
                )
            except Refusal as refusal:
                assert refusal.code is ErrorCode.BAD_DEAL and not any(prizes)
                orders = []
            allowed += model.carry_out(run, orders, at)
        offer = run.deals.offer
        if offer is not None:
            offers += 1
            assert not allowed, "a hand allowed while an offer stands"
            assert sum(s.amount for s in offer.shares) + offer.played_for == sum(offer.prizes)
            assert offer.prizes == run.deals.prizes_now(run.prizes)[: len(run.stacks)]
            stacks = dict(run.stacks)
            ending = rng.choice(["accept", "decline", "timeout"])
            orders = []
            if ending == "timeout":
                at = max(at, offer.expires_at)
                orders = run.wake(at)
                assert orders[0] == DealWithdrawn(offer.number, "timeout")
            elif ending == "decline":
                orders = run.decline_deal(rng.choice(sorted(run.stacks)), offer.number, at)
            else:
                for player in rng.sample(sorted(run.stacks), len(run.stacks)):
                    orders = run.accept_deal(player, offer.number, at)
                assert orders[0] == DealMade(offer)
                made += 1
            assert run.stacks == stacks and not run.deals.standing
            allowed += model.carry_out(run, orders, at)
            continue
        if not allowed:
            if model.tables[1].dealt is None:
                # Paused by nothing, on no break: only an offer could hold the table.
                at = run.next_wake(at) or at
                allowed += model.carry_out(run, run.wake(at), at)
            continue
        model.deal(run, allowed.pop(), at)
        model.play_out(run, 1, rng)
        table = model.tables[1]
        starting = {p: table.starting.get(p, stack) for p, stack in table.stacks.items()}
        orders = run.hand_ended(1, table.number, dict(table.stacks), starting, at)
        allowed += model.carry_out(run, orders, at)
        assert model.chips() == issued or model.winner is not None
    assert model.winner is not None
    dealt = sum(run.deals.dealt(p) for p in players)
    assert dealt + sum(p.finish.prize for p in model.placed) == pool
    assert len(model.placed) == entrants
    assert made <= offers
