"""A tournament's table as its director drives it (server.table.director_commands): players
seated with their tournament chips and taken away between their hands, a level's stakes from
the next hand, one hand dealt per permit (a resent permit deals nothing), leaving sits the
player out and they are blinded off until out; every refusal with its code. The table actor
on the in-memory store; the database and a restart are tests/server/store's."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from typing import Any

import pytest
from play import play, submit, wait_for

from engine.actions import Action
from engine.hand import Hand
from engine.variants import TableConfig
from engine.views import visible_events
from server.bus.memory import MemoryBus, Subscription, table_channel
from server.store.table_config import config_to_json
from server.table import commands as cmd
from server.table.actor import TableActor
from server.table.ports import CommandRefused, TableSettings
from server.verify import verify
from tests.server.fakes import MemoryTableStore

TOURNEY = TableConfig(absent_hands="killed_after_starting_hands")  # ante 1, bring-in 2, 5/10
EVENT = 3  # the tournament

SETTINGS = TableSettings(
    min_buy_in=1,
    max_buy_in=1,
    action_clock=5.0,
    time_bank=0.0,
    pause_between_hands=0.0,
    sit_out_limit=0.05,  # a cash table would remove a player sitting out this long
)


def tournament_table(table_id: int = 7, seed: int = 1, **settings: Any) -> TableActor:
    rng = random.Random(seed)
    return TableActor(
        table_id,
        TOURNEY,
        bus=MemoryBus(),
        store=MemoryTableStore(),
        settings=dataclasses.replace(SETTINGS, **settings),
        rng_factory=lambda: random.Random(rng.random()),
        tournament_id=EVENT,
    )


def memory(actor: TableActor) -> MemoryTableStore:
    store = actor.store
    assert isinstance(store, MemoryTableStore)
    return store


async def seat(
    actor: TableActor, player: str, number: int, stack: int, **fields: Any
) -> dict[str, Any]:
    command = cmd.SeatEntrant(
        player=player, tournament_id=EVENT, seat=number, stack=stack, **fields
    )
    return await actor.submit(command)


async def permit(actor: TableActor, number: int) -> dict[str, Any]:
    return await actor.submit(cmd.DealNext(tournament_id=EVENT, number=number))


async def give_up(actor: TableActor, player: str) -> dict[str, Any]:
    return await actor.submit(cmd.GiveUpPlayer(player=player, tournament_id=EVENT))


async def stakes(actor: TableActor, ante: int, bring_in: int, small: int) -> dict[str, Any]:
    command = cmd.SetStakes(
        tournament_id=EVENT, ante=ante, bring_in=bring_in, small_bet=small, big_bet=2 * small
    )
    return await actor.submit(command)


async def deal_and_play(actor: TableActor) -> int:
    """Permit the table's next hand and play it out; its number."""
    number = actor.hand_number + 1
    assert await permit(actor, number) == {"hand": number, "dealt": False}
    await play(actor, lambda: actor.hand_number == number and actor.table.hand is None)
    return number


def drain(subscription: Subscription) -> list[dict[str, Any]]:
    out = []
    while not subscription.queue.empty():
        message = subscription.queue.get_nowait()
        if message is not None:
            out.append(message)
    return out


