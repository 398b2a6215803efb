"""Bots: every strategy answers a legal action in every variant and structure, and the
rule-based bot values its hand from its cards and the visible upcards, dead cards counted."""

from __future__ import annotations

import dataclasses
import random

import pytest
from twin import Twin

from engine.actions import Action as EngineAction
from engine.variants import VARIANTS, TableConfig, find_variant
from stud_bots import STRATEGIES, Bot, RuleBot, equity, make_bot
from stud_bots.strategies import MOST_BETS, bets_in
from stud_client import Action, LegalActions, SeatView, Stakes, TableView

CONFIGS = [TableConfig(variant=v) for v in VARIANTS.values()] + [
    TableConfig(variant=find_variant("seven_card_stud"), structure="no_limit"),
    TableConfig(variant=find_variant("razz"), structure="pot_limit"),
]


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.variant.name}-{c.structure}")
def test_every_decision_is_legal(strategy: str, config: TableConfig) -> None:
    rng = random.Random(3)
    players = min(5, config.variant.max_players)
    bots: list[Bot] = [make_bot(strategy, random.Random(n)) for n in range(players)]
    if strategy == "rules":
        bots = [RuleBot(random.Random(n), samples=30) for n in range(players)]
    twin = Twin(config, players, rng=rng)
    decisions = 0
    for _ in range(6):
        hand = twin.deal()
        if hand is None:
            break
        while not hand.is_over():
            legal = hand.legal_actions()
            assert legal.seat is not None
            seen = twin.tables[legal.seat].view
            assert seen.my_turn and seen.legal == legal
            action = bots[legal.seat].decide(seen, legal)
            assert isinstance(action, Action)
            assert legal.allows(action.kind, action.amount), (action, legal)
            if action.kind in ("complete", "bet", "raise"):
                assert action.amount is not None
            decisions += 1
            twin.publish(hand.apply(EngineAction(legal.seat, action.kind, action.amount)))
    assert decisions > 10


def seat(
    number: int, up: str, down: str = "", *, folded: bool = False, down_count: int | None = None
) -> SeatView:
    ups = tuple(up[i : i + 2] for i in range(0, len(up), 2))
    downs = tuple(down[i : i + 2] for i in range(0, len(down), 2))
    count = len(downs) if down_count is None else down_count
    return SeatView(
        number, f"p{number}", 100, in_hand=True, up=ups, down=downs, down_count=count, folded=folded
    )


def table(variant: str, street: str, *seats: SeatView, pot: int = 20) -> TableView:
    return TableView(
        table=1,
        seq=1,
        variant=variant,
        stakes=Stakes(1, 2, 5, 10),
        min_buy_in=20,
        max_buy_in=1000,
        seats=seats,
        you=0,
        street=street,
        pot=pot,
    )


def share(view: TableView) -> float:
    return equity(view, samples=3000, rng=random.Random(11))


def test_dead_cards_lower_a_draw() -> None:
    """A three-flush in spades is worth less when the spades it needs show elsewhere."""
    live = table(
        "seven_card_stud",
        "third",
        seat(0, "9s", "4s2s"),
        seat(1, "Kd", down_count=2),
        seat(2, "7c", down_count=2),
        seat(3, "8h", down_count=2),
        seat(4, "Jc", down_count=2),
    )
    dead = table(
        "seven_card_stud",
        "third",
        seat(0, "9s", "4s2s"),
        seat(1, "Ks", down_count=2),
        seat(2, "7s", down_count=2),
        seat(3, "8s", down_count=2),
        seat(4, "Js", down_count=2),
    )
    assert share(dead) < share(live) - 0.02


