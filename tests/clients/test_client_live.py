"""The client library against a real server (a subprocess on a free port, SQLite): the view
a seat gets, reconnecting after the socket is cut, resyncing after a lost frame, and an
action sent twice under one action id acting once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from live_server import PASSWORD, LiveServer, MakePlayer, OpenTable

from stud_bots import passive
from stud_client import EventStream, ServerError, StudClient, Table, TableEvent, TableView

TIMEOUT = 30.0


async def seat_two(
    make_player: MakePlayer, table_id: int, **ann_options: object
) -> tuple[StudClient, StudClient, Table, Table]:
    ann = await make_player(**ann_options)
    bob = await make_player()
    ann_table = await ann.watch(table_id)
    bob_table = await bob.watch(table_id)
    await ann_table.sit(200)
    await bob_table.sit(200)
    return ann, bob, ann_table, bob_table


async def play_passively(
    tables: list[Table], done: Callable[[], bool], timeout: float = TIMEOUT
) -> None:
    """Each seat checks, calls or posts the bring-in on its turns until ``done()``."""

    async def seat(table: Table) -> None:
        acted: int | None = None

        def ready(view: TableView) -> bool:
            return done() or (view.my_turn and view.turn_seq != acted)

        while not done():
            view = await table.wait_for(ready, timeout)
            if done():
                return
            acted = view.turn_seq
            assert view.legal is not None
            try:
                await table.act(passive(view.legal))
            except ServerError as refusal:
                assert refusal.code == "not_your_turn", refusal  # the other seat's clock ran

    async with asyncio.timeout(timeout):
        await asyncio.gather(*(seat(t) for t in tables))


def hands_over(table: Table, count: int) -> Callable[[], bool]:
    """True once ``count`` hands have ended at the table (as its view shows)."""
    first = table.view.hand_number or 0

    def done() -> bool:
        view = table.view
        number = view.hand_number or 0
        return number - first > count or (number - first == count and view.hand_over)

    return done


async def drain(stream: EventStream) -> list[TableEvent]:
    """The events a stream holds now."""
    events = []
    while True:
        try:
            events.append(await asyncio.wait_for(anext(stream), 0.05))
        except TimeoutError:
            await stream.aclose()
            return events


def public(view: TableView) -> tuple[object, ...]:
    """What every seat sees alike."""
    return (
        view.seq,
        view.hand_number,
        view.street,
        view.pot,
        view.to_act,
        view.legal,
        tuple((s.player, s.stack, s.bet, s.up, s.down_count, s.folded) for s in view.seats),
    )


async def test_a_seat_sees_its_cards_and_only_its_cards(
    make_player: MakePlayer, open_table: OpenTable
) -> None:
    table_id = await open_table()
    lobby = await (await make_player()).tables()
    assert table_id in [t.id for t in lobby]
    ann, bob, ann_table, bob_table = await seat_two(make_player, table_id)
    view = await ann_table.wait_for(
        lambda v: v.street == "third" and v.legal is not None and v.clock is not None, TIMEOUT
    )
    me, other = view.me, view.seats[1 - (view.you or 0)]
    assert me is not None and me.player == ann.player
    assert len(me.down) == 2 and len(me.up) == 1 and me.in_hand
    assert other.down == () and other.down_count == 2 and len(other.up) == 1
    assert view.pot == 2 and view.stakes.ante == 1 and view.variant == "seven_card_stud"
    assert view.legal is not None and view.legal.kinds[0] == "bring_in"
    assert view.clock is not None and 0 < view.clock.remaining() <= 5
    assert view.my_cards == me.down + me.up
    # bob's picture of ann's seat: her upcard, no down card
    bob_view = await bob_table.wait_for(lambda v: v.seq >= view.seq, TIMEOUT)
    assert bob_view.seats[view.you or 0].up == me.up
    assert bob_view.seats[view.you or 0].down == ()
    stream = ann_table.events()
    await play_passively([ann_table, bob_table], hands_over(ann_table, 1))
    kinds = [event.kind for event in await drain(stream)]
    assert "pot_awarded" in kinds and "hand_ended" in kinds
    assert ann.stats.errors == {} and bob.stats.errors == {}


async def test_reconnects_after_the_socket_is_cut(
    make_player: MakePlayer, open_table: OpenTable
) -> None:
    table_id = await open_table(variant="razz")
    ann, bob, ann_table, bob_table = await seat_two(make_player, table_id)
    await play_passively([ann_table, bob_table], hands_over(ann_table, 1))
    hand = ann_table.view.hand_number
    await ann.drop_connection()
    # the reconnect signs in again and resyncs: ann's picture catches up with bob's
    await ann_table.wait_for(lambda v: ann.stats.reconnects == 1, TIMEOUT)
    await play_passively([ann_table, bob_table], hands_over(bob_table, 2))
    assert (ann_table.view.hand_number or 0) > (hand or 0)
    await ann_table.wait_for(lambda v: public(v) == public(bob_table.view), TIMEOUT)
    assert ann.stats.resyncs >= 1 and ann.stats.gaps == 0
    assert ann.stats.errors == {} and bob.stats.errors == {}


async def test_resyncs_after_a_lost_frame(make_player: MakePlayer, open_table: OpenTable) -> None:
    table_id = await open_table(variant="seven_card_stud_hi_lo")
    armed: list[bool] = []
    lost: list[int] = []

    def lose_one(frame: object) -> bool:
        assert isinstance(frame, dict)
        if armed and frame.get("type") == "event" and not frame.get("private"):
            armed.clear()
            lost.append(frame["seq"])
            return True
        return False

    ann, bob, ann_table, bob_table = await seat_two(make_player, table_id, drop_frame=lose_one)
    await ann_table.wait_for(lambda v: v.legal is not None, TIMEOUT)
    armed.append(True)
    await play_passively([ann_table, bob_table], hands_over(bob_table, 2))
    assert lost and ann.stats.gaps == 1 and ann.stats.resyncs >= 1
    await ann_table.wait_for(lambda v: public(v) == public(bob_table.view), TIMEOUT)
    assert ann.stats.errors == {} and bob.stats.errors == {}


async def test_an_action_sent_twice_acts_once(
    make_player: MakePlayer, open_table: OpenTable
) -> None:
    table_id = await open_table(variant="five_card_stud")
    ann, bob, ann_table, bob_table = await seat_two(make_player, table_id)
    seen = bob_table.events()
    actions: list[TableEvent] = []

    async def watch_actions() -> None:
        async for event in seen:
            if event.kind == "action":
                actions.append(event)

    watcher = asyncio.create_task(watch_actions())
    try:
        # Twice on purpose: the same reply, one action.
        view = await asyncio.wait_for(_first_turn([ann_table, bob_table]), TIMEOUT)
        table = ann_table if view.you == ann_table.seat else bob_table
        assert view.legal is not None
        first = await table.act(passive(view.legal), action_id="twice-1")
        again = await table.act(passive(view.legal), action_id="twice-1")
        assert (again.seq, again.action_id) == (first.seq, first.action_id)
        await bob_table.wait_for(lambda v: v.seq >= first.seq, TIMEOUT)
        assert [e.data["seat"] for e in actions] == [view.you]
    finally:
        watcher.cancel()
        await seen.aclose()


async def test_an_action_whose_reply_is_lost_is_retried_once(
    make_player: MakePlayer, open_table: OpenTable
) -> None:
    """The line drops after the server acted but before the reply came: the client sends
    the action again under its id after reconnecting, and the server does not act twice."""
    table_id = await open_table(variant="six_card_stud")
    armed: list[StudClient] = []

    def lose_reply(frame: object) -> bool:
        assert isinstance(frame, dict)
        result = frame.get("result")
        if (
            armed
            and frame.get("type") == "reply"
            and isinstance(result, dict)
            and result.get("accepted")
        ):
            client = armed.pop()
            asyncio.get_running_loop().create_task(client.drop_connection())
            return True
        return False

    ann, bob, ann_table, bob_table = await seat_two(make_player, table_id, drop_frame=lose_reply)
    actions: list[TableEvent] = []
    seen = bob_table.events()

    async def watch_actions() -> None:
        async for event in seen:
            if event.kind == "action":
                actions.append(event)

    watcher = asyncio.create_task(watch_actions())
    try:
        while True:  # bob acts until it is ann's turn
            view = await asyncio.wait_for(_first_turn([ann_table, bob_table]), TIMEOUT)
            if view.you == ann_table.seat:
                break
            assert view.legal is not None
            await bob_table.act(passive(view.legal))
        assert view.legal is not None
        armed.append(ann)
        result = await ann_table.act(passive(view.legal))
        assert result.retries == 1 and ann.stats.reconnects == 1
        await bob_table.wait_for(lambda v: v.seq >= result.seq, TIMEOUT)
        mine = [e for e in actions if e.data["seat"] == ann_table.seat]
        assert len(mine) == 1, mine
    finally:
        watcher.cancel()
        await seen.aclose()


async def _first_turn(tables: list[Table]) -> TableView:
    """The view of whichever seat is first to act."""
    while True:
        for table in tables:
            if table.view.my_turn:
                return table.view
        await asyncio.sleep(0.01)


async def test_reconnects_after_an_idle_close_and_a_server_restart(tmp_path: Path) -> None:
    """Server-side drops: the server closes a connection that sent no heartbeat, then the
    whole server is killed and started again on its port and database. The client comes
    back each time, signs in, resyncs (the sequence jumps with the new process), and plays
    on (once both players sit in again, when no hand was in progress to resume)."""
    live = LiveServer(tmp_path, STUD_WS_IDLE_SECONDS="1")
    live.create_operator()
    live.start()
    clients: list[StudClient] = []
    try:
        admin = StudClient(live.url)
        clients.append(admin)
        await admin.login("boss", PASSWORD)
        table_id = await admin.create_table("restart", {"variant": "seven_card_stud"}, seats=2)
        tables = []
        for n, heartbeat in enumerate((None, 0.3)):  # ann sends no heartbeat
            client = StudClient(live.url, heartbeat=heartbeat, backoff=(0.05, 0.5))
            clients.append(client)
            await client.register(f"restart{n}", PASSWORD)
            await client.login(f"restart{n}", PASSWORD)
            await client.connect()
            tables.append(await client.watch(table_id))
            await tables[-1].sit(200)
        ann, bob = clients[1], clients[2]
        # idle: the server closes ann's silent connection; she comes back on her own
        await tables[0].wait_for(lambda v: ann.stats.reconnects >= 1, TIMEOUT)
        assert bob.stats.reconnects == 0
        await play_passively(tables, hands_over(tables[1], 1))
        before = ann.stats.reconnects

        synced = (ann.stats.resyncs, bob.stats.resyncs)
        live.stop(kill=True)
        live.start()
        # A hand in progress when the server died goes on, its players in it; with none,
        # nobody is connected to the new process yet, so everyone sits out until back.
        await tables[1].wait_for(
            lambda v: (
                bob.stats.reconnects == 1 and v.me is not None and bob.stats.resyncs > synced[1]
            ),
            TIMEOUT,
        )
        await tables[0].wait_for(
            lambda v: (
                ann.stats.reconnects > before and v.me is not None and ann.stats.resyncs > synced[0]
            ),
            TIMEOUT,
        )
        for table in tables:
            if table.view.me is not None and table.view.me.sitting_out:
                await table.sit_in()
        await tables[1].wait_for(lambda v: v.hand_number is not None, TIMEOUT)
        # (the next hand may already be dealt when one ends: count hands, not the last state)
        one_more = hands_over(tables[1], 1)
        await play_passively(tables, one_more)
        assert one_more()
        assert set(ann.stats.errors) <= {"not_your_turn"} and not bob.stats.errors
    finally:
        for client in clients:
            await client.close()
        live.stop()
    assert not live.errors(), live.log()[-5000:]


@pytest.mark.parametrize("code", ["bad_buy_in"])
async def test_refusals_are_server_errors_with_codes(
    make_player: MakePlayer, open_table: OpenTable, code: str
) -> None:
    table_id = await open_table()
    ann = await make_player()
    table = await ann.watch(table_id)
    with pytest.raises(ServerError) as refused:
        await table.sit(1)
    assert refused.value.code == code
    with pytest.raises(ServerError) as unknown:
        await ann.watch(999_999)
    assert unknown.value.code == "unknown_table"
    assert ann.stats.errors == {code: 1, "unknown_table": 1}


async def test_watches_of_one_unknown_table_at_once_are_each_refused(
    make_player: MakePlayer,
) -> None:
    """Three watches of a table that is not there, sent together: each raises the server's
    refusal (the table, never seen, is forgotten once, not once a refusal)."""
    ann = await make_player()
    answers = await asyncio.gather(*(ann.watch(999_998) for _ in range(3)), return_exceptions=True)
    assert [a.code if isinstance(a, ServerError) else repr(a) for a in answers] == [
        "unknown_table"
    ] * 3
    assert 999_998 not in ann._tables


async def test_a_request_refused_for_its_rate_is_raised_at_once(make_player: MakePlayer) -> None:
    """Watches over the connection's bucket (20 at once) are refused ``rate_limited`` with
    their ids: each waiting call raises a ServerError with a retry hint at once, none waits
    out its timeout (refused with a null id, they used to)."""
    ann = await make_player(request_timeout=5.0, heartbeat=None)
    started = asyncio.get_running_loop().time()
    answers = await asyncio.gather(
        *(ann.watch(900_000 + n) for n in range(24)), return_exceptions=True
    )
    took = asyncio.get_running_loop().time() - started
    assert all(isinstance(a, ServerError) for a in answers), [repr(a) for a in answers]
    codes = [a.code for a in answers if isinstance(a, ServerError)]
    assert codes.count("rate_limited") >= 1 and set(codes) == {"unknown_table", "rate_limited"}
    limited = [a for a in answers if isinstance(a, ServerError) and a.code == "rate_limited"]
    assert all(a.retry_after is not None and a.retry_after > 0 for a in limited)
    assert took < 5.0, took


async def test_a_signed_out_client_says_why_and_does_not_reconnect(
    make_player: MakePlayer, open_table: OpenTable, live: LiveServer
) -> None:
    """Logged out everywhere (from another client of the same account), the websocket is
    signed out: the client keeps the reason, raises it on every request, and does not
    reconnect with a token that will never do; a new login connects again."""
    table_id = await open_table()
    ann = await make_player()
    await ann.watch(table_id)
    name = ann.player
    assert name is not None
    other = StudClient(live.url)
    try:
        await other.login(name, PASSWORD)
        await other.logout(everywhere=True)
    finally:
        await other.close()
    async with asyncio.timeout(TIMEOUT):
        while ann.signed_out is None:
            await asyncio.sleep(0.01)
    assert ann.signed_out.code == "token_revoked"
    with pytest.raises(ServerError) as refused:
        await ann.watch(table_id)
    assert refused.value.code == "token_revoked"
    await asyncio.sleep(0.3)
    assert ann.stats.reconnects == 0
    await ann.login(name, PASSWORD)
    await ann.connect()
    assert ann.signed_out is None
    assert (await ann.watch(table_id)).id == table_id


async def test_the_heartbeat_pings_a_quiet_server_and_keeps_within_its_idle_limit(
    tmp_path: Path,
) -> None:
    """A quiet connection is pinged after ``heartbeat`` seconds of silence; whatever the
    heartbeat, the client pings within the idle limit the server's hello gives, so the
    server never closes it as idle."""
    live = LiveServer(tmp_path, STUD_WS_IDLE_SECONDS="3")
    live.start()
    try:
        quiet = StudClient(live.url, heartbeat=0.5, silent_after=10, backoff=(0.05, 0.5))
        lazy = StudClient(live.url, heartbeat=30.0, backoff=(0.05, 0.5))
        for client in (quiet, lazy):
            await client.connect()
        started = time.monotonic()
        await asyncio.sleep(4.2)  # longer than the idle limit: the server closes the silent
        window = time.monotonic() - started  # (a loaded machine sleeps longer: counted in)
        # quiet: a ping each 0.5 s of silence (each answered: silence again 0.5 s later)
        assert 2 <= quiet.stats.pings <= window / 0.5 + 1, quiet.stats
        # lazy: no silence ping due, but the 3 s idle limit asks for one every second (the
        # server kept both: none reconnected)
        assert 2 <= lazy.stats.pings <= window / 1.0 + 1, lazy.stats
        assert quiet.stats.reconnects == lazy.stats.reconnects == 0
        assert quiet.stats.silences == lazy.stats.silences == 0
        for client in (quiet, lazy):
            await client.close()
    finally:
        live.stop()
