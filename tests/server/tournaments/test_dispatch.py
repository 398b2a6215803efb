"""A fact's orders cut into waves (``server.tournaments.dispatch``): each table's orders in
their order, the tables side by side, and a player moving between tables taken from the
first before the second seats them. The waves run: every order once, a failed lane stopping
the rest once its wave is over."""

from __future__ import annotations

import asyncio

import pytest

from engine.tournament.orders import Deal, Moved, RemovePlayer, SeatPlayer
from engine.tournament.run import Order
from server.tournaments.dispatch import carry_out, waves


def test_a_start_is_one_wave_of_a_lane_a_table() -> None:
    orders: list[Order] = [
        SeatPlayer(table, seat, f"p{table}{seat}", 1500) for table in (1, 2, 3) for seat in (0, 1)
    ]
    orders += [Deal(table, 1) for table in (1, 2, 3)]
    (wave,) = waves(orders)
    assert sorted(wave) == [1, 2, 3]
    for table, lane in wave.items():
        assert lane == [o for o in orders if getattr(o, "table", None) == table]


def test_a_move_seats_the_player_in_the_next_wave() -> None:
    orders: list[Order] = [
        RemovePlayer(1, "ann"),
        Deal(1, 5),
        Moved("ann", 1, 2, "balance", 3.0),
        SeatPlayer(2, 4, "ann", 900),
        Deal(2, 7),
        Deal(3, 2),
    ]
    first, second = waves(orders)
    assert first == {1: [RemovePlayer(1, "ann"), Deal(1, 5)], None: [orders[2]]}
    assert second == {2: [SeatPlayer(2, 4, "ann", 900), Deal(2, 7)], 3: [Deal(3, 2)]}


def test_the_same_player_at_the_same_table_stays_in_the_wave() -> None:
    orders: list[Order] = [RemovePlayer(1, "ann"), SeatPlayer(1, 3, "ann", 10)]
    assert waves(orders) == [{1: orders}]


async def test_every_order_is_carried_out_each_table_in_order() -> None:
    orders: list[Order] = [SeatPlayer(t, s, f"p{t}{s}", 10) for t in range(1, 6) for s in (0, 1)]
    orders += [RemovePlayer(1, "p10"), SeatPlayer(2, 5, "p10", 10)]
    done: list[Order] = []

    async def one(order: Order) -> None:
        await asyncio.sleep(0)
        done.append(order)

    await carry_out(orders, one, lanes=2)
    assert sorted(map(repr, done)) == sorted(map(repr, orders))
    for table in range(1, 6):
        mine = [o for o in done if getattr(o, "table", None) == table]
        assert mine == [o for o in orders if getattr(o, "table", None) == table]
    assert done.index(RemovePlayer(1, "p10")) < done.index(SeatPlayer(2, 5, "p10", 10))


async def test_a_failed_lane_stops_the_waves_after_its_own() -> None:
    orders: list[Order] = [
        Deal(1, 1),
        Deal(2, 1),
        Deal(2, 2),
        RemovePlayer(3, "bob"),
        SeatPlayer(4, 0, "bob", 10),
    ]
    done: list[Order] = []

    async def one(order: Order) -> None:
        if order == Deal(2, 1):
            raise LookupError("table 2 is gone")
        done.append(order)

    with pytest.raises(LookupError, match="table 2 is gone"):
        await carry_out(orders, one)
    assert done == [Deal(1, 1), RemovePlayer(3, "bob")]  # not table 2's next, nor wave two


def test_the_orders_of_several_facts_taken_together_keep_each_tables_order() -> None:
    """The hands of a read taken together (``Director.take_new_hands``): their facts' orders
    carried out as one list. Table 1's hand moves ann to table 2, whose hand (taken next)
    moves her on to table 3: she leaves each table before the next seats her, and each
    table's orders keep the facts' order (seated at table 2 before its permit)."""
    first: list[Order] = [RemovePlayer(1, "ann"), SeatPlayer(2, 4, "ann", 900), Deal(1, 5)]
    second: list[Order] = [RemovePlayer(2, "ann"), SeatPlayer(3, 0, "ann", 900), Deal(2, 8)]
    one, two, three = waves(first + second)
    assert one == {1: [RemovePlayer(1, "ann")]}
    assert two == {2: [SeatPlayer(2, 4, "ann", 900), RemovePlayer(2, "ann")], 1: [Deal(1, 5)]}
    assert three == {3: [SeatPlayer(3, 0, "ann", 900)], 2: [Deal(2, 8)]}
