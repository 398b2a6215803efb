"""The hand replayer's steps (server/web/replayer.js framesOf, run under Node) on engine
hands of every variant, as each seat's record gives them (GET /hands/{id}): one step per
action, said as the dealer says it; every street's deal on a line of its own; no card the
seat did not see; the pots named, hi-lo halves said; the last step's stacks the hand's."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from engine.events import Event
from engine.play import play_random_hand
from engine.variants import VARIANTS, TableConfig, find_variant
from engine.views import visible_events

DRIVER = Path(__file__).resolve().parent / "replay_driver.mjs"
NODE = shutil.which("node")
NAMES = ["ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal"]
SAID = {
    "fold": "folds",
    "check": "checks",
    "call": "calls {amount}",
    "bring_in": "brings in for {amount}",
    "complete": "completes to {to}",
    "bet": "bets {amount}",
    "raise": "raises to {to}",
}
CONFIGS = [TableConfig(variant=v) for v in VARIANTS.values()] + [
    TableConfig(variant=find_variant("seven_card_stud_hi_lo"), structure="no_limit"),
]


def frames_of(records: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    assert NODE is not None, "install Node: apt-get install -y nodejs"
    done = subprocess.run(
        [NODE, str(DRIVER)], input=json.dumps(records), capture_output=True, text=True, check=True
    )
    frames: list[list[dict[str, Any]]] = json.loads(done.stdout)
    return frames


def record(
    events: list[Event], seat: int, starting: list[int], ending: list[int]
) -> dict[str, Any]:
    """The hand as ``GET /hands/{id}`` gives it to the player in ``seat``."""
    first = events[0].record()["data"] if events else {"variant": None}
    return {
        "id": 1,
        "table_id": 1,
        "table_name": "T",
        "number": 1,
        "variant": first["variant"],
        "seat": seat,
        "players": [
            {"seat": n, "player": NAMES[n], "starting": s, "ending": e}
            for n, (s, e) in enumerate(zip(starting, ending, strict=True))
        ],
        "result": {},
        "events": [e.record() for e in visible_events(events, seat)],
    }


def text(line: list[Any]) -> str:
    return "".join(p if isinstance(p, str) else "[]" for p in line)


def cards_in(frame: dict[str, Any]) -> set[str]:
    named = {p["card"] for line in frame["lines"] for p in line if not isinstance(p, str)}
    for s in frame["view"]["seats"].values():
        named |= set(s["down"]) | set(s["up"])
    return named - {None, "??"}


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.variant.name}-{c.structure}")
def test_replays_say_what_the_table_said_and_show_only_what_the_seat_saw(
    config: TableConfig,
) -> None:
    rng = random.Random(config.variant.name + config.structure)
    hands, records = [], []
    for _ in range(20):
        stacks = [rng.choice([3, 8, 20, 60, 200]) for _ in range(rng.randint(2, 5))]
        hand = play_random_hand(config, stacks, rng, timeout_rate=0.05)
        hands.append(hand)
        for seat in range(hand.n):
            records.append((hand, seat, record(hand.events, seat, stacks, list(hand.stacks))))
    results = frames_of([r for _, _, r in records])
    side_pots = halves = 0
    for (hand, seat, rec), frames in zip(records, results, strict=True):
        seen = rec["events"]
        who = {n: NAMES[n] + (" (you)" if n == seat else "") for n in range(hand.n)}
        # The cards this seat saw: its own, every upcard, the hands shown at the showdown.
        visible = set()
        for e in seen:
            d = e["data"]
            if e["kind"] in ("down_cards", "showdown"):
                visible |= set(d["cards"])
            elif e["kind"] == "street_dealt":
                visible |= {c for deal in d["deals"] for c in deal["up"]}
            elif e["kind"] == "common_card":
                visible.add(d["card"])
        for frame in frames:
            assert cards_in(frame) <= visible, (seat, frame)
        # One step per action, said as the dealer says it.
        actions = [e["data"] for e in seen if e["kind"] == "action"]
        said = [text(f["lines"][0]) for f in frames if f["kind"] == "action"]
        said = [s for s in said if "uncalled" not in s]
        expected = [
            f"{who[a['seat']]} {SAID[a['action']].format(**a)}"
            + (", all in" if a.get("all_in") else "")
            + (" (out of time)" if a.get("timeout") else "")
            for a in actions
        ]
        assert said == expected
        # Each street dealt: a step of its own, a line for each seat dealt, with cards.
        deals = [e["data"] for e in seen if e["kind"] == "street_dealt"]
        streets = [f for f in frames if f["kind"] == "street"]
        assert [f["street"] for f in streets] == [d["street"] for d in deals]
        for frame, deal in zip(streets, deals, strict=True):
            lines = frame["lines"][1 : 1 + len(deal["deals"])]
            for line, one in zip(lines, deal["deals"], strict=True):
                assert text(line).startswith(f"{who[one['seat']]}: ")
                cards = [p for p in line if not isinstance(p, str)]
                assert len(cards) == one["down"] + len(one["up"]) > 0
                # Read as text (the log, a screen reader): never a name and nothing after it.
                words = "".join(p if isinstance(p, str) else (p["card"] or "") for p in line)
                assert words.strip() != f"{who[one['seat']]}:", line
                if not [p for p in cards if p["card"]]:
                    assert words.endswith("face down "), line
        # The pots named; hi-lo halves said; both halves of a pot to one seat: one line.
        awards = [e["data"] for e in seen if e["kind"] == "pot_awarded"]
        told: list[tuple[dict[str, Any], int]] = []  # (award, amount said)
        for award in awards:
            last = told[-1][0] if told else None
            if (
                last
                and (last["seat"], last["pot"], last["half"])
                == (
                    award["seat"],
                    award["pot"],
                    "high",
                )
                and award["half"] == "low"
            ):
                told[-1] = ({**last, "half": "scoop"}, told[-1][1] + award["amount"])
            else:
                told.append((award, award["amount"]))
        won = [
            text(f["lines"][0])
            for f in frames
            if f["kind"] == "award"
            and (" wins " in text(f["lines"][0]) or " scoops " in text(f["lines"][0]))
        ]
        assert len(won) == len(told)
        for line, (award, amount) in zip(won, told, strict=True):
            verb = "scoops" if award["half"] == "scoop" else "wins"
            assert line.startswith(f"{who[award['seat']]} {verb} ")
            assert f": {amount}" in line
            if award["half"] in ("high", "low"):
                halves += 1
                assert f"the {award['half']} half of " in line
        if any(a["pot"] > 0 for a in awards):
            side_pots += 1
            assert any("the main pot" in w for w in won)
        # The pots shown when the hand is decided are the ones the engine paid.
        paid = [
            {"amount": p["amount"], "eligible": list(p["eligible"])} for p in hand.result().pots
        ]
        assert frames[-1]["pots"] == paid, (seat, frames[-1]["pots"], paid)
        # The last step: the hand's stacks.
        last = frames[-1]
        assert last["kind"] == "end"
        assert {int(n): s["stack"] for n, s in last["view"]["seats"].items()} == dict(
            enumerate(hand.stacks)
        )
    assert side_pots
    if config.variant.showdown == "high_low":
        assert halves


def test_a_scooped_pot_is_one_step() -> None:
    """Both halves of a hi-lo pot to one seat: "ann scoops the pot: 24, high with … and low
    with …", one step, and the seat's box says "scoops 24", not "wins 12 + 12"."""
    config = TableConfig(variant=find_variant("seven_card_stud_hi_lo"))
    rng = random.Random(28)
    for _ in range(500):
        hand = play_random_hand(config, [200, 200, 200], rng)
        awards = [e.record()["data"] for e in hand.events if e.kind == "pot_awarded"]
        if [a["half"] for a in awards] == ["high", "low"] and len({a["seat"] for a in awards}) == 1:
            break
    else:
        pytest.fail("no hand was scooped")
    winner = awards[0]["seat"]
    (frames,) = frames_of([record(hand.events, winner, [200] * 3, list(hand.stacks))])
    said = [text(f["lines"][0]) for f in frames if f["kind"] == "award"]
    total = sum(a["amount"] for a in awards)
    assert len(said) == 1
    assert said[0].startswith(f"{NAMES[winner]} (you) scoops the pot: {total}, high with ")
    assert " and low with " in said[0]


