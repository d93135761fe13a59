"""A cache sized by bytes, not by entry count, shared by every session of the server process.

``st.cache_resource(max_entries=8)`` treats a GPT-2-small model (475 MiB) and a 2-layer toy model (1.5 MB) as
the same "one entry", so its memory bound is 8 x the largest thing a student can ask for. :func:`byte_cached`
is a drop-in replacement for such a decorator: one least-recently-used store for models, traces and the pages'
views together, evicting the oldest entries until the bytes it holds fit its budget (``EXPLORER_CACHE_MB``,
default 768: with the app itself (~0.4 GB), SmolLM2's weights (0.5 GB, held by their own one-per-process cache)
and a browser, the server stays within what an 8 GB laptop leaves free).

* Sizes are measured, not guessed: the bytes of every distinct tensor storage an entry holds (a model's
  parameters and buffers, a trace's record; storages shared between tensors are counted once), and of its
  NumPy arrays and pandas tables.
* Memory that comes back: entries also leave by age (unused for ``EXPLORER_CACHE_MAX_AGE_S``, default 30 min)
  and once every browser session that used them has closed (after a 20 s grace), swept by a daemon thread of
  the server; after every eviction ``malloc_trim(0)`` gives glibc's freed pages back to the system.
* Thread-safe and single-flight: sessions asking for the same key at once wait for one computation.
* An entry larger than the whole budget is returned but not kept.
* As with ``st.cache_*``, parameters whose name starts with ``_`` are left out of the key (unhashable models).

Plain Python + torch (no Streamlit), so the engine's objects can be measured and the store tested directly.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import inspect
import os
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Hashable

import numpy as np
import torch

from engine.kv_cache import KVCache

ENV_CACHE_MB = "EXPLORER_CACHE_MB"
DEFAULT_CACHE_MB = 768
ENV_CACHE_AGE = "EXPLORER_CACHE_MAX_AGE_S"
DEFAULT_MAX_AGE_S = 1800.0  # an entry nobody used for half an hour leaves, whoever is still connected
DEFAULT_CLOSED_GRACE_S = 20.0  # an entry whose every session closed leaves this long after its last use
SWEEP_EVERY_S = 10.0  # the server's janitor thread: how often it sweeps


def tensor_bytes(obj: Any) -> int:
    """Bytes of the distinct tensor storages reachable from ``obj`` (modules, dataclasses, dicts, sequences), plus
    the bytes of the NumPy arrays and pandas tables in it (a view's DataFrame: ``memory_usage(deep=True)``, read
    by duck typing, so that the server never imports pandas)."""
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
        elif type(x).__module__.split(".")[0] == "pandas" and hasattr(x, "memory_usage"):  # a DataFrame or Series
            used = x.memory_usage(deep=True)
            seen[id(x)] = int(used.sum() if hasattr(used, "sum") else used)
        elif isinstance(x, np.ndarray):
            seen[id(x)] = int(x.nbytes)
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


def release_memory() -> bool:
    """Give the pages glibc keeps for freed blocks back to the system (``malloc_trim(0)``): called after an
    eviction, so that what the store let go shows in the server's RSS. False where there is no glibc."""
    global _LIBC
    try:
        if _LIBC is None:
            _LIBC = ctypes.CDLL("libc.so.6")
        return bool(_LIBC.malloc_trim(0))
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl): nothing to trim
        return False


_LIBC = None


def current_session() -> str | None:
    """The browser session whose script runs in this thread, or None outside a Streamlit server."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return None if ctx is None else ctx.session_id


def session_is_active(session: str) -> bool:
    """Whether the server still has this browser session connected (True outside a running server)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return True
    try:
        return bool(Runtime.instance().is_active_session(session))
    except Exception:  # noqa: BLE001  a runtime being shut down: keep the entry, the process ends anyway
        return True


@dataclasses.dataclass
class _Entry:
    value: Any
    size: int
    used: float  # the clock's time of the last lookup
    sessions: set = dataclasses.field(default_factory=set)  # the browser sessions that looked it up


