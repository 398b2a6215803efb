"""Reading and writing PHH, the ``stud-replay`` command, and each rule of the ``phh`` profile.

Every profile rule is shown twice: the engine's default (RULES.md) and the ``phh`` setting,
and the PHH hand is also replayed by PokerKit to the same stacks.
"""

from __future__ import annotations

import io
import json
import random
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pokerkit_hands import pokerkit_stacks

from engine import phh as phh_module
from engine import phh_export, phh_replay
from engine.actions import Action
from engine.cards import UNKNOWN, Deck, format_card, parse_cards
from engine.errors import PhhError
from engine.hand import Hand
from engine.phh import HandHistory, dumps, dumps_all, loads, loads_all, parse_action
from engine.phh_export import export
from engine.phh_replay import Record, replay, replay_hand, start
from engine.phh_rules import is_phh_config, phh_config
from engine.play import play_random_hand
from engine.replay import main
from engine.variants import VARIANTS, TableConfig

HEADER = """variant = '{variant}'
antes = {antes}
bring_in = {bring_in}
small_bet = {small}
big_bet = {big}
starting_stacks = {stacks}
"""


def phh(
    actions: list[str],
    stacks: list[int],
    variant: str = "F7S",
    antes: object = 1,
    bring_in: int = 2,
    small: int = 5,
    big: int = 10,
    extra: str = "",
) -> str:
    head = HEADER.format(
        variant=variant, antes=antes, bring_in=bring_in, small=small, big=big, stacks=stacks
    )
    return head + f"actions = {actions!r}\n" + extra


def both(text: str) -> list[int]:
    """Replay with the engine and with PokerKit; they must agree."""
    mine = replay(loads(text))
    assert mine == pokerkit_stacks(text), text
    return mine


def started(text: str, config: TableConfig | None = None) -> Hand:
    """The engine hand of a record's deals, before any action (to look at legal actions);
    ``config`` replaces the ``phh`` profile to show the rule books' way."""
    history = loads(text)
    deals = tuple(a for a in history.actions if a.startswith("d "))  # no betting to wait for
    history = replace(history, actions=deals)
    return start(history, config or history.config())


SHOWDOWN = [
    "d dh p1 AsAd2c",
    "d dh p2 KsKd3c",
    "p1 pb",
    "p2 cc",
    "d dh p1 4c",
    "d dh p2 5c",
    "p2 cc",
    "p1 cc",
    "d dh p1 6c",
    "d dh p2 7d",
    "p2 cc",
    "p1 cc",
    "d dh p1 8c",
    "d dh p2 9d",
    "p2 cc",
    "p1 cc",
    "d dh p1 Th",
    "d dh p2 Jh",
    "p2 cc",
    "p1 cc",
]


# ------------------------------------------------------------------ reading, liberally


def test_comments_split_deals_and_extra_fields_are_accepted() -> None:
    text = """# a hand written by hand
variant = "F7S"
antes = [1, 1]
bring_in = 2.0
small_bet = 5
big_bet = 10
starting_stacks = [100, 100]
players = ["Ann", "Bob"]
_private = {note = "ignored"}
event = "club night"
actions = [
  "d dh p1 As",  # split deals, one card at a time
  "d dh p2 Ks", "d dh p1 Ad", "d dh p2 Kd", "d dh p1 2c", "d dh p2 3c",
  "# a comment alone",
  "p1 pb # the bring-in",
  "p2 cc",
  "d dh p1 4c", "d dh p2 5c", "p2 cc", "p1 cc",
  "d dh p1 6c", "d dh p2 7d", "p2 cc", "p1 cc",
  "d dh p1 8c", "d dh p2 9d", "p2 cc", "p1 cc",
  "d dh p1 Th", "d dh p2 Jh", "p2 cc", "p1 cc",
  "p1 sm AsAd2c4c6c8cTh", "p2 sm",
]
"""
    history = loads(text)
    assert history.bring_in == 2 and history.finishing_stacks is None
    assert history.fields == {"players": ["Ann", "Bob"], "event": "club night"}
    assert both(text) == [103, 97]
    # PokerKit wants a space before "#"; the engine does not mind.
    assert replay(loads(text.replace("p1 pb # the", "p1 pb #the"))) == [103, 97]


