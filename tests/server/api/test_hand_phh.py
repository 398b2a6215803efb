"""A player downloads their own hands as PHH (``GET /hands/{id}/phh``): the hand as their seat
saw it, others' unseen down cards written ``??``; it replays to the recorded stacks."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from play import calling, play, random_legal, wait_for
from server_helpers import FAST_HASHING, bearer, error_code, login, operator_token, register
from test_hands import down_cards, table

from engine import phh, phh_replay, phh_rules
from engine.actions import LegalActions
from engine.cards import Deck
from server.cardroom.supervisor import Cardroom
from server.settings import Settings
from server.store.table_config import config_to_json

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "engine"))
from decks import stud_deck  # noqa: E402

MUCKED_WINNER = "8d 9d Qc | Ah | Kh | Jh | Th"


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(database_url=database_url, pause_between_hands_seconds=0, **FAST_HASHING)


def _named_cards(history: phh.HandHistory) -> dict[int, list[str]]:
    """Each player's (0-based) cards the file names, dealt or shown; ``??`` left in."""
    named: dict[int, list[str]] = {}
    for action in history.actions:
        words = action.split("#", 1)[0].split()
        if words[:2] == ["d", "dh"]:
            who, cards = int(words[2][1:]) - 1, words[3]
        elif len(words) >= 3 and words[1] == "sm" and words[2] != "-":
            who, cards = int(words[0][1:]) - 1, words[2]
        else:
            continue
        named.setdefault(who, []).extend(cards[k : k + 2] for k in range(0, len(cards), 2))
    return named


def _lively(legal: LegalActions, rng: random.Random) -> tuple[str, int | None]:
    """Random play that folds often enough for some hands to end before the showdown."""
    if "fold" in legal.kinds and rng.random() < 0.12:
        return "fold", None
    return random_legal(legal, rng)


