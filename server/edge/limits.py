"""Token buckets, one per key, a growing delay after failures, keys seen lately: the gateway's
arithmetic.

Every limit of :mod:`server.edge.rate_limits` is one of these, kept in this node's memory (limits
hold per node). A bucket holds up to ``burst`` tokens and gains ``rate`` a second; a
request takes one, and an empty bucket says how long until the next one. The keyed
forms keep at most ``max_keys`` keys, forgetting the least recently used first, so a
flood of fresh addresses or names costs bounded memory (a forgotten key starts full).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

Clock = Callable[[], float]
MAX_KEYS = 100_000


@dataclass(slots=True)
class TokenBucket:
    """``burst`` tokens at most, ``rate`` more a second."""

    rate: float
    burst: float
    tokens: float
    at: float

    @classmethod
    def full(cls, rate: float, burst: float, now: float) -> TokenBucket:
        return cls(rate, burst, burst, now)

    def take(self, now: float, count: float = 1.0) -> float:
        """Take ``count`` tokens: 0.0 when taken, else the seconds until they would be
        there (nothing is taken then)."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= count:
            self.tokens -= count
            return 0.0
        if self.rate <= 0:
            return float("inf")
        return (count - self.tokens) / self.rate

    def reserve(self, now: float, count: float = 1.0) -> float:
        """Take ``count`` tokens now, in debt if need be: the seconds to wait before using
        them (0.0 when they were there). Debts add up, so a steady flood is paced to ``rate``."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate) - count
        self.at = now
        return max(0.0, -self.tokens / self.rate) if self.rate > 0 else float("inf")


class KeyedBuckets:
    """One :class:`TokenBucket` per key (an address, an account name)."""

    def __init__(
        self,
        rate: float,
        burst: float,
        *,
        clock: Clock = time.monotonic,
        max_keys: int = MAX_KEYS,
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self.max_keys = max_keys
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def take(self, key: str, count: float = 1.0) -> float:
        """Take from ``key``'s bucket: 0.0, or the seconds to wait."""
        now = self.clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket.full(self.rate, self.burst, now)
            if len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
        return bucket.take(now, count)

    def give_back(self, key: str, count: float = 1.0) -> None:
        """Return ``count`` tokens taken from ``key``'s bucket (never over its burst)."""
        bucket = self._buckets.get(key)
        if bucket is not None:
            bucket.tokens = min(bucket.burst, bucket.tokens + count)

    def __len__(self) -> int:
        return len(self._buckets)


class RecentKeys:
    """The ``max_keys`` keys seen last (an address and an account that logged in from it)."""

    def __init__(self, *, max_keys: int = MAX_KEYS) -> None:
        self.max_keys = max_keys
        self._keys: OrderedDict[str, None] = OrderedDict()

    def add(self, key: str) -> None:
        self._keys[key] = None
        self._keys.move_to_end(key)
        if len(self._keys) > self.max_keys:
            self._keys.popitem(last=False)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)


@dataclass(slots=True)
class _Failures:
    count: int
    until: float  # no attempt before this time (clock)


class FailureDelay:
    """After ``free`` failures in a row, each further failure closes the key for a delay
    that doubles from ``base`` up to ``cap`` seconds; a success forgets the key."""

    def __init__(
        self,
        *,
        free: int,
        base: float,
        cap: float,
        clock: Clock = time.monotonic,
        max_keys: int = MAX_KEYS,
    ) -> None:
        self.free = free
        self.base = base
        self.cap = cap
        self.clock = clock
        self.max_keys = max_keys
        self._failures: OrderedDict[str, _Failures] = OrderedDict()

    def wait(self, key: str) -> float:
        """Seconds before ``key`` may try again (0.0: now)."""
        failures = self._failures.get(key)
        if failures is None:
            return 0.0
        return max(0.0, failures.until - self.clock())

    def failed(self, key: str) -> float:
        """Count a failure; the delay it sets (0.0 while failures are still free)."""
        failures = self._failures.pop(key, None) or _Failures(0, 0.0)
        failures.count += 1
        over = failures.count - self.free
        delay = min(self.cap, self.base * 2 ** (over - 1)) if over > 0 else 0.0
        failures.until = self.clock() + delay
        self._failures[key] = failures
        if len(self._failures) > self.max_keys:
            self._failures.popitem(last=False)
        return delay

    def succeeded(self, key: str) -> None:
        self._failures.pop(key, None)

    def forgive(self, key: str) -> None:
        """Take back one failure counted ahead for a try that was never judged: with the
        failures left all free, no wait is left either."""
        failures = self._failures.get(key)
        if failures is None:
            return
        failures.count -= 1
        if failures.count <= 0:
            del self._failures[key]
        elif failures.count <= self.free:
            failures.until = 0.0


class WindowCounter:
    """At most ``limit`` uses per key in any ``window`` seconds (the starting grant per
    address): the times of the last ``limit`` uses are kept."""

    def __init__(
        self, limit: int, window: float, *, clock: Clock = time.monotonic, max_keys: int = MAX_KEYS
    ) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self.max_keys = max_keys
        self._uses: OrderedDict[str, list[float]] = OrderedDict()

    def use(self, key: str) -> bool:
        """Count a use of ``key`` if one is left in the window; whether it was."""
        now = self.clock()
        uses = [at for at in self._uses.pop(key, []) if at > now - self.window]
        allowed = len(uses) < self.limit
        if allowed:
            uses.append(now)
        self._uses[key] = uses
        if len(self._uses) > self.max_keys:
            self._uses.popitem(last=False)
        return allowed