def test_show_dash_shows_the_dealt_cards_and_a_muck_gives_up() -> None:
    assert both(phh([*SHOWDOWN, "p1 sm -", "p2 sm -"], [100, 100])) == [103, 97]
    assert both(phh([*SHOWDOWN, "p1 sm", "p2 sm -"], [100, 100])) == [97, 103]


def test_only_shown_cards_play() -> None:
    """PHH's showdown: a hand not shown (or shown in part) cannot win."""
    assert both(phh([*SHOWDOWN, "p2 sm KsKd3c5c7d9dJh"], [100, 100])) == [97, 103]
    assert both(phh([*SHOWDOWN, "p1 sm AsAd", "p2 sm -"], [100, 100])) == [97, 103]


def test_a_showdown_nobody_shows_cannot_be_settled() -> None:
    """PokerKit burns such a pot (nobody gets it); the replay refuses the file instead."""
    with pytest.raises(PhhError, match="shows a hand"):
        replay(loads(phh(SHOWDOWN, [100, 100])))


def test_unknown_cards_are_dealt_and_never_win() -> None:
    actions = [a.replace("d dh p2 KsKd3c", "d dh p2 ????3c") for a in SHOWDOWN]
    actions = [a.replace("d dh p2 Jh", "d dh p2 ??") for a in actions]
    # p2 never shows its unknown cards: p1's hand plays alone.
    assert both(phh([*actions, "p1 sm AsAd2c4c6c8cTh"], [100, 100])) == [103, 97]
    # ... and shown cards replace the unknown ones.
    assert both(phh([*actions, "p1 sm -", "p2 sm KsKd3c5c7d9dJh"], [100, 100])) == [103, 97]


def test_an_unknown_upcard_is_passed_over_for_the_bring_in() -> None:
    text = phh(
        ["d dh p1 ????Kh", "d dh p2 ????2c", "d dh p3 ??????", "p2 pb", "p3 f", "p1 f"],
        [100, 100, 100],
    )
    assert both(text) == [99, 102, 99]
    hand = started(text)
    assert hand.cards[2] == [UNKNOWN] * 3 and hand.seat_to_act() == 1


def test_missing_deals_are_unknown_and_missing_checks_are_filled_in() -> None:
    text = phh(["p1 pb", "p2 cc", "p1 cbr 5", "p2 f"], [100, 100])
    assert replay(loads(text)) == [103, 97]  # unknown cards: p1 brings in and opens 4th
    checks_left_out = SHOWDOWN[:4] + [a for a in SHOWDOWN[4:] if a not in ("p2 cc", "p1 cc")]
    text = phh([*checks_left_out, "p1 sm -", "p2 sm -"], [100, 100])
    assert both(text) == [103, 97]


def test_phhs_files_hold_several_hands() -> None:
    one = phh(["d dh p1 AsAd2c", "d dh p2 KsKd3c", "p1 pb", "p2 f"], [50, 50])
    two = phh(["d dh p1 AsAd3c", "d dh p2 KsKd2c", "p2 pb", "p1 f"], [50, 50])
    text = f"[1]\n{one}\n[2]\n{two}"
    assert [replay(h) for h in loads_all(text)] == [[51, 49], [49, 51]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("p1 xx", "unknown action"),
        ("p9 f", "no player p9"),
        ("d dh p1 AsZz", "not a list of cards"),
        ("p1 cbr", "one amount"),
        ("p1 cbr 2.5", "whole number"),
        ("p1 sd", "no draw"),
    ],
)
def test_malformed_actions_are_refused(text: str, message: str) -> None:
    with pytest.raises(PhhError, match=message):
        parse_action(text, 2)


