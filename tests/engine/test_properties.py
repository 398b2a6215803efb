"""Invariants over random configurations, variants and legal play (Hypothesis)."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.actions import Action
from engine.cards import Deck, format_card
from engine.errors import EngineError
from engine.hand import Hand
from engine.play import random_action
from engine.variants import VARIANTS, TableConfig
from engine.views import view


@st.composite
def configs(draw: st.DrawFn) -> TableConfig:
    variant = VARIANTS[draw(st.sampled_from(sorted(VARIANTS)))]
    small = draw(st.integers(2, 20))
    five_card = len(variant.streets[-1].cards) == 1 and variant.streets[-1].cards[0]
    return TableConfig(
        variant=variant,
        structure=draw(st.sampled_from(["fixed_limit", "fixed_limit", "pot_limit", "no_limit"])),
        ante=draw(st.integers(0, 5)),
        bring_in=draw(st.integers(0, small)),
        small_bet=small,
        big_bet=small * draw(st.integers(1, 3)),
        max_raises=draw(st.sampled_from([None, 0, 1, 3, 4])),
        uncapped_heads_up=draw(st.booleans()),
        bring_in_may_complete_later=draw(st.booleans()),
        eligibility=draw(st.sampled_from(["ante_and_bring_in", "ante"])),
        bring_in_card=draw(st.sampled_from([None, "low", "high"])),
        bring_in_tie=draw(st.sampled_from(["suit", "position"])),
        order_tie=draw(st.sampled_from([None, "suit", "position"])),
        open_pair_big_bet=draw(st.booleans()),
        burn_cards=draw(st.booleans()),
        last_card_down=bool(five_card) and draw(st.booleans()),
        low_qualifier=draw(st.sampled_from([8, 8, None, 9])),
        kansas_city_low=draw(st.booleans()),
        announce_possibles=draw(st.booleans()),
    )


def _snapshot(hand: Hand) -> tuple[object, ...]:
    return (
        len(hand.events),
        len(hand.actions),
        tuple(hand.stacks),
        tuple(hand.bets),
        tuple(hand.total),
        tuple(hand.folded),
        hand.to_act,
        hand.current_bet,
        hand.street,
        hand.legal_actions(),
    )


def _bad_action(hand: Hand, rng: random.Random) -> Action:
    """Something a careless or hostile client might send."""
    legal = hand.legal_actions()
    seat = legal.seat if legal.seat is not None else 0
    choice = rng.randrange(6)
    if choice == 0:
        others = [s for s in hand.seats if s != seat] or [99]
        return Action(rng.choice(others), rng.choice(["call", "check", "fold"]))
    if choice == 1:
        return Action(seat, rng.choice(["shove", "", "CALL", "raise_to"]))
    if choice == 2:
        return Action(
            seat,
            rng.choice(
                [
                    k
                    for k in ("check", "call", "bet", "raise", "complete", "bring_in")
                    if k not in legal.kinds
                ]
                or ["x"]
            ),
        )
    if choice == 3 and legal.wager is not None:
        return Action(seat, legal.wager, rng.choice([legal.max_to + 1, legal.min_to - 1, -5, 0]))
    if choice == 4:
        return Action(seat, legal.wager or "bet", "10")  # type: ignore[arg-type]
    return Action(seat, "check", 3)


def _stacks(draw: st.DrawFn, config: TableConfig, players: int) -> list[int]:
    need = config.ante + (config.bring_in if config.eligibility == "ante_and_bring_in" else 0)
    low = max(1, need)
    return [draw(st.integers(low, low + 12 * config.big_bet)) for _ in range(players)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_hands_keep_every_invariant(data: st.DataObject) -> None:
    config = data.draw(configs())
    players = data.draw(st.integers(2, config.variant.max_players))
    stacks = _stacks(data.draw, config, players)
    seed = data.draw(st.integers(0, 2**32))
    rng = random.Random(seed)
    hand = Hand(config, list(enumerate(stacks)), Deck(rng=rng))
    steps = 0
    while not hand.is_over():
        steps += 1
        assert steps < 500, "a hand must end"
        if rng.random() < 0.3:
            before = _snapshot(hand)
            bad = _bad_action(hand, rng)
            try:
                hand.apply(bad)
            except EngineError:
                assert _snapshot(hand) == before, "a refused action changed the hand"
            else:
                raise AssertionError(f"accepted an action outside legal_actions(): {bad}")
        if rng.random() < 0.05:
            seat = hand.seat_to_act()
            assert seat is not None
            hand.timeout(seat)
            continue
        action = random_action(hand, rng)
        assert hand.legal_actions().allows(action.kind, action.amount)
        hand.apply(action)
    # Chips are conserved, never negative, and the result agrees with the stacks.
    assert sum(hand.stacks) == sum(stacks)
    assert min(hand.stacks) >= 0
    result = hand.result()
    assert sum(result.net.values()) == 0
    assert [result.stacks[s] for s in hand.seats] == hand.stacks
    _assert_no_leak(hand)
    # The view's main and side pots hold every chip put in, each open only to live seats.
    picture = view(hand.events, None)
    assert sum(p["amount"] for p in picture["pots"]) == picture["pot"] == sum(hand.total)
    live = {s for s, seat in picture["seats"].items() if not seat["folded"]}
    assert all(set(p["eligible"]) <= live for p in picture["pots"])
    # ...and at the hand's end they are the engine's pots (a hand nobody put a chip in has none).
    assert picture["pots"] == [p for p in hand.result().pots if p["amount"]]


def _assert_no_leak(hand: Hand) -> None:
    """No seat's or spectator's events or view hold another seat's down card before it is shown."""
    down: dict[int, set[str]] = {}
    for event in hand.events:
        if event.kind == "down_cards":
            down.setdefault(event.data["seat"], set()).update(event.data["cards"])
    for viewer in [None, *hand.seats]:
        shown: set[int] = set()
        visible = []
        for event in hand.events:
            if event.kind == "showdown":
                shown.add(event.data["seat"])
            if not event.visible_to(viewer):
                continue
            visible.append(event)
            text = json.dumps(event.data)
            for owner, cards in down.items():
                if owner == viewer or owner in shown:
                    continue
                for card in cards:
                    assert f'"{card}"' not in text, (viewer, owner, card, event)
        picture = view(visible, viewer)
        for owner, seat_view in picture["seats"].items():
            if owner != viewer and not seat_view["shown"]:
                assert seat_view["down"] == []


