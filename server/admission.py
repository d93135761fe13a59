"""Admission control for heavy work: at most N heavy jobs per server process at once, the rest wait in line.

Heavy work is what keeps a core busy for seconds: a training run, a Pre/Post race, large traces and gradient
computations (those over :data:`HEAVY_GFLOP`). Small interactive page views never come here, so they are never
queued behind training. A class pressing "Start" together is served in turn (first come, first served), each
run at full speed, instead of every run crawling while they fight for two cores.

Plain Python (``threading``), no Streamlit: one :class:`Admission` per process (:func:`admission`), shared by
every session's threads. A waiting job sees its place in line (:meth:`Admission.ahead`) and can leave the line
at any time (its stop event), e.g. when its browser tab was closed.

Settings (environment, read when the process first asks):
    ``EXPLORER_MAX_HEAVY_JOBS``: how many heavy jobs run at once (default: the number of CPU cores, at least 1).
    ``EXPLORER_TORCH_THREADS``: torch threads inside each job (default 1). On this project's shared 2-core
    machine a default run with 2 threads took 5-9x as long as with 1 while other processes kept the cores busy
    (a two-thread team waits at every operation for a thread the OS has parked); at other times
    ``bench/bench_threads.py`` found 2 threads about 2x faster. One thread never fell off that cliff; see
    docs/benchmarks.md, "Training runs on a shared server".
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Optional

ENV_JOBS = "EXPLORER_MAX_HEAVY_JOBS"
ENV_THREADS = "EXPLORER_TORCH_THREADS"
HEAVY_GFLOP = 20.0  # interactive actions above this many GFLOP (~0.1-0.5 s of a core) go through the queue
ENV_VIEWS = "EXPLORER_MAX_HEAVY_VIEWS"
VIEW_GFLOP = 2.0  # page-view work above this (a SmolLM2 trace, its logit lens, a decode step's recompute) ...
# ... goes through the views' own line (:func:`view_line`), one at a time by default, in order of arrival


def _env_int(name: str, default: int) -> int:
    try:
        v = int(os.environ.get(name, default))
    except ValueError:
        return default
    return v if v >= 1 else default


def torch_threads() -> int:
    """Torch intra-op threads for one heavy job (``EXPLORER_TORCH_THREADS``, default 1)."""
    return _env_int(ENV_THREADS, 1)


@dataclass(eq=False)
class Ticket:
    """One job's place: ``admitted`` once it holds a slot; ``left`` once it gave the slot back or gave up."""

    name: str
    enqueued: float = field(default_factory=time.perf_counter)
    admitted: Optional[float] = None
    left: bool = False


class Admission:
    """A first-come-first-served line in front of ``limit`` slots (thread-safe)."""

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.limit = limit
        self._cond = threading.Condition()
        self._waiting: list[Ticket] = []
        self._running: list[Ticket] = []

    # ---- what the page shows ------------------------------------------------------------------------------
    def ahead(self, ticket: Ticket) -> Optional[int]:
        """Jobs ahead of ``ticket`` in line (0 = next); None once it runs or left."""
        with self._cond:
            return self._waiting.index(ticket) if ticket in self._waiting else None

    @property
    def running(self) -> int:
        with self._cond:
            return len(self._running)

    @property
    def waiting(self) -> int:
        with self._cond:
            return len(self._waiting)

    # ---- what a job does ------------------------------------------------------------------------------------
    def enqueue(self, name: str = "job") -> Ticket:
        """Take a place at the end of the line (returns at once)."""
        ticket = Ticket(name)
        with self._cond:
            self._waiting.append(ticket)
            self._cond.notify_all()
        return ticket

    def wait(self, ticket: Ticket, stop: Optional[threading.Event] = None, poll_s: float = 0.2) -> bool:
        """Block until ``ticket`` is first in line and a slot is free, then hold the slot: True.

        Returns False (and leaves the line) when ``stop`` is set first.
        """
        with self._cond:
            while True:
                if ticket.left or (stop is not None and stop.is_set()):
                    self._drop(ticket)
                    return False
                if self._waiting and self._waiting[0] is ticket and len(self._running) < self.limit:
                    self._waiting.pop(0)
                    self._running.append(ticket)
                    ticket.admitted = time.perf_counter()
                    self._cond.notify_all()  # the next one in line may fit too
                    return True
                self._cond.wait(poll_s)

    def cancel(self, ticket: Ticket) -> bool:
        """Take ``ticket`` out of the line at once if it is still waiting: True then (it never gets a slot).
        False when it already holds a slot (or left): the job must be stopped instead."""
        with self._cond:
            if ticket not in self._waiting:
                return False
            self._drop(ticket)
            return True

    def release(self, ticket: Ticket) -> None:
        """Give the slot back (or leave the line); idempotent."""
        with self._cond:
            self._drop(ticket)

    def _drop(self, ticket: Ticket) -> None:
        if ticket in self._running:
            self._running.remove(ticket)
        if ticket in self._waiting:
            self._waiting.remove(ticket)
        ticket.left = True
        self._cond.notify_all()

    @contextmanager
    def slot(self, name: str = "job", stop: Optional[threading.Event] = None) -> Iterator[bool]:
        """``with admission().slot("trace") as admitted:`` wait for a slot (False if stopped first), release after."""
        ticket = self.enqueue(name)
        try:
            yield self.wait(ticket, stop)
        finally:
            self.release(ticket)