async def test_players_download_their_own_hands_as_they_saw_them(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    rules = config_to_json(phh_rules.phh_config("F7S", 1, 2, 5, 10))
    players = ["ann", "bob", "cat"]
    table_id, tokens = await table(
        app, client, settings, players, config=rules, seats=3, min_buy_in=400, max_buy_in=400
    )
    actor = app.state.cardroom.actor(table_id)
    await wait_for(lambda: actor.hand_number >= 1)
    await play(actor, lambda: actor.hand_number >= 30, choose=_lively, rng=random.Random(11))
    boss = await operator_token(client, settings)
    hands: dict[int, dict[str, Any]] = {}
    for player in players:
        page = (await client.get("/hands?limit=100", headers=bearer(tokens[player]))).json()
        for line in page["hands"]:
            hands.setdefault(line["id"], {})[player] = line
    finished = sorted(h for h in hands if not next(iter(hands[h].values()))["cancelled"])
    assert len(finished) >= 5
    hidden_somewhere = 0
    for hand_id in finished:
        full = (await client.get(f"/admin/hands/{hand_id}", headers=bearer(boss))).json()
        everyone = down_cards(full["events"])
        truth = phh.loads(full["phh"])
        for player, line in hands[hand_id].items():
            answer = await client.get(f"/hands/{hand_id}/phh", headers=bearer(tokens[player]))
            assert answer.status_code == 200, answer.text
            assert answer.headers["content-type"].startswith("text/plain")
            assert answer.headers["content-disposition"] == (
                f'attachment; filename="table-{table_id}-hand-{full["number"]}.phh"'
            )
            history = phh.loads(answer.text)
            mine = (await client.get(f"/hands/{hand_id}", headers=bearer(tokens[player]))).json()
            assert answer.text == mine["phh"]  # the same record the hand's page shows
            shown = {e["data"]["seat"] for e in mine["events"] if e["kind"] == "showdown"}
            seats = list(history.fields["seats"])
            named = _named_cards(history)
            for seat, cards in everyone.items():
                who = seats.index(seat + 1)
                if seat == line["seat"] or seat in shown:
                    assert cards <= set(named[who]), (player, seat)
                else:
                    assert not cards & set(named.get(who, [])), (player, seat)
                    assert "??" in named[who]
                    hidden_somewhere += 1
            # Everything but the unseen cards is the full record's.
            assert history.starting_stacks == truth.starting_stacks
            assert history.finishing_stacks == truth.finishing_stacks
            assert len(history.actions) == len(truth.actions)
            # The engine replays it to the recorded stacks.
            endings = [p["ending"] for p in sorted(mine["players"], key=lambda p: p["seat"])]
            assert list(history.finishing_stacks or ()) == endings
            assert phh_replay.replay(history) == endings, answer.text
    assert hidden_somewhere  # some hands ended with cards a player never saw


async def test_cards_mucked_at_the_showdown_stay_unknown(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    # Everyone checks it down; seat 2's ace-high straight shows first (its board is high on
    # seventh street) and the two smaller straights are mucked.
    hands = ["2d 3d Jc | 4h | 5h | 6h | Tc", "5d 6d 2c | 7h | 8h | 9h | Td", MUCKED_WINNER]
    cardroom: Cardroom = app.state.cardroom
    cardroom.deck_factory = lambda: Deck(order=stud_deck(hands).order())
    rules = config_to_json(phh_rules.phh_config("F7S", 1, 2, 5, 10))
    players = ["ann", "bob", "cat"]
    table_id, tokens = await table(app, client, settings, players, config=rules, seats=3)
    actor = cardroom.actor(table_id)
    await wait_for(lambda: actor.hand_number >= 1)
    await play(actor, lambda: actor.hand_number >= 3, choose=calling)
    # The first hand may be dealt before the third player sits: the first hand of cat's.
    hand_id = (await client.get("/hands", headers=bearer(tokens["cat"]))).json()["hands"][-1]["id"]
    for seat, player in enumerate(players):
        text = (await client.get(f"/hands/{hand_id}/phh", headers=bearer(tokens[player]))).text
        history = phh.loads(text)
        shows = [a for a in history.actions if a.split()[1] == "sm"]
        assert shows == ["p1 sm", "p2 sm", "p3 sm 8d9dQcAhKhJhTh"], text
        named = _named_cards(history)
        for other, cards in enumerate(hands):
            dealt = cards.replace("|", " ").split()
            down = [*dealt[:2], dealt[-1]]  # third street's two, seventh street's one
            if other in (seat, 2):
                assert set(down) <= set(named[other])
            else:
                assert not set(down) & set(named[other])
                assert named[other].count("??") == 3
        mine = (await client.get(f"/hands/{hand_id}", headers=bearer(tokens[player]))).json()
        assert phh_replay.replay(history) == [p["ending"] for p in mine["players"]]


async def test_a_hand_not_ones_own_is_refused(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    table_id, tokens = await table(app, client, settings, ["ann", "bob"], seats=2)
    await register(client, "dan")
    dan = await login(client, "dan")
    actor = app.state.cardroom.actor(table_id)
    await play(actor, lambda: actor.hand_number >= 2)
    hand_id = (await client.get("/hands", headers=bearer(tokens["ann"]))).json()["hands"][0]["id"]
    refused = await client.get(f"/hands/{hand_id}/phh", headers=bearer(dan))
    assert refused.status_code == 404 and error_code(refused) == "unknown_hand"
    missing = await client.get("/hands/999999/phh", headers=bearer(tokens["ann"]))
    assert missing.status_code == 404 and error_code(missing) == "unknown_hand"
    for bad in ("0", "x", str(2**63)):
        answer = await client.get(f"/hands/{bad}/phh", headers=bearer(tokens["ann"]))
        assert answer.status_code == 400 and error_code(answer) == "bad_request", bad
    assert error_code(await client.get(f"/hands/{hand_id}/phh")) == "not_authenticated"
    assert (await client.get(f"/hands/{hand_id}/phh", headers=bearer(tokens["bob"]))).is_success


async def test_a_hand_phh_cannot_write_is_refused_with_no_phh(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    # Pot limit: PHH has no code for it, so the record keeps no PHH text.
    table_id, tokens = await table(
        app, client, settings, ["ann", "bob"], seats=2, config={"structure": "pot_limit"}
    )
    actor = app.state.cardroom.actor(table_id)
    await play(actor, lambda: actor.hand_number >= 2)
    hand_id = (await client.get("/hands", headers=bearer(tokens["ann"]))).json()["hands"][0]["id"]
    refused = await client.get(f"/hands/{hand_id}/phh", headers=bearer(tokens["ann"]))
    assert refused.status_code == 404 and error_code(refused) == "no_phh"
