"""A table's clocks: the action clock and time banks, the next hand, the offered seat,
the sit-out limit. They only say when something is due; the actor does it."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from server.table.ports import TableSettings


class TableClocks:
    """When each timed thing of a table falls due (times from ``clock``, in seconds)."""

    def __init__(self, settings: TableSettings, clock: Callable[[], float]) -> None:
        self.settings = settings
        self.clock = clock
        self.deadline: float | None = None  # when the player to act runs out of time
        self.turn_started = 0.0
        self.next_hand_at: float | None = None
        self.offer_until: float | None = None  # when the seat offered to a waiting player frees

    def wake_at(self, sat_out_since: Iterable[float]) -> float | None:
        """The next time anything falls due (None: nothing is timed)."""
        limit = min(sat_out_since, default=None)
        times = [
            t
            for t in (
                self.deadline,
                self.next_hand_at,
                self.offer_until,
                None if limit is None else limit + self.settings.sit_out_limit,
            )
            if t is not None
        ]
        return min(times) if times else None

    def start_turn(self, time_bank: float) -> None:
        now = self.clock()
        self.turn_started = now
        self.deadline = now + self.settings.action_clock + time_bank

    def end_turn(self, time_bank: float) -> float:
        """The turn is over: what is left of the time bank after the time it took."""
        used = self.clock() - self.turn_started - self.settings.action_clock
        self.deadline = None
        return max(0.0, time_bank - used) if used > 0 else time_bank

    def stop_turn(self) -> None:
        """No turn on the clock (out of time, or the hand voided)."""
        self.deadline = None

    def turn_over_due(self) -> bool:
        return self.deadline is not None and self.clock() >= self.deadline

    def remaining(self) -> float | None:
        return None if self.deadline is None else round(self.deadline - self.clock(), 2)

    def schedule_next_hand(self, *, after_showdown: bool = False) -> None:
        """The next deal, after the pause between hands; after a showdown, the longer pause
        that lets the players read it."""
        if self.next_hand_at is None:
            self.next_hand_at = self.clock() + self.pause(after_showdown=after_showdown)

    def pause(self, *, after_showdown: bool) -> float:
        pause = self.settings.pause_between_hands
        return max(pause, self.settings.showdown_pause) if after_showdown else pause

    def cancel_next_hand(self) -> None:
        """No next deal is timed (an operator paused or closed the table)."""
        self.next_hand_at = None

    def next_hand_due(self) -> bool:
        if self.next_hand_at is not None and self.clock() >= self.next_hand_at:
            self.next_hand_at = None
            return True
        return False

    def hold_offer(self) -> None:
        self.offer_until = self.clock() + self.settings.waiting_offer

    def stop_offer(self) -> None:
        self.offer_until = None

    def offer_due(self) -> bool:
        return self.offer_until is not None and self.clock() >= self.offer_until

    def sit_out_over(self, since: float) -> bool:
        return self.clock() >= since + self.settings.sit_out_limit

    def shift(self, seconds: float) -> None:
        """A pause of ``seconds`` was nobody's thinking time: the turn and the next hand
        move on by as much."""
        if self.deadline is not None:
            self.deadline += seconds
        if self.next_hand_at is not None:
            self.next_hand_at += seconds
