"""Mixed tables through the admin API, on SQLite and PostgreSQL: a table made with a rotation,
refused ``bad_rotation`` with the field at fault; its rotation changed by an operator, dealt
from the next switch (or the next hand when the table is idle), audited; the OpenAPI schema
describing a rotation field by field."""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from play import play, submit, wait_for
from server_helpers import FAST_HASHING, bearer, error_code, operator_token, player_token

from server.db.models import TableRecord
from server.settings import Settings
from server.table import commands as cmd
from server.table import edit
from server.table.actor import TableActor
from server.table.ports import CommandRefused

STUD_MIX: dict[str, Any] = {
    "games": [
        {"variant": "seven_card_stud"},
        {"variant": "razz"},
        {"variant": "seven_card_stud_hi_lo", "rules": {"low_qualifier": 8}},
    ],
    "hands": 8,
    "stakes": {"ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
}


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        starting_bankroll=10_000,
        pause_between_hands_seconds=0,
        showdown_pause_seconds=0,
        action_clock_seconds=30,
        **FAST_HASHING,
    )


@pytest.fixture
async def boss(client: httpx.AsyncClient, settings: Settings) -> dict[str, str]:
    return bearer(await operator_token(client, settings))


async def create(
    client: httpx.AsyncClient, boss: dict[str, str], rotation: Any, **more: Any
) -> httpx.Response:
    return await client.post(
        "/admin/tables", headers=boss, json={"name": "Mix", "rotation": rotation, **more}
    )


def actor_of(app: FastAPI, table_id: int) -> TableActor:
    actor = app.state.cardroom.actor(table_id)
    assert actor is not None
    return actor


async def test_a_mixed_table_is_made_from_its_rotation(
    client: httpx.AsyncClient, boss: dict[str, str], app: FastAPI
) -> None:
    made = await create(client, boss, STUD_MIX)
    assert made.status_code == 201, made.text
    table = made.json()
    assert table["variant"] == "seven_card_stud" and table["config"]["variant"] == "seven_card_stud"
    assert table["rotation"]["from_hand"] == 1
    games = table["rotation"]["rotation"]["games"]
    assert [g["variant"] for g in games] == [
        "seven_card_stud",
        "razz",
        "seven_card_stud_hi_lo",
    ]
    assert table["rotation"]["rotation"]["hands"] == 8
    # The most seats every game deals to; buy-ins from the biggest big bet.
    assert table["seats"] == 8 and (table["min_buy_in"], table["max_buy_in"]) == (200, 1000)
    listed = (await client.get("/admin/tables", headers=boss)).json()
    assert listed[0]["rotation"] == table["rotation"]
    snapshot = actor_of(app, table["id"]).snapshot(None)
    assert [g["variant"] for g in snapshot["rotation"]["games"]] == [g["variant"] for g in games]
    assert snapshot["rotation"]["unit"] == "hands" and snapshot["rotation"]["game"] is None


@pytest.mark.parametrize(
    ("rotation", "more", "field"),
    [
        ({**STUD_MIX, "games": []}, {}, "games"),
        ({**STUD_MIX, "games": [{"variant": "omaha"}]}, {}, "games[0].variant"),
        ({**STUD_MIX, "hands": 0}, {}, "hands"),
        (
            {**STUD_MIX, "games": [{"variant": "razz", "structure": "pot_limit"}]},
            {},
            "games[0].stakes",
        ),
        (
            {**STUD_MIX, "stakes": {"ante": 1, "bring_in": 2, "small_bet": 5}},
            {},
            "stakes.big_bet",
        ),
        (
            {**STUD_MIX, "games": [{"variant": "razz", "rules": {"low_qualifier": 3}}]},
            {},
            "games[0].rules.low_qualifier",
        ),
        (
            {**STUD_MIX, "stakes": {"ante": 1, "bring_in": 9, "small_bet": 5, "big_bet": 10}},
            {},
            "games[0]",
        ),
        ({**STUD_MIX, "unit": "level", "hands": None}, {}, "unit"),
        ({**STUD_MIX, "unit": "orbit"}, {}, "hands"),
        (
            {"games": [{"variant": "razz"}, {"variant": "eight_card_stud"}]},
            {"seats": 8},
            "games[1]",
        ),
        (
            {**STUD_MIX, "games": [{"variant": "razz", "rules": {"ante_by_position": [1, 1]}}]},
            {},
            "games[0]",
        ),
        (STUD_MIX, {"config": {"variant": "razz"}}, "config"),
    ],
)
async def test_a_bad_rotation_is_refused_with_the_field_at_fault(
    client: httpx.AsyncClient,
    boss: dict[str, str],
    rotation: dict[str, Any],
    more: dict[str, Any],
    field: str,
) -> None:
    rotation = {k: v for k, v in rotation.items() if v is not None}
    refused = await create(client, boss, rotation, **more)
    assert refused.status_code == 400, refused.text
    assert error_code(refused) == "bad_rotation"
    message = refused.json()["error"]["message"]
    assert f"{field}:" in message, message
    assert (await client.get("/admin/tables", headers=boss)).json() == []


