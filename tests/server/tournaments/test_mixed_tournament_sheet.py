"""A mixed tournament over REST: the stud-mix template as a format posted back as it is, its
details with every game it plays and the structure sheet (level, game, stakes, length, the
breaks), a level of an unknown game or tables too big for one of its games refused with the
field at fault; the clock's events naming each level's game."""

from __future__ import annotations

import copy
from typing import Any

import httpx
from server_helpers import bearer, error_code, operator_token

from engine.tournament.clock import LevelClock
from engine.tournament.templates import STUD_MIX, TEMPLATES
from server.settings import Settings
from server.tournaments.announcer import clock_notices

MIX = "stud-mix-turbo"


async def test_the_structure_sheet_shows_the_game_of_each_level(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    boss = await operator_token(client, settings)
    templates = (await client.get("/tournaments/templates")).json()
    levels = [e for e in templates[MIX]["structure"]["entries"] if e["kind"] == "level"]
    assert [level["game"] for level in levels[:4]] == [*STUD_MIX, STUD_MIX[0]]
    assert templates["stud-sng-9"]["structure"]["entries"][0]["game"] is None  # the variant's

    # The template's format posted back as it is makes the same tournament.
    made = await client.post(
        "/admin/tournaments",
        json={"name": "Stud mix", "spec": templates[MIX]},
        headers=bearer(boss),
    )
    assert made.status_code == 201, made.text
    details = (await client.get(f"/tournaments/{made.json()['id']}")).json()
    assert details["games"] == list(STUD_MIX) and details["variant"] == STUD_MIX[0]
    sheet = details["sheet"]
    assert len(sheet) == len(levels)
    assert sheet[1] == {
        "kind": "level",
        "level": 2,
        "game": "razz",
        "title": "Razz",
        "ante": levels[1]["ante"],
        "bring_in": levels[1]["bring_in"],
        "small_bet": levels[1]["small_bet"],
        "big_bet": levels[1]["big_bet"],
        "minutes": 5,
        "hands": None,
    }
    listed = (await client.get("/tournaments")).json()
    assert [t["games"] for t in listed if t["id"] == details["id"]] == [list(STUD_MIX)]
    # Found by any game it plays.
    for game in STUD_MIX:
        found = (await client.get(f"/tournaments?game={game}")).json()
        assert details["id"] in [t["id"] for t in found]
    assert (await client.get("/tournaments?game=five_card_stud")).json() == []

    # One game's tournament: its sheet names that game at every level, breaks between.
    regular = await client.post(
        "/admin/tournaments",
        json={
            "name": "Sunday",
            "template": "stud-mtt-regular",
            "starts_at": "2099-01-01T00:00:00+00:00",
        },
        headers=bearer(boss),
    )
    assert regular.status_code == 201, regular.text
    lines = (await client.get(f"/tournaments/{regular.json()['id']}")).json()["sheet"]
    assert {line["game"] for line in lines if line["kind"] == "level"} == {"seven_card_stud"}
    assert lines[3]["kind"] == "break" and lines[3]["minutes"] == 5


async def test_a_mixed_format_is_refused_with_the_field_at_fault(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    boss = await operator_token(client, settings)
    templates = (await client.get("/tournaments/templates")).json()

    async def create(spec: dict[str, Any]) -> httpx.Response:
        return await client.post(
            "/admin/tournaments", json={"name": "x", "spec": spec}, headers=bearer(boss)
        )

    unknown = copy.deepcopy(templates[MIX])
    unknown["structure"]["entries"][2]["game"] = "holdem"
    refused = await create(unknown)
    assert refused.status_code == 400 and error_code(refused) == "bad_structure"
    assert "structure.entries[2].game" in refused.json()["error"]["message"]

    too_many = copy.deepcopy(templates[MIX])
    too_many["structure"]["entries"][4]["game"] = "eight_card_stud"  # seats at most 7
    refused = await create(too_many)
    assert refused.status_code == 400 and error_code(refused) == "bad_structure"
    message = refused.json()["error"]["message"]
    assert "seats_per_table" in message and "eight_card_stud (level 5)" in message


def test_a_mixed_tournaments_level_events_say_the_game() -> None:
    spec = TEMPLATES[MIX]
    reading = LevelClock.start(spec.structure, at=0.0).read(5 * 60 + 1)  # level 2
    (notice,) = clock_notices(0, reading, spec.structure.entries, spec)
    assert notice.data["level"]["number"] == 2 and notice.data["level"]["game"] == "razz"
    assert notice.data["next_level"]["game"] == "seven_card_stud_hi_lo"
    single = TEMPLATES["stud-sng-9"]
    reading = LevelClock.start(single.structure, at=0.0).read(10 * 60 + 1)
    (notice,) = clock_notices(0, reading, single.structure.entries, single)
    assert "game" not in notice.data["level"]
