"""A table actor driven on a clock the test moves, its every word recorded: the transcript.

The actor runs as on a node, but its clocks (the loop's and the wall's) move only when the
scene says, and it deals from seeded seeds: the same scene gives the same transcript, word
for word. The transcript holds, in the order they happened, every message the actor put on
the bus (with its channel and sequence number), every write it made to its store (the
journal's rows, the hands, the chips, the audit notes) and every reply or refusal it gave.
``tests/server/table/test_golden_transcripts.py`` keeps the transcripts of its scenes and compares
them after any change to the server: a refactor that changes a word fails it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import json
import random
from collections.abc import Callable
from typing import Any

from engine.variants import TableConfig
from server.bus.memory import MemoryBus
from server.store.records import AuditNote, FinishedHand, LiveHandState
from server.table import commands as cmd
from server.table.actor import TableActor
from server.table.loop import Lifecycle
from server.table.ports import CommandRefused, TableSettings
from tests.server.fakes import MemoryTableStore
from tests.server.play import random_legal, submit

TABLE = 7
# The back office's commands that carry an operator (``OperatorCommand``): what an
# operator of a transcript sends.
OPERATOR_COMMANDS: dict[str, type[cmd.OperatorCommand]] = {
    name: command
    for name, command in cmd.OPERATOR_COMMANDS.items()
    if issubclass(command, cmd.OperatorCommand)
}


class ManualClock:
    """A clock that moves only when told."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def plain(value: Any) -> Any:
    """``value`` as JSON holds it (records as dicts, datetimes as a mark: they are the wall's)."""

    def default(item: Any) -> Any:
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            return {f.name: getattr(item, f.name) for f in dataclasses.fields(item)}
        if isinstance(item, datetime.datetime):
            return "<datetime>"
        if isinstance(item, set | frozenset):
            return sorted(item)
        raise TypeError(f"no JSON for {type(item).__name__}")

    return json.loads(json.dumps(value, default=default, sort_keys=True))


class RecordingBus(MemoryBus):
    def __init__(self, transcript: list[Any]) -> None:
        super().__init__()
        self.transcript = transcript

    def publish_now(self, channel: str, message: dict[str, Any]) -> None:
        self.transcript.append(["bus", channel, plain(message)])
        super().publish_now(channel, message)


class RecordingStore(MemoryTableStore):
    """The in-memory store, each write it took written down (one that failed is not)."""

    def __init__(self, transcript: list[Any]) -> None:
        super().__init__()
        self.transcript = transcript

    def _wrote(self, name: str, *args: Any) -> None:
        self.transcript.append(["store", name, plain(list(args))])

    async def start_hand(self, live: LiveHandState) -> None:
        await super().start_hand(live)
        written = plain([live])
        if not live.absent:  # no seat dealt in while away (a tournament's): as ever written
            del written[0]["absent"]
        if live.rotation is None:  # not a mixed table's hand: as ever written
            del written[0]["rotation"]
        self.transcript.append(["store", "start_hand", written])

    async def record_action(
        self, table_id: int, number: int, position: int, action: dict[str, Any]
    ) -> None:
        await super().record_action(table_id, number, position, action)
        self._wrote("record_action", table_id, number, position, action)

    async def buy_in(self, table_id: int, player: str, amount: int, *, seat: int) -> None:
        await super().buy_in(table_id, player, amount, seat=seat)
        self._wrote("buy_in", table_id, player, amount, seat)

    async def cash_out(self, table_id: int, player: str, amount: int) -> None:
        await super().cash_out(table_id, player, amount)
        self._wrote("cash_out", table_id, player, amount)

    async def save_hand(self, hand: FinishedHand) -> None:
        await super().save_hand(hand)
        written = plain([hand])
        if hand.rotation is None:  # not a mixed table's hand: as ever written
            del written[0]["rotation"]
        self.transcript.append(["store", "save_hand", written])

    async def save_table(
        self, table_id: int, values: dict[str, Any], note: AuditNote | None
    ) -> None:
        await super().save_table(table_id, values, note)
        self._wrote("save_table", table_id, values, note)


