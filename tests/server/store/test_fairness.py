"""Provably fair dealing at a table (engine.fair through the actor and the store), and the
deck of a hand in progress sealed at rest (server.store.deck_seal), on SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from play import PASSWORDS, calling, play, seed, submit, wait_for
from server_helpers import FAST_HASHING
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from engine import fair, fair2
from engine.cards import format_card
from engine.events import HandStarted
from server.accounts import registry
from server.api.routers.hands import get_hand
from server.bus.memory import MemoryBus
from server.db.models import Account, Base, HandRecord, Role
from server.db.session import make_sessionmaker
from server.settings import Settings
from server.store import tables
from server.store.deck_seal import DeckSeal
from server.store.hands import UnknownHand
from server.store.table_store import DatabaseTableStore, live_hand
from server.table import commands, dealing
from server.table.actor import TableActor
from server.table.ports import CommandRefused, TableSettings
from server.verify import verify

SEAL = DeckSeal.generate()


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(database_url=database_url, **FAST_HASHING)


@pytest.fixture
def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return make_sessionmaker(engine)


def make_actor(
    table_id: int,
    sessionmaker: async_sessionmaker[AsyncSession],
    pause: float = 0.0,
    method: str = fair2.METHOD,
) -> TableActor:
    return TableActor(
        table_id,
        tables.config_from_json({}),
        bus=MemoryBus(),
        store=DatabaseTableStore(sessionmaker, seal=SEAL),
        settings=TableSettings(
            min_buy_in=20, max_buy_in=500, action_clock=30.0, pause_between_hands=pause
        ),
        deck_method=method,
    )


# ---------------------------------------------------------------------- client seeds


async def test_client_seeds_sent_after_the_commitment_go_into_the_deck_by_seat(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    table_id = await seed(sessionmaker, ["ann", "bob", "cat"])
    actor = make_actor(table_id, sessionmaker, pause=0.5)
    actor.start()
    try:
        await submit(actor, "sit", "bob", buy_in=100, seat=4)
        await submit(actor, "sit", "ann", buy_in=100, seat=1)
        committed = actor.next_deal
        assert committed is not None and committed.number == 1
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "client_seed", "cat", seed="abc")
        assert refused.value.code == "not_seated"
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "client_seed", "ann", seed="abc", hand=2)
        assert refused.value.code == "seed_window_closed"
        with pytest.raises(CommandRefused) as refused:
            commands.parse("client_seed", "ann", {"seed": "not a seed!"})
        assert refused.value.code == "bad_client_seed"
        assert await submit(actor, "client_seed", "bob", seed="bobs-first") == {"hand": 1}
        await submit(actor, "client_seed", "bob", seed="bobs-last", hand=1)
        await submit(actor, "client_seed", "ann", seed="ann_1")
        await wait_for(lambda: actor.table.hand is not None)
        hand = actor.table.hand
        assert hand is not None
        started = hand.events[0]
        assert isinstance(started, HandStarted)
        assert started.commitment == committed.commitment
        assert started.client_seeds == ((1, "ann_1"), (4, "bobs-last"))
        # The next hand's commitment is out with this one's deal: late seeds go to it.
        assert actor.next_deal is not None and actor.next_deal.number == 2
        assert await submit(actor, "client_seed", "ann", seed="late", hand=1) == {"hand": 2}
        assert await submit(actor, "client_seed", "bob", seed="next") == {"hand": 2}
        with pytest.raises(CommandRefused) as refused:
            await submit(actor, "client_seed", "ann", seed="early", hand=3)
        assert refused.value.code == "seed_window_closed"
        assert actor.next_deal.seeds == {"ann": "late", "bob": "next"}
    finally:
        await actor.stop()


# ---------------------------------------------------------------------- sealed at rest


def _needles(deck: list[int], server_seed: bytes) -> list[str]:
    """Ways the deck (any five cards in a row of it) or its seed could be written out. Five:
    three cards of the deck in a row turn up by chance in the records of the hands before
    about once in a hundred runs (a player's three cards of an earlier hand, or three
    numbers of a JSON list), five in twenty-odd million."""
    needles = [server_seed.hex(), server_seed.hex().upper(), base64.b64encode(server_seed).decode()]
    for i in range(len(deck) - 4):
        run = deck[i : i + 5]
        texts = [format_card(c) for c in run]
        needles += ["".join(texts), " ".join(texts), ", ".join(f'"{t}"' for t in texts)]
        needles += [",".join(f'"{t}"' for t in texts), ", ".join(map(str, run))]
        needles += [",".join(map(str, run))]
    return needles


async def _every_row(sessionmaker: async_sessionmaker[AsyncSession]) -> str:
    """Every value of every row of every table, as text."""
    parts: list[str] = []
    async with sessionmaker() as session:
        for table in Base.metadata.sorted_tables:
            for row in (await session.execute(select(table))).all():
                for value in row:
                    if isinstance(value, bytes):
                        parts.append(value.hex())
                        parts.append(value.decode("latin-1"))
                    else:
                        parts.append(json.dumps(value, default=str))
    return "\n".join(parts)


async def test_the_database_holds_no_card_of_the_hand_in_progress(
    sessionmaker: async_sessionmaker[AsyncSession], database_url: str
) -> None:
    table_id = await seed(sessionmaker, ["ann", "bob", "cat", "dan"])
    actor = make_actor(table_id, sessionmaker)
    actor.start()
    try:
        for player in ("ann", "bob", "cat", "dan"):
            await submit(actor, "sit", player, buy_in=200)
        # A few hands played first: their records (and PHH) are in the database too.
        await play(actor, lambda: actor.hand_number >= 3 and actor.table.hand is not None)
        hand = actor.table.hand
        assert hand is not None and not hand.is_over() and hand.deck.fair is not None
        deck = list(hand.deck.cards)
        needles = _needles(deck, hand.deck.fair.server_seed)
        rows = await _every_row(sessionmaker)
        assert "sealed" in rows
        found = [needle for needle in needles if needle in rows]
        assert found == [], f"the deck of the hand in progress is in the database: {found}"
        path = make_url(database_url).database
        if make_url(database_url).get_backend_name() == "sqlite" and path:
            raw = b"".join(
                file.read_bytes()
                for file in Path(path).parent.glob(Path(path).name + "*")
                if file.is_file()
            ).decode("latin-1")
            found = [needle for needle in needles if needle in raw]
            assert found == [], f"the deck is in the database's files: {found}"
    finally:
        await actor.stop()
    # The search would have found the deck written in the clear.
    clear = json.dumps({"order": deck, "cards": [format_card(c) for c in deck]})
    assert all(any(n in clear for n in _needles(deck[i : i + 5], b"\0" * 32)) for i in (0, 20, 47))


async def test_a_resumed_hand_deals_the_same_cards_and_old_keys_still_open_it(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    table_id = await seed(sessionmaker, ["ann", "bob", "cat"])
    actor = make_actor(table_id, sessionmaker)
    actor.start()
    try:
        for player in ("ann", "bob", "cat"):
            await submit(actor, "sit", player, buy_in=200)
        await play(
            actor,
            lambda: actor.table.hand is not None and len(actor.table.hand.actions) >= 4,
            choose=calling,
        )
        hand = actor.table.hand
        assert hand is not None and not hand.is_over()
        async with sessionmaker() as session:
            live = await live_hand(session, table_id=table_id, seal=SEAL)
            rotated = DeckSeal(DeckSeal.generate().key, old_keys=(SEAL.key,))
            after_rotation = await live_hand(session, table_id=table_id, seal=rotated)
            lost_key = await live_hand(session, table_id=table_id, seal=DeckSeal.generate())
        assert live is not None and after_rotation is not None and lost_key is not None
        assert "server_seed" in live.deck and after_rotation.deck == live.deck
        resumed = dealing.replay(hand.config, actor.table.seats, live)
        assert resumed.cards == hand.cards and resumed.events == hand.events
        assert dealing.deck_of(live).order() == list(hand.deck.cards)
        with pytest.raises(ValueError, match="no deck key"):
            dealing.deck_of(lost_key)  # such a hand is voided on resume, every chip back
    finally:
        await actor.stop()


# ---------------------------------------------------------------------- verification


async def _download(session: AsyncSession, hand_id: int, player: str) -> dict[str, Any] | None:
    """The hand history as ``GET /hands/{id}`` gives it to ``player`` (None: not theirs)."""
    account = await session.scalar(select(Account).where(Account.username == player))
    assert account is not None
    try:
        return (await get_hand(hand_id, account, session)).model_dump(mode="json")
    except UnknownHand:
        return None


async def test_played_stud_deck_1_hands_verify_and_a_tampered_card_or_seed_does_not(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    """Hands of the method before stud-deck/2 (histories kept from then) still verify."""
    players = ["ann", "bob", "cat"]
    table_id = await seed(sessionmaker, players, config={"variant": "razz"})
    actor = make_actor(table_id, sessionmaker, method=fair.METHOD)
    actor.start()
    try:
        for player in players:
            await submit(actor, "sit", player, buy_in=200)
        await play(actor, lambda: actor.hand_number > 6, rng=random.Random(11))
    finally:
        await actor.stop()
    async with sessionmaker() as session:
        ids = (await session.scalars(select(HandRecord.id).order_by(HandRecord.id))).all()
        downloads = [await _download(session, i, p) for i in ids for p in players]
    histories = [h for h in downloads if h is not None]
    assert len(histories) >= 6 * 2  # six hands or more, two players or more in each
    for history in histories:
        verdict = verify(history)
        assert verdict.fair, (verdict.lines, history["number"])
    history = histories[-1]
    down = next(e for e in history["events"] if e["kind"] == "down_cards")
    # The dealer's words of another server version (other wording, a pair said twice) do
    # not make a hand unfair: only the deal and the play are compared.
    reworded = copy.deepcopy(history)
    said = [e for e in reworded["events"] if e["kind"] == "announcement"]
    assert said
    for event in said:
        event["data"]["text"] = "words of another version"
    reworded["events"].insert(reworded["events"].index(said[0]), copy.deepcopy(said[0]))
    assert verify(reworded).fair

    def tampered(change: Any) -> list[str]:
        copied = copy.deepcopy(history)
        change(copied)
        verdict = verify(copied)
        assert not verdict.fair
        return verdict.lines

    def other_card(event: dict[str, Any]) -> None:
        cards = event["data"]["cards"]
        cards[0] = next(c for c in ("As", "Kd", "2c") if c not in cards)

    def swap_card(h: dict[str, Any]) -> None:
        event = next(e for e in h["events"] if e == down)
        other_card(event)

    assert "differs from the derived deck" in tampered(swap_card)[0]

    def other_seed(h: dict[str, Any]) -> None:
        seed_hex = h["fairness"]["server_seed"]
        h["fairness"]["server_seed"] = ("0" if seed_hex[0] != "0" else "1") + seed_hex[1:]

    assert "commitment" in tampered(other_seed)[0]

    def other_client_seed(h: dict[str, Any]) -> None:
        h["fairness"]["client_seeds"] = [{"seat": history["seat"], "seed": "chosen-later"}]

    assert "client seeds" in tampered(other_client_seed)[0]

    def other_client_seed_everywhere(h: dict[str, Any]) -> None:
        other_client_seed(h)
        started = next(e for e in h["events"] if e["kind"] == "hand_started")
        started["data"]["client_seeds"] = h["fairness"]["client_seeds"]

    assert "differs from the derived deck" in tampered(other_client_seed_everywhere)[0]


async def test_a_hand_with_a_turn_played_at_once_verifies(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    """A player sits out during a hand: the table plays their turns at once, untold (no
    ``turn``, the action ``absent``), and the history still replays event for event."""
    players = ["ann", "bob", "cat"]
    table_id = await seed(sessionmaker, players)
    actor = make_actor(table_id, sessionmaker, pause=0.3)
    actor.start()
    try:
        for player in players:
            await submit(actor, "sit", player, buy_in=200)
        await wait_for(lambda: actor.table.hand is not None)
        hand = actor.table.hand
        assert hand is not None
        gone = next(
            s.player
            for n, s in enumerate(actor.table.seats)
            if s is not None and n != hand.seat_to_act()
        )
        await submit(actor, "sit_out", gone, next_hand=False)
        await play(actor, lambda: actor.hand_number > 1, choose=calling)
    finally:
        await actor.stop()
    async with sessionmaker() as session:
        first = await session.scalar(select(HandRecord.id).order_by(HandRecord.id))
        assert first is not None
        histories = [await _download(session, first, p) for p in players]
    absent = 0
    for history in histories:
        assert history is not None
        verdict = verify(history)
        assert verdict.fair, verdict.lines
        told = None
        for event in history["events"]:
            if event["kind"] == "turn":
                told = event["data"]["seat"]
            elif event["kind"] == "action":
                data = event["data"]
                assert (told == data["seat"]) is not bool(data.get("absent")), data
                absent += bool(data.get("absent"))
                told = None
    assert absent == 3, "the player gone: one untold fold, in each player's history"


async def test_a_voided_stud_deck_1_hand_reveals_its_seed_and_verifies(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    players = ["ann", "bob"]
    table_id = await seed(sessionmaker, players)
    async with sessionmaker() as session:
        boss = await registry.register(
            session,
            passwords=PASSWORDS,
            username="boss",
            password="x" * 8,
            role=Role.OPERATOR,
            bankroll=0,
        )
        await session.commit()
    actor = make_actor(table_id, sessionmaker, method=fair.METHOD)
    actor.start()
    try:
        for player in players:
            await submit(actor, "sit", player, buy_in=200)
        await play(
            actor,
            lambda: actor.table.hand is not None and len(actor.table.hand.actions) >= 2,
            choose=calling,
        )
        hand = actor.table.hand
        assert hand is not None and isinstance(hand.deck.fair, fair.FairDeal)
        seed_hex = hand.deck.fair.server_seed.hex()
        number = actor.hand_number
        await actor.submit(commands.VoidHand(player="boss", operator_id=boss.id, reason="misdeal"))
    finally:
        await actor.stop()
    async with sessionmaker() as session:
        hand_id = await session.scalar(
            select(HandRecord.id).where(
                HandRecord.table_id == table_id, HandRecord.number == number
            )
        )
        assert hand_id is not None
        history = await _download(session, hand_id, "ann")
    assert history is not None and history["cancelled"]
    assert history["fairness"]["server_seed"] == seed_hex
    verdict = verify(history)
    assert verdict.fair, verdict.lines


@pytest.mark.parametrize("variant", ["seven_card_stud_hi_lo", "razz"])
async def test_stud_deck_2_hands_verify_from_each_players_history_and_voids_reveal_nothing(
    sessionmaker: async_sessionmaker[AsyncSession], variant: str
) -> None:
    players = ["ann", "bob", "cat", "dan", "eve"]
    table_id = await seed(sessionmaker, players, config={"variant": variant})
    async with sessionmaker() as session:
        boss = await registry.register(
            session,
            passwords=PASSWORDS,
            username="boss",
            password="x" * 8,
            role=Role.OPERATOR,
            bankroll=0,
        )
        await session.commit()
    actor = make_actor(table_id, sessionmaker)
    actor.start()
    try:
        for player in players:
            await submit(actor, "sit", player, buy_in=200)
        await play(actor, lambda: actor.hand_number > 8, rng=random.Random(3))
        await play(
            actor,
            lambda: actor.table.hand is not None and len(actor.table.hand.actions) >= 3,
            choose=calling,
        )
        voided = actor.hand_number
        await actor.submit(commands.VoidHand(player="boss", operator_id=boss.id, reason="misdeal"))
    finally:
        await actor.stop()
    async with sessionmaker() as session:
        ids = (await session.scalars(select(HandRecord.id).order_by(HandRecord.id))).all()
        downloads = [await _download(session, i, p) for i in ids for p in players]
    histories = [h for h in downloads if h is not None]
    assert len(histories) >= 8 * 2
    for history in histories:
        assert history["fairness"]["method"] == "stud-deck/2"
        assert history["fairness"]["server_seed"] is None
        assert "server_seed" not in json.dumps(history["events"])
        verdict = verify(history)
        assert verdict.fair, (verdict.lines, history["number"], history["seat"])
    void = [h for h in histories if h["number"] == voided]
    assert void and all(h["cancelled"] for h in void)
    assert [e["kind"] for e in void[0]["events"]][-1] == "hand_cancelled"


def test_every_seat_of_random_stud_deck_2_hands_verifies_short_decks_and_mucks_included() -> None:
    """Random hands of each variant at 2 to 8 seats, checked from every seat's view: every
    one verifies, among them hands whose deck ran short (burns scrambled back in by the
    public stream) and showdowns where a hand was mucked (its cards never opened)."""
    from engine.actions import Action
    from engine.hand import Hand
    from engine.variants import TableConfig, find_variant
    from engine.views import visible_events
    from server.store.table_config import config_to_json

    kinds: set[str] = set()
    for n in range(45):
        variant = ("seven_card_stud", "razz", "seven_card_stud_hi_lo")[n % 3]
        seats = 2 + n % 7
        config = TableConfig(variant=find_variant(variant), ante=1, bring_in=2)
        seeds = ((0, "a"), (1, f"b{n}"))
        committed = fair2.CommittedDeck(bytes([n]) * 32, table_id=7, number=n + 1)
        hand = Hand(config, [(s, 400) for s in range(seats)], committed.deal(seeds).deck())
        rng = random.Random(n)
        while not hand.is_over():
            legal = hand.legal_actions()
            assert legal.seat is not None
            kind = rng.choice([k for k in legal.kinds if k != "fold" or rng.random() < 0.2])
            amount = legal.min_to if kind in ("complete", "bet", "raise") else None
            hand.apply(Action(legal.seat, kind, amount))
        kinds |= {e.kind for e in hand.events}
        proof = {
            "method": fair2.METHOD,
            "table_id": 7,
            "hand": n + 1,
            "commitment": committed.commitment,
            "client_seeds": [{"seat": s, "seed": v} for s, v in seeds],
            "config": config_to_json(config),
        }
        for seat in hand.seats:
            events = [e.record() for e in visible_events(hand.events, seat)]
            verdict = verify({"seat": seat, "events": events, "fairness": proof})
            assert verdict.fair, (n, seat, verdict.lines)
    assert {"deck_procedure", "muck", "showdown"} <= kinds
