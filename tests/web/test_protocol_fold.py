"""The web page's fold (server/web/protocol.js, run under Node) against the engine's
(engine.table_view.TablePicture, which the Python client folds with): the same frames give
the same table, field by field, after every frame. The frames are docs/protocol.md's
example conversations, as each connection receives them, and hands recorded from the engine
as every seat and a spectator receive them, with table events between and during them; at a
mixed table too, each hand of its game and stakes (engine.rotation)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from engine.events import ActionTaken, Event, announced, decode
from engine.play import play_random_hand
from engine.rotation import Rotation, schedule
from engine.table_events import (
    ChipsAdded,
    HandNumber,
    Leaving,
    RotationChanged,
    SatIn,
    SatOut,
    SeatLeft,
    SeatTaken,
)
from engine.table_view import TablePicture
from engine.variants import VARIANTS, TableConfig, find_variant
from server.table.mixed import announced_game
from tests.server.live import conversations

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().parent / "fold_driver.mjs"
NODE = shutil.which("node")
SEAT_FIELDS = ("player", "stack", "pending_chips", "sitting_out", "sit_out_next_hand", "leaving")


def javascript(cases: list[dict[str, Any]]) -> list[list[Any]]:
    # Never skipped, like the browser tests: .ci/run installs Debian's nodejs.
    assert NODE is not None, "install Node: apt-get install -y nodejs"
    done = subprocess.run(
        [NODE, str(DRIVER)], input=json.dumps(cases), capture_output=True, text=True, check=True
    )
    states: list[list[Any]] = json.loads(done.stdout)
    return states


def python(me: str | None, frames: list[dict[str, Any]]) -> list[Any]:
    """The engine's fold of the frames, under the client's rules of ``seq`` (a gap: nothing
    more until the next snapshot)."""
    picture: TablePicture | None = None
    seq = 0
    awaiting = False
    states: list[Any] = []
    for frame in frames:
        if frame["type"] == "reply" and frame["result"].get("type") == "snapshot":
            picture = TablePicture.of_snapshot(frame["result"], me)
            seq, awaiting = frame["result"]["seq"], False
        elif frame["type"] == "event":
            if picture is not None and not awaiting and frame["seq"] > seq:
                if frame.get("private") or frame["seq"] == seq + 1:
                    if not frame.get("private"):
                        seq = frame["seq"]
                    to = frame["data"].get("seat") if frame.get("private") else None
                    picture.apply(decode(frame["kind"], frame["data"], to))
                else:
                    awaiting = True
        else:
            continue
        states.append(None if picture is None else state(picture))
    return states


def state(picture: TablePicture) -> Any:
    seats = []
    for entry in picture.snapshot()["seats"]:
        seats.append(
            {k: entry[k] for k in SEAT_FIELDS} | {"removed": entry.get("removed")}
            if entry["player"]
            else {"player": None}
        )
    return orjson.loads(
        orjson.dumps(
            {
                "you": picture.you,
                "hand_number": picture.hand_number,
                "waiting": picture.waiting,
                "seats": seats,
                "hand": picture.hand_view(),
                "operator_pause": picture.operator_pause,
                "closed": picture.closed,
                "rules": picture.rules,
                "game": picture.game,
                "rotation": picture.rotation,
            },
            option=orjson.OPT_NON_STR_KEYS,
        )
    )


def agree(cases: list[dict[str, Any]]) -> None:
    for case, theirs in zip(cases, javascript(cases), strict=True):
        ours = python(case["me"], case["frames"])
        assert len(ours) == len(theirs)
        for n, (mine, js) in enumerate(zip(ours, theirs, strict=True)):
            assert mine == js, (case["me"], n, case["frames"][n])


# --------------------------------------------------------------------------- the document


def documented_cases() -> list[dict[str, Any]]:
    cases = []
    for conversation in conversations((ROOT / "docs" / "protocol.md").read_text()):
        received: dict[str, list[dict[str, Any]]] = {}
        players: dict[str, str | None] = {}
        for line in conversation.lines:
            if line.kind != "<" or not line.text.startswith("{"):
                continue
            frame = json.loads(line.text)
            received.setdefault(line.who, []).append(frame)
            if frame["type"] == "reply" and "player" in frame.get("result", {}):
                players[line.who] = frame["result"]["player"]
        for who, frames in received.items():
            if any(f["type"] == "reply" and f["result"].get("type") == "snapshot" for f in frames):
                cases.append({"me": players.get(who), "frames": frames})
    return cases


def test_the_documented_conversations_fold_alike() -> None:
    cases = documented_cases()
    assert len(cases) >= 3
    agree(cases)


# --------------------------------------------------------------------------- recorded hands


def recorded_cases(
    config: TableConfig, seed: int, hands: int = 6, rotation: Rotation | None = None
) -> list[dict[str, Any]]:
    """A table of ``config`` playing ``hands`` random hands, with seating, chips added and
    sitting out between and during them, as each seat and a spectator receive it. A
    ``rotation``: a mixed table, each hand of its scheduled game (``config``: the first), an
    operator's new rotation told halfway."""
    rng = random.Random(seed)
    count = min(5, config.variant.max_players)
    first = config
    position = None
    players = [f"p{n}" for n in range(count)]
    stacks = [rng.choice([8, 40, 300]) for _ in range(count)]
    public: list[tuple[Event, bool]] = []  # (event, private)
    for n, player in enumerate(players):
        public.append((SeatTaken(n, player, stacks[n]), False))
    for number in range(1, hands + 1):
        public.append((HandNumber(number), False))
        if rotation is not None:
            scheduled = schedule(rotation, position, players=count)
            position, config = scheduled.position, scheduled.config
            public.append((announced_game(number, scheduled), False))
            if number == hands // 2:
                public.append((RotationChanged(("razz",), "orbit", None, number + 2), False))
        hand = play_random_hand(config, stacks, rng, timeout_rate=0.1, absent_rate=0.1)
        told = announced(hand.events)  # as a table tells it: no turn played at once
        assert len(told) < len(hand.events) or not any(
            type(e) is ActionTaken and e.absent for e in hand.events
        )
        cut = rng.randrange(1, len(told))
        for k, event in enumerate(told):
            if k == cut:  # mid-hand: chips wait, a sit-out and a departure wait for the end
                public.append((ChipsAdded(0, 10, True), False))
                public.append((SatOut(1, True), False))
                if number == hands:
                    public.append((Leaving(2), False))
                    if count > 3:  # and an operator removes another player
                        public.append((Leaving(count - 1, "kicked"), False))
            public.append((event, event.to is not None))
        stacks = [rng.choice([8, 40, 300]) for _ in range(count)]  # topped up, or not
        public.append((SatIn(1), False))
    public.append((SeatLeft(2, players[2], stacks[2]), False))
    if count > 3:
        last = count - 1
        public.append((SeatLeft(last, players[last], stacks[last], "kicked"), False))
    snapshot = {
        "type": "snapshot",
        "table": 1,
        "seq": 0,
        "variant": config.variant.name,
        "stakes": {},
        "buy_in": {"min": 1, "max": 1000},
        **TablePicture(count).snapshot(),
        "clock": None,
    }
    if rotation is not None:
        snapshot["stakes"] = {
            "ante": first.ante,
            "bring_in": first.bring_in,
            "small_bet": first.small_bet,
            "big_bet": first.big_bet,
            "structure": first.structure,
        }
        snapshot["variant"] = first.variant.name
        snapshot["rotation"] = {
            "games": [
                {"variant": g.variant.name, "title": g.variant.title} for g in rotation.games
            ],
            "unit": rotation.unit,
            "hands": rotation.hands,
            "from_hand": 1,
            "game": None,
        }
    cases = []
    for viewer in [None, *range(count)]:
        frames: list[dict[str, Any]] = [{"type": "reply", "id": 1, "result": snapshot}]
        seq = 0
        for event, private in public:
            if private and event.to != viewer:
                continue
            if not private:
                seq += 1
            frame = {
                "type": "event",
                "table": 1,
                "seq": seq + private,
                "kind": event.kind,
                "data": event.data,
            }
            if private:
                frame["private"] = True
            frames.append(frame)
        cases.append({"me": None if viewer is None else players[viewer], "frames": frames})
    return cases


