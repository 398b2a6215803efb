"""The dealer's lines on the page (server/web/dealer.js, run under Node): a hand's awards said
once per winner, a hi-lo scoop on one line whatever the number of pots; the bring-in said as
a duty, before the act."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

DEALER = Path(__file__).resolve().parents[2] / "server" / "web" / "dealer.js"
NODE = shutil.which("node")
SCRIPT = """
import { awardLines, wonText, announcementText } from %s;
let input = "";
for await (const chunk of process.stdin) input += chunk;
const { awards, hands, announcement } = JSON.parse(input);
const names = ["Ann", "Bob", "Cat"];
process.stdout.write(JSON.stringify({
  lines: awardLines(awards, (n) => names[n], (n) => hands[n]),
  won: names.map((_, n) => wonText(awards.filter((a) => a.seat === n))),
  announced: announcement ? announcementText(announcement, "Bob") : null,
}));
"""
HANDS = {
    "0": {"high": "flush, king high", "low": "7-5-4-3-2"},
    "1": {"high": "pair of aces", "low": "8-6-5-4-A"},
}


def said(awards: list[dict[str, Any]], announcement: dict[str, Any] | None = None) -> Any:
    assert NODE is not None, "install Node: apt-get install -y nodejs"
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", SCRIPT % json.dumps(DEALER.as_uri())],
        input=json.dumps({"awards": awards, "hands": HANDS, "announcement": announcement}),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def award(seat: int, amount: int, half: str, pot: int = 0) -> dict[str, Any]:
    return {"seat": seat, "amount": amount, "half": half, "pot": pot}


SCOOP = "high with a flush, king high and low with 7-5-4-3-2"


@pytest.mark.parametrize(
    ("awards", "lines", "won"),
    [
        (  # the "wins 113 + 112 + 443 + 443": both halves of both pots
            [award(0, 113, "high"), award(0, 112, "low"), award(0, 443, "high", 1)]
            + [award(0, 443, "low", 1)],
            [f"Ann scoops 1111, {SCOOP}"],
            ["scoops 1111", "", ""],
        ),
        (  # both halves of the main pot, the whole side pot where no low qualified
            [award(0, 12, "high"), award(0, 12, "low"), award(0, 20, "whole", 1)],
            [f"Ann scoops 44, {SCOOP}"],
            ["scoops 44", "", ""],
        ),
        (  # a side pot scooped, the main pot split
            [award(1, 6, "high"), award(0, 6, "low"), award(0, 9, "high", 1)]
            + [award(0, 9, "low", 1)],
            [
                "Bob wins 6, high, with a pair of aces",
                "Ann wins 15, low, with 7-5-4-3-2",
                "Ann wins 9 from side pot 1, high, with a flush, king high",
            ],
            ["wins 24", "wins 6", ""],
        ),
        (  # the high half of two pots: one line, their sum
            [award(0, 6, "high"), award(1, 6, "low"), award(0, 9, "high", 1)]
            + [award(1, 9, "low", 1)],
            ["Ann wins 15, high, with a flush, king high", "Bob wins 15, low, with 8-6-5-4-A"],
            ["wins 15", "wins 15", ""],
        ),
        (  # no showdown
            [award(2, 5, "whole")],
            ["Cat wins 5"],
            ["", "", "wins 5"],
        ),
    ],
)
def test_awards_are_said_once_per_winner(
    awards: list[dict[str, Any]], lines: list[str], won: list[str]
) -> None:
    out = said(awards)
    assert out["lines"] == lines
    assert out["won"] == won


def test_the_bring_in_is_said_before_the_act_as_a_duty() -> None:
    bring_in = {"kind": "bring_in", "seat": 1, "card": "7d", "text": "the seven of diamonds"}
    assert said([], bring_in)["announced"] == "Bob to bring it in with the 7♦"