def of_kind(messages: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [m["data"] for m in messages if m["kind"] == kind]


def chips(*actors: TableActor) -> dict[str, int]:
    return {
        s.player: s.stack + s.pending_chips
        for actor in actors
        for s in actor.table.seats
        if s is not None
    }


async def refused(actor: TableActor, command: cmd.TableCommand) -> str:
    with pytest.raises(CommandRefused) as refusal:
        await actor.submit(command)
    return str(refusal.value.code)


async def test_a_tournament_table_deals_one_hand_per_permit_and_none_without() -> None:
    actor = tournament_table()
    public = actor.bus.subscribe(table_channel(7))
    actor.start()
    try:
        for n, player in enumerate(("ann", "bob", "cat")):
            assert await seat(actor, player, n, 300) == {
                "seat": n,
                "stack": 300,
                "sitting_out": False,
            }
        await asyncio.sleep(0.05)
        assert actor.hand_number == 0 and actor.table.hand is None, "no permit, no hand"
        assert await permit(actor, 1) == {"hand": 1, "dealt": False}
        await wait_for(lambda: actor.hand_number == 1)
        assert await permit(actor, 1) == {"hand": 1, "dealt": True}, "resent: dealt once"
        await play(actor, lambda: actor.table.hand is None)
        await asyncio.sleep(0.05)
        assert actor.hand_number == 1 and actor.table.hand is None, "hand 2 waits for its permit"
        assert await refused(actor, cmd.DealNext(tournament_id=EVENT, number=3)) == "not_next_hand"
        assert await deal_and_play(actor) == 2
        # A permit during a hand: the next is dealt as it ends, and no other.
        assert await permit(actor, 3) == {"hand": 3, "dealt": False}
        await wait_for(lambda: actor.hand_number == 3)
        assert await permit(actor, 4) == {"hand": 4, "dealt": False}
        await play(actor, lambda: actor.hand_number == 4 and actor.table.hand is None)
        await asyncio.sleep(0.05)
        assert actor.hand_number == 4
        assert await permit(actor, 2) == {"hand": 2, "dealt": True}, "an old permit deals nothing"
    finally:
        await actor.stop()
    store = memory(actor)
    assert [h.number for h in store.hands] == [1, 2, 3, 4]
    assert len(of_kind(drain(public), "hand_started")) == 4
    assert store.tables[7] == {"permitted_hand": 4}, "each permit written once"
    assert sum(chips(actor).values()) == 900
    assert store.wallets == {}, "tournament chips touch no wallet"


async def test_a_level_s_stakes_take_effect_at_the_next_hand_only() -> None:
    actor = tournament_table()
    public = actor.bus.subscribe(table_channel(7))
    actor.start()
    try:
        for n, player in enumerate(("ann", "bob", "cat")):
            await seat(actor, player, n, 300)
        await permit(actor, 1)
        await wait_for(lambda: actor.table.hand is not None)
        first = actor.table.hand
        assert first is not None
        drain(public)
        assert await stakes(actor, 2, 3, 6) == {"after_hand": True}
        assert first.config.ante == 1 and first.legal_actions().bring_in == 2
        told = of_kind(drain(public), "table_settings")
        assert [t["stakes"]["ante"] for t in told] == [2]
        written = memory(actor).tables[7]["config"]
        assert (written["ante"], written["bring_in"], written["small_bet"]) == (2, 3, 6)
        await play(actor, lambda: actor.table.hand is None)
        assert [e.data["amount"] for e in first.events if e.kind == "ante"] == [1, 1, 1]
        await permit(actor, 2)
        await wait_for(lambda: actor.hand_number == 2)
        second = actor.table.hand
        assert second is not None
        assert [e.data["amount"] for e in second.events if e.kind == "ante"] == [2, 2, 2]
        # Stakes no hand can be played at: refused, nothing written or changed.
        assert await refused(actor, cmd.SetStakes(**_level(2, 7, 6))) == "bad_config"
        assert memory(actor).tables[7]["config"] == written
        assert actor.table.config.bring_in == 3
    finally:
        await actor.stop()


def _level(ante: int, bring_in: int, small: int) -> dict[str, Any]:
    return {
        "tournament_id": EVENT,
        "ante": ante,
        "bring_in": bring_in,
        "small_bet": small,
        "big_bet": 2 * small,
    }


async def test_players_are_given_up_between_their_hands_and_seated_elsewhere() -> None:
    actor, other = tournament_table(7), tournament_table(8)
    public = actor.bus.subscribe(table_channel(7))
    actor.start()
    other.start()
    try:
        for n, player in enumerate(("ann", "bob", "cat")):
            await seat(actor, player, n, 300)
        await permit(actor, 1)
        await wait_for(lambda: actor.table.hand is not None)
        hand = actor.table.hand
        assert hand is not None
        # Seated during a hand: not in it (never two hands at once), free to move on.
        assert await seat(actor, "dan", 5, 250, sitting_out=True) == {
            "seat": 5,
            "stack": 250,
            "sitting_out": True,
        }
        assert 5 not in hand.seats
        assert await refused(actor, cmd.GiveUpPlayer(player="ann", tournament_id=EVENT)) == (
            "hand_in_progress"
        )
        assert actor.table.seat_of("ann") == 0 and (7, "ann") in memory(actor).at_table
        moved = await give_up(actor, "dan")
        assert moved == {"player": "dan", "seat": 5, "chips": 250, "sitting_out": True}
        await seat(other, moved["player"], 0, moved["chips"], sitting_out=moved["sitting_out"])
        await play(actor, lambda: actor.table.hand is None)
        ann = chips(actor)["ann"]
        assert await give_up(actor, "ann") == {
            "player": "ann",
            "seat": 0,
            "chips": ann,
            "sitting_out": False,
        }
        await seat(other, "ann", 1, ann)
    finally:
        await actor.stop()
        await other.stop()
    left = of_kind(drain(public), "seat_left")
    assert [(e["player"], e["cashed_out"], e["removed"]) for e in left] == [
        ("dan", 250, "moved"),
        ("ann", ann, "moved"),
    ]
    assert sum(chips(actor, other).values()) == 900 + 250, "every chip is on one table"
    assert set(chips(other)) == {"ann", "dan"} and other.table.seats[0].sitting_out  # type: ignore[union-attr]
    assert (7, "ann") not in memory(actor).at_table and memory(other).at_table[8, "ann"] == ann
    assert memory(actor).wallets == {} and memory(other).wallets == {}


async def test_chips_bought_are_added_between_the_player_s_hands_once() -> None:
    """A rebuy's or an add-on's chips: added between the player's hands and written to the
    seat; a resent command finds the stack made and adds nothing; during the player's hand,
    or to a stack other than the director's, refused with nothing changed."""
    actor = tournament_table()
    public = actor.bus.subscribe(table_channel(7))
    actor.start()
    try:
        for n, player in enumerate(("ann", "bob", "cat")):
            await seat(actor, player, n, 300)
        add = cmd.AddEntrantChips(player="ann", tournament_id=EVENT, chips=300, stack=600)
        assert await actor.submit(add) == {"seat": 0, "stack": 600, "added": True}
        assert await actor.submit(add) == {"seat": 0, "stack": 600, "added": False}
        assert chips(actor)["ann"] == 600 and memory(actor).at_table[7, "ann"] == 600
        await permit(actor, 1)
        await wait_for(lambda: actor.table.hand is not None)
        bob = cmd.AddEntrantChips(player="bob", tournament_id=EVENT, chips=300, stack=600)
        assert await refused(actor, bob) == "hand_in_progress"
        wrong = cmd.AddEntrantChips(player="cat", tournament_id=EVENT, chips=300, stack=1000)
        assert await refused(actor, wrong) == "bad_amount"
        assert chips(actor)["bob"] == 300 and memory(actor).at_table[7, "bob"] == 300
        await play(actor, lambda: actor.table.hand is None)
    finally:
        await actor.stop()
    added = of_kind(drain(public), "chips_added")
    assert [(e["seat"], e["amount"], e["after_hand"]) for e in added] == [(0, 300, False)]
    assert sum(chips(actor).values()) == 1200 and memory(actor).wallets == {}


async def test_a_player_who_leaves_is_blinded_off_until_out() -> None:
    """No leaving with chips: the player sits out, dealt every hand, their ante (and a
    bring-in when theirs) posted and their hand killed at the deal, until they are out; the
    sit-out limit does not remove them, and their seat is the director's to free."""
    actor = tournament_table()
    public = actor.bus.subscribe(table_channel(7))
    actor.start()
    try:
        for n, (player, stack) in enumerate((("ann", 500), ("bob", 500), ("cat", 6))):
            await seat(actor, player, n, stack)
        assert await submit(actor, "leave", "cat") == {"seat": 2, "sitting_out": True}
        cat = actor.table.seats[2]
        assert cat is not None and cat.sitting_out and not cat.leaving
        hands = 0
        while cat.stack:
            before = cat.stack
            await deal_and_play(actor)
            hands += 1
            assert cat.stack < before
        await asyncio.sleep(0.1)  # twice the sit-out limit
        assert actor.table.seats[2] is cat and cat.stack == 0
        assert actor.table.busts == [(2, "cat", before)]
    finally:
        await actor.stop()
    messages = drain(public)
    started = of_kind(messages, "hand_started")
    assert hands >= 2 and len(started) == hands
    assert all(s["absent"] == [2] for s in started)
    for action in (a for a in of_kind(messages, "action") if a["seat"] == 2):
        assert action["absent"] is True and action["action"] in ("bring_in", "fold")
    assert sum(chips(actor).values()) == 1006
    assert memory(actor).wallets == {}, "nobody cashed out"


async def test_heads_up_against_a_player_away_the_hand_ends_at_the_deal() -> None:
    actor = tournament_table()
    actor.start()
    try:
        await seat(actor, "ann", 0, 100)
        await seat(actor, "bob", 1, 100, sitting_out=True)
        await permit(actor, 1)
        await wait_for(lambda: len(memory(actor).hands) == 1)
        assert actor.table.hand is None and actor.hand_number == 1
    finally:
        await actor.stop()
    (hand,) = memory(actor).hands
    assert not hand.cancelled and hand.stacks["bob"] < 100
    assert hand.stacks["ann"] + hand.stacks["bob"] == 200


async def test_an_operator_s_kick_sits_a_tournament_player_out() -> None:
    actor = tournament_table()
    actor.start()
    try:
        await seat(actor, "ann", 0, 100)
        await seat(actor, "bob", 1, 100)
        reply = await actor.submit(cmd.Remove(player="ann", cause="kicked"))
        assert reply == {"seat": 0, "sitting_out": True}
        ann = actor.table.seats[0]
        assert ann is not None and ann.sitting_out and ann.stack == 100
    finally:
        await actor.stop()
    assert memory(actor).at_table[7, "ann"] == 100 and memory(actor).wallets == {}


async def test_every_refusal_has_its_code_and_changes_nothing() -> None:
    actor = tournament_table()
    cash = TableActor(9, TableConfig(), bus=MemoryBus(), store=MemoryTableStore())
    actor.start()
    cash.start()
    try:
        await seat(actor, "ann", 0, 100)
        await seat(actor, "bob", 1, 100)
        before = (chips(actor), dict(memory(actor).at_table))
        operator = {"player": "boss", "operator_id": 1}
        cases: list[tuple[TableActor, cmd.TableCommand, str]] = [
            (actor, cmd.Sit(player="cat", buy_in=100), "tournament_table"),
            (actor, cmd.AddChips(player="ann", amount=10), "tournament_table"),
            (actor, cmd.JoinWaitingList(player="cat"), "tournament_table"),
            (actor, cmd.ChangeSettings(**operator, settings={"seats": 8}), "tournament_table"),
            (actor, cmd.VoidHand(**operator), "tournament_table"),
            (actor, cmd.CloseTable(**operator), "tournament_table"),
            (actor, cmd.DealNext(tournament_id=EVENT + 1, number=1), "tournament_table"),
            (cash, cmd.DealNext(tournament_id=EVENT, number=1), "tournament_table"),
            (
                cash,
                cmd.SeatEntrant(player="cat", tournament_id=EVENT, seat=0, stack=9),
                ("tournament_table"),
            ),
            (
                actor,
                cmd.SeatEntrant(player="cat", tournament_id=EVENT, seat=0, stack=9),
                ("seat_taken"),
            ),
            (
                actor,
                cmd.SeatEntrant(player="ann", tournament_id=EVENT, seat=4, stack=9),
                ("already_seated"),
            ),
            (
                actor,
                cmd.SeatEntrant(player="cat", tournament_id=EVENT, seat=4, stack=0),
                ("bad_amount"),
            ),
            (
                actor,
                cmd.SeatEntrant(player="cat", tournament_id=EVENT, seat=99, stack=9),
                ("bad_seat"),
            ),
            (actor, cmd.GiveUpPlayer(player="cat", tournament_id=EVENT), "not_seated"),
            (actor, cmd.SetStakes(**_level(1, 20, 10)), "bad_config"),
        ]
        for table, command, code in cases:
            assert await refused(table, command) == code, command
        assert (chips(actor), dict(memory(actor).at_table)) == before
        assert memory(actor).tables == {} and actor.hand_number == 0
        assert cash.table.seats == [None] * len(cash.table.seats)
    finally:
        await actor.stop()
        await cash.stop()


async def test_the_snapshot_names_the_tournament_and_a_cash_table_s_does_not() -> None:
    actor = tournament_table()
    cash = TableActor(9, TableConfig(), bus=MemoryBus(), store=MemoryTableStore())
    assert actor.snapshot(None)["tournament_id"] == EVENT
    assert "tournament_id" not in cash.snapshot(None)


@pytest.mark.parametrize(
    "command",
    [
        cmd.SeatEntrant(player="ann", tournament_id=3, seat=2, stack=1500, sitting_out=True),
        cmd.GiveUpPlayer(player="ann", tournament_id=3),
        cmd.SetStakes(tournament_id=3, ante=5, bring_in=10, small_bet=20, big_bet=40),
        cmd.DealNext(tournament_id=3, number=12),
        cmd.AddEntrantChips(player="ann", tournament_id=3, chips=1500, stack=2400),
    ],
)
def test_a_director_s_command_travels_between_nodes_and_never_from_a_websocket(
    command: cmd.TableCommand,
) -> None:
    assert cmd.decode(cmd.encode(command)) == command
    with pytest.raises(CommandRefused) as refusal:
        cmd.parse(command.name, "ann", cmd.encode(command))
    assert refusal.value.code == "unknown_command"


def test_a_hand_with_players_away_verifies_from_every_seat() -> None:
    """stud-verify deals a tournament hand again with the seats away at the deal, and does not
    play twice the actions the deal made itself (each killed hand's fold, an absent
    bring-in)."""
    from engine import fair2

    verified = 0
    for n in range(24):
        seats = 2 + n % 6
        away = {s for s in range(seats) if (n >> s) & 1} - {n % seats}
        committed = fair2.CommittedDeck(bytes([n + 1]) * 32, table_id=7, number=n + 1)
        deal = committed.deal(((0, f"s{n}"),))
        hand = Hand(TOURNEY, [(s, 40 + 7 * s) for s in range(seats)], deal.deck(), absent=away)
        rng = random.Random(n)
        while not hand.is_over():
            legal = hand.legal_actions()
            assert legal.seat is not None
            kind = rng.choice([k for k in legal.kinds if k != "fold" or rng.random() < 0.2])
            amount = legal.min_to if kind in ("complete", "bet", "raise") else None
            hand.apply(Action(legal.seat, kind, amount))
        proof = {
            "method": fair2.METHOD,
            "table_id": 7,
            "hand": n + 1,
            "commitment": committed.commitment,
            "client_seeds": [{"seat": 0, "seed": f"s{n}"}],
            "config": config_to_json(TOURNEY),
        }
        for number in hand.seats:
            events = [e.record() for e in visible_events(hand.events, number)]
            verdict = verify({"seat": number, "events": events, "fairness": proof})
            assert verdict.fair, (n, number, verdict.lines)
            verified += 1
        # A record whose absent seats were left out does not verify.
        if away:
            events = [e.record() for e in visible_events(hand.events, hand.seats[0])]
            events[0]["data"].pop("absent")
            assert not verify({"seat": hand.seats[0], "events": events, "fairness": proof}).fair
    assert verified > 60