async def test_the_schema_describes_a_rotation_field_by_field(client: httpx.AsyncClient) -> None:
    schemas = (await client.get("/openapi.json")).json()["components"]["schemas"]
    body = schemas["RotationBody"]["properties"]
    assert set(body) == {"games", "unit", "hands", "stakes"}
    game = schemas["RotationGame"]["properties"]
    assert set(game) == {"variant", "structure", "stakes", "rules"}
    assert "razz" in game["variant"]["enum"]
    rules = schemas["GameRulesJson"]
    assert "low_qualifier" in rules["properties"] and "ante" not in rules["properties"]
    assert rules.get("additionalProperties") is False
    assert set(schemas["RotationStakes"]["properties"]) == {
        "ante",
        "bring_in",
        "small_bet",
        "big_bet",
    }
    assert "rotation" in schemas["TableCreate"]["properties"]
    update = schemas["RotationUpdate"]["properties"]["rotation"]
    assert {"$ref": "#/components/schemas/RotationBody"} in update["anyOf"]


async def test_an_operator_changes_the_rotation_from_the_next_switch(
    client: httpx.AsyncClient, boss: dict[str, str], app: FastAPI
) -> None:
    made = await create(client, boss, STUD_MIX)
    table_id = made.json()["id"]
    actor = actor_of(app, table_id)
    for player in ("ann", "bob", "cat"):
        await player_token(client, player)
        await submit(actor, "sit", player, buy_in=1_000)
    await play(actor, lambda: actor.hand_number >= 3, rng=random.Random(3))
    now = actor.hand_number
    # Five-card stud, then razz, four hands each, from the end of stud's turn (hand 9).
    changed = await client.put(
        f"/admin/tables/{table_id}/rotation",
        headers=boss,
        json={
            "rotation": {
                "games": [{"variant": "five_card_stud"}, {"variant": "razz"}],
                "hands": 4,
            },
            "reason": "a new mix tonight",
        },
    )
    assert changed.status_code == 200, changed.text
    answer = changed.json()
    assert answer["after_hand"] is True and answer["rotation"]["from_hand"] == 9
    assert actor.hand_number < 9 and actor.hand_number >= now
    await play(actor, lambda: actor.hand_number > 13, rng=random.Random(4))
    played = (await client.get(f"/admin/hands?table={table_id}&limit=20", headers=boss)).json()
    by_number = {h["number"]: h for h in played["hands"]}
    variants = {}
    for number in range(1, 14):
        detail = (await client.get(f"/admin/hands/{by_number[number]['id']}", headers=boss)).json()
        started = detail["events"][0]
        assert started["kind"] == "hand_started"
        variants[number] = started["data"]["variant"]
    assert {variants[n] for n in range(1, 9)} == {"seven_card_stud"}  # stud's turn finished
    assert {variants[n] for n in range(9, 13)} == {"five_card_stud"}
    assert variants[13] == "razz"
    entries = (
        await client.get("/admin/audit", headers=boss, params={"action": "table.rotation"})
    ).json()["entries"]
    assert len(entries) == 1 and entries[0]["reason"] == "a new mix tonight"
    assert entries[0]["before"]["rotation"]["from_hand"] == 1
    assert entries[0]["after"]["rotation"]["from_hand"] == 9
    # A mixed table's rules are its games': not changed as a one-game table's.
    patched = await client.patch(
        f"/admin/tables/{table_id}", headers=boss, json={"config": {"ante": 2}}
    )
    assert patched.status_code == 400 and error_code(patched) == "bad_rotation"


