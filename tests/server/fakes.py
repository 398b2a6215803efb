"""In-memory twins of the server's stores, for unit tests of the table actor."""

from __future__ import annotations

from typing import Any

from server.accounts.ledger import InsufficientFunds
from server.store.records import AuditNote, FinishedHand, LiveHandState, StoreUnavailable


class MemoryTableStore:
    """Wallets and seat chips in dicts, with the same refusals as the real store."""

    def __init__(self, bankroll: int = 10_000) -> None:
        self.bankroll = bankroll
        self.wallets: dict[str, int] = {}
        self.at_table: dict[tuple[int, str], int] = {}
        self.hands: list[FinishedHand] = []
        self.fail_next_save = False
        self.live: dict[int, LiveHandState] = {}  # table -> the hand in progress, as written
        self.down = False  # the database "does not answer": every write raises StoreUnavailable
        self.tables: dict[int, dict[str, Any]] = {}  # table -> its columns as written
        self.audit: list[AuditNote] = []

    def wallet(self, player: str) -> int:
        return self.wallets.setdefault(player, self.bankroll)

    def _answer(self) -> None:
        if self.down:
            raise StoreUnavailable("the database does not answer")

    async def start_hand(self, live: LiveHandState) -> None:
        self._answer()
        for player, fee in live.time_fees.items():
            self.at_table[live.table_id, player] -= fee
        self.live[live.table_id] = LiveHandState(
            live.table_id,
            live.number,
            live.deck,
            list(live.players),
            [],
            live.config,
            absent=live.absent,
        )

    async def record_action(
        self, table_id: int, number: int, position: int, action: dict[str, Any]
    ) -> None:
        self._answer()
        live = self.live[table_id]
        assert live.number == number and len(live.actions) == position, (live, position)
        live.actions.append(dict(action))

    async def buy_in(self, table_id: int, player: str, amount: int, *, seat: int) -> None:
        self._answer()
        if self.wallet(player) < amount:
            raise InsufficientFunds("not enough chips in the wallet")
        self.wallets[player] -= amount
        key = (table_id, player)
        self.at_table[key] = self.at_table.get(key, 0) + amount

    async def cash_out(self, table_id: int, player: str, amount: int) -> None:
        self._answer()
        key = (table_id, player)
        assert self.at_table.get(key, 0) == amount, (self.at_table.get(key), amount)
        self.at_table.pop(key, None)
        self.wallets[player] = self.wallet(player) + amount

    async def seat_entrant(self, table_id: int, player: str, chips: int, *, seat: int) -> None:
        """A tournament's seat: its chips come from no wallet."""
        self._answer()
        self.at_table.setdefault((table_id, player), chips)

    async def give_up_seat(self, table_id: int, player: str, chips: int) -> None:
        self._answer()
        key = (table_id, player)
        assert self.at_table.get(key, chips) == chips, (self.at_table.get(key), chips)
        self.at_table.pop(key, None)

    async def add_entrant_chips(
        self, table_id: int, player: str, chips: int, *, stack: int
    ) -> None:
        self._answer()
        key = (table_id, player)
        assert self.at_table[key] in (stack - chips, stack), (self.at_table[key], stack)
        self.at_table[key] = stack

    async def save_hand(self, hand: FinishedHand) -> None:
        if self.fail_next_save:
            self.fail_next_save = False
            raise RuntimeError("the database went away")
        self._answer()
        live = self.live.get(hand.table_id)
        if live is not None and live.number == hand.number:
            del self.live[hand.table_id]
        for player, stack in hand.stacks.items():
            key = (hand.table_id, player)
            self.at_table[key] = self.at_table[key] - hand.starting[player] + stack
        self.hands.append(hand)

    async def save_table(
        self, table_id: int, values: dict[str, Any], note: AuditNote | None
    ) -> None:
        self._answer()
        self.tables.setdefault(table_id, {}).update(values)
        if note is not None:
            self.audit.append(note)

    def total(self) -> int:
        return sum(self.wallets.values()) + sum(self.at_table.values())
