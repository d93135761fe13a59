"""A cache sized by bytes, not by entry count, shared by every session of the server process.

``st.cache_resource(max_entries=8)`` treats a GPT-2-small model (475 MiB) and a 2-layer toy model (1.5 MB) as
the same "one entry", so its memory bound is 8 x the largest thing a student can ask for. :func:`byte_cached`
is a drop-in replacement for such a decorator: one least-recently-used store for models and traces together,
evicting the oldest entries until the bytes it holds fit its budget (``EXPLORER_CACHE_MB``, default 768).

* Sizes are measured, not guessed: the bytes of every distinct tensor storage an entry holds (a model's
  parameters and buffers, a trace's record; storages shared between tensors are counted once).
* Thread-safe and single-flight: sessions asking for the same key at once wait for one computation.
* An entry larger than the whole budget is returned but not kept.
* As with ``st.cache_*``, parameters whose name starts with ``_`` are left out of the key (unhashable models).

Plain Python + torch (no Streamlit), so the engine's objects can be measured and the store tested directly.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable

import torch

from engine.kv_cache import KVCache

ENV_CACHE_MB = "EXPLORER_CACHE_MB"
DEFAULT_CACHE_MB = 768


def tensor_bytes(obj: Any) -> int:
    """Bytes of the distinct tensor storages reachable from ``obj`` (modules, dataclasses, dicts, sequences)."""
    seen: dict[int, int] = {}

    def visit(x: Any, depth: int = 0) -> None:
        if depth > 8:
            return
        if isinstance(x, torch.Tensor):
            storage = x.untyped_storage()
            seen[storage.data_ptr()] = storage.nbytes()
        elif isinstance(x, torch.nn.Module):
            for t in list(x.parameters()) + list(x.buffers()):
                visit(t, depth + 1)
        elif isinstance(x, KVCache):  # a decode run's cache (ui/stepper.py)
            for t in list(x.key_cache) + list(x.value_cache):
                visit(t, depth + 1)
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):
            for f in dataclasses.fields(x):
                visit(getattr(x, f.name), depth + 1)
        elif isinstance(x, dict):
            for v in x.values():
                visit(v, depth + 1)
        elif isinstance(x, (list, tuple)):
            for v in x:
                visit(v, depth + 1)

    visit(obj)
    return sum(seen.values())


def budget_from_env() -> int:
    """``EXPLORER_CACHE_MB`` in bytes (a positive number; otherwise the default, 768 MB)."""
    try:
        mb = float(os.environ.get(ENV_CACHE_MB, DEFAULT_CACHE_MB))
    except ValueError:
        mb = DEFAULT_CACHE_MB
    return int((mb if mb > 0 and mb != float("inf") else DEFAULT_CACHE_MB) * 2**20)


class ByteBudgetCache:
    """Least-recently-used store whose entries' total bytes stay within ``budget`` (thread-safe)."""

    def __init__(self, budget: int, sizeof: Callable[[Any], int] = tensor_bytes):
        self.budget = budget
        self.sizeof = sizeof
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._key_locks: dict[Hashable, threading.Lock] = {}
        self.bytes = 0
        self.hits = self.misses = self.evictions = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def _lookup(self, key: Hashable) -> tuple[bool, Any]:
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                self.hits += 1
                return True, self._entries[key][0]
            return False, None

    def get_or_create(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The cached value of ``key``, computing it with ``make()`` once when absent."""
        found, value = self._lookup(key)
        if found:
            return value
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:  # one computation per key; the others wait for it and then hit
            found, value = self._lookup(key)
            if found:
                return value
            value = make()
            size = self.sizeof(value)
            with self._lock:
                self.misses += 1
                self._key_locks.pop(key, None)
                if size <= self.budget:
                    self._entries[key] = (value, size)
                    self.bytes += size
                    while self.bytes > self.budget:
                        _, (_, old) = self._entries.popitem(last=False)
                        self.bytes -= old
                        self.evictions += 1
            return value

    def remeasure(self, key: Hashable) -> None:
        """Measure ``key``'s entry again (a value that grew since it was stored, e.g. a decode run) and evict the
        least recently used other entries until the store fits its budget again (an entry larger than the whole
        budget is dropped itself)."""
        with self._lock:
            entry = self._entries.get(key)
        if entry is None:
            return
        size = self.sizeof(entry[0])  # outside the lock: measuring walks the value's tensors
        with self._lock:
            if key not in self._entries:
                return
            self.bytes += size - self._entries[key][1]
            self._entries[key] = (entry[0], size)
            if size > self.budget:
                del self._entries[key]
                self.bytes -= size
                return
            self._entries.move_to_end(key)
            while self.bytes > self.budget:
                _, (_, old) = self._entries.popitem(last=False)
                self.bytes -= old
                self.evictions += 1

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0


_SHARED: ByteBudgetCache | None = None
_SHARED_LOCK = threading.Lock()


def shared_cache() -> ByteBudgetCache:
    """The process-wide store every :func:`byte_cached` function uses (budget read on first use)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = ByteBudgetCache(budget_from_env())
        return _SHARED


def byte_cached(func: Callable) -> Callable:
    """Cache ``func``'s results in :func:`shared_cache`, keyed by its name and its arguments not starting with ``_``.

    The wrapper has ``.clear()`` (drops every entry of the shared store), like ``st.cache_resource`` functions.
    """
    sig = inspect.signature(func)
    name = f"{func.__module__}.{func.__qualname__}"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        key = (name,) + tuple((k, v) for k, v in bound.arguments.items() if not k.startswith("_"))
        return shared_cache().get_or_create(key, lambda: func(*args, **kwargs))

    wrapper.clear = lambda: shared_cache().clear()
    return wrapper