async def test_an_idle_table_takes_a_new_rotation_from_its_next_hand(
    client: httpx.AsyncClient, boss: dict[str, str], app: FastAPI
) -> None:
    made = await client.post("/admin/tables", headers=boss, json={"name": "Plain"})
    table_id = made.json()["id"]
    assert made.json()["rotation"] is None
    url = f"/admin/tables/{table_id}/rotation"
    changed = await client.put(url, headers=boss, json={"rotation": STUD_MIX})
    assert changed.status_code == 200, changed.text
    assert changed.json()["after_hand"] is False and changed.json()["rotation"]["from_hand"] == 1
    refused = await client.put(url, headers=boss, json={"rotation": {**STUD_MIX, "hands": 0}})
    assert refused.status_code == 400 and error_code(refused) == "bad_rotation"
    assert "hands:" in refused.json()["error"]["message"]
    missing = await client.put(url, headers=boss, json={"reason": "no rotation said"})
    assert missing.status_code == 400
    actor = actor_of(app, table_id)
    for player in ("ann", "bob"):
        await player_token(client, player)
        await submit(actor, "sit", player, buy_in=500)
    await wait_for(lambda: actor.hand_number >= 1)
    assert actor.table.config.variant.name == "seven_card_stud"
    assert actor.mix is not None and actor.mix.told is not None
    assert actor.mix.told["text"] == "Seven-Card Stud, hand 1 of 8"
    snapshot = actor.snapshot("ann")
    assert snapshot["rotation"]["game"]["text"] == "Seven-Card Stud, hand 1 of 8"
    # Taken away while hands run: the table's own rules from the switch on.
    gone = await client.put(url, headers=boss, json={"rotation": None, "reason": "one game"})
    assert gone.status_code == 200 and gone.json()["rotation"]["rotation"] is None
    assert gone.json()["rotation"]["from_hand"] == 9


async def test_a_mixed_tables_settings_must_fit_every_game(
    client: httpx.AsyncClient, boss: dict[str, str]
) -> None:
    rotation = {"games": [{"variant": "seven_card_stud"}, {"variant": "eight_card_stud"}]}
    made = await create(client, boss, rotation)
    assert made.status_code == 201, made.text
    table = made.json()
    assert table["seats"] == 7  # eight-card stud seats seven at most
    url = f"/admin/tables/{table['id']}"
    refused = await client.patch(url, headers=boss, json={"seats": 8})
    assert refused.status_code == 400 and error_code(refused) == "bad_rotation"
    assert refused.json()["error"]["message"].startswith("games[1]: ")
    assert (await client.patch(url, headers=boss, json={"seats": 6})).status_code == 200


async def test_the_lobby_lists_a_mixed_table_with_its_rotation_and_the_game_in_play(
    client: httpx.AsyncClient, boss: dict[str, str], app: FastAPI
) -> None:
    mix = (await create(client, boss, {**STUD_MIX, "hands": 2})).json()["id"]
    await client.post("/admin/tables", headers=boss, json={"name": "Plain"})
    listed = {t["name"]: t for t in (await client.get("/tables")).json()}
    assert listed["Plain"]["rotation"] is None
    assert listed["Mix"]["rotation"] == {
        "games": [
            {"variant": "seven_card_stud", "title": "Seven-Card Stud"},
            {"variant": "razz", "title": "Razz"},
            {"variant": "seven_card_stud_hi_lo", "title": "Stud Hi-Lo (8 or better)"},
        ],
        "unit": "hands",
        "hands": 2,
    }
    assert listed["Mix"]["variant"] == "seven_card_stud"
    actor = actor_of(app, mix)
    for player in ("ann", "bob", "cat"):
        await player_token(client, player)
        await submit(actor, "sit", player, buy_in=1_000)
    # Hand 3 (razz's first) dealt and left waiting for its first act: the lobby says razz.
    await play(actor, lambda: actor.hand_number == 3, rng=random.Random(5))
    line = next(t for t in (await client.get("/tables")).json() if t["id"] == mix)
    assert (line["variant"], line["variant_title"]) == ("razz", "Razz")
    assert line["rotation"] == listed["Mix"]["rotation"]