def test_parse_action_reads_every_form() -> None:
    assert parse_action("  # nothing", 2) is None
    assert parse_action("d db 7h", 2) == ("db", -1, tuple(parse_cards("7h")), None, False)
    assert parse_action("p2 sm -", 2) == ("sm", 1, (), None, True)
    assert parse_action("p2 sm", 2) == ("sm", 1, None, None, False)
    assert parse_action("p1 sm ??Ah", 2) == ("sm", 0, (UNKNOWN, parse_cards("Ah")[0]), None, False)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (phh([], [10, 10], variant="NT"), "not a stud game"),
        (phh([], [10, 0]), "needs chips"),
        (phh(["d dh p1 AsAd2c", "d dh p2 KsKd3c", "p1 pb"], [50, 50]), "not finished"),
        (phh(["d dh p1 AsAd2c", "d dh p2 KsKd3c", "p2 f"], [50, 50]), "bring in"),
        (phh(["d dh p1 AsAd2c", "d dh p2 KsKd3c", "p1 cbr 7"], [50, 50]), "cbr 7"),
        (phh(["d dh p1 AsAd2c", "d dh p2 KsKd3c", "p1 pb", "p2 f", "p1 f"], [50, 50]), "over"),
        ("variant = 'F7S'\n", "missing field"),
    ],
)
def test_hands_that_cannot_be_replayed_are_refused(text: str, message: str) -> None:
    with pytest.raises(PhhError, match=message):
        replay(loads(text))


# ------------------------------------------------------------------ writing


def test_dumps_round_trips_and_pokerkit_reads_it() -> None:
    text = phh(
        [*SHOWDOWN, "p1 sm -", "p2 sm -"],
        [100, 100],
        extra="players = ['Ann', \"O'Neil\"]\nhand = 7\n",
    )
    history = loads(text)
    again = loads(dumps(history))
    assert again == history
    assert pokerkit_stacks(dumps(history)) == [103, 97]
    assert loads_all(dumps_all([history, history])) == [history, history]


def test_exported_engine_hands_replay_everywhere() -> None:
    config = phh_config("F7S/8", 1, 2, 5, 10)
    hand = Hand(config, [(0, 40), (1, 9), (2, 60)], Deck(rng=__import__("random").Random(4)))
    while not hand.over:
        legal = hand.legal_actions()
        kind = (
            "call"
            if "call" in legal.kinds
            else ("bring_in" if "bring_in" in legal.kinds else "check")
        )
        hand.apply(Action(legal.seat, kind))  # type: ignore[arg-type]
    text = export(hand, players=["a", "b", "c"])
    assert loads(text).fields["players"] == ["a", "b", "c"]
    assert replay(loads(text)) == hand.stacks == pokerkit_stacks(text)


def test_only_games_phh_has_a_code_for_export() -> None:
    assert is_phh_config(phh_config("FR", 1, 2, 5, 10))
    assert not is_phh_config(TableConfig())
    for name in ("five_card_stud", "six_card_stud", "eight_card_stud"):
        config = TableConfig(variant=VARIANTS[name])
        hand = play_random_hand(config, [50, 50], random.Random(1))
        with pytest.raises(PhhError, match="no code"):
            export(hand)
    no_limit = TableConfig(structure="no_limit")
    with pytest.raises(PhhError, match="no code"):
        export(play_random_hand(no_limit, [50, 50], random.Random(1)))


# ------------------------------------------------------------------ the command


def test_stud_replay_prints_one_line_per_file_and_exits_zero(tmp_path: Path) -> None:
    good = tmp_path / "good.phh"
    good.write_text(phh(["d dh p1 AsAd2c", "d dh p2 KsKd3c", "p1 pb", "p2 f"], [50, 50]))
    bad = tmp_path / "bad.phh"
    bad.write_text(phh(["d dh p1 AsAd2c", "d dh p2 KsKd3c", "p2 f"], [50, 50]))
    many = tmp_path / "many.phhs"
    many.write_text(f"[1]\n{good.read_text()}\n[2]\n{good.read_text()}")
    missing = tmp_path / "missing.phh"
    out = io.StringIO()
    assert main(["--json", str(good), str(bad), str(many), str(missing)], out) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0] == {"file": str(good), "finishing_stacks": [51, 49]}
    assert lines[1]["file"] == str(bad) and "bring in" in lines[1]["error"]
    assert [line.get("hand") for line in lines[2:4]] == ["1", "2"]
    assert lines[4]["file"] == str(missing) and "cannot read" in lines[4]["error"]


