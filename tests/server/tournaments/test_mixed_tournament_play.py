"""A mixed tournament played to a winner on one node: a sit-and-go on two tables whose levels
each name their game (stud, razz, stud hi-lo in turn). Every table deals each hand in the game
of the level it is dealt at, switching with the level, and says so (``game``); each hand's
PHH carries its variant and replays under it; the finished tournament verifies as
``stud-verify --tournament`` checks it; places, prizes and the books as any tournament's."""

from __future__ import annotations

import copy
from collections import defaultdict
from typing import Any

import httpx
import pytest
import test_director
from fastapi import FastAPI
from server_helpers import FAST_HASHING
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from test_director import quick_sng, run_sit_and_go, tournament_tables

from engine import phh, phh_replay
from engine.rotation import Position
from engine.tournament.spec import TournamentSpec
from engine.variants import VARIANTS
from server.cardroom.supervisor import Cardroom
from server.db.models import HandRecord, TableRecord, TournamentRecord
from server.settings import Settings
from server.table.level_games import LevelGames
from server.verify import download_tournament, verify_tournament

GAMES = ("seven_card_stud", "razz", "seven_card_stud_hi_lo")


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        starting_bankroll=10_000,
        pause_between_hands_seconds=0,
        showdown_pause_seconds=0,
        **FAST_HASHING,
    )


def mixed_sng(templates: dict[str, Any], players: int, seats: int) -> dict[str, Any]:
    """``test_director``'s quick sit-and-go, its levels of one hand a table each playing the
    next game of the stud mix."""
    spec = quick_sng(templates, players, seats)
    spec["structure"]["starting_chips"] = 200  # nobody out in a table's first two hands
    ladder = [
        (2, 5, 10),
        (3, 6, 12),
        (4, 8, 16),
        (5, 10, 20),
        (10, 20, 40),
        (20, 40, 80),
        (40, 80, 160),
        (80, 160, 320),
        (160, 320, 640),
    ]
    spec["structure"]["entries"] = [
        {"game": GAMES[n % 3], "ante": a, "bring_in": b, "small_bet": s, "big_bet": 2 * s,
         "hands": 1}
        for n, (a, b, s) in enumerate(ladder)
    ]  # fmt: skip
    assert TournamentSpec.from_dict(copy.deepcopy(spec)).mixed
    return spec


async def test_a_mixed_tournament_switches_game_per_level_on_every_table(
    app: FastAPI,
    client: httpx.AsyncClient,
    settings: Settings,
    session: AsyncSession,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(test_director, "quick_sng", mixed_sng)
    cardroom: Cardroom = app.state.cardroom
    told: dict[int, dict[int, dict[str, Any]]] = defaultdict(dict)  # table -> hand -> game

    async def watch(actions: int) -> None:
        """While it runs: each table's hand in play is of the game its ``game`` event told."""
        for table_id in await tournament_tables(session, await _tournament(session)):
            actor = cardroom.actor(table_id)
            hand = actor.table.hand if actor is not None else None
            if actor is None or hand is None or hand.is_over():
                continue
            assert isinstance(actor.mix, LevelGames)
            game = actor.mix.told
            assert game is not None and game["hand"] == actor.hand_number
            assert game["variant"] == hand.config.variant.name
            told[table_id][game["hand"]] = game

    tournament_id = await run_sit_and_go(
        app, client, settings, session, players=7, seats=4, meanwhile=watch
    )
    details = (await client.get(f"/tournaments/{tournament_id}")).json()
    spec = TournamentSpec.from_dict(details["spec"])
    levels = spec.structure.levels
    tables = await tournament_tables(session, tournament_id)
    assert len(tables) == 2
    rows = (
        await session.scalars(
            select(HandRecord).where(HandRecord.table_id.in_(tables)).order_by(HandRecord.id)
        )
    ).all()
    by_table: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for hand in rows:
        assert hand.config is not None and hand.rotation is not None
        level = spec.structure.level_of(hand.config)
        assert level is not None
        game = hand.config["variant"]
        # The hand's game is its level's; its place is the level and its count there.
        assert game == spec.game_of(levels[level - 1]) == GAMES[(level - 1) % 3]
        position = Position.from_dict(hand.rotation)
        assert (position.level, position.game, position.of) == (level, level - 1, 0)
        history = phh.loads(hand.phh)
        assert history.variant == VARIANTS[game].phh_code
        assert phh_replay.replay(history) == list(history.finishing_stacks or ()), hand.number
        by_table[hand.table_id].append((hand.number, level))
        announced = told[hand.table_id].get(hand.number)
        if announced is not None:
            assert announced["variant"] == game
            assert announced["text"].startswith(f"{VARIANTS[game].title}, level {level}, hand")
            following = levels[level] if level < len(levels) else levels[-1]
            assert announced["next_variant"] == spec.game_of(following)
    await session.rollback()
    # Every table switched game with the level: each dealt hands of two games or more, its
    # levels never going back, each level's hands counted from 1 at each table.
    for table_id, hands in by_table.items():
        hands.sort()
        seen = [level for _, level in hands]
        assert seen == sorted(seen), (table_id, seen)
        assert len({GAMES[(level - 1) % 3] for level in seen}) >= 2, (table_id, seen)
    assert sum(len(hands) for hands in told.values()) > 0

    # The table rows keep the last level told and its game (what a node taking over reads).
    rows_now = (await session.scalars(select(TableRecord).where(TableRecord.id.in_(tables)))).all()
    for record in rows_now:
        assert record.rotation is not None and record.rotation["level"]["game"] == record.variant
    await session.rollback()

    # stud-verify --tournament: every hand under its own game, the journal, the places.
    document = await download_tournament(client, tournament_id)
    verdict = verify_tournament(document)
    assert verdict.fair, verdict.lines


async def _tournament(session: AsyncSession) -> int:
    found = await session.scalar(select(TournamentRecord.id).order_by(TournamentRecord.id.desc()))
    await session.rollback()
    return int(found or 0)