def test_folded_upcards_count_as_dead() -> None:
    """A pair of queens is worth less when the two other queens were folded face up."""
    alive = table(
        "seven_card_stud",
        "fourth",
        seat(0, "Qs3d", "Qh8c"),
        seat(1, "Kd9c", down_count=2),
        seat(2, "2c4h", down_count=2, folded=True),
    )
    dead = table(
        "seven_card_stud",
        "fourth",
        seat(0, "Qs3d", "Qh8c"),
        seat(1, "Kd9c", down_count=2),
        seat(2, "QcQd", down_count=2, folded=True),
    )
    assert share(dead) < share(alive)


def test_razz_values_low_cards() -> None:
    wheel = table("razz", "third", seat(0, "3c", "As2d"), seat(1, "Kd", down_count=2))
    rough = table("razz", "third", seat(0, "Kc", "QsJd"), seat(1, "3d", down_count=2))
    assert share(wheel) > 0.7 > 0.3 > share(rough)


def test_hi_lo_splits_the_pot() -> None:
    # Ace-deuce-trey against a king: a low most of the time, and sometimes the high too.
    low = table(
        "seven_card_stud_hi_lo", "third", seat(0, "3c", "As2d"), seat(1, "Kd", down_count=2)
    )
    assert share(low) > 0.55
    # A made eight low and a made king-high flush split: each is worth about half.
    split = table(
        "seven_card_stud_hi_lo",
        "seventh",
        seat(0, "8c7d6h5s", "2c3d9s"),
        seat(1, "KhQhJh", down_count=4),
    )
    assert 0.25 < share(split) < 0.9


def test_no_opponent_left_is_the_whole_pot() -> None:
    alone = table(
        "five_card_stud", "third", seat(0, "9c8c", "2d"), seat(1, "Ah", down_count=1, folded=True)
    )
    assert share(alone) == 1.0


def test_the_rule_bot_raises_the_nuts_and_folds_trash() -> None:
    bot = RuleBot(random.Random(1), samples=400)
    quads = table(
        "seven_card_stud",
        "seventh",
        seat(0, "AcAd2h3s", "AhAs9d"),
        seat(1, "Kd7c5h4s", down_count=3),
        pot=60,
    )
    raise_ok = LegalActions(
        0, ("fold", "call", "raise"), call=10, wager="raise", min_to=20, max_to=20, to_choices=(20,)
    )
    assert bot.decide(quads, raise_ok) == Action("raise", 20)
    trash = table(
        "razz", "sixth", seat(0, "KdQcJh9s", "Ts8c"), seat(1, "As2c3d4h", down_count=2), pot=30
    )
    facing = LegalActions(
        0, ("fold", "call", "raise"), call=10, wager="raise", min_to=20, max_to=20, to_choices=(20,)
    )
    assert bot.decide(trash, facing) == Action("fold")
    checked = LegalActions(0, ("check", "bet"), wager="bet", min_to=10, max_to=10, to_choices=(10,))
    assert bot.decide(trash, checked) in (Action("check"), Action("bet", 10))


# ---------------------------------------------------------------------- the house bots' play


def seat_betting(number: int, up: str, down: str = "", bet: int = 0) -> SeatView:
    return dataclasses.replace(seat(number, up, down, down_count=2), bet=bet)


BRING_IN_ONLY = LegalActions(
    0, ("fold", "call", "complete"), call=2, wager="complete", min_to=5, max_to=5, to_choices=(5,)
)
FACING_COMPLETE = LegalActions(
    0, ("fold", "call", "raise"), call=5, wager="raise", min_to=10, max_to=10, to_choices=(10,)
)
MY_BRING_IN = LegalActions(
    0, ("bring_in", "complete"), bring_in=2, wager="complete", min_to=5, max_to=5, to_choices=(5,)
)


def third(variant: str, mine: str, their_up: str, their_bet: int, *others: str) -> TableView:
    """Third street at 1/2 (ante 1, bring-in 2, 5/10): my three cards (two down, one up)
    against a hand showing ``their_up`` that has bet ``their_bet``; ``others``: more
    upcards, of hands that have folded."""
    seats = [
        seat_betting(0, mine[4:6], mine[:4]),
        seat_betting(1, their_up, bet=their_bet),
        *(
            dataclasses.replace(seat(2 + n, up, down_count=2), folded=True)
            for n, up in enumerate(others)
        ),
    ]
    return table(variant, "third", *seats, pot=2 + 2 + their_bet)


