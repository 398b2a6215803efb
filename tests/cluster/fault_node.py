"""``python -m tests.cluster.fault_node ARGS``: ``python -m server ARGS`` with one fault put
in, for the tournament tests that kill a director at a chosen point of its work (a point
a kill from outside could only hit by luck). The server's code is not changed: this
launcher wraps the director's ``carry_out`` before the server starts.

``STUD_TEST_KILL_AT`` says where the node kills itself (SIGKILL: no goodbye, nothing more
written), the first time a director of this node reaches it:

- ``move``: a fact's orders move a player between two tables (balancing them, or breaking
  one); the node dies once the first of them has been taken from their table
  (``RemovePlayer`` carried out) and before they are seated at the other (``SeatPlayer``).
- ``break``: a fact's orders break a table (``CloseTable`` with the tournament going on);
  the node dies once its players have been taken away and the first of them seated
  elsewhere, before the others are seated and before the table is closed.

``STUD_TEST_KILL_MARK``: a file, made by the node that dies just before it does (JSON:
the orders it carried out and the ones it did not), so that one node of the cardroom dies,
once: the others, and the node started again, see it there and do nothing but write down,
in the file of the same name ending ``.after``, the orders of every director after the kill
(a JSON list a line, in the order they are carried out: the first are the new director's
own, making the tables match its journal). Without ``STUD_TEST_KILL_AT`` the launcher is
``python -m server``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
from pathlib import Path
from typing import Any

from engine.tournament.run import CloseTable, Order, RemovePlayer, SeatPlayer
from server.cli import main
from server.tournaments.director import Director


def cut(at: str, orders: list[Order]) -> int | None:
    """How many of ``orders`` are carried out before the node dies (None: not here)."""
    seated = {order.player for order in orders if isinstance(order, SeatPlayer)}
    breaks = any(isinstance(order, CloseTable) for order in orders)
    if at == "move":
        for n, order in enumerate(orders):
            if isinstance(order, RemovePlayer) and order.player in seated:
                return n + 1
    if at == "break" and breaks:
        first_seat = next(
            (n for n, order in enumerate(orders) if isinstance(order, SeatPlayer)), None
        )
        if first_seat is not None:
            return first_seat + 1
    return None


def described(order: Order) -> dict[str, Any]:
    return {"order": type(order).__name__, **dataclasses.asdict(order)}


def install(at: str, mark: Path) -> None:
    carry_out = Director.carry_out
    trace = mark.with_suffix(".after")

    async def carry_out_then_die(self: Director, orders: list[Order]) -> None:
        if mark.exists():  # after the kill: what the directors that take over order
            with trace.open("a") as lines:
                lines.write(json.dumps([described(o) for o in orders], default=str) + "\n")
            await carry_out(self, orders)
            return
        point = cut(at, orders)
        if point is None:
            await carry_out(self, orders)
            return
        await carry_out(self, orders[:point])
        try:
            made = os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:  # another node died here first: this one goes on
            await carry_out(self, orders[point:])
            return
        record = {
            "at": at,
            "tournament": self.tournament_id,
            "done": [described(o) for o in orders[:point]],
            "left": [described(o) for o in orders[point:]],
        }
        os.write(made, json.dumps(record, default=str).encode())
        os.fsync(made)
        os.close(made)
        os.kill(os.getpid(), signal.SIGKILL)

    Director.carry_out = carry_out_then_die  # type: ignore[method-assign]


if __name__ == "__main__":
    where = os.environ.get("STUD_TEST_KILL_AT")
    if where:
        install(where, Path(os.environ["STUD_TEST_KILL_MARK"]))
    raise SystemExit(main())
