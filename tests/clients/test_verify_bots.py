"""Provably fair dealing end to end: bots on the client library (which gives every hand a
client seed by default) play on a real server; each downloads its hands and ``stud-verify``
finds them fair, and finds a tampered card or seed not."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from live_server import LiveServer, MakePlayer, OpenTable

from server import verify
from stud_bots.strategies import RandomBot
from stud_client import ServerError, StudClient, Table, TableView

HANDS = 8
TIMEOUT = 60.0


async def _play(tables: list[Table], hands: int) -> None:
    """Random legal actions at every seat until ``hands`` hands have ended at the table."""
    first = tables[0].view.hand_number or 0

    def done() -> bool:
        view = tables[0].view
        number = (view.hand_number or 0) - first
        return number > hands or (number == hands and view.hand_over)

    async def seat(table: Table, bot: RandomBot) -> None:
        acted: int | None = None

        def ready(view: TableView) -> bool:
            return done() or (view.my_turn and view.turn_seq != acted)

        while not done():
            view = await table.wait_for(ready, TIMEOUT)
            if done():
                return
            acted = view.turn_seq
            assert view.legal is not None
            try:
                await table.act(bot.decide(view, view.legal))
            except ServerError as refusal:
                assert refusal.code in ("not_your_turn", "no_hand"), refusal

    async with asyncio.timeout(TIMEOUT * 2):
        await asyncio.gather(*(seat(t, RandomBot(random.Random(n))) for n, t in enumerate(tables)))


def stud_verify(path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("stud-verify")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "server.verify"]
    return subprocess.run(
        [*command, str(path), *options], capture_output=True, text=True, timeout=60
    )


async def test_bots_hands_verify_and_tampered_ones_do_not(
    make_player: MakePlayer, open_table: OpenTable, tmp_path: Path
) -> None:
    table_id = await open_table(variant="seven_card_stud_hi_lo", seats=3)
    players = [await make_player() for _ in range(3)]
    tables = [await player.watch(table_id) for player in players]
    for table in tables:
        await table.sit(400)
    await _play(tables, HANDS)
    histories: list[tuple[int, dict[str, Any]]] = []
    for index, player in enumerate(players):
        page = await player._rest("GET", "/hands?limit=50")
        for line in page["hands"]:
            histories.append((index, await player._rest("GET", f"/hands/{line['id']}")))
    assert len(histories) >= HANDS * 2
    seeded = 0
    for index, history in histories:
        assert history["fairness"] is not None, history["number"]
        verdict = verify.verify(history)
        assert verdict.fair, verdict.lines
        # The client's own seed for the hand went in at its seat, under the commitment it saw.
        given = tables[index].seeds.get(history["number"])
        if given is not None:
            commitment, seed = given
            assert history["fairness"]["commitment"] == commitment
            assert {"seat": history["seat"], "seed": seed} in history["fairness"]["client_seeds"]
            seeded += 1
    assert seeded >= HANDS  # every hand after the first has the bots' seeds

    index, last = next((i, h) for i, h in histories if h["number"] in tables[i].seeds)
    original = json.dumps(last)
    path = tmp_path / "hand.json"
    path.write_text(original)
    checked = stud_verify(path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "fair" in checked.stdout and "NOT FAIR" not in checked.stdout
    # With what the client saw live: the commitment before the deal and the seed it sent.
    commitment, seed = tables[index].seeds[last["number"]]
    checked = stud_verify(path, "--commitment", commitment, "--seed", seed)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    checked = stud_verify(path, "--commitment", "0" * 64)
    assert checked.returncode == 1 and "announced before the deal" in checked.stdout
    checked = stud_verify(path, "--seed", "not-my-seed")
    assert checked.returncode == 1 and "did not go into the deck" in checked.stdout

    history = json.loads(original)
    down = next(e for e in history["events"] if e["kind"] == "down_cards")
    cards = down["data"]["cards"]
    cards[0] = next(c for c in ("As", "Kd", "2c") if c not in cards)
    path.write_text(json.dumps(history))
    checked = stud_verify(path)
    assert checked.returncode == 1 and cards[0] in checked.stdout, checked.stdout

    # stud-deck/2: no seed revealed; a card, a salt, a path or a position changed in an
    # opening, or another commitment, and the opening no longer leads to the commitment.
    assert last["fairness"]["method"] == "stud-deck/2" and last["fairness"]["server_seed"] is None

    def opened(history: dict[str, Any]) -> dict[str, Any]:
        event = next(e for e in history["events"] if e["kind"] == "cards_opened")
        opening: dict[str, Any] = event["data"]["cards"][0]
        return opening

    def flip(text: str) -> str:
        return ("1" if text[0] == "0" else "0") + text[1:]

    def other_card(opening: dict[str, Any]) -> None:
        opening["card"] = "As" if opening["card"] != "As" else "Kd"

    def other_salt(opening: dict[str, Any]) -> None:
        opening["salt"] = flip(opening["salt"])

    def other_path(opening: dict[str, Any]) -> None:
        opening["proof"][-1] = flip(opening["proof"][-1])

    def other_position(opening: dict[str, Any]) -> None:
        opening["position"] = (opening["position"] + 1) % 52

    for change in (other_card, other_salt, other_path, other_position):
        history = json.loads(original)
        change(opened(history))
        path.write_text(json.dumps(history))
        checked = stud_verify(path)
        assert checked.returncode == 1, (change, checked.stdout)
        assert "does not lead to the commitment" in checked.stdout, checked.stdout

    history = json.loads(original)
    history["fairness"]["commitment"] = "00" * 32
    next(e for e in history["events"] if e["kind"] == "hand_started")["data"]["commitment"] = (
        "00" * 32
    )
    path.write_text(json.dumps(history))
    checked = stud_verify(path)
    assert checked.returncode == 1 and "commitment" in checked.stdout, checked.stdout

    history = json.loads(original)
    del history["events"][
        history["events"].index(next(e for e in history["events"] if e["kind"] == "cards_opened"))
    ]
    path.write_text(json.dumps(history))
    checked = stud_verify(path)
    assert checked.returncode == 1 and "cards_opened" in checked.stdout, checked.stdout

    path.write_text("not a hand history")
    assert stud_verify(path).returncode == 2


async def test_a_reconnect_right_after_a_commitment_gives_its_seed_to_the_next_hand(
    make_player: MakePlayer, open_table: OpenTable
) -> None:
    """The line drops as the next hand's commitment is published: the client never sees
    ``deck_committed``. Back, its snapshot carries the commitment, and the client gives that
    very hand its seed, which the hand lists in its ``client_seeds``."""
    table_id = await open_table(variant="razz")
    armed: list[StudClient] = []
    lost: list[dict[str, Any]] = []

    def drop_at_commitment(frame: Any) -> bool:
        if armed and frame.get("type") == "event" and frame.get("kind") == "deck_committed":
            client = armed.pop()
            lost.append(frame["data"])
            asyncio.get_running_loop().create_task(client.drop_connection())
            return True
        return False

    ann = await make_player(drop_frame=drop_at_commitment)
    bob = await make_player()
    tables = [await ann.watch(table_id), await bob.watch(table_id)]
    for table in tables:
        await table.sit(200)
    ann_table = tables[0]
    # A hand is in progress: the next one's commitment is out; the one after it is the next
    # commitment published, right after the next deal. The line drops on it.
    await ann_table.wait_for(lambda v: v.hand_number is not None and not v.hand_over, TIMEOUT)
    armed.append(ann)
    playing = asyncio.create_task(_play(tables, 4))
    try:
        await ann_table.wait_for(lambda v: bool(lost) and ann.stats.reconnects >= 1, TIMEOUT)
        committed = lost[0]
        await ann_table.wait_for(lambda v: committed["hand"] in ann_table.seeds, TIMEOUT)
    finally:
        await playing
    commitment, seed = ann_table.seeds[committed["hand"]]
    assert commitment == committed["commitment"]
    page = await ann._rest("GET", "/hands?limit=50")
    line = next(h for h in page["hands"] if h["number"] == committed["hand"])
    history = await ann._rest("GET", f"/hands/{line['id']}")
    assert {"seat": history["seat"], "seed": seed} in history["fairness"]["client_seeds"]
    assert history["fairness"]["commitment"] == committed["commitment"]
    assert verify.verify(history, commitment=commitment, seed=seed).fair


async def test_a_player_who_sits_down_after_a_commitment_seeds_that_hand(
    make_player: MakePlayer, open_table: OpenTable
) -> None:
    """A watcher sits down while a hand is played, the next one's commitment already out: the
    client gives that very hand its seed on sitting down, and the hand lists it."""
    table_id = await open_table(variant="seven_card_stud", seats=3)
    players = [await make_player() for _ in range(3)]
    tables = [await player.watch(table_id) for player in players]
    for table in tables[:2]:
        await table.sit(200)
    late = tables[2]
    view = await late.wait_for(
        lambda v: v.hand_number is not None and not v.hand_over and v.street == "third", TIMEOUT
    )
    committed = late.committed
    assert committed is not None and committed[0] == (view.hand_number or 0) + 1
    playing = asyncio.create_task(_play(tables[:2], 1))
    try:
        await late.sit(200)
        await late.wait_for(lambda v: committed[0] in late.seeds, TIMEOUT)
    finally:
        await playing
    commitment, seed = late.seeds[committed[0]]
    assert commitment == committed[1]
    await _play(tables, 1)
    page = await players[2]._rest("GET", "/hands?limit=5")
    line = next(h for h in page["hands"] if h["number"] == committed[0])
    history = await players[2]._rest("GET", f"/hands/{line['id']}")
    assert {"seat": history["seat"], "seed": seed} in history["fairness"]["client_seeds"]
    assert verify.verify(history, commitment=commitment, seed=seed).fair


def test_stud_verify_downloads_a_tournament_only_once_it_is_finished(
    live: LiveServer, operator_token: str, tmp_path: Path
) -> None:
    """``stud-verify --server URL --tournament ID`` asks the cardroom for the record; before
    the finish it is refused (the seed stays sealed), and nothing is saved."""
    made = httpx.post(
        f"{live.url}/admin/tournaments",
        json={"name": "Verify me", "template": "razz-sng-8"},
        headers={"Authorization": f"Bearer {operator_token}"},
    )
    assert made.status_code == 201, made.text
    script = Path(sys.executable).with_name("stud-verify")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "server.verify"]
    saved = tmp_path / "t.json"
    checked = subprocess.run(
        [*command, "--server", live.url, "--tournament", str(made.json()["id"]), "--save", saved],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert "answered 409" in checked.stdout and "published once it is finished" in checked.stdout
    assert not saved.exists()
