"""In-memory twins of the server's stores, for unit tests of the table actor."""

from __future__ import annotations

from server.actor import CommandRefused, FinishedHand


class MemoryTableStore:
    """Wallets and seat chips in dicts, with the same refusals as the real store."""

    def __init__(self, bankroll: int = 10_000) -> None:
        self.bankroll = bankroll
        self.wallets: dict[str, int] = {}
        self.at_table: dict[tuple[int, str], int] = {}
        self.hands: list[FinishedHand] = []
        self.fail_next_save = False

    def wallet(self, player: str) -> int:
        return self.wallets.setdefault(player, self.bankroll)

    async def buy_in(self, table_id: int, player: str, amount: int, *, seat: int) -> None:
        if self.wallet(player) < amount:
            raise CommandRefused("insufficient_funds", "not enough chips in the wallet")
        self.wallets[player] -= amount
        key = (table_id, player)
        self.at_table[key] = self.at_table.get(key, 0) + amount

    async def cash_out(self, table_id: int, player: str, amount: int) -> None:
        key = (table_id, player)
        assert self.at_table.get(key, 0) == amount, (self.at_table.get(key), amount)
        self.at_table.pop(key, None)
        self.wallets[player] = self.wallet(player) + amount

    async def save_hand(self, hand: FinishedHand) -> None:
        if self.fail_next_save:
            self.fail_next_save = False
            raise RuntimeError("the database went away")
        for player, stack in hand.stacks.items():
            key = (hand.table_id, player)
            self.at_table[key] = self.at_table[key] - hand.starting[player] + stack
        self.hands.append(hand)

    def total(self) -> int:
        return sum(self.wallets.values()) + sum(self.at_table.values())
