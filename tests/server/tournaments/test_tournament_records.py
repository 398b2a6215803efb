"""A tournament after the fact, on SQLite and PostgreSQL: sit-and-gos played to a winner (as
``test_director`` plays them), then

* their players' hand histories and PHH files name the tournament, the level and the table;
* ``stud-server audit`` counts their chips at every hand boundary and their prize pools, and
  names what was changed behind the books' back (a hand's chips, a prize, a seat);
* ``stud-verify`` checks the whole tournament from what the cardroom publishes once it is
  over (the seat draw's seed, the journal, every hand as everyone saw it, the places and
  prizes), and finds a forged seed, fact, hand, place or prize."""

from __future__ import annotations

import copy
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import test_director
from fastapi import FastAPI
from server_helpers import FAST_HASHING, bearer, error_code, login, operator_token, player_token
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession
from test_director import quick_sng, run_sit_and_go

from engine import phh
from engine.tournament.structure import Structure
from server import cli
from server.db.models import (
    Account,
    HandPlayer,
    HandRecord,
    SeatRecord,
    TableRecord,
    TournamentEntry,
    TournamentRecord,
)
from server.db.session import make_sessionmaker
from server.settings import Settings
from server.store.books import audit_books
from server.verify import download_tournament, main, verify_tournament


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        starting_bankroll=10_000,
        pause_between_hands_seconds=0,
        showdown_pause_seconds=0,
        **FAST_HASHING,
    )


# ---------------------------------------------------------------------- hand histories


def one_hand_levels(templates: dict[str, Any], players: int, seats: int) -> dict[str, Any]:
    """``test_director``'s quick sit-and-go with levels of one hand each: every hand a level."""
    spec = quick_sng(templates, players, seats)
    for level in spec["structure"]["entries"]:
        level["hands"] = 1
    return spec