class ByteBudgetCache:
    """Least-recently-used store whose entries' total bytes stay within ``budget`` (thread-safe).

    Entries also leave by age: :meth:`sweep` drops those unused for ``max_age`` seconds, and those whose every
    session has closed (``closed_grace`` seconds after their last use), then gives the freed pages back to the
    system (:func:`release_memory`); every eviction by size does that too."""

    def __init__(self, budget: int, sizeof: Callable[[Any], int] = tensor_bytes, max_age: float | None = None,
                 closed_grace: float = DEFAULT_CLOSED_GRACE_S, clock: Callable[[], float] = time.monotonic,
                 session: Callable[[], str | None] = current_session,
                 active: Callable[[str], bool] = session_is_active):
        self.budget = budget
        self.sizeof = sizeof
        self.max_age, self.closed_grace = max_age, closed_grace
        self.clock, self.session, self.active = clock, session, active
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._key_locks: dict[Hashable, threading.Lock] = {}
        self.bytes = 0
        self.hits = self.misses = self.evictions = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def _lookup(self, key: Hashable, session: str | None) -> tuple[bool, Any]:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return False, None
            self._entries.move_to_end(key)
            entry.used = self.clock()
            if session is not None:
                entry.sessions.add(session)
            self.hits += 1
            return True, entry.value

    def peek(self, key: Hashable) -> tuple[bool, Any]:
        """``(True, value)`` when ``key`` is cached (a use: it becomes the most recent), else ``(False, None)``;
        never computes."""
        return self._lookup(key, self.session())

    def get_or_create(self, key: Hashable, make: Callable[[], Any], sizeof: Callable[[Any], int] | None = None) -> Any:
        """The cached value of ``key``, computing it with ``make()`` once when absent (measured with ``sizeof``,
        else the store's own measure)."""
        session = self.session()
        found, value = self._lookup(key, session)
        if found:
            return value
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:  # one computation per key; the others wait for it and then hit
            found, value = self._lookup(key, session)
            if found:
                return value
            value = make()
            size = (sizeof or self.sizeof)(value)
            with self._lock:
                self.misses += 1
                self._key_locks.pop(key, None)
                if size <= self.budget:
                    self._entries[key] = _Entry(value, size, self.clock(), {session} if session else set())
                    self.bytes += size
                evicted = self._fit()
            if evicted:
                release_memory()
            return value

    def _fit(self) -> int:
        """Evict the least recently used entries until the bytes fit the budget (lock held); how many left."""
        n = 0
        while self.bytes > self.budget:
            _, old = self._entries.popitem(last=False)
            self.bytes -= old.size
            n += 1
        self.evictions += n
        return n

    def remeasure(self, key: Hashable) -> None:
        """Measure ``key``'s entry again (a value that grew since it was stored, e.g. a decode run) and evict the
        least recently used other entries until the store fits its budget again (an entry larger than the whole
        budget is dropped itself)."""
        with self._lock:
            entry = self._entries.get(key)
        if entry is None:
            return
        size = self.sizeof(entry.value)  # outside the lock: measuring walks the value's tensors
        with self._lock:
            if self._entries.get(key) is not entry:
                return
            self.bytes += size - entry.size
            entry.size = size
            if size > self.budget:
                del self._entries[key]
                self.bytes -= size
                return
            self._entries.move_to_end(key)
            evicted = self._fit()
        if evicted:
            release_memory()

    def sweep(self) -> int:
        """Drop the entries unused for ``max_age`` seconds, and those unused for ``closed_grace`` seconds whose
        every session has closed (an entry never looked up from a session stays until its age or size says);
        then give the freed memory back to the system. Returns how many entries left."""
        now = self.clock()
        with self._lock:
            wait = min(self.closed_grace, self.max_age if self.max_age is not None else self.closed_grace)
            candidates = [(k, e) for k, e in self._entries.items() if now - e.used > wait]
        gone = []
        for key, entry in candidates:  # liveness asked outside the lock
            old = self.max_age is not None and now - entry.used > self.max_age
            closed = now - entry.used > self.closed_grace and entry.sessions and not any(
                self.active(s) for s in list(entry.sessions))
            if old or closed:
                gone.append((key, entry))
        with self._lock:
            n = 0
            for key, entry in gone:
                if self._entries.get(key) is entry and entry.used <= now:  # not used again meanwhile
                    del self._entries[key]
                    self.bytes -= entry.size
                    n += 1
            self.evictions += n
        if n:
            release_memory()
        return n

    def held(self) -> list[tuple[str, int, int]]:
        """What the store holds, by kind: ``(name, entries, bytes)``, largest first (a key's first item names
        its kind: the cached function's name)."""
        kinds: dict[str, list[int]] = {}
        with self._lock:
            for key, entry in self._entries.items():
                name = str(key[0] if isinstance(key, tuple) and key else key).rsplit(".", 1)[-1]
                row = kinds.setdefault(name, [0, 0])
                row[0] += 1
                row[1] += entry.size
        return sorted(((k, n, b) for k, (n, b) in kinds.items()), key=lambda r: -r[2])

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0