def test_stud_replay_exports_and_plays(tmp_path: Path) -> None:
    source = tmp_path / "in.phh"
    source.write_text(phh([*SHOWDOWN, "p1 sm -", "p2 sm -"], [100, 100]))
    out = io.StringIO()
    assert main(["--export", str(tmp_path / "out"), str(source)], out) == 0
    assert out.getvalue() == f"{source}: 103 97\n"
    (written,) = (tmp_path / "out").iterdir()
    assert pokerkit_stacks(written.read_text()) == [103, 97]
    assert main(["--play", "5", "--variant", "FR", "--export", str(tmp_path / "played")], out) == 0
    for path in (tmp_path / "played").iterdir():
        text = path.read_text()
        assert pokerkit_stacks(text) == list(loads(text).finishing_stacks or ())


# ------------------------------------------------------------------ the phh profile, rule by rule


def test_odd_chips_of_a_tie_go_to_the_lowest_position() -> None:
    """p1 and p2 tie with A-K-Q-J-9 for a pot of 9: PokerKit gives the odd chip to p1, the
    rule books to the highest card by suit (p2's ace of spades)."""
    cards = ["AhKdQcJs9h7d3c", "AsKcQdJh9c7h3d", "3h6d2d8sTs4cJc"]
    actions = [f"d dh p{i + 1} {c[:6]}" for i, c in enumerate(cards)] + ["p3 pb", "p1 cc", "p2 cc"]
    for k in range(3, 7):
        actions += [f"d dh p{i + 1} {c[2 * k : 2 * k + 2]}" for i, c in enumerate(cards)]
        actions += ["p1 cc", "p2 cc", "p3 cc"]
    text = phh([*actions, "p1 sm -", "p2 sm -", "p3 sm -"], [50, 50, 50])
    assert both(text) == [52, 51, 47]
    history = loads(text)
    by_suit = replace(history.config(), odd_chip_tie="highest_card_by_suit")
    assert _replay_with(history, by_suit).stacks == [51, 52, 47]


def _replay_with(history: HandHistory, config: TableConfig) -> Hand:
    """Replay a record's betting under other settings (the same cards, the same decisions)."""
    record = Record(history, config)
    hand = start(history, config, record)
    for k, step in enumerate(record.steps):
        if step is not None and step.verb in ("pb", "cc", "cbr", "f"):
            record.pos = k + 1
            legal = hand.legal_actions()
            kind = {"pb": "bring_in", "f": "fold"}.get(step.verb) or (
                legal.wager
                if step.verb == "cbr"
                else ("check" if "check" in legal.kinds else "call")
            )
            hand.apply(Action(step.player, kind, step.amount))  # type: ignore[arg-type]
    return hand


def test_next_seat_brings_in_when_the_low_card_is_all_in() -> None:
    """p1 is all in for the ante with the low card: p2 must bring in (or complete), and
    cannot fold; by the rule books p2 acts on a bring-in as if p1 had posted it."""
    deals = ["d dh p1 AsAd2c", "d dh p2 KsKd3c", "d dh p3 QsQd4c"]
    text = phh(deals, [1, 50, 50])
    legal = started(text).legal_actions()
    assert (legal.seat, legal.kinds) == (1, ("bring_in", "complete"))
    rules = replace(loads(text).config(), all_in_opener="next_best_board")
    assert started(text, rules).legal_actions().kinds == ("fold", "call", "complete")
    later = [
        "d dh p1 5c",
        "d dh p2 6c",
        "d dh p1 7c",
        "d dh p2 8h",
        "d dh p1 9c",
        "d dh p2 Th",
        "d dh p1 Jh",
        "d dh p2 Qh",
    ]
    done = phh([*deals, "p2 pb", "p3 f", *later, "p1 sm -", "p2 sm -"], [1, 50, 50])
    assert both(done) == [3, 49, 49]  # p1's aces win the three antes; p2's bring-in returns