@pytest.mark.parametrize(
    ("variant", "mine", "their_up", "legal", "expected"),
    [
        # Razz judges by low cards: a king showing against a deuce is thrown away, whatever
        # lies under it; the same wheel cards with a four showing raise.
        ("razz", "As2dKh", "2c", FACING_COMPLETE, Action("fold")),
        ("razz", "As2d4h", "Kc", FACING_COMPLETE, Action("raise", 10)),
        ("razz", "As2d4h", "Kc", MY_BRING_IN, Action("complete", 5)),
        ("razz", "KsKdQh", "3c", FACING_COMPLETE, Action("fold")),
        # Seven-card stud by high hands: rolled-up trips and kings raise; baby wheel cards
        # with nothing else fold to a complete from an ace.
        ("seven_card_stud", "7s7d7h", "Ac", FACING_COMPLETE, Action("raise", 10)),
        ("seven_card_stud", "7s7d7h", "Ac", MY_BRING_IN, Action("complete", 5)),
        ("seven_card_stud", "KsKdQh", "3c", FACING_COMPLETE, Action("raise", 10)),
        ("seven_card_stud", "As2d3h", "Kc", FACING_COMPLETE, Action("fold")),
        ("seven_card_stud", "9s4d2h", "Jc", FACING_COMPLETE, Action("fold")),
        ("seven_card_stud", "QsJdTh", "4c", BRING_IN_ONLY, Action("call")),
        # Stud hi-lo by both halves: three wheel cards raise, a king-queen against it folds.
        ("seven_card_stud_hi_lo", "As2d3h", "Kc", FACING_COMPLETE, Action("raise", 10)),
        ("seven_card_stud_hi_lo", "KsQd9h", "4c", FACING_COMPLETE, Action("fold")),
        ("seven_card_stud_hi_lo", "AsAd9h", "4c", FACING_COMPLETE, Action("raise", 10)),
    ],
)
def test_each_variant_starts_by_its_own_book(
    variant: str, mine: str, their_up: str, legal: LegalActions, expected: Action
) -> None:
    their_bet = {FACING_COMPLETE: 5, BRING_IN_ONLY: 2, MY_BRING_IN: 0}[legal]
    view = third(variant, mine, their_up, their_bet, "Td", "8c")
    assert RuleBot(random.Random(1)).decide(view, legal) == expected


def test_a_small_pair_calls_a_complete_and_folds_to_a_raise() -> None:
    """Fours with an ace kicker against a king and a nine, three-handed: one bet is worth a
    look, a raise is not; heads-up, where a hand is worth more, it calls the raise too."""

    def view(bet: int, *, heads_up: bool = False) -> TableView:
        nine = dataclasses.replace(seat_betting(2, "9d"), folded=heads_up)
        seats = (seat_betting(0, "Ah", "4s4d"), seat_betting(1, "Kc", bet=bet), nine)
        return table("seven_card_stud", "third", *seats, pot=3 + 2 + bet)

    facing_raise = LegalActions(
        0, ("fold", "call", "raise"), call=10, wager="raise", min_to=15, max_to=15, to_choices=(15,)
    )
    bot = RuleBot(random.Random(1))
    assert bot.decide(view(5), FACING_COMPLETE) == Action("call")
    assert bot.decide(view(10), facing_raise) == Action("fold")
    assert bot.decide(view(10, heads_up=True), facing_raise) == Action("call")


