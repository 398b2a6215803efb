"""PHH against PokerKit, its reference implementation, a thousand hands per variant each way.

1. PokerKit plays random hands; ``stud-replay`` replays their PHH to PokerKit's stacks.
2. The engine plays random hands under the ``phh`` profile; PokerKit replays their PHH to the
   engine's stacks.

Both ways the comparison is exact, except where PokerKit is wrong (a hi-lo pot nobody
eligible has a low for, PHH_NOTES §6): those hands are recognised by their condition and
checked against what PokerKit's rule pays (``pokerkit_expected``), never waved through.
"""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from pokerkit_hands import (
    mirrored_deck,
    pokerkit_expected,
    pokerkit_hand,
    pokerkit_stacks,
    table_shape,
)

from engine.actions import Action
from engine.cards import Deck
from engine.hand import Hand
from engine.phh import loads
from engine.phh_export import export
from engine.phh_replay import replay_hand
from engine.phh_rules import phh_config
from engine.replay import main

HANDS = 1000
VARIANTS = ["F7S", "F7S/8", "FR"]
# Each feature must show up at least this often in a variant's thousand hands.
AT_LEAST = {"all_in": 200, "side_pot": 50, "split_pot": 30, "capped_street": 50, "common_card": 10}


@pytest.fixture(scope="module")
def pokerkit_corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple]]:
    """A thousand PokerKit hands per variant, written as .phh files."""
    folder = tmp_path_factory.mktemp("pokerkit")
    corpus: dict[str, list[tuple]] = {}
    for code in VARIANTS:
        rng = random.Random(f"pokerkit {code}")
        hands = []
        for k in range(HANDS):
            text, stacks, seen = pokerkit_hand(code, rng)
            path = folder / f"{code.replace('/', '')}-{k:04d}.phh"
            path.write_text(text)
            hands.append((str(path), text, stacks, seen))
        corpus[code] = hands
    return corpus


def _counts(seen: list[Counter[str]]) -> Counter[str]:
    total: Counter[str] = Counter()
    for s in seen:
        total.update({k: 1 for k, v in s.items() if v})
    return total


@pytest.mark.parametrize("code", VARIANTS)
def test_stud_replay_matches_pokerkit_on_its_own_hands(
    code: str, pokerkit_corpus: dict[str, list[tuple]]
) -> None:
    hands = pokerkit_corpus[code]
    out = io.StringIO()
    assert main(["--json", *(path for path, *_ in hands)], out) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["file"] for line in lines] == [path for path, *_ in hands]
    bugs: Counter[str] = Counter()
    for line, (_path, text, stacks, _seen) in zip(lines, hands, strict=True):
        assert "error" not in line, (line, text)
        hand = replay_hand(loads(text))
        assert line["finishing_stacks"] == hand.stacks
        expected, met = pokerkit_expected(hand)  # the engine's stacks, unless PokerKit's bugs
        bugs.update(met)
        assert expected == stacks, text
    counts = _counts([seen for *_, seen in hands])
    for feature, least in AT_LEAST.items():
        assert counts[feature] >= least, (feature, counts)
    if code == "F7S/8":
        assert counts["low_half"] >= 100 and bugs["low_half"] >= 10, (counts, bugs)
    else:
        assert not bugs["low_half"]


def test_the_console_script_runs(pokerkit_corpus: dict[str, list[tuple]], tmp_path: Path) -> None:
    """One real run of the installed ``stud-replay`` script, over every variant."""
    sample = [hand for code in VARIANTS for hand in pokerkit_corpus[code][:100]]
    broken = tmp_path / "broken.phh"
    broken.write_text("variant = 'F7S'\nthis is not TOML\n")
    files = [path for path, *_ in sample] + [str(broken)]
    script = Path(sys.executable).with_name("stud-replay")
    done = subprocess.run(
        [str(script), "--json", *files], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) == len(files)
    for line, (path, text, stacks, _seen) in zip(lines, sample, strict=False):
        assert line["file"] == path
        hand = replay_hand(loads(text))
        assert line["finishing_stacks"] == hand.stacks
        assert pokerkit_expected(hand)[0] == stacks
    assert lines[-1]["file"] == str(broken) and "error" in lines[-1]


def engine_hand(code: str, rng: random.Random) -> tuple[Hand, Counter[str]]:
    """A random hand played by the engine under the ``phh`` profile, and what happened."""
    shape = table_shape(rng)
    config = phh_config(
        code,
        shape["ante"],
        shape["bring_in"],
        shape["small_bet"],
        shape["big_bet"],
        shape["trimming"],
    )
    order = mirrored_deck(shape["players"], rng) if shape["mirror"] else None
    hand = Hand(config, list(enumerate(shape["stacks"])), Deck(order, rng=rng))
    while not hand.over:
        legal = hand.legal_actions()
        assert legal.seat is not None
        roll = rng.random()
        if "bring_in" in legal.kinds:
            wager = legal.wager is not None and roll < shape["complete"]
            action = Action(
                legal.seat,
                "complete" if wager else "bring_in",
                legal.to_choices[0] if wager else None,
            )
        elif legal.wager is not None and roll < shape["raise"]:
            action = Action(legal.seat, legal.wager, legal.to_choices[0])
        elif "call" in legal.kinds and rng.random() < shape["fold"]:
            action = Action(legal.seat, "fold")
        else:
            action = Action(legal.seat, "call" if "call" in legal.kinds else "check")
        hand.apply(action)
    seen: Counter[str] = Counter()
    wagers: Counter[str] = Counter()
    street = ""
    for event in hand.events:
        data = event.data
        if event.kind == "street_dealt" or event.kind == "common_card":
            street = data["street"]
        if event.kind == "common_card":
            seen["common_card"] = 1
        if event.kind == "action" and data["action"] in ("complete", "bet", "raise"):
            wagers[street] += 1
        if event.kind in ("action", "ante") and data.get("all_in"):
            seen["all_in"] = 1
    seen["capped_street"] = int(any(count >= 4 for count in wagers.values()))
    result = hand.result()
    seen["side_pot"] = int(len(result.pots) > 1)
    paid = {(share["pot"], share["seat"]) for share in result.shares if share["amount"]}
    seen["split_pot"] = int(len(paid) > len({pot for pot, _ in paid}))
    return hand, seen


@pytest.mark.parametrize("code", VARIANTS)
def test_pokerkit_replays_engine_hands_to_the_same_stacks(code: str) -> None:
    rng = random.Random(f"engine {code}")
    seen = []
    bugs: Counter[str] = Counter()
    for _ in range(HANDS):
        hand, happened = engine_hand(code, rng)
        seen.append(happened)
        text = export(hand)
        expected, met = pokerkit_expected(hand)
        bugs.update(met)
        assert pokerkit_stacks(text) == expected, text
        assert loads(text).finishing_stacks == tuple(hand.stacks)
    counts = _counts(seen)
    for feature, least in AT_LEAST.items():
        assert counts[feature] >= least, (feature, counts)
    assert (bugs["low_half"] >= 10) if code == "F7S/8" else not bugs["low_half"]