class Scene:
    """One table, its clocks in the scene's hands, and the transcript of all it did."""

    def __init__(
        self,
        config: TableConfig,
        settings: TableSettings,
        *,
        seed: int = 1,
        transcript: list[Any] | None = None,
        store: RecordingStore | None = None,
        clock: ManualClock | None = None,
        wall: ManualClock | None = None,
        run: int = 1,
    ) -> None:
        self.transcript: list[Any] = transcript if transcript is not None else []
        self.clock = clock or ManualClock(1_000.0)
        self.wall = wall or ManualClock(1_800_000_000.0)
        self.store = store or RecordingStore(self.transcript)
        self.bus = RecordingBus(self.transcript)
        seeds = random.Random(seed)
        self.actor = TableActor(
            TABLE,
            config,
            bus=self.bus,
            store=self.store,
            settings=settings,
            clock=self.clock,
            wall_clock=self.wall,
            rng_factory=lambda: random.Random(seeds.random()),
            run=run,
        )
        self.choices = random.Random(seed)
        self.actions = 0

    def note(self, *words: Any) -> None:
        """A line of the scene's own (what it is about to do), to read the transcript by."""
        self.transcript.append(["scene", *plain(list(words))])

    async def start(self) -> None:
        self.actor.start()
        await self.settle()

    async def stop(self) -> None:
        await self.actor.stop()
        self.note("stopped", self.actor.state.value)

    async def settle(self) -> None:
        """Until the actor waits for its next command (or is over)."""
        actor = self.actor
        for _ in range(10_000):
            await asyncio.sleep(0)
            if actor.state in (Lifecycle.STOPPED, Lifecycle.TAKEN_OVER):
                return
            if actor.state is Lifecycle.IDLE and actor.inbox.empty():
                return
        raise AssertionError(f"the table never settled: {actor.state}")

    async def do(self, name: str, player: str, **fields: Any) -> dict[str, Any] | None:
        """A command, as a client's would reach the table; its reply (None: refused)."""
        try:
            reply = await submit(self.actor, name, player, **fields)
        except CommandRefused as refused:
            self.transcript.append(["refused", name, player, plain(fields), str(refused.code)])
            await self.settle()
            return None
        self.transcript.append(["reply", name, player, plain(fields), plain(reply)])
        await self.settle()
        return reply

    async def operator(self, name: str, **fields: Any) -> dict[str, Any] | None:
        """An operator's command, as the back office sends one to the table."""
        command = OPERATOR_COMMANDS[name](player="", **fields)
        try:
            reply = await self.actor.submit(command)
        except CommandRefused as refused:
            self.transcript.append(["refused", name, "", plain(fields), str(refused.code)])
            await self.settle()
            return None
        self.transcript.append(["reply", name, "", plain(fields), plain(reply)])
        await self.settle()
        return reply

    async def wait(self, seconds: float) -> None:
        """Time passes, then the table is woken (what fell due in it happens now)."""
        self.clock.now += seconds
        self.wall.now += seconds
        self.note("waited", seconds)
        await self.do("snapshot", "")

    def to_act(self) -> str | None:
        hand = self.actor.table.hand
        if hand is None or hand.is_over():
            return None
        seat = hand.seat_to_act()
        occupant = self.actor.table.seats[seat] if seat is not None else None
        return occupant.player if occupant is not None else None

    async def act(
        self, kind: str | None = None, amount: int | None = None, *, player: str | None = None
    ) -> dict[str, Any] | None:
        """The seat to act acts (``kind``; None: a legal action drawn by the scene's seed)."""
        who = player or self.to_act()
        assert who is not None, "nobody is to act"
        if kind is None:
            hand = self.actor.table.hand
            assert hand is not None
            kind, amount = random_legal(hand.legal_actions(), self.choices)
        self.actions += 1
        fields: dict[str, Any] = {"action_id": f"a{self.actions}", "kind": kind}
        if amount is not None:
            fields["amount"] = amount
        return await self.do("act", who, **fields)

    async def play_hand(self, choose: Callable[[], str | None] | None = None) -> None:
        """Acts for whoever is to act until the hand in progress is over."""
        number = self.actor.hand_number
        for _ in range(200):
            hand = self.actor.table.hand
            if hand is None or hand.is_over() or self.actor.hand_number != number:
                return
            await self.act(choose() if choose is not None else None)
        raise AssertionError("the hand never ended")

    def kinds_played(self) -> set[str]:
        return {
            entry[2]["data"]["action"]
            for entry in self.transcript
            if entry[0] == "bus"
            and isinstance(entry[2], dict)
            and entry[2].get("kind") == "action"
            and entry[1].startswith("table:")
        }
