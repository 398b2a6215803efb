"""A turn keeps its name (``TableView.turn_seq``) through a snapshot that shows that very
turn, so a bot thinking on it while its table resyncs acts on it and counts no missed turn;
a turn the client missed while its events were lost is a new one after the snapshot.
Against a real server (a subprocess on a free port, SQLite)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping
from typing import Any

import orjson
import pytest
from live_server import MakePlayer, OpenTable

from stud_bots import passive
from stud_bots.runner import Options, _play
from stud_bots.seats import Run, Seat
from stud_client import Action, LegalActions, StudClient, Table, TableEvent, TableView

TIMEOUT = 30.0


def told(view: TableView) -> bool:
    """A turn is out and its clock after it: the table's seq is past the turn's."""
    return (
        view.legal is not None
        and view.turn_seq is not None
        and view.clock is not None
        and view.clock.seat == view.legal.seat
        and view.seq > view.turn_seq
    )


class Gate:
    """A client's ``drop_frame``: while shut, holds the table's events back (as a stalled
    network would), to be handed on later, in their order."""

    def __init__(self) -> None:
        self.shut = False
        self.held: list[Mapping[str, Any]] = []
        self.client: StudClient | None = None

    def __call__(self, frame: Mapping[str, Any]) -> bool:
        if self.shut and frame.get("type") == "event":
            self.held.append(frame)
            return True
        return False

    def open(self) -> None:
        assert self.client is not None
        self.shut = False
        held, self.held = self.held, []
        for frame in held:
            self.client._on_text(orjson.dumps(frame))


async def gated_seat(make_player: MakePlayer, table_id: int) -> tuple[Table, Gate]:
    gate = Gate()
    gate.client = await make_player(drop_frame=gate)
    table = await gate.client.watch(table_id)
    await table.sit(200)
    return table, gate


@pytest.mark.parametrize("variant", ["seven_card_stud", "razz", "five_card_stud_hi_lo"])
async def test_a_snapshot_of_my_turn_is_the_same_turn(
    make_player: MakePlayer, open_table: OpenTable, variant: str
) -> None:
    """A seat resyncs on each of its turns of a hand: each stays the turn it was, and every
    turn of the hand has a name of its own."""
    table_id = await open_table(variant=variant)
    tables = [await seated(make_player, table_id), await seated(make_player, table_id)]
    first = await tables[0].wait_for(lambda v: v.hand_number is not None, TIMEOUT)
    names: list[int] = []
    while (view := await _next_turn(tables, names, first.hand_number)) is not None:
        table = tables[0] if view.you == tables[0].seat else tables[1]
        assert view.turn_seq is not None
        again = await table.resync()
        assert again.seq > view.turn_seq  # the snapshot's seq is the clock's, not the turn's
        assert again.my_turn and again.legal == view.legal
        assert again.turn_seq == view.turn_seq
        names.append(view.turn_seq)
        assert again.legal is not None
        await table.act(passive(again.legal))
    assert len(names) >= 4 and len(set(names)) == len(names)


async def seated(make_player: MakePlayer, table_id: int) -> Table:
    table = await (await make_player()).watch(table_id)
    await table.sit(200)
    return table


async def _next_turn(tables: list[Table], named: list[int], hand: int | None) -> TableView | None:
    """The next turn of the hand, told with its clock, as its seat sees it; None once the
    hand is over."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            for table in tables:
                view = table.view
                if view.hand_number is None or view.hand_number < (hand or 0):
                    continue  # this seat's picture has not come to the hand yet
                if view.hand_number != hand or view.hand_over:
                    return None
                if view.my_turn and told(view) and view.turn_seq not in named:
                    return view
            await asyncio.sleep(0.01)


async def test_a_turn_missed_while_the_events_were_held_back_is_new_after_the_snapshot(
    make_player: MakePlayer, open_table: OpenTable
) -> None:
    """The seat that brings it in does so, and its events stop coming; the other seat
    completes, so the same seat is to act again on the same street of the same hand. Its
    picture still shows its bring-in turn as its own; the snapshot shows a new turn."""
    table_id = await open_table(variant="seven_card_stud")
    ann, ann_gate = await gated_seat(make_player, table_id)
    bob, bob_gate = await gated_seat(make_player, table_id)
    view = await _first_turn([ann, bob])
    bringer, gate, other = (ann, ann_gate, bob) if view.you == ann.seat else (bob, bob_gate, ann)
    assert view.legal is not None and "bring_in" in view.legal.kinds
    gate.shut = True
    await bringer.act(Action("bring_in"))
    turn = await other.wait_for(lambda v: v.my_turn and told(v), TIMEOUT)
    assert turn.legal is not None and turn.legal.wager == "complete"
    await other.act(Action("complete", turn.legal.min_to))
    await other.wait_for(lambda v: v.to_act == bringer.seat and told(v), TIMEOUT)

    held_back = bringer.view
    assert held_back.my_turn and held_back.turn_seq == view.turn_seq  # its bring-in turn
    fresh = await bringer.resync()
    gate.open()
    assert (fresh.hand_number, fresh.street) == (held_back.hand_number, held_back.street)
    assert fresh.my_turn and fresh.legal != held_back.legal
    assert fresh.turn_seq is not None and fresh.turn_seq != held_back.turn_seq
    assert fresh.legal is not None
    await bringer.act(passive(fresh.legal))  # the turn is its own: the table takes it