def test_a_voided_hand_ends_with_every_chip_back() -> None:
    rng = random.Random(5)
    stacks = [50, 80, 120]
    deals: list[int] = []
    while len(deals) < 2:  # a hand that reaches fourth street: voided as it is dealt
        hand = play_random_hand(TableConfig(), stacks, rng)
        deals = [k for k, e in enumerate(hand.events) if e.kind == "street_dealt"]
    cut = deals[1]
    rec = record(hand.events[:cut], 1, stacks, stacks)
    rec["events"].append(
        {"kind": "hand_cancelled", "data": {"reason": "operator_void"}, "to": None}
    )
    empty = record(hand.events[:0], 1, stacks, stacks) | {"variant": "seven_card_stud"}
    empty["events"] = [{"kind": "hand_cancelled", "data": {"reason": "resume_failed"}, "to": None}]
    voided, never = frames_of([rec, empty])
    last = voided[-1]
    assert last["kind"] == "end"
    assert text(last["lines"][0]) == "Hand voided by an operator: every chip back"
    assert {int(n): s["stack"] for n, s in last["view"]["seats"].items()} == dict(enumerate(stacks))
    assert last["view"]["pot"] == 0
    assert voided[-2]["view"]["pot"] > 0  # the step before: chips in the pot
    assert never == []


def test_a_short_deck_is_told_on_its_street() -> None:
    config = TableConfig(variant=find_variant("eight_card_stud"))
    rng = random.Random(8)
    for _ in range(200):  # six players of eight-card stud: the deck runs short
        hand = play_random_hand(config, [500] * 6, rng)
        procedures = [e.record()["data"] for e in hand.events if e.kind == "deck_procedure"]
        if procedures:
            break
    else:
        pytest.fail("no hand ran the deck short")
    (frames,) = frames_of([record(hand.events, 0, [500] * 6, list(hand.stacks))])
    for procedure in procedures:
        street = next(
            f for f in frames if f["kind"] == "street" and f["street"] == procedure["street"]
        )
        told = [text(line) for line in street["lines"]]
        said = ("Dealer: the deck is short", "Dealer: not enough cards")
        assert any(line.startswith(said) for line in told), told


def test_a_tournament_hand_is_said_with_its_tournament_table_and_level() -> None:
    """A tournament's hand (GET /hands/{id} names its tournament, its table there and its
    level) starts "Hand #4 at Quick, table 2 (level 3): ..."; a cash hand at its table."""
    hand = play_random_hand(TableConfig(), [100, 100], random.Random(3))
    cash = record(hand.events, 0, [100, 100], list(hand.stacks))
    played = cash | {
        "number": 4,
        "table_name": "Quick #2",
        "tournament_id": 9,
        "tournament_name": "Quick",
        "tournament_table": 2,
        "level": 3,
    }
    in_cash, in_tournament = frames_of([cash, played])
    assert text(in_cash[0]["lines"][0]).startswith("Hand #1 at T: ")
    assert text(in_tournament[0]["lines"][0]).startswith("Hand #4 at Quick, table 2 (level 3): ")