async def test_a_tournaments_hands_name_its_tournament_level_and_table(
    app: FastAPI,
    client: httpx.AsyncClient,
    settings: Settings,
    session: AsyncSession,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(test_director, "quick_sng", one_hand_levels)
    tournament_id = await run_sit_and_go(app, client, settings, session, players=4, seats=8)
    details = (await client.get(f"/tournaments/{tournament_id}")).json()
    structure = Structure.from_dict(details["spec"]["structure"])
    token = await login(client, "player0")
    lines = (await client.get("/hands?limit=100", headers=bearer(token))).json()["hands"]
    assert lines
    levels = set()
    for line in lines:
        assert line["tournament_id"] == tournament_id
        assert line["tournament_name"] == "Quick"
        assert line["tournament_table"] == 1
        hand = (await client.get(f"/hands/{line['id']}", headers=bearer(token))).json()
        started = next(e["data"] for e in hand["events"] if e["kind"] == "hand_started")
        # The level is the one whose stakes the hand was dealt at.
        assert line["level"] == structure.level_of(started) >= 1
        assert hand["level"] == line["level"] and hand["tournament_table"] == 1
        levels.add(line["level"])
        for text in (hand["phh"], await _phh(client, f"/hands/{line['id']}/phh", token)):
            fields = phh.loads(text).fields
            assert fields["event"] == "Quick"
            assert (fields["level"], fields["table"], fields["hand"]) == (
                line["level"],
                1,
                line["number"],
            )
    assert levels == set(range(1, len(levels) + 1)) and len(levels) >= 2, levels

    # The PHH file as downloaded: named after the tournament; the back office's whole file
    # keeps the deal's user fields as well.
    first = lines[-1]
    answer = await client.get(f"/hands/{first['id']}/phh", headers=bearer(token))
    assert (
        f"tournament-{tournament_id}-table-1-hand-{first['number']}.phh"
        in (answer.headers["content-disposition"])
    )
    boss = await login(client, "boss")
    whole = await _phh(client, f"/admin/hands/{first['id']}/phh", boss)
    assert "_deck_commitment = " in whole and f"_tournament_id = {tournament_id}" in whole
    assert phh.loads(whole).fields["event"] == "Quick"
    record = (await client.get(f"/admin/hands/{first['id']}", headers=bearer(boss))).json()
    assert record["phh"] == whole


async def _phh(client: httpx.AsyncClient, path: str, token: str) -> str:
    answer = await client.get(path, headers=bearer(token))
    assert answer.status_code == 200, answer.text
    return answer.text


# ---------------------------------------------------------------------- the audit


async def test_the_audit_counts_a_tournaments_chips_and_money(
    app: FastAPI,
    client: httpx.AsyncClient,
    settings: Settings,
    session: AsyncSession,
    engine: AsyncEngine,
) -> None:
    """The books balance at every point of play (hands in progress, players between tables),
    and once the tournament is over; a change behind their back is named."""
    sessions = make_sessionmaker(engine)
    audited: list[int] = []

    async def audit_now(actions: int) -> None:
        if actions >= 10 * (len(audited) + 1):
            books = await audit_books(sessions)
            assert books.differences() == [], actions
            assert [t.issued for t in books.tournaments] == [7 * 60]
            audited.append(actions)

    tournament_id = await run_sit_and_go(
        app, client, settings, session, players=7, seats=4, meanwhile=audit_now
    )
    assert audited, "the tournament ended before it was audited"
    status, lines = await cli.audit(settings)
    assert status == 0, lines
    assert "every tournament's chips in play what it issued" in lines[0]
    books = (await client.get("/admin/books", headers=bearer(await login(client, "boss")))).json()
    assert books["balanced"] is True
    assert books["tournaments"] == {
        str(tournament_id): {"issued": 420, "removed": 0, "in_play": 420, "pool": 0}
    }

    # A hand's chips changed (one player's ending, so the hand nets to zero no more, and the
    # next hand of that player starts from chips they never had).
    hand_id, account_id, ending = (
        await session.execute(
            select(HandPlayer.hand_id, HandPlayer.account_id, HandPlayer.ending)
            .join(HandRecord, HandRecord.id == HandPlayer.hand_id)
            .join(TableRecord, TableRecord.id == HandRecord.table_id)
            .where(TableRecord.tournament_id == tournament_id, HandPlayer.ending > 0)
            .order_by(HandRecord.id)
            .limit(1)
        )
    ).one()
    name = await session.scalar(select(Account.username).where(Account.id == account_id))
    await _set(session, HandPlayer, ending + 7, hand_id=hand_id, account_id=account_id)
    status, lines = await cli.audit(settings)
    assert status == 1
    said = "\n".join(lines)
    assert f"tournament {tournament_id} (Quick): hand " in said
    assert f"{name}'s chips went from" in said and f"to {ending + 7} by its record" in said
    await _set(session, HandPlayer, ending, hand_id=hand_id, account_id=account_id)
    assert (await cli.audit(settings))[0] == 0

    # A prize recorded that the ledger did not pay.
    entry_id, prize = (
        await session.execute(
            select(TournamentEntry.id, TournamentEntry.prize).where(
                TournamentEntry.tournament_id == tournament_id, TournamentEntry.place == 1
            )
        )
    ).one()
    assert prize
    await _set(session, TournamentEntry, prize + 1, id=entry_id, column="prize")
    status, lines = await cli.audit(settings)
    assert status == 1
    said = "\n".join(lines)
    assert f"is recorded with a prize of {prize + 1}, the ledger paid it {prize}" in said
    assert f"its prizes sum to {7 * 100 + 1}, but its prize pool was {7 * 100}" in said


async def _set(
    session: AsyncSession, model: Any, value: int, *, column: str = "ending", **where: int
) -> None:
    await session.execute(
        update(model)
        .where(*(getattr(model, key) == wanted for key, wanted in where.items()))
        .values({column: value})
    )
    await session.commit()


async def test_the_audit_follows_a_prize_pool_through_entries_refunds_and_a_cancel(
    client: httpx.AsyncClient, settings: Settings, session: AsyncSession
) -> None:
    """Before any play: the pool holds the buy-ins of the entries registered, a refund gives
    one back, a cancelled tournament's pool is empty; an entry marked registered again
    after its refund is named."""
    boss = await operator_token(client, settings)
    templates = (await client.get("/tournaments/templates")).json()
    made = await client.post(
        "/admin/tournaments",
        json={"name": "Quick", "spec": quick_sng(templates, 3, 8)},
        headers=bearer(boss),
    )
    tournament_id = made.json()["id"]
    tokens = [await player_token(client, name) for name in ("ann", "bob")]
    for n, token in enumerate(tokens):
        answer = await client.post(
            f"/tournaments/{tournament_id}/register",
            json={"request_id": f"r{n}"},
            headers=bearer(token),
        )
        assert answer.status_code == 201, answer.text
    status, lines = await cli.audit(settings)
    assert status == 0 and "(1 tournament)" in lines[0], lines
    await client.delete(f"/tournaments/{tournament_id}/register", headers=bearer(tokens[1]))
    assert (await cli.audit(settings))[0] == 0

    entry_id = await session.scalar(
        select(TournamentEntry.id).where(TournamentEntry.status == "unregistered")
    )
    for status_now in ("registered", "unregistered"):  # taken back, then as it was
        await session.execute(
            update(TournamentEntry).where(TournamentEntry.id == entry_id).values(status=status_now)
        )
        await session.commit()
        status, lines = await cli.audit(settings)
        if status_now == "registered":
            assert status == 1
            said = f"entry {entry_id} (bob) is registered and its prize pool refunded it 100 chips"
            assert said in lines[0], lines
        else:
            assert status == 0, lines

    cancelled = await client.post(
        f"/admin/tournaments/{tournament_id}/cancel", json={"reason": "test"}, headers=bearer(boss)
    )
    assert cancelled.status_code == 200, cancelled.text
    status, lines = await cli.audit(settings)
    assert status == 0, lines
    assert "(1 tournament)" in lines[0]


async def test_the_audit_names_a_seat_that_holds_chips_the_hands_do_not_give(
    app: FastAPI,
    client: httpx.AsyncClient,
    settings: Settings,
    session: AsyncSession,
) -> None:
    """A running tournament's seats against its hands: a seat row given chips is named, and
    the chips in play no longer the chips issued."""
    changed: list[str] = []

    async def add_chips(actions: int) -> None:
        if changed or actions < 5:
            return
        row = (
            await session.execute(
                select(SeatRecord.table_id, SeatRecord.seat, Account.username)
                .join(TableRecord, TableRecord.id == SeatRecord.table_id)
                .join(Account, Account.id == SeatRecord.account_id)
                .where(TableRecord.tournament_id.is_not(None), SeatRecord.chips > 0)
                .limit(1)
            )
        ).first()
        await session.rollback()
        if row is None:
            return
        table_id, seat, name = row
        status, lines = await cli.audit(settings)
        assert status == 0, lines
        # As a fault would: the chips in the seat's row, not at the table.
        await session.execute(
            update(SeatRecord)
            .where(SeatRecord.table_id == table_id, SeatRecord.seat == seat)
            .values(chips=SeatRecord.chips + 5)
        )
        await session.commit()
        status, lines = await cli.audit(settings)
        said = "\n".join(lines)
        assert status == 1, said
        assert f"{name}'s seat at its table 1 holds" in said
        assert "its chips in play now (its seats, and its players between two tables) are" in said
        changed.append(str(name))
        # Put back, by the audit's own words, before the table's next hand writes the row.
        await session.execute(
            update(SeatRecord)
            .where(SeatRecord.table_id == table_id, SeatRecord.seat == seat)
            .values(chips=SeatRecord.chips - 5)
        )
        await session.commit()

    await run_sit_and_go(app, client, settings, session, players=3, seats=8, meanwhile=add_chips)
    assert changed


# ---------------------------------------------------------------------- stud-verify


async def test_a_finished_tournament_verifies_and_a_forgery_does_not(
    app: FastAPI,
    client: httpx.AsyncClient,
    settings: Settings,
    session: AsyncSession,
    tmp_path: Path,
) -> None:
    seen: dict[str, Any] = {}

    async def before_the_end(actions: int) -> None:
        """While it runs: nothing of the record is published, least of all the seed."""
        if seen:
            return
        (tournament_id,) = (
            await session.scalars(select(TournamentRecord.id).where(TournamentRecord.id > 0))
        ).all()
        await session.rollback()
        for path in ("record", "hands"):
            answer = await client.get(f"/tournaments/{tournament_id}/{path}")
            assert answer.status_code == 409, answer.text
            assert error_code(answer) == "tournament_not_finished"
        seen.update((await client.get(f"/tournaments/{tournament_id}")).json())
        assert "seed" not in json.dumps(seen)

    tournament_id = await run_sit_and_go(
        app, client, settings, session, players=7, seats=4, meanwhile=before_the_end
    )
    document = await download_tournament(client, tournament_id)
    record = (await client.get(f"/tournaments/{tournament_id}/record")).json()
    assert record["draw"]["commitment"] == seen["draw_commitment"]
    assert record["hands"] == len(document["hands"]) >= 2
    assert {t["table"] for t in record["tables"]} == {1, 2}
    assert all(hand["level"] for hand in document["hands"])

    verdict = verify_tournament(document, commitment=seen["draw_commitment"])
    assert verdict.fair, verdict.lines
    said = "\n".join(verdict.lines)
    assert f"tournament {tournament_id} (Quick): fair" in said
    assert "the start drew 7 players to 2 tables" in said and "later draw" in said
    winner = next(e["player"] for e in record["entries"] if e["place"] == 1)
    assert f"places: {winner} 1st (350)" in said

    # The command line, on the file --save keeps (here, the same download).
    path = tmp_path / "tournament.json"
    path.write_text(json.dumps(document))
    assert _stud_verify(str(path), "--commitment", seen["draw_commitment"])[0] == 0
    status, out = _stud_verify(str(path), "--commitment", "0" * 64)
    assert status == 1 and "published before the start was" in out

    for forge, reason in FORGERIES:
        forged = copy.deepcopy(document)
        forge(forged)
        verdict = verify_tournament(forged)
        assert not verdict.fair, forge.__name__
        assert reason in verdict.lines[0], (forge.__name__, verdict.lines)


def _stud_verify(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def another_seed(document: dict[str, Any]) -> None:
    document["draw"]["seed"] = "11" * 32


def another_seed_and_its_commitment(document: dict[str, Any]) -> None:
    """A seed the cardroom could have chosen after seeing the field: its commitment fits it,
    but its draws do not put the players where they played."""
    seed = bytes(range(32))
    document["draw"] = {**document["draw"], "seed": seed.hex()}
    document["draw"]["commitment"] = hashlib.sha256(seed).hexdigest()


def chips_moved_in_a_hand_fact(document: dict[str, Any]) -> None:
    fact = next(f for f in document["journal"] if f["kind"] == "hand")
    stacks = fact["data"]["stacks"]
    rich, poor = sorted(stacks, key=lambda p: -stacks[p])[:2]
    stacks[rich] -= 1
    stacks[poor] += 1


def places_swapped(document: dict[str, Any]) -> None:
    first, second = sorted(
        (e for e in document["entries"] if e["place"] in (1, 2)), key=lambda e: e["place"]
    )[:2]
    first["place"], second["place"] = second["place"], first["place"]
    first["prize"], second["prize"] = second["prize"], first["prize"]


def a_prize_raised(document: dict[str, Any]) -> None:
    winner = next(e for e in document["entries"] if e["place"] == 1)
    winner["prize"] += 1


def a_hand_left_out(document: dict[str, Any]) -> None:
    del document["hands"][len(document["hands"]) // 2]


def a_card_changed(document: dict[str, Any]) -> None:
    hand = document["hands"][0]
    deal = next(e for e in hand["events"] if e["kind"] == "street_dealt")
    up = deal["data"]["deals"][0]["up"]
    up[0] = next(c for c in ("As", "Kd", "2c") if c != up[0])


def a_players_chips_relisted(document: dict[str, Any]) -> None:
    document["hands"][0]["players"][0]["ending"] += 1


FORGERIES = [
    (another_seed, "the revealed seed does not match the commitment"),
    (another_seed_and_its_commitment, "but the draws and moves seated"),
    (chips_moved_in_a_hand_fact, "the journal says from"),
    (places_swapped, "by the journal, but the tournament records"),
    (a_prize_raised, "finished 1st (350) by the journal, but the tournament records 1st (351)"),
    (a_hand_left_out, "is not among the hands the tables played"),
    (a_card_changed, "NOT FAIR: hand 1 (hand id "),
    (a_players_chips_relisted, "the hand's events from"),
]


@pytest.mark.parametrize("path", ["record", "hands"])
async def test_an_unknown_tournament_has_no_record(client: httpx.AsyncClient, path: str) -> None:
    answer = await client.get(f"/tournaments/999/{path}")
    assert answer.status_code == 404 and error_code(answer) == "unknown_tournament"
