"""stud-deck/2 proves the deal and exposes nothing that was not shown (docs/fairness.md).

A real server in the test's loop: three bots on the client library play hands of seven-card
stud (random legal actions: folds, showdowns, mucks), an opponent's connection and a
logged-out watcher's connection keep every frame they receive. The test knows the real deck
of every hand: it reads each committed deck (server seed, cards, salts) from the table's
actor when the commitment is published. Everything the opponent and the watcher received
during and after the hands (frames, the opponent's histories ``GET /hands/{id}`` and its PHH
files, which are the replayer's data) is judged against it: no card of a hand that was not
shown to them, and no salt of a position they were not shown, and no server seed, anywhere.
Each history verifies with ``stud-verify``.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from live import serve
from server_helpers import FAST_HASHING, PASSWORD, bearer, operator_token

from engine import fair2
from engine.cards import format_card
from server.app import create_app
from server.cardroom.supervisor import Cardroom
from server.db import migrate
from server.db.session import make_engine
from server.settings import Settings
from server.verify import verify
from stud_bots.strategies import RandomBot
from stud_client import ServerError, StudClient, Table, TableView

HANDS = 12
TIMEOUT = 60.0
CARD_RUN = re.compile(r"(?<![A-Za-z0-9])((?:[2-9TJQKA][cdhs])+)(?![A-Za-z0-9])")
HIDDEN_FIELDS = frozenset({"salt", "proof", "commitment", "seed", "client_seeds"})


def _cards(value: Any) -> set[str]:
    """Every card named in a decoded JSON value (hashes, salts and seeds left out)."""
    found: set[str] = set()
    if isinstance(value, str):
        for run in CARD_RUN.findall(value):
            found.update(run[i : i + 2] for i in range(0, len(run), 2))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if key not in HIDDEN_FIELDS:
                found |= _cards(item)
    elif isinstance(value, list | tuple):
        for item in value:
            found |= _cards(item)
    return found


@asynccontextmanager
async def cardroom(tmp_path: Path, **overrides: Any) -> AsyncIterator[tuple[str, Cardroom, str]]:
    values: dict[str, Any] = {
        "database_url": f"sqlite+aiosqlite:///{tmp_path / 'openings.db'}",
        "pause_between_hands_seconds": 0.05,
        "action_clock_seconds": 10,
        "starting_bankroll": 10_000,
        **FAST_HASHING,
        **overrides,
    }
    settings = Settings(**values)
    engine = make_engine(settings.database_url)
    await migrate.upgrade(engine)
    await engine.dispose()
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://stud.test") as client:
            boss = await operator_token(client, settings)
            async with serve(app) as host:
                yield f"http://{host}", app.state.cardroom, boss


async def _play(tables: list[Table], hands: int) -> None:
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


async def test_what_an_opponent_and_a_watcher_receive_shows_no_unshown_card_or_salt(
    tmp_path: Path,
) -> None:
    async with cardroom(tmp_path) as (url, room, boss):
        admin = httpx.AsyncClient(base_url=url)
        created = await admin.post(
            "/admin/tables",
            headers=bearer(boss),
            json={"name": "Proofs", "seats": 3, "min_buy_in": 100, "max_buy_in": 500},
        )
        assert created.status_code == 201, created.text
        table_id = created.json()["id"]
        frames: dict[str, list[dict[str, Any]]] = {"bob": [], "watcher": []}

        def keep(name: str) -> Any:
            def record(frame: Mapping[str, Any]) -> bool:
                frames[name].append(json.loads(json.dumps(frame)))
                return False

            return record

        players: dict[str, StudClient] = {}
        for name in ("ann", "bob", "cat"):
            client = StudClient(url, drop_frame=keep(name) if name == "bob" else None)
            await client.register(name, PASSWORD)
            await client.login(name, PASSWORD)
            await client.connect()
            players[name] = client
        watcher = StudClient(url, drop_frame=keep("watcher"))  # logged out
        await watcher.connect()
        await watcher.watch(table_id)
        decks: dict[int, fair2.CommittedDeck] = {}
        stop = asyncio.Event()

        async def read_decks() -> None:  # the test's knowledge of the real deck, by hand
            while not stop.is_set():
                actor = room.actor(table_id)
                deal = actor.next_deal if actor is not None else None
                if deal is not None and deal.committed is not None:
                    decks[deal.number] = deal.committed
                await asyncio.sleep(0.002)

        reader = asyncio.create_task(read_decks())
        try:
            tables = [await players[n].watch(table_id) for n in ("ann", "bob", "cat")]
            for table in tables:
                await table.sit(300)
            await _play(tables, HANDS)
            await asyncio.sleep(0.2)  # the frames after the last hand's end
        finally:
            stop.set()
            await reader
        bob = players["bob"]
        page = await bob._rest("GET", "/hands?limit=50")
        histories = [await bob._rest("GET", f"/hands/{h['id']}") for h in page["hands"]]
        phh_files: dict[int, str] = {}
        for history in histories:
            response = await admin.get(
                f"/hands/{history['id']}/phh", headers=bearer(str(bob.token))
            )
            assert response.status_code == 200, response.text
            phh_files[history["number"]] = response.text
        records = {}
        listed = (
            await admin.get("/admin/hands", headers=bearer(boss), params={"table": table_id})
        ).json()["hands"]
        opened: dict[int, dict[str, Any]] = {}
        for line in listed:
            events = await admin.get(f"/admin/hands/{line['id']}/events", headers=bearer(boss))
            records[line["number"]] = events.json()["events"]
            deck = await admin.post(f"/admin/hands/{line['id']}/open-deck", headers=bearer(boss))
            assert deck.status_code == 200, deck.text
            opened[line["number"]] = deck.json()
        # The whole deck is the operator's: a player of the hand is refused it (not published).
        refused = await admin.get(
            f"/hands/{histories[0]['id']}/deck", headers=bearer(str(bob.token))
        )
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "deck_not_published"
        audit = await admin.get(
            "/admin/audit", headers=bearer(boss), params={"action": "hand.open_deck"}
        )
        assert audit.status_code == 200, audit.text
        assert len(audit.json()["entries"]) == len(listed)
        for client in (*players.values(), watcher):
            await client.close()
        await admin.aclose()

    assert len(records) >= HANDS and all(n in decks for n in records)
    for number, deck in opened.items():  # the operator's opening is the real deck
        committed = decks[number]
        assert deck["commitment"] == committed.commitment
        assert deck["server_seed"] == committed.server_seed.hex()
        assert [o.encode() for o in committed.openings()] == deck["positions"]
        assert all(
            fair2.verify_opening(fair2.Opening.decode(o), committed.commitment)
            for o in deck["positions"]
        )
    folded_or_mucked_hidden = 0
    for number, events in records.items():
        committed = decks[number]
        started = events[0]
        assert started["kind"] == "hand_started"
        assert started["data"]["commitment"] == committed.commitment
        assert started["data"]["method"] == fair2.METHOD
        history = next((h for h in histories if h["number"] == number), None)
        bob_seat = history["seat"] if history is not None else None
        up: set[str] = set()
        down: dict[int, set[str]] = {}
        shown: set[int] = set()
        for event in events:
            data = event["data"]
            if event["kind"] == "street_dealt":
                up |= {c for d in data["deals"] for c in d["up"]}
            elif event["kind"] == "common_card":
                up.add(data["card"])
            elif event["kind"] == "down_cards":
                down.setdefault(data["seat"], set()).update(data["cards"])
            elif event["kind"] == "showdown":
                shown.add(data["seat"])
        every = {format_card(c) for c in range(52)}
        visible = up | {c for s in shown for c in down.get(s, ())}
        mine = down.get(bob_seat, set()) if bob_seat is not None else set()
        allowed = {"watcher": visible, "bob": visible | mine}
        position = {format_card(c): j for j, c in enumerate(committed.cards)}
        for party, may_see in allowed.items():
            hidden = every - may_see
            folded_or_mucked_hidden += len([c for s, cs in down.items() for c in cs if c in hidden])
            # Secrets of the hidden positions: their salts; the server seed.
            secrets_ = {committed.salts[position[c]].hex() for c in hidden}
            secrets_.add(committed.server_seed.hex())
            received = _received(frames[party], number)
            if party == "bob" and history is not None:
                received.append(history)
                received.append(phh_files[number])
                verdict = verify(history)
                assert verdict.fair, verdict.lines
            text = json.dumps(frames[party])
            if party == "bob":
                text += json.dumps([histories, phh_files])
            leaked = [s for s in secrets_ if s in text]
            assert leaked == [], f"hand {number}: {party} received a hidden position's salt"
            seen = set().union(*(_cards(r) for r in received))
            assert seen <= may_see, f"hand {number}: {party} saw {sorted(seen - may_see)}"
            assert up <= seen  # the check sees what was shown
    assert folded_or_mucked_hidden > 0  # there were folded or mucked cards to hide


def _received(frames: list[dict[str, Any]], number: int) -> list[Any]:
    """What a connection received of hand ``number``: its events from its ``hand_number``
    to the next, and every snapshot taken while it was the hand shown."""
    out: list[Any] = []
    current: int | None = None
    for frame in frames:
        result = frame.get("result")
        if isinstance(result, Mapping) and result.get("type") == "snapshot":
            if result.get("hand_number") == number:
                out.append(result.get("hand"))
            continue
        if frame.get("type") == "snapshot":
            if frame.get("hand_number") == number:
                out.append(frame.get("hand"))
            continue
        if frame.get("type") != "event":
            continue
        if frame.get("kind") == "hand_number":
            current = frame["data"]["hand"]
        if current == number:
            out.append(frame.get("data"))
    return out


async def test_a_cardroom_may_publish_whole_decks_to_a_hands_players_after_a_delay(
    tmp_path: Path,
) -> None:
    for delay, published in ((0, True), (3600, False)):
        (tmp_path / str(delay)).mkdir()
        async with cardroom(tmp_path / str(delay), publish_deck_after_seconds=delay) as (
            url,
            room,
            boss,
        ):
            admin = httpx.AsyncClient(base_url=url)
            created = await admin.post(
                "/admin/tables",
                headers=bearer(boss),
                json={"name": "Open", "seats": 2, "min_buy_in": 100, "max_buy_in": 500},
            )
            table_id = created.json()["id"]
            players = []
            for name in ("ann", "bob", "cat"):
                client = StudClient(url)
                await client.register(name, PASSWORD)
                await client.login(name, PASSWORD)
                await client.connect()
                players.append(client)
            tables = [await players[n].watch(table_id) for n in (0, 1)]
            for table in tables:
                await table.sit(300)
            await _play(tables, 2)
            ann, _, cat = players
            page = await ann._rest("GET", "/hands?limit=5")
            hand = await ann._rest("GET", f"/hands/{page['hands'][0]['id']}")
            answer = await admin.get(f"/hands/{hand['id']}/deck", headers=bearer(str(ann.token)))
            stranger = await admin.get(f"/hands/{hand['id']}/deck", headers=bearer(str(cat.token)))
            for client in players:
                await client.close()
            await admin.aclose()
        assert stranger.status_code == 404  # not a hand of cat's
        assert stranger.json()["error"]["code"] == "unknown_hand"
        if not published:
            assert answer.status_code == 403
            assert answer.json()["error"]["code"] == "deck_not_published"
            continue
        assert answer.status_code == 200, answer.text
        deck = answer.json()
        root = hand["fairness"]["commitment"]
        assert deck["commitment"] == root
        openings = [fair2.Opening.decode(o) for o in deck["positions"]]
        assert sorted(o.card for o in openings) == list(range(52))
        assert all(fair2.verify_opening(o, root) for o in openings)
        seen = {
            (o["card"], o["position"])
            for e in hand["events"]
            if e["kind"] == "cards_opened"
            for o in e["data"]["cards"]
        }
        assert seen <= {(format_card(o.card), o.position) for o in openings}