def test_a_strong_hand_stops_raising_at_its_cap() -> None:
    """Quads on seventh street heads-up re-raise up to four bets, then only call."""
    bot = RuleBot(random.Random(1), samples=400)

    def facing(level: int) -> tuple[TableView, LegalActions]:
        view = table(
            "seven_card_stud",
            "seventh",
            dataclasses.replace(seat(0, "AcAd2h3s", "AhAs9d"), bet=level - 10),
            dataclasses.replace(seat(1, "Kd7c5h4s", down_count=3), bet=level),
            pot=200,
        )
        legal = LegalActions(
            0,
            ("fold", "call", "raise"),
            call=10,
            wager="raise",
            min_to=level + 10,
            max_to=level + 10,
            to_choices=(level + 10,),
        )
        return view, legal

    assert bets_in(*facing(30)) == 3
    assert bot.decide(*facing(30)) == Action("raise", 40)
    assert bets_in(*facing(40)) == MOST_BETS
    assert bot.decide(*facing(40)) == Action("call")


@pytest.mark.parametrize("variant", ["seven_card_stud", "seven_card_stud_hi_lo", "razz"])
@pytest.mark.parametrize("pairing", [("rules", "rules"), ("rules", "station")])
def test_house_bots_heads_up_raise_within_bounds(variant: str, pairing: tuple[str, str]) -> None:
    """Heads-up fixed limit with no cap on raises (``uncapped_heads_up``, the default), the
    house's bots (server/demo.py plays ``rules`` and ``station``) put in at most four bets a
    street: no raising war to the felt, as two bots that each liked their hand once had."""
    config = TableConfig(variant=find_variant(variant))
    assert config.uncapped_heads_up and config.structure == "fixed_limit"
    stack = 5_000
    most = 0
    streets_seen: set[str] = set()
    for number in range(30):
        bots = [make_bot(s, random.Random(100 * number + n)) for n, s in enumerate(pairing)]
        twin = Twin(config, 2, stack=stack, rng=random.Random(number))
        hand = twin.deal()
        assert hand is not None
        bets: dict[str, int] = {}
        while not hand.is_over():
            legal = hand.legal_actions()
            assert legal.seat is not None
            seen = twin.tables[legal.seat].view
            action = bots[legal.seat].decide(seen, legal)
            assert seen.street is not None
            streets_seen.add(seen.street)
            if action.kind in ("bet", "raise", "complete"):
                bets[seen.street] = bets.get(seen.street, 0) + 1
            twin.publish(hand.apply(EngineAction(legal.seat, action.kind, action.amount)))
        most = max(most, *bets.values(), 0)
        spent = max(stack - s.stack for s in twin.tables[0].view.seats)
        # Four bets a street at most: 4 x 5 on third and fourth, 4 x 10 on the three after.
        assert spent <= 1 + 2 * 4 * 5 + 3 * 4 * 10, (number, bets)
    assert most <= MOST_BETS
    assert "seventh" in streets_seen  # hands are played out, not all folded early


@pytest.mark.parametrize("structure", ["pot_limit", "no_limit"])
@pytest.mark.parametrize("variant", ["seven_card_stud", "razz", "five_card_stud"])
def test_rule_bots_heads_up_in_big_bet_games_stop_at_four_bets(
    variant: str, structure: str
) -> None:
    config = TableConfig(variant=find_variant(variant), structure=structure)
    for number in range(12):
        bots = [RuleBot(random.Random(10 * number + n), samples=60) for n in range(2)]
        twin = Twin(config, 2, stack=5_000, rng=random.Random(number))
        hand = twin.deal()
        assert hand is not None
        bets: dict[str | None, int] = {}
        while not hand.is_over():
            legal = hand.legal_actions()
            assert legal.seat is not None
            seen = twin.tables[legal.seat].view
            action = bots[legal.seat].decide(seen, legal)
            if action.kind in ("bet", "raise", "complete"):
                bets[seen.street] = bets.get(seen.street, 0) + 1
            twin.publish(hand.apply(EngineAction(legal.seat, action.kind, action.amount)))
        assert max(bets.values(), default=0) <= MOST_BETS, (number, bets)