def test_short_all_in_reopens_only_for_the_largest_increase() -> None:
    """p1 bets 5, p2 raises all in to 8 (an increase of 3, less than 5): p3 may raise to
    8 + 5 = 13, but p1, who has acted, may only call."""
    cards = ["KsKd2cAc8cTcKh", "QsQd3c6c8hThQh", "JsJd4c7c9cJc5h"]
    actions = [f"d dh p{i + 1} {c[:6]}" for i, c in enumerate(cards)] + ["p1 pb", "p2 cc", "p3 cc"]
    actions += [f"d dh p{i + 1} {c[6:8]}" for i, c in enumerate(cards)]
    actions += ["p1 cbr 5", "p2 cbr 8"]
    hand = started(phh(actions, [50, 11, 50]))
    for action in ("bring_in", "call", "call"):
        hand.apply(Action(hand.to_act, action))
    hand.apply(Action(0, "bet", 5))
    hand.apply(Action(1, "raise", 8))
    legal = hand.legal_actions()
    assert (legal.seat, legal.to_choices) == (2, (13,))
    hand.apply(Action(2, "call"))
    assert hand.legal_actions().kinds == ("fold", "call")
    actions += ["p3 cc", "p1 cc"]
    for k in (8, 10, 12):
        actions += [f"d dh p{i + 1} {c[k : k + 2]}" for i, c in enumerate(cards)]
    text = phh([*actions, "p1 sm -", "p2 sm -", "p3 sm -"], [50, 11, 50])
    assert both(text) == [72, 0, 39]  # the checks p1 and p3 make are left out: filled in


def test_a_short_all_in_bet_is_raised_by_a_full_bet_over_it() -> None:
    """An all-in bet of 2 when the bet is 5: the next player calls 2 or raises to 2 + 5 = 7.
    By the rule books a bet under half a bet is no bet: the next player completes to 5."""
    cards = ["KsKd2c3d", "QsQd5cAc8hThQh", "JsJd4c7c9c5h2h"]
    actions = [f"d dh p{i + 1} {c[:6]}" for i, c in enumerate(cards)] + ["p1 pb", "p2 cc", "p3 cc"]
    actions += [f"d dh p{i + 1} {c[6:8]}" for i, c in enumerate(cards)]
    text = phh(actions, [50, 5, 50])
    for config, choices in (
        (None, (7,)),
        (replace(loads(text).config(), short_all_in="half_bet"), (5,)),
    ):
        hand = started(text, config)
        for action in ("bring_in", "call", "call"):
            hand.apply(Action(hand.to_act, action))
        hand.apply(Action(1, "bet", 2))
        assert hand.legal_actions().to_choices == choices
    actions += ["p2 cbr 2", "p3 cbr 7", "p1 f"]
    for k in (8, 10, 12):
        actions += [f"d dh p{i + 1} {c[k : k + 2]}" for i, c in enumerate(cards) if i]
    assert both(phh([*actions, "p2 sm -", "p3 sm -"], [50, 5, 50])) == [47, 13, 45]


def test_four_bets_cap_a_street_even_heads_up() -> None:
    actions = [
        "d dh p1 AsAd2c",
        "d dh p2 KsKd3c",
        "p1 pb",
        "p2 cbr 5",
        "p1 cbr 10",
        "p2 cbr 15",
        "p1 cbr 20",
    ]
    hand = started(phh(actions, [100, 100]))
    for to in (None, 5, 10, 15, 20):
        legal = hand.legal_actions()
        hand.apply(Action(legal.seat, legal.wager if to else "bring_in", to))  # type: ignore[arg-type]
    assert hand.legal_actions().kinds == ("fold", "call")
    text = phh([*actions, "p2 f"], [100, 100])
    assert both(text) == [116, 84]
    rules = replace(hand.config, uncapped_heads_up=True)
    assert rules != hand.config


