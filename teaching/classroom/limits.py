"""Rate limits by key (a client address): a token bucket per key, thread-safe, in bounded memory.

:class:`KeyedLimiter` knows only keys and a clock: not what a key is (the HTTP layer passes the client address), not
the database (a refusal costs a dictionary look-up, no query). The class store uses one for joins
(:data:`JOINS_PER_MINUTE` per address, a burst of as many): one script cannot fill a class's places while another
address still joins. Many phones behind one NAT address share its bucket; a server on the room's own network sees
each phone's address.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

JOINS_PER_MINUTE = 20
MAX_KEYS = 10_000


class KeyedLimiter:
    """``rate`` actions per ``per_s`` seconds per key, with bursts of up to ``burst`` (default ``rate``).

    Each key has a bucket of ``burst`` tokens that refills at ``rate / per_s`` a second; an action takes one token.
    At most ``max_keys`` buckets are kept: when a new key would pass it, full buckets (keys idle for long enough to
    have refilled: they are the same as new) go first, then the fullest ones (:meth:`_evict`)."""

    def __init__(self, rate: float = JOINS_PER_MINUTE, per_s: float = 60.0, *, burst: float | None = None,
                 max_keys: int = MAX_KEYS, clock: Callable[[], float] = time.monotonic):
        if rate <= 0 or per_s <= 0:
            raise ValueError("a rate limit needs a positive rate and period")
        self.refill = rate / per_s  # tokens a second
        self.burst = float(rate if burst is None else burst)
        self.max_keys = int(max_keys)
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when counted), the latest used last
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        """Take one token from ``key``'s bucket: True, or False when it is empty (nothing is taken then)."""
        now = self.clock()
        with self._lock:
            tokens, at = self._buckets.pop(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - at) * self.refill)
            allowed = tokens >= 1.0
            self._buckets[key] = (tokens - 1.0 if allowed else tokens, now)  # re-inserted: the most recent
            if len(self._buckets) > self.max_keys:
                self._evict(now)
        return allowed

    def _evict(self, now: float) -> None:
        """Drop full buckets (as good as new); if still too many, the fullest down to half of ``max_keys``: a
        key that is being limited (an empty bucket) is the last to go, even in a flood of new keys."""
        tokens = {k: min(self.burst, t + (now - at) * self.refill) for k, (t, at) in self._buckets.items()}
        for k in [k for k, t in tokens.items() if t >= self.burst]:
            del self._buckets[k]
        if len(self._buckets) > self.max_keys:
            fullest = sorted(self._buckets, key=lambda k: -tokens[k])  # stable: the older of equals first
            for k in fullest[: len(self._buckets) - self.max_keys // 2]:
                del self._buckets[k]

    def __len__(self) -> int:
        with self._lock:
            return len(self._buckets)


__all__ = ["JOINS_PER_MINUTE", "KeyedLimiter"]
