"""A tournament's journal read back: each kind of fact taken by the run, in one place, for
the director that writes the facts (``server.tournaments.director``), the nodes that follow
a tournament (``server.tournaments.standing``) and the checker that verifies one after its
end (``engine.tournament.check``).

Two sorts of fact. A **taken** fact is something that happened (the start, a hand, the
clock's wake, a request granted: a pause, a late entry, a deal's proposal...): replayed, it
moves the run on and gives its orders. A **record** (``RECORD_KINDS``) is what a taken fact
decided, journaled after it so the state can be read without replaying (a deal offered,
made, withdrawn; the chips a disqualified player took out of play): replaying its fact
makes it again, so a record is not replayed but compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.tournament.orders import Order
from engine.tournament.run import RunError, TournamentRun

# The record, right after the fact that disqualified a player, of the chips that left play.
REMOVED = "chips_removed"
RECORD_KINDS = frozenset({"deal_offered", "deal_made", "deal_withdrawn", REMOVED})


def replay(run: TournamentRun, kind: str, data: Mapping[str, Any], at: float) -> list[Order]:
    """One taken fact, as the director took it: its orders (a refusal raised before the
    run changed, for a request that does not fit)."""
    if kind == "started":
        return run.start([str(p) for p in data["players"]], at)
    if kind == "hand":
        table, number = int(data["table"]), int(data["number"])
        run.hand_began(table, number, at)
        return run.hand_ended(table, number, data["stacks"], data["starting"], at)
    if kind == "woke":
        return run.wake(at)
    if kind == "paused":
        return run.pause(at)
    if kind == "resumed":
        return run.resume(at)
    # An operator's: a move, a disqualification, time added to the level.
    if kind == "moved":
        return run.move(str(data["player"]), data.get("table"), data.get("seat"), at)
    if kind == "disqualified":
        return run.disqualify(str(data["player"]), at)
    if kind == "time_added":
        return run.add_time(float(data["minutes"]) * 60, at)
    # Bought by players: a late entry (or a re-entry), a rebuy, the add-on.
    if kind == "entered":
        return run.enter(str(data["player"]), at)
    if kind == "rebought":
        return run.rebuy(str(data["player"]), at)
    if kind == "added_on":
        return run.add_on(str(data["player"]), at)
    # A deal at the final table.
    if kind == "deal_proposed":
        return run.propose_deal(
            str(data["player"]),
            str(data["method"]),
            int(data["played_for"]),
            float(data["seconds"]),
            at,
        )
    if kind == "deal_accepted":
        return run.accept_deal(str(data["player"]), int(data["offer"]), at)
    if kind == "deal_declined":
        return run.decline_deal(str(data["player"]), int(data["offer"]), at)
    raise RunError(f"a journal fact of an unknown kind: {kind!r}")