def test_no_open_pair_big_bet() -> None:
    actions = ["d dh p1 AsAd9c", "d dh p2 KsKd3c", "p2 pb", "p1 cc", "d dh p1 9d", "d dh p2 4c"]
    hand = started(phh(actions, [100, 100]))
    hand.apply(Action(1, "bring_in"))
    hand.apply(Action(0, "call"))
    assert hand.legal_actions().to_choices == (5,)
    rules = replace(hand.config, open_pair_big_bet=True, short_all_in="half_bet")
    default = started(phh(actions, [100, 100]), rules)
    default.apply(Action(1, "bring_in"))
    default.apply(Action(0, "call"))
    assert default.legal_actions().to_choices == (5, 10)


def test_a_short_bring_in_is_called_for_what_it_posted() -> None:
    text = phh(["d dh p1 AsAd2c", "d dh p2 KsKd3c", "d dh p3 QsQd4c"], [2, 50, 50])
    hand = started(text)
    hand.apply(Action(0, "bring_in"))  # 1 chip after the ante: all in
    assert hand.legal_actions().call == 1
    text = phh(
        [
            "d dh p1 AsAd2c",
            "d dh p2 KsKd3c",
            "d dh p3 QsQd4c",
            "p1 pb",
            "p2 cc",
            "p3 f",
            "d dh p1 5c",
            "d dh p2 6c",
            "d dh p1 7c",
            "d dh p2 8h",
            "d dh p1 9c",
            "d dh p2 Th",
            "d dh p1 Jh",
            "d dh p2 Qh",
            "p1 sm -",
            "p2 sm -",
        ],
        [2, 50, 50],
    )
    assert both(text) == [5, 48, 49]


def test_later_streets_tie_on_board_goes_to_the_lowest_position() -> None:
    actions = ["d dh p1 2c3c7h", "d dh p2 4d5d7s", "p1 pb", "p2 cc", "d dh p1 Ah", "d dh p2 As"]
    hand = started(phh(actions, [100, 100]))
    hand.apply(Action(0, "bring_in"))
    hand.apply(Action(1, "call"))
    assert hand.seat_to_act() == 0  # 7-A each: the tie goes to p1, not to the ace of spades
    by_suit = started(phh(actions, [100, 100]), replace(hand.config, order_tie="suit"))
    by_suit.apply(Action(0, "bring_in"))
    by_suit.apply(Action(1, "call"))
    assert by_suit.seat_to_act() == 1


def test_dead_antes_can_all_be_won_by_a_short_ante() -> None:
    """p1 antes 2 of 5 and wins: with dead antes it takes all 12; live, only 6."""
    cards = ["AsAd2c5c6c8cTh", "KsKd3c7d9dJh4h", "QsQd4c8d9sJc2h"]
    actions = [f"d dh p{i + 1} {c[:6]}" for i, c in enumerate(cards)] + ["p2 pb", "p3 f"]
    for k in range(3, 7):
        actions += [f"d dh p{i + 1} {c[2 * k : 2 * k + 2]}" for i, c in enumerate(cards) if i < 2]
    actions += ["p1 sm -", "p2 sm -"]
    dead = phh(actions, [2, 50, 50], antes=5)
    assert both(dead) == [12, 45, 45]
    live = dead.replace("variant = 'F7S'", "variant = 'F7S'\nante_trimming_status = true")
    assert both(live) == [6, 51, 45]


def test_the_common_card_does_not_choose_who_acts_first() -> None:
    """Eight players reach seventh street: the deck runs short and one common card is
    turned. PokerKit picks who acts first from the upcards alone; RULES.md counts the
    common card in (a setting)."""
    text, up_only, with_common = _common_card_hand()
    hand = replay_hand(loads(text))
    assert hand.common
    turns = [e.data["seat"] for e in hand.events if e.kind == "turn"]
    seventh = next(k for k, e in enumerate(hand.events) if e.kind == "common_card")
    first = next(e.data["seat"] for e in hand.events[seventh:] if e.kind == "turn")
    assert turns and first == up_only != with_common
    assert replay(loads(text)) == pokerkit_stacks(text)