def test_views_show_own_down_cards() -> None:
    rng = random.Random(7)
    hand = Hand(TableConfig(), [(0, 100), (3, 100), (5, 100)], Deck(rng=rng))
    for seat in (0, 3, 5):
        mine = view(hand.events, seat)["seats"][seat]["down"]
        i = hand.index_of[seat]
        assert mine == [format_card(c) for c in hand.cards[i][:2]]


def test_views_show_side_pots_as_players_go_all_in() -> None:
    """A short stack all in makes a side pot it cannot win; the view says who may win which."""
    config = TableConfig(ante=1, bring_in=2, small_bet=5, big_bet=10)
    rng = random.Random(3)
    while True:
        hand = Hand(config, [(0, 2), (1, 100), (2, 100)], Deck(rng=rng))
        legal = hand.legal_actions()
        if legal.seat != 0:
            break
    hand.apply(Action(legal.seat, "bring_in"))
    while hand.seat_to_act() is not None and hand.street == 0:
        legal = hand.legal_actions()
        kind = "call" if "call" in legal.kinds else "check"
        hand.apply(Action(legal.seat, kind))
    pots = view(hand.events, None)["pots"]
    # Seat 0 is all in for 2 (the ante and 1 of the bring-in); the others call the full
    # bring-in (Robert's 4), 1 + 2 each: 2 from each in the main pot, 1 each on the side.
    assert pots[0] == {"amount": 6, "eligible": [0, 1, 2]}
    assert pots[1]["eligible"] == [1, 2] and pots[1]["amount"] >= 2
    assert sum(p["amount"] for p in pots) == sum(hand.total)
