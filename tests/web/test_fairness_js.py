"""The web page's *verify* link (server/web/fairness.js, run under Node's WebCrypto, as the
browser runs it) on hand histories as ``GET /hands/{id}`` gives them: a stud-deck/2 hand
checks from the page's own view (each opening against the commitment, the page's seed, its
cards in the deal order), a changed card, salt, position or path does not; a stud-deck/1
hand still checks."""

from __future__ import annotations

import copy
import hashlib
import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

from engine import fair, fair2
from engine.actions import Action
from engine.cards import Deck
from engine.hand import Hand
from engine.variants import TableConfig, find_variant
from engine.views import visible_events
from server.store.table_config import config_to_json

DRIVER = Path(__file__).resolve().parent / "fairness_driver.mjs"
NODE = shutil.which("node")
SEEDS = ((0, "page-seed"), (2, "other"))
CONFIG = TableConfig(variant=find_variant("seven_card_stud"), ante=1, bring_in=2)


def javascript(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    assert NODE is not None, "install Node: apt-get install -y nodejs"
    done = subprocess.run(
        [NODE, str(DRIVER)], input=json.dumps(cases), capture_output=True, text=True, check=True
    )
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results


def _play(deck: Deck, seed: int) -> Hand:
    rng = random.Random(seed)
    hand = Hand(CONFIG, [(seat, 500) for seat in range(4)], deck)
    while not hand.is_over():
        legal = hand.legal_actions()
        assert legal.seat is not None
        kinds = [k for k in legal.kinds if k != "fold"] or list(legal.kinds)
        kind = "fold" if "fold" in legal.kinds and rng.random() < 0.1 else rng.choice(kinds)
        amount = legal.min_to if kind in ("complete", "bet", "raise") else None
        hand.apply(Action(legal.seat, kind, amount))
    return hand


def _history(hand: Hand, seat: int, proof: dict[str, Any]) -> dict[str, Any]:
    events = [e.record() for e in visible_events(hand.events, seat)]
    return {"seat": seat, "events": events, "fairness": proof}


def _proof(method: str, commitment: str, server_seed: str | None) -> dict[str, Any]:
    return {
        "method": method,
        "table_id": 4,
        "hand": 9,
        "commitment": commitment,
        "server_seed": server_seed,
        "client_seeds": [{"seat": s, "seed": v} for s, v in SEEDS],
        "config": config_to_json(CONFIG),
    }


def test_the_page_checks_stud_deck_2_hands_from_its_own_view_and_catches_a_change() -> None:
    committed = fair2.CommittedDeck(hashlib.sha256(b"page").digest(), table_id=4, number=9)
    hands = [_play(committed.deal(SEEDS).deck(), n) for n in range(4)]
    proof = _proof(fair2.METHOD, committed.commitment, None)
    histories = [_history(hand, 0, proof) for hand in hands]
    cases: list[dict[str, Any]] = [{"hand": h, "given": {"seed": "page-seed"}} for h in histories]

    def changed(change: Any) -> dict[str, Any]:
        history = copy.deepcopy(histories[0])
        opened = next(e for e in history["events"] if e["kind"] == "cards_opened")
        change(opened["data"]["cards"][0])
        return {"hand": history}

    def flip(text: str) -> str:
        return ("1" if text[0] == "0" else "0") + text[1:]

    cases += [
        changed(lambda o: o.update(card="As" if o["card"] != "As" else "Kd")),
        changed(lambda o: o.update(salt=flip(o["salt"]))),
        changed(lambda o: o.update(position=(o["position"] + 1) % 52)),
        changed(lambda o: o["proof"].__setitem__(0, flip(o["proof"][0]))),
        {"hand": histories[0], "given": {"seed": "not-the-page-seed"}},
        {"hand": histories[0], "given": {"commitment": "0" * 64}},
    ]
    results = javascript(cases)
    order, _ = fair2.deal_order(committed.commitment, 4, 9, SEEDS)
    for result in results[: len(histories)]:
        assert result["fair"], result["checks"]
        assert result["order"] == order
        checks = [what for what, _ in result["checks"]]
        assert any("leads to the commitment" in what for what in checks)
        assert any("sit in the deal order street by street" in what for what in checks)
        assert "your client seed went into the deck" in checks
    for result in results[len(histories) :]:
        assert not result["fair"], result["checks"]


def test_the_page_still_checks_a_stud_deck_1_hand() -> None:
    deal = fair.FairDeal(hashlib.sha256(b"old").digest(), 4, 9, SEEDS)
    history = _history(
        _play(deal.deck(), 1), 0, _proof(fair.METHOD, deal.commitment, deal.server_seed.hex())
    )
    wrong = copy.deepcopy(history)
    wrong["fairness"]["server_seed"] = "00" * 32
    good, bad = javascript([{"hand": history, "given": {"seed": "page-seed"}}, {"hand": wrong}])
    assert good["fair"], good["checks"]
    assert not bad["fair"]