def _common_card_hand() -> tuple[str, int, int]:
    """Eight players check to seventh street, where a common card falls; returns the
    record, the seat that opens on the upcards alone and the one counting the common card."""
    import random

    from engine.boards import board_value
    from engine.cards import format_card, parse_card

    for seed in range(200):
        rng = random.Random(seed)
        deck = [c for c in range(52) if c != parse_card("2c")]
        rng.shuffle(deck)
        cards = [deck[6 * p : 6 * p + 6] for p in range(8)]
        cards[0][2] = parse_card("2c")  # p1 brings in
        common = deck[48]

        def opener(extra: list[int], cards: list[list[int]] = cards) -> int:
            boards = [board_value(hole[2:6] + extra) for hole in cards]
            return max(range(8), key=lambda seat: (boards[seat], -seat))

        if opener([]) != opener([common]):
            break
    strings = ["".join(format_card(c) for c in hole) for hole in cards]
    actions = [f"d dh p{p + 1} {strings[p][:6]}" for p in range(8)]
    actions += ["p1 pb"] + [f"p{p + 1} cc" for p in range(1, 8)]
    for k in range(3, 6):
        actions += [f"d dh p{p + 1} {strings[p][2 * k : 2 * k + 2]}" for p in range(8)]
    actions += [f"d db {format_card(common)}"]
    actions += [f"p{p + 1} sm {strings[p]}" for p in range(8)]  # later checks: filled in
    return phh(actions, [100] * 8), opener([]), opener([common])


def test_folded_hands_count_as_cards_left_when_the_deck_runs_short() -> None:
    """Eight players with one fold: 7 more cards are needed, 52 - 7 x 6 = 10 are left
    counting the folded hand, so PokerKit deals seventh street as usual (no common card)."""
    config = phh_config("F7S", 0, 1, 2, 4)
    assert config.reuse_folded_cards and not TableConfig().reuse_folded_cards
    rng = __import__("random").Random(2)
    for _ in range(30):
        hand = Hand(config, [(s, 20) for s in range(8)], Deck(rng=rng))
        folded = False
        while not hand.over:
            legal = hand.legal_actions()
            if "call" in legal.kinds and not folded:
                hand.apply(Action(legal.seat, "fold"))  # type: ignore[arg-type]
                folded = True
            else:
                kind = next(k for k in ("bring_in", "check", "call") if k in legal.kinds)
                hand.apply(Action(legal.seat, kind))  # type: ignore[arg-type]
        if sum(not f for f in hand.folded) == 7 and hand.street == 4:
            assert not hand.common
            assert pokerkit_stacks(export(hand)) == hand.stacks


def test_pots_by_contenders_merge_layers_with_the_same_contenders() -> None:
    """p1 (all in for its ante) cannot win: PokerKit mucks it first, so the main pot and the
    side pot have the same two contenders and split as one pot of 26 (13 each way)."""
    text = """variant = 'F7S/8'
ante_trimming_status = false
antes = [5, 5, 5, 5]
bring_in = 1
small_bet = 4
big_bet = 8
starting_stacks = [2, 8, 15, 224]
actions = ['d dh p1 5hKs6h', 'd dh p2 6c2hAh', 'd dh p3 8s9sTc', 'd dh p4 QhTh9c', 'p2 pb',
 'p3 cbr 4', 'p4 cbr 8', 'p2 cc', 'p3 cbr 10', 'p4 f', 'p3 sm 8s9sTc', 'p1 sm 5hKs6h',
 'p2 sm 6c2hAh', 'd dh p1 Jc', 'd dh p2 2s', 'd dh p3 2d', 'd dh p1 3s', 'd dh p2 4h',
 'd dh p3 8c', 'd dh p1 8d', 'd dh p2 Jh', 'd dh p3 9h', 'd dh p1 5s', 'd dh p2 7c',
 'd dh p3 7d', 'p1 sm 5hKs6hJc3s8d5s', 'p2 sm 6c2hAh2s4hJh7c', 'p3 sm 8s9sTc2d8c9h7d']
"""
    assert both(text) == [0, 13, 25, 211]
    history = loads(text)
    hand = _replay_with(history, replace(history.config(), pots_by_contenders=False))
    assert hand.stacks == [0, 12, 26, 211]  # 9 + 8 and 5 + 4: two odd chips to the high hand


