"""Hand histories: a player reads their own hands, and sees only what their seat saw."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from play import calling, play, submit, wait_for
from server_helpers import FAST_HASHING, bearer, error_code, login, operator_token, register
from sqlalchemy import select

from engine import phh, phh_replay, phh_rules
from server.cardroom.supervisor import Cardroom
from server.db.models import Account, HandPlayer
from server.settings import Settings
from server.store.table_config import config_to_json


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        pause_between_hands_seconds=0,
        **FAST_HASHING,
    )


async def table(
    app: FastAPI,
    client: httpx.AsyncClient,
    settings: Settings,
    players: list[str],
    **body: Any,
) -> tuple[int, dict[str, str]]:
    """A new table with ``players`` seated; their tokens."""
    tokens = {}
    for player in players:
        await register(client, player)
        tokens[player] = await login(client, player)
    boss = await operator_token(client, settings)
    created = await client.post("/admin/tables", headers=bearer(boss), json={"name": "T", **body})
    assert created.status_code == 201, created.text
    table_id: int = created.json()["id"]
    actor = app.state.cardroom.actor(table_id)
    for player in players:
        await submit(actor, "sit", player, buy_in=body.get("min_buy_in", 200))
    return table_id, tokens


def down_cards(events: list[dict[str, Any]]) -> dict[int, set[str]]:
    """Each seat's down cards, from a full event log."""
    cards: dict[int, set[str]] = {}
    for event in events:
        if event["kind"] == "down_cards":
            cards.setdefault(event["to"], set()).update(event["data"]["cards"])
    return cards


async def test_players_read_their_own_hands_page_by_page(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    table_id, tokens = await table(app, client, settings, ["ann", "bob", "cat"])
    await register(client, "dan")
    dan = await login(client, "dan")
    cardroom: Cardroom = app.state.cardroom
    actor = cardroom.actor(table_id)
    assert actor is not None
    await play(actor, lambda: actor.hand_number >= 8)
    await submit(actor, "sit_out", "ann", next_hand=False)
    await submit(actor, "sit_out", "bob", next_hand=False)
    await submit(actor, "sit_out", "cat", next_hand=False)
    await play(actor, lambda: actor.table.hand is None)
    seen: list[dict[str, Any]] = []
    before: int | None = None
    while True:
        query = {"limit": 3, **({"before": before} if before else {})}
        page = (await client.get("/hands", params=query, headers=bearer(tokens["ann"]))).json()
        seen += page["hands"]
        before = page["next_before"]
        if before is None:
            break
    ids = [h["id"] for h in seen]
    assert ids == sorted(ids, reverse=True) and len(ids) == len(set(ids))
    # Every hand ann was dealt, and only those (a busted player sits out and misses some).
    async with app.state.sessionmaker() as session:
        dealt = set(
            (
                await session.scalars(
                    select(HandPlayer.hand_id)
                    .join(Account, Account.id == HandPlayer.account_id)
                    .where(Account.username == "ann")
                )
            ).all()
        )
    assert set(ids) == dealt and len(ids) >= 3
    assert {h["table_id"] for h in seen} == {table_id} and seen[0]["variant"] == "seven_card_stud"
    assert all(h["net"] == h["ending"] - h["starting"] for h in seen)
    assert (await client.get("/hands", headers=bearer(dan))).json() == {
        "hands": [],
        "next_before": None,
    }
    assert error_code(await client.get("/hands")) == "not_authenticated"

    boss = await operator_token(client, settings)
    for line in seen:
        full = (await client.get(f"/admin/hands/{line['id']}", headers=bearer(boss))).json()
        everyone = down_cards(full["events"])
        mine = (await client.get(f"/hands/{line['id']}", headers=bearer(tokens["ann"]))).json()
        assert mine["seat"] == line["seat"] and {p["player"] for p in mine["players"]} <= {
            "ann",
            "bob",
            "cat",
        }
        assert all(e["to"] in (None, line["seat"]) for e in mine["events"])
        shown = {e["data"]["seat"] for e in mine["events"] if e["kind"] == "showdown"}
        text = json.dumps(mine)
        for seat, cards in everyone.items():
            for card in cards:
                visible = seat == line["seat"] or seat in shown
                assert (f'"{card}"' in text) == visible, (seat, card, line)
        # The PHH names every card this seat saw and no other: the rest is written "??".
        assert mine["phh_withheld"] is None
        named = {
            w[k : k + 2]
            for a in phh.loads(mine["phh"]).actions
            if a.startswith("d dh") or a.split()[1:2] == ["sm"] and len(a.split()) > 2
            for w in [a.split()[-1]]
            for k in range(0, len(w), 2)
        } - {"??"}
        hidden = {
            c
            for seat, cards in everyone.items()
            if seat != line["seat"] and seat not in shown
            for c in cards
        }
        assert named and not named & hidden
        refused = await client.get(f"/hands/{line['id']}", headers=bearer(dan))
        assert refused.status_code == 404 and error_code(refused) == "unknown_hand"
    missing = await client.get("/hands/999999", headers=bearer(tokens["ann"]))
    assert missing.status_code == 404 and error_code(missing) == "unknown_hand"


async def test_each_player_gets_the_phh_of_an_all_in_hand_and_it_replays(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings
) -> None:
    # PHH rules, stacks so short that both players are all in on third street: both show.
    rules = config_to_json(phh_rules.phh_config("F7S", 1, 2, 5, 10))
    table_id, tokens = await table(
        app,
        client,
        settings,
        ["ann", "bob"],
        config=rules,
        seats=2,
        min_buy_in=3,
        max_buy_in=3,
    )
    actor = app.state.cardroom.actor(table_id)
    await wait_for(lambda: actor.hand_number >= 1)  # dealt once its deck is written down
    await play(actor, lambda: actor.hand_number >= 2 or actor.table.hand is None, choose=calling)
    page = (await client.get("/hands", headers=bearer(tokens["ann"]))).json()
    first = page["hands"][-1]
    for player in ("ann", "bob"):
        hand = (await client.get(f"/hands/{first['id']}", headers=bearer(tokens[player]))).json()
        assert hand["phh_withheld"] is None, hand["events"]
        history = phh.loads(hand["phh"])
        assert list(history.finishing_stacks or ()) == [p["ending"] for p in hand["players"]]
        assert phh_replay.replay(history) == [p["ending"] for p in hand["players"]]
        assert history.fields["players"] == ["ann", "bob"]


@pytest.mark.parametrize("suffix", ["", "/phh"])
async def test_the_largest_hand_id_is_unknown_not_an_error(
    client: httpx.AsyncClient, suffix: str
) -> None:
    """Ids and cursors reach 64 bits and stop there: the last one is a hand like any
    (unknown here), one past it a refused parameter; neither is a server error."""
    await register(client, "zed")
    token = await login(client, "zed")
    last = await client.get(f"/hands/{2**63 - 1}{suffix}", headers=bearer(token))
    assert last.status_code == 404 and error_code(last) == "unknown_hand", last.text
    past = await client.get(f"/hands/{2**63}{suffix}", headers=bearer(token))
    assert past.status_code == 400 and error_code(past) == "bad_request", past.text
    page = await client.get("/hands", params={"before": 2**63}, headers=bearer(token))
    assert page.status_code == 400 and error_code(page) == "bad_request", page.text
    wallet = await client.get("/wallet", params={"before": 2**63}, headers=bearer(token))
    assert wallet.status_code == 400 and error_code(wallet) == "bad_request", wallet.text