async def _first_turn(tables: list[Table]) -> TableView:
    async with asyncio.timeout(TIMEOUT):
        while True:
            for table in tables:
                if table.view.my_turn and told(table.view):
                    return table.view
            await asyncio.sleep(0.01)


class ResyncedWhileThinking:
    """Decides as ``passive`` does; while it decides, the snapshot it was given (of the
    turn it is deciding) reaches its client, as a resync's answer would."""

    def __init__(self, client: StudClient) -> None:
        self.client = client
        self.snapshots: list[Mapping[str, Any]] = []
        self.turns: list[tuple[int | None, int]] = []  # (the turn, the seq) decided at

    def decide(self, view: TableView, legal: LegalActions) -> Action:
        self.turns.append((view.turn_seq, view.seq))
        if self.snapshots:
            reply = {"type": "reply", "id": 0, "result": self.snapshots.pop()}
            self.client._on_text(orjson.dumps(reply))
        return passive(legal)


async def test_a_bot_acts_on_its_turn_when_a_snapshot_of_it_comes_while_it_thinks(
    make_player: MakePlayer, open_table: OpenTable
) -> None:
    """The bot's turn is held back until a snapshot of it is in hand (the same player's
    second connection watches the table), then handed on; the snapshot reaches the bot's
    client while the bot decides. The bot acts on its turn, once, and misses none."""
    table_id = await open_table(variant="razz")
    gate = Gate()
    client = gate.client = await make_player(drop_frame=gate)
    bob = await (await make_player()).watch(table_id)
    table = await client.watch(table_id)
    info = next(t for t in await client.tables() if t.id == table_id)
    bot = ResyncedWhileThinking(client)
    assert client.player is not None
    seat = Seat(client.player, "passive", bot, client, info, 200, random.Random(1), table=table)
    playing = asyncio.create_task(_play(seat, Run(Options(server=client.base_url))))
    try:
        await table.wait_for(lambda v: v.me is not None, TIMEOUT)
        gate.shut = True  # from here on, the bot sees nothing until its turn is out
        await bob.sit(200)
        view = await bob.wait_for(told, TIMEOUT)
        while view.to_act != table.seat:  # bob checks, calls or brings it in meanwhile
            assert view.legal is not None
            await bob.act(passive(view.legal))
            view = await bob.wait_for(_told_after(view), TIMEOUT)
        assert bot.turns == [] and table.view.hand_number is None  # it saw nothing yet
        snapshots: list[Mapping[str, Any]] = []
        twin = StudClient(client.base_url, token=client.token, drop_frame=snapshots_to(snapshots))
        try:
            await twin.connect()
            await twin.watch(table_id)
        finally:
            await twin.close()
        assert [s["seq"] > (view.turn_seq or 0) for s in snapshots] == [True]
        bot.snapshots.extend(snapshots)

        seen = bob.events()
        gate.open()
        async with asyncio.timeout(TIMEOUT):
            acted = await anext(e async for e in seen if _acted(e, table.seat))
        await seen.aclose()
        assert [turn for turn, seq in bot.turns if seq < acted.seq] == [view.turn_seq]
        assert seat.errors == {} and client.stats.errors == {}
        assert client.stats.resyncs == 1 and not bot.snapshots
    finally:
        # A cancel can be lost (Python 3.11's asyncio.wait_for, when the reply it waits
        # for comes at the same moment): cancel until the bot is done.
        while not playing.done():
            playing.cancel()
            await asyncio.wait([playing], timeout=0.1)


def snapshots_to(caught: list[Mapping[str, Any]]) -> Callable[[Mapping[str, Any]], bool]:
    """A ``drop_frame`` that drops nothing: it keeps each snapshot the client is sent."""

    def catch(frame: Mapping[str, Any]) -> bool:
        result = frame.get("result")
        if (
            frame.get("type") == "reply"
            and isinstance(result, dict)
            and result.get("type") == "snapshot"
        ):
            caught.append(result)
        return False

    return catch


def _told_after(turn: TableView) -> Callable[[TableView], bool]:
    return lambda view: told(view) and view.turn_seq != turn.turn_seq


def _acted(event: TableEvent, seat: int | None) -> bool:
    return event.kind == "action" and event.data["seat"] == seat
