"""The Interventions page's sweeps as shared background jobs: computed once per (model, prompts, experiment,
layers) for every session of the server, admitted by the server's heavy-job line, with progress, ETA and cancel.

A sweep (every head ablated, every layer x position patched) is 50-300 plain forwards of the prompt: a minute or
more for SmolLM2 on two cores. So it does not run in the page script: :func:`start` hands it to a thread that
waits for a slot of :func:`server.admission.admission` (the line the Training lab's runs wait in), then runs it,
reporting ``(done, total)`` plain forwards; the page polls the job from a ``st.fragment(run_every=...)`` and shows
its result once it is in the store. A class opening the same experiment finds the job already running (each
session becomes one of its watchers and sees the same bar) or its result already stored.

Cancel is per session: :func:`leave` removes one watcher; the sweep stops (its next progress report raises) only
when no watcher is left, or when every watcher's browser session is gone (tab closed). Plain Python objects, no
Streamlit elements; everything stored is shared by all sessions: read only.

The page's other caches (``st.cache_resource``, keyed by the model's stable key through ``hash_funcs=HASH`` and the
token ids; shared: read only) are at the end: the time of one forward for the estimate, the previews drawn before
a sweep has run, and one map cell's before/after.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Optional

import pandas as pd
import streamlit as st
import torch
from streamlit.runtime.scriptrunner import get_script_run_ctx

from analysis import intervention_views as views
from analysis.interventions import before_after
from engine.cost import trace_cost
from server.admission import Ticket, admission, session_liveness
from server.budget import view_work
from ui.caches import HASH

RESULTS = 32  # sweep results kept (a few hundred KB each at most: small DataFrames)
Progress = Callable[[float, float], None]


class Cancelled(Exception):
    """Raised inside a sweep's progress report once nobody watches it any more."""


@dataclass(eq=False)
class SweepJob:
    """One sweep being computed. ``done``/``total``: plain forwards of the prompt; ``started``: perf_counter when
    it got its slot (None while it waits in line); ``finished`` is set once it ended (result stored, error or
    cancelled)."""

    key: Hashable
    name: str
    done: float = 0.0
    total: float = 1.0
    submitted: float = field(default_factory=time.perf_counter)
    started: Optional[float] = None
    error: Optional[str] = None
    cancelled: bool = False
    ticket: Optional[Ticket] = None
    stop: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)
    watchers: dict = field(default_factory=dict)  # session id -> () -> bool (alive), or None outside a server

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total > 0 else 0.0

    def eta_s(self) -> Optional[float]:
        """Seconds left at the rate measured so far (None before the first report)."""
        if self.started is None or self.done <= 0:
            return None
        return (time.perf_counter() - self.started) * (self.total - self.done) / self.done

    def elapsed_s(self) -> float:
        return 0.0 if self.started is None else time.perf_counter() - self.started

    def ahead(self) -> Optional[int]:
        """Jobs ahead of it in the server's line (None once it runs)."""
        return admission().ahead(self.ticket) if self.ticket is not None and self.started is None else None

    def watched(self) -> bool:
        with _LOCK:
            alive = list(self.watchers.values())
        return any(a is None or a() for a in alive)


_LOCK = threading.Lock()
_RESULTS: OrderedDict = OrderedDict()
_PENDING: dict[Hashable, SweepJob] = {}


def result(key: Hashable) -> Any:
    """The stored result of ``key`` (None when not computed)."""
    with _LOCK:
        if key in _RESULTS:
            _RESULTS.move_to_end(key)
            return _RESULTS[key]
    return None


def pending(key: Hashable) -> Optional[SweepJob]:
    """The job computing ``key`` right now, if any."""
    with _LOCK:
        return _PENDING.get(key)


def store(key: Hashable, value: Any) -> Any:
    """Keep ``value`` as ``key``'s result (small sweeps the page runs itself land here too)."""
    with _LOCK:
        _RESULTS[key] = value
        _RESULTS.move_to_end(key)
        while len(_RESULTS) > RESULTS:
            _RESULTS.popitem(last=False)
    return value


def _lower_priority() -> None:
    """Below the page views, as the Training lab's runs (``EXPLORER_JOB_NICE``; Linux: a thread has its own nice)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), int(os.environ.get("EXPLORER_JOB_NICE", 10)))
    except (AttributeError, OSError, ValueError):
        pass


def start(key: Hashable, name: str, work: Callable[[Progress], Any], session: str) -> SweepJob:
    """The job computing ``key`` with ``session`` among its watchers: the running one if there is one (a class
    asking together computes it once), else a new one whose thread waits for a heavy-job slot and runs
    ``work(progress)``."""
    alive = session_liveness()
    with _LOCK:
        job = _PENDING.get(key)
        if job is not None:
            job.watchers[session] = alive
            return job
        job = _PENDING[key] = SweepJob(key, name, watchers={session: alive})

    def report(done: float, total: float) -> None:
        job.done, job.total = done, total
        if job.stop.is_set() or not job.watched():
            raise Cancelled

    def run() -> None:
        _lower_priority()
        line = admission()
        job.ticket = line.enqueue(name)
        try:
            if not line.wait(job.ticket, job.stop):
                job.cancelled = True
                return
            job.started = time.perf_counter()
            store(key, work(report))
        except Cancelled:
            job.cancelled = True
        except Exception as err:  # noqa: BLE001  shown on the page of every watcher
            job.error = f"{type(err).__name__}: {err}"
        finally:
            line.release(job.ticket)
            with _LOCK:
                if _PENDING.get(key) is job:
                    del _PENDING[key]
            job.finished.set()

    threading.Thread(target=run, name=f"sweep-{name}", daemon=True).start()
    return job


def leave(job: SweepJob, session: str) -> None:
    """``session`` stops watching ``job`` (its Cancel button); the sweep stops when nobody watches it."""
    with _LOCK:
        job.watchers.pop(session, None)
        empty = not job.watchers
    if empty:
        job.stop.set()
        if job.ticket is not None:
            admission().cancel(job.ticket)


def this_session() -> str:
    """The id of the browser session running this script (a job's watcher; ``"script"`` outside a server)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else "script"


# ---- the page's caches -----------------------------------------------------------------------------------------
@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=HASH)
def one_forward_s(model, ids: tuple) -> float:
    """:func:`analysis.intervention_views.forward_seconds` of ``ids``: measured once per model and prompt, for the
    estimate."""
    return views.forward_seconds(model, torch.tensor([ids]))


@st.cache_resource(max_entries=8, show_spinner=False, hash_funcs=HASH)
def head_scores(model, ids: tuple, period: int) -> pd.DataFrame:
    """:func:`analysis.intervention_views.head_scores` on the repeated sequence ``ids`` (shared: read only)."""
    return views.head_scores(model, torch.tensor([ids]), period)


@st.cache_resource(max_entries=8, show_spinner=False, hash_funcs=HASH)
def last_probs(model, ids: tuple) -> torch.Tensor:
    """Next-token probabilities after the last token of ``ids`` ``[V]`` (shared: read only)."""
    return views.next_token_probs(model, torch.tensor([ids]))


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=HASH)
def cell_view(model, ids: tuple, what: tuple, layer: int, position: int, _strings) -> dict:
    """:func:`analysis.interventions.before_after` of one map cell: ``what`` as in
    :func:`analysis.intervention_views.cell_interventions` (0-based); shared: read only."""
    runs = views.cell_interventions(model, what)
    with view_work(2 * trace_cost(model.config, len(ids)).gflop):
        return before_after(model, torch.tensor([ids]), runs, layer, _strings, position=position)
