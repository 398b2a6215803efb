"""Where tables go when several nodes share the cardroom (server.cardroom.placement): a new
table to the node with the most room, the tables nobody runs shared out, and the moves that
even the nodes out or drain one, decided alike by every node from the same reports."""

from __future__ import annotations

from collections import Counter

from server.cardroom.placement import (
    BUSY_LIMIT,
    MOVES_PER_ROUND,
    NodeLoad,
    choose,
    moves,
    share_out,
)


def test_a_new_table_goes_to_the_node_with_the_fewest_tables() -> None:
    nodes = [NodeLoad("a", 5), NodeLoad("b", 2), NodeLoad("c", 3)]
    assert choose(nodes, prefer="a") == "b"


def test_a_tie_stays_on_the_node_asked_then_goes_to_the_least_busy() -> None:
    nodes = [NodeLoad("a", 2, busy=0.5), NodeLoad("b", 2, busy=0.1), NodeLoad("c", 2, busy=0.3)]
    assert choose(nodes, prefer="c") == "c"
    assert choose(nodes, prefer=None) == "b"


def test_tables_on_their_way_to_a_node_count_as_its_own() -> None:
    nodes = [NodeLoad("a", 4, moving={10: "b", 11: "b"}), NodeLoad("b", 1), NodeLoad("c", 2)]
    assert choose(nodes) == "c"  # b has 1 + 2 coming


def test_a_draining_node_or_one_too_busy_gets_no_new_table_while_another_can() -> None:
    assert choose([NodeLoad("a", 0, draining=True), NodeLoad("b", 9)], prefer="a") == "b"
    busy = [NodeLoad("a", 0, busy=BUSY_LIMIT + 0.1), NodeLoad("b", 9, busy=0.2)]
    assert choose(busy, prefer="a") == "b"
    # Every node that busy: the fewest tables after all; every node draining: none.
    assert choose([NodeLoad("a", 0, busy=0.95), NodeLoad("b", 9, busy=0.99)]) == "a"
    assert choose([NodeLoad("a", 0, draining=True)]) is None


def test_the_tables_of_a_dead_node_are_shared_out_evenly_over_the_survivors() -> None:
    survivors = [NodeLoad("a", 4), NodeLoad("b", 6)]
    placed = share_out(range(1, 11), survivors)
    counts = Counter(placed.values())
    assert counts == {"a": 6, "b": 4}  # each ends with 10
    # Every node works the same share out from the same reports, whatever order it lists them.
    assert share_out(range(10, 0, -1), list(reversed(survivors))) == placed


def test_a_node_that_joins_is_filled_over_a_few_rounds_by_the_busiest_node_alone() -> None:
    # Two nodes of ten tables, then c joins with none: only one node moves in a round.
    nodes = [NodeLoad("a", 10), NodeLoad("b", 10), NodeLoad("c", 0)]
    mine = list(range(100, 110))
    assert moves(nodes, "b", mine) == {}
    first = moves(nodes, "a", mine)
    assert first == {100: "c", 101: "c", 102: "c"}  # down to its share: ceil(20 / 3) = 7
    # a's moves under way, c counts them as coming: b is the busiest now, and moves to c.
    nodes = [NodeLoad("a", 7, moving=first), NodeLoad("b", 10), NodeLoad("c", 0)]
    assert moves(nodes, "a", mine[3:]) == {}
    assert moves(nodes, "b", mine) == {100: "c", 101: "c", 102: "c"}
    nodes = [NodeLoad("a", 7), NodeLoad("b", 7), NodeLoad("c", 6)]
    assert all(moves(nodes, n.node, mine) == {} for n in nodes), "even: nothing moves"


def test_a_node_moves_at_most_a_few_tables_at_a_time() -> None:
    nodes = [NodeLoad("a", 30), NodeLoad("b", 0)]
    assert len(moves(nodes, "a", list(range(30)))) == MOVES_PER_ROUND
    busy = [NodeLoad("a", 28, moving={1: "b", 2: "b"}), NodeLoad("b", 0)]
    assert len(moves(busy, "a", list(range(3, 30)))) == MOVES_PER_ROUND - 2


def test_nodes_one_table_apart_do_not_swap_it_back_and_forth() -> None:
    assert moves([NodeLoad("a", 3), NodeLoad("b", 2)], "a", [1, 2, 3]) == {}
    assert moves([NodeLoad("a", 1), NodeLoad("b", 0)], "a", [1]) == {}


def test_a_draining_node_gives_every_table_away_a_few_at_a_time() -> None:
    nodes = [NodeLoad("a", 6, draining=True), NodeLoad("b", 1), NodeLoad("c", 3)]
    planned = moves(nodes, "a", [1, 2, 3, 4, 5, 6])
    assert list(planned) == [1, 2, 3, 4]
    assert Counter(planned.values()) == {"b": 3, "c": 1}  # to whoever has the most room
    assert moves([NodeLoad("a", 3, draining=True)], "a", [1, 2, 3]) == {}, "nowhere to go"
    # Drained nodes never receive: every other node draining too, nothing moves.
    assert moves([NodeLoad("a", 2, draining=True), NodeLoad("b", 0, draining=True)], "a", [1]) == {}
