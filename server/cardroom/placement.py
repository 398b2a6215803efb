"""Where tables run when several nodes share the cardroom: pure decisions, from what each node
tells of itself every lease round (:class:`NodeLoad`, carried by the gossip).

- A new table goes to the node with the most room: the fewest tables, counting those on
  their way to it; a node busier than :data:`BUSY_LIMIT` of a core has no room while another
  has; a draining node none. Ties go to the node that was asked (no hop for nothing), then
  to the least busy.
- Tables nobody runs (their node died, or gave them back) are shared out the same way, one at
  a time, each to the node with the most room then: every node works the same share out from
  what it heard, takes its own part at once, and the rest only if still free a round later
  (its node may have died too).
- Between hands a node moves tables to others while it runs more than its share: all of them
  when it drains; otherwise down to the average, rounded up, and only to a node with at least
  two fewer (a move that would just swap the imbalance is not made). Only the node with the
  most tables moves in a round (ties: the first by id), so two nodes never pour into the same
  empty one at once, and at most :data:`MOVES_PER_ROUND` at a time, so a node that joins
  fills over a few rounds rather than at once.

Every node decides from the same reports, so they agree without talking; when their views
differ for a round, the leases still let one node run a table, and the next round evens out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

#: A node using more than this of a core has no room for a new table while another has.
BUSY_LIMIT = 0.85
#: How many tables one node moves to others at a time.
MOVES_PER_ROUND = 4


@dataclass(frozen=True, slots=True)
class NodeLoad:
    """A node as it told of itself: how many tables it runs (not counting those it is moving
    away), how busy its process is (the share of one core it used over the last round),
    whether it drains, and which of its tables are on their way to which node."""

    node: str
    tables: int
    busy: float = 0.0
    draining: bool = False
    moving: Mapping[int, str] = field(default_factory=dict)


def _counts(nodes: Iterable[NodeLoad]) -> dict[str, int]:
    """Each node's tables, those on their way to it included."""
    listed = list(nodes)
    counts = {n.node: n.tables for n in listed}
    for load in listed:
        for target in load.moving.values():
            if target in counts:
                counts[target] += 1
    return counts


def _room_order(
    nodes: Sequence[NodeLoad], counts: Mapping[str, int], prefer: str | None
) -> list[NodeLoad]:
    open_nodes = [n for n in nodes if not n.draining]
    calm = [n for n in open_nodes if n.busy <= BUSY_LIMIT] or open_nodes
    return sorted(calm, key=lambda n: (counts[n.node], n.node != prefer, n.busy, n.node))


def choose(nodes: Sequence[NodeLoad], *, prefer: str | None = None) -> str | None:
    """The node with the most room for a new table (None: every node drains)."""
    ranked = _room_order(nodes, _counts(nodes), prefer)
    return ranked[0].node if ranked else None


def share_out(free: Iterable[int], nodes: Sequence[NodeLoad]) -> dict[int, str]:
    """Which node takes each table nobody runs: one table at a time, lowest id first, to the
    node with the most room at that point."""
    counts = _counts(nodes)
    placed: dict[int, str] = {}
    for table_id in sorted(free):
        ranked = _room_order(nodes, counts, None)
        if not ranked:
            break
        target = ranked[0].node
        placed[table_id] = target
        counts[target] += 1
    return placed


def moves(
    nodes: Sequence[NodeLoad], me: str, movable: Sequence[int], *, limit: int = MOVES_PER_ROUND
) -> dict[int, str]:
    """The tables node ``me`` should move now, each to its node: from ``movable`` (its
    tables not moving yet, in the order it would rather give them up)."""
    counts = _counts(nodes)
    mine = next((n for n in nodes if n.node == me), None)
    if mine is None:
        return {}
    others = [n for n in nodes if n.node != me and not n.draining]
    if not others:
        return {}
    room = max(0, limit - len(mine.moving))
    if mine.draining:
        planned: dict[int, str] = {}
        for table_id in movable[:room]:
            emptiest = _room_order(others, counts, None)[0].node
            planned[table_id] = emptiest
            counts[emptiest] += 1
        return planned
    active = [n for n in nodes if not n.draining]
    # Only the node with the most tables moves this round (its own view of the counts).
    top = min(active, key=lambda n: (-counts[n.node], n.node))
    if top.node != me:
        return {}
    share = math.ceil(sum(counts[n.node] for n in active) / len(active))
    planned = {}
    for table_id in movable:
        if len(planned) >= room or counts[me] <= share:
            break
        target = _room_order(others, counts, None)[0]
        if counts[target.node] + 2 > counts[me]:
            break
        planned[table_id] = target.node
        counts[target.node] += 1
        counts[me] -= 1
    return planned