_INSTANCE: Optional[Admission] = None
_INSTANCE_LOCK = threading.Lock()


def admission() -> Admission:
    """The process-wide line (created on first use with ``EXPLORER_MAX_HEAVY_JOBS`` slots)."""
    global _INSTANCE
    with _INSTANCE_LOCK:
        if _INSTANCE is None:
            _INSTANCE = Admission(_env_int(ENV_JOBS, max(1, os.cpu_count() or 1)))
        return _INSTANCE


_VIEWS: Optional[Admission] = None
_HOLDING = threading.local()


def view_line() -> Admission:
    """The process-wide line of the page views' large computations (``EXPLORER_MAX_HEAVY_VIEWS`` slots, default 1).

    Separate from the training line (:func:`admission`), so a page view never waits behind a training run. With
    twenty students asking for twenty different SmolLM2 views at once, one slot serves them in order of arrival:
    the first sees its page after about its time alone, instead of every one of them after twenty times it.
    """
    global _VIEWS
    with _INSTANCE_LOCK:
        if _VIEWS is None:
            _VIEWS = Admission(_env_int(ENV_VIEWS, 1))
        return _VIEWS


@contextmanager
def view_slot(name: str = "view") -> Iterator[None]:
    """Hold a slot of :func:`view_line` (waiting in line for it); re-entrant within a thread (a view computation
    that asks for a trace inside its slot does not wait for itself)."""
    if getattr(_HOLDING, "depth", 0):
        _HOLDING.depth += 1
        try:
            yield
        finally:
            _HOLDING.depth -= 1
        return
    with view_line().slot(name):
        _HOLDING.depth = 1
        try:
            yield
        finally:
            _HOLDING.depth = 0


def reset(limit: Optional[int] = None) -> Admission:
    """A fresh process-wide line (tests and benchmarks): ``limit`` slots, or the environment's setting."""
    global _INSTANCE
    with _INSTANCE_LOCK:
        _INSTANCE = Admission(limit if limit is not None else _env_int(ENV_JOBS, max(1, os.cpu_count() or 1)))
        return _INSTANCE


def session_liveness() -> Optional["callable"]:
    """A thread-safe ``() -> bool`` telling whether the calling browser session is still connected.

    Call it in a session's script thread; a job's watchdog calls the result from its own thread. When the tab is
    closed Streamlit marks the session inactive at once (the websocket closed), long before it drops the session,
    so a run can stop within a second or two. None outside a Streamlit server (tests, scripts): never stop.
    """
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or not Runtime.exists():
        return None
    runtime, session_id = Runtime.instance(), ctx.session_id

    def alive() -> bool:
        try:
            return bool(runtime.is_active_session(session_id))
        except Exception:  # a runtime being shut down: let the run end on its own
            return True

    return alive