CONFIGS = [TableConfig(variant=v) for v in VARIANTS.values()] + [
    TableConfig(variant=find_variant("razz"), structure="pot_limit"),
    TableConfig(variant=find_variant("seven_card_stud_hi_lo"), structure="no_limit"),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.variant.name}-{c.structure}")
def test_recorded_hands_fold_alike(config: TableConfig) -> None:
    agree(recorded_cases(config, seed=5) + recorded_cases(config, seed=6))


STUD_MIX = Rotation.from_dict(
    {
        "games": [
            {"variant": "seven_card_stud"},
            {
                "variant": "razz",
                "stakes": {"ante": 2, "bring_in": 3, "small_bet": 10, "big_bet": 20},
            },
            {
                "variant": "seven_card_stud_hi_lo",
                "structure": "pot_limit",
                "stakes": {"ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 5},
            },
        ],
        "hands": 2,
    }
)


@pytest.mark.parametrize("seed", [7, 8])
def test_a_mixed_tables_hands_fold_alike_each_of_its_game(seed: int) -> None:
    """The ``game`` event, each hand's game and stakes (``hand_started``), and an operator's
    ``rotation_changed``: the page's table says what the engine's does."""
    cases = recorded_cases(STUD_MIX.games[0], seed, hands=7, rotation=STUD_MIX)
    frames = cases[0]["frames"]
    games = [f["data"]["variant"] for f in frames if f.get("kind") == "game"]
    assert games == ["seven_card_stud"] * 2 + ["razz"] * 2 + ["seven_card_stud_hi_lo"] * 2 + [
        "seven_card_stud"
    ]
    agree(cases)
