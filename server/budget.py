"""The server's per-action budget: what an action costs against the limits, and the line heavy work waits in.

The estimates are :mod:`engine.cost`'s (torch-free arithmetic); the limits are read from the environment on each
check (``EXPLORER_MAX_ACTION_MB``, ``EXPLORER_MAX_ACTION_GFLOP``, ``EXPLORER_MAX_TRAIN_GFLOP``; see docs/lecturers.md), so
a lecturer raises them for a big server without touching code. The words for a refusal and for waiting are the
page's (:mod:`ui.budget`).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator, Optional

from engine.config import ModelConfig
from engine.cost import Budget, Verdict, check, gradient_cost, trace_cost
from server.admission import HEAVY_GFLOP, VIEW_GFLOP, admission, view_slot


def verdict(action: str, config: ModelConfig, **sizes) -> Verdict:
    """:func:`engine.cost.check` against the server's current budget (``sizes``: tokens, steps, batch, seq_len)."""
    return check(action, config, Budget.from_env(), **sizes)


@contextmanager
def heavy_work(action: str, config: ModelConfig, tokens: int,
               waiting: Optional[Callable[[], Callable[[], None]]] = None) -> Iterator[None]:
    """Run a trace or gradient computation over :data:`server.admission.HEAVY_GFLOP` through the server's line of
    heavy jobs; one over :data:`server.admission.VIEW_GFLOP` through the page views' line (:func:`view_work`);
    small ones run at once, never queued. ``waiting``: called when the work has to wait for a slot (every slot is
    taken); it returns the function called once the slot is there (the page shows and clears a note with it)."""
    cost = (trace_cost if action == "trace" else gradient_cost)(config, tokens)
    if cost.gflop < HEAVY_GFLOP:
        with view_work(cost.gflop):
            yield
        return
    line = admission()
    done = waiting() if waiting is not None and line.running >= line.limit else None
    with line.slot(action):
        if done is not None:
            done()
        yield


@contextmanager
def view_work(gflop: float) -> Iterator[None]:
    """Page-view work of ``gflop`` GFLOP: over :data:`server.admission.VIEW_GFLOP` it waits for the views' line
    (one at a time, in order of arrival: :func:`server.admission.view_line`), below it runs at once."""
    if gflop < VIEW_GFLOP:
        yield
        return
    with view_slot():
        yield