_SHARED: ByteBudgetCache | None = None
_SHARED_LOCK = threading.Lock()


def max_age_from_env() -> float:
    """``EXPLORER_CACHE_MAX_AGE_S`` (a positive number of seconds; otherwise the default, 30 minutes)."""
    try:
        age = float(os.environ.get(ENV_CACHE_AGE, DEFAULT_MAX_AGE_S))
    except ValueError:
        age = DEFAULT_MAX_AGE_S
    return age if 0 < age < float("inf") else DEFAULT_MAX_AGE_S


def shared_cache() -> ByteBudgetCache:
    """The process-wide store every :func:`byte_cached` function uses (budget and age read on first use). Inside
    a Streamlit server a daemon thread sweeps it every ``SWEEP_EVERY_S`` seconds (:meth:`ByteBudgetCache.sweep`)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = ByteBudgetCache(budget_from_env(), max_age=max_age_from_env())
            if _in_server():
                threading.Thread(target=_janitor, args=(_SHARED,), name="bytecache-sweep", daemon=True).start()
        return _SHARED


def _in_server() -> bool:
    from streamlit.runtime import Runtime

    return Runtime.exists()


def _janitor(cache: ByteBudgetCache) -> None:
    while cache is _SHARED:  # a test's fresh store ends the old one's thread
        time.sleep(SWEEP_EVERY_S)
        try:
            cache.sweep()
        except Exception:  # noqa: BLE001  never let the sweeper die: the size bound still holds without it
            pass


def process_rss() -> int:
    """This process's resident memory in bytes (``VmRSS``; 0 where ``/proc`` is missing)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def byte_cached(func: Callable | None = None, *, hash_funcs: dict[type, Callable[[Any], Hashable]] | None = None,
                sizeof: Callable[[Any], int] | None = None):
    """Cache ``func``'s results in :func:`shared_cache`, keyed by its name and its arguments not starting with ``_``.

    ``hash_funcs`` as in ``st.cache_*``: an argument of one of its types is keyed by what its function returns
    (a model by its stable key). ``sizeof``: how to measure a result, where the store's own measure would count
    what another entry holds already. The wrapper has ``.clear()`` (drops every entry of the shared store), like
    ``st.cache_resource`` functions, and ``.peek(...)`` (the cached value of a call, never computing it: a page
    draws a view that another session computed).
    """
    if func is None:
        return lambda f: byte_cached(f, hash_funcs=hash_funcs, sizeof=sizeof)
    sig = inspect.signature(func)
    name = f"{func.__module__}.{func.__qualname__}"
    kinds = tuple((hash_funcs or {}).items())

    def hashed(value: Any) -> Hashable:
        for kind, to_key in kinds:
            if isinstance(value, kind):
                return to_key(value)
        return value

    def key(*args, **kwargs) -> tuple:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return (name,) + tuple((k, hashed(v)) for k, v in bound.arguments.items() if not k.startswith("_"))

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return shared_cache().get_or_create(key(*args, **kwargs), lambda: func(*args, **kwargs), sizeof)

    def peek(*args, **kwargs) -> tuple[bool, Any]:
        """``(True, value)`` when the call with these arguments is cached, else ``(False, None)``."""
        return shared_cache().peek(key(*args, **kwargs))

    wrapper.peek = peek
    wrapper.clear = lambda: shared_cache().clear()
    return wrapper