async def test_seats_a_game_still_in_play_cannot_deal_are_refused(
    client: httpx.AsyncClient, boss: dict[str, str], app: FastAPI
) -> None:
    # Stud then eight-card stud (seven seats at most), four hands each, at a table of seven.
    rotation = {
        "games": [{"variant": "seven_card_stud"}, {"variant": "eight_card_stud"}],
        "hands": 4,
    }
    made = await create(client, boss, rotation)
    table_id = made.json()["id"]
    actor = actor_of(app, table_id)
    for player in ("ann", "bob", "cat"):
        await player_token(client, player)
        await submit(actor, "sit", player, buy_in=1_000)
    await play(actor, lambda: actor.hand_number >= 5, rng=random.Random(5))
    assert actor.table.config.variant.name == "eight_card_stud"  # its turn: hands 5 to 8
    # A rotation of stud alone, dealt once eight-card stud's turn is over (hand 9)...
    url = f"/admin/tables/{table_id}"
    changed = await client.put(
        f"{url}/rotation", headers=boss, json={"rotation": {"games": [rotation["games"][0]]}}
    )
    assert changed.status_code == 200 and changed.json()["rotation"]["from_hand"] == 9
    # ...does not make eight seats fit the eight-card stud still to be dealt before it.
    refused = await client.patch(url, headers=boss, json={"seats": 8})
    assert refused.status_code == 400 and error_code(refused) == "bad_rotation", refused.text
    await play(actor, lambda: actor.hand_number > 9, rng=random.Random(6))
    assert len(actor.table.seats) == 7


OPERATOR = {"player": "boss", "operator_id": 1}
EIGHT_CARD_MIX = {"games": [{"variant": "seven_card_stud"}, {"variant": "eight_card_stud"}]}


async def seven_seats_in_play(client: httpx.AsyncClient, boss: dict[str, str], app: FastAPI) -> int:
    """A table of one game and seven seats, a hand in progress; its id."""
    made = await client.post("/admin/tables", headers=boss, json={"name": "Plain", "seats": 7})
    table_id = made.json()["id"]
    actor = actor_of(app, table_id)
    for player in ("ann", "bob", "cat"):
        await player_token(client, player)
        await submit(actor, "sit", player, buy_in=1_000)
    await play(actor, lambda: actor.hand_number >= 1, rng=random.Random(7))
    return int(table_id)


async def test_a_rotation_judged_on_seats_changed_since_is_refused_at_the_table(
    client: httpx.AsyncClient, boss: dict[str, str], app: FastAPI
) -> None:
    """Eight seats for the hand's end, then a rotation its route judged on the row before
    (seven seats): eight-card stud could not deal, and the table refuses it."""
    table_id = await seven_seats_in_play(client, boss, app)
    actor = actor_of(app, table_id)
    grown = await client.patch(f"/admin/tables/{table_id}", headers=boss, json={"seats": 8})
    assert grown.status_code == 200 and grown.json()["after_hand"] is True
    with pytest.raises(CommandRefused) as refused:
        await actor.submit(cmd.SetRotation(**OPERATOR, rotation=EIGHT_CARD_MIX))
    assert refused.value.code == "bad_rotation"
    await play(actor, lambda: actor.hand_number >= 3, rng=random.Random(8))
    assert len(actor.table.seats) == 8 and actor.mix is None


async def test_seats_judged_on_a_row_without_the_rotation_since_are_refused_at_the_table(
    client: httpx.AsyncClient, boss: dict[str, str], app: FastAPI
) -> None:
    """A rotation with eight-card stud taken, then eight seats its route judged on the row
    before it (no rotation): the table refuses them."""
    table_id = await seven_seats_in_play(client, boss, app)
    actor = actor_of(app, table_id)
    async with app.state.cardroom.sessionmaker() as session:
        record = await session.get(TableRecord, table_id)
        assert record is not None
        values = edit.merged(record, {"seats": 8})
    await actor.submit(cmd.SetRotation(**OPERATOR, rotation=EIGHT_CARD_MIX))
    with pytest.raises(CommandRefused) as refused:
        await actor.submit(cmd.ChangeSettings(**OPERATOR, settings=values))
    assert refused.value.code == "bad_rotation"
    await play(actor, lambda: actor.hand_number >= 10, rng=random.Random(9))
    assert len(actor.table.seats) == 7
    assert actor.table.config.variant.name == "eight_card_stud"