def test_heads_up_antes_follow_the_spec_not_pokerkits_swap() -> None:
    """PHH says ``antes[i]`` is pN's ante; PokerKit, heads-up, makes each player post the
    other's (a blind-game habit). The engine follows the spec; PokerKit's result is the
    engine's with the antes swapped, and differs only then."""
    actions = ["d dh p1 AsAd2c", "d dh p2 KsKd3c", "p1 pb", "p2 f"]
    text = phh(actions, [100, 100], antes=[1, 3])
    assert replay(loads(text)) == [103, 97]
    swapped = phh(actions, [100, 100], antes=[3, 1])
    assert pokerkit_stacks(text) == replay(loads(swapped)) == [101, 99]
    even = phh(actions, [100, 100], antes=[2, 2])
    assert both(even) == [102, 98]


GOOD = phh([*SHOWDOWN, "p1 sm -", "p2 sm -"], [100, 100], extra="players = ['a', 'b']\n")


@settings(max_examples=150, deadline=None)
@given(
    cuts=st.lists(st.integers(0, 40), max_size=4),
    noise=st.lists(st.text(max_size=12), max_size=3),
    junk=st.text(max_size=30),
)
def test_every_file_gets_its_line_whatever_it_holds(
    cuts: list[int], noise: list[str], junk: str
) -> None:
    """Mangled actions, junk fields, broken TOML: one line per file, exit status 0."""
    history = loads(GOOD)
    actions = list(history.actions)
    for cut in cuts:
        if actions:
            del actions[cut % len(actions)]
    actions[len(actions) // 2 : len(actions) // 2] = noise
    texts = [dumps(replace(history, actions=tuple(actions))), GOOD + junk, junk]
    out = io.StringIO()
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for k, text in enumerate(texts):
            path = Path(folder) / f"{k}.phh"
            path.write_text(text, encoding="utf-8", errors="replace")
            files.append(str(path))
        assert main(["--json", *files], out) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert list(dict.fromkeys(line["file"] for line in lines)) == files  # a .phhs: several
    for line in lines:
        assert ("error" in line) != ("finishing_stacks" in line)
        if "finishing_stacks" in line:
            assert sum(line["finishing_stacks"]) == 200


def test_a_player_sees_only_their_own_and_shown_down_cards() -> None:
    """A player's copy of a record hides every down card they never saw, and replays alike."""
    rng = random.Random(11)
    config = TableConfig(variant=VARIANTS["seven_card_stud_hi_lo"])
    checked = 0
    for _ in range(60):
        hand = play_random_hand(config, [rng.randint(10, 80) for _ in range(4)], rng)
        record = phh_module.loads(phh_export.export(hand))
        tabled = [hand.index_of[e.data["seat"]] for e in hand.events if e.kind == "showdown"]
        for me in range(hand.n):
            mine = phh_export.as_seen_by(record, me, tabled)
            text = " ".join(mine.actions)
            for other in range(hand.n):
                if other == me or other in tabled:
                    continue
                down = [c for c in hand.cards[other] if c not in hand.up[other]]
                assert not any(format_card(c) in text for c in down), (me, other, text)
                checked += 1
            assert phh_replay.replay(mine) == hand.stacks
    assert checked > 100


@pytest.mark.parametrize("variant", ["seven_card_stud", "seven_card_stud_hi_lo", "razz"])
def test_hands_played_by_the_rule_books_export_and_replay_to_their_stacks(variant: str) -> None:
    """A rule-book table's hands are PHH too, marked so they replay by the same rules."""
    rng = random.Random(variant)
    config = TableConfig(variant=VARIANTS[variant])
    for _ in range(300):
        stacks = [rng.randint(3, 90) for _ in range(rng.randint(2, 8))]
        hand = play_random_hand(config, stacks, rng)
        text = phh_export.export(hand)
        assert "_rules = 'rule_books'" in text
        assert phh_replay.replay(phh_module.loads(text)) == hand.stacks, text
