"""Bots: every strategy answers a legal action in every variant and structure, and the
rule-based bot values its hand from its cards and the visible upcards, dead cards counted."""

from __future__ import annotations

import random

import pytest
from twin import Twin

from engine.actions import Action as EngineAction
from engine.variants import VARIANTS, TableConfig, find_variant
from stud_bots import STRATEGIES, Bot, RuleBot, equity, make_bot
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
