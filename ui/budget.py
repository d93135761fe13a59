"""The server's per-action budget, in the page: refuse what costs too much, with its cost and a way out.

The estimates are :mod:`engine.cost`'s (torch-free arithmetic); the limits are read from the environment on each
check (``EXPLORER_MAX_ACTION_MB``, ``EXPLORER_MAX_ACTION_GFLOP``, ``EXPLORER_MAX_TRAIN_GFLOP``; see the README), so
a lecturer raises them for a big server without touching code.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import streamlit as st

from engine.config import ModelConfig
from engine.cost import MIB, Budget, Verdict, check, gradient_cost, trace_cost
from ui.admission import HEAVY_GFLOP, VIEW_GFLOP, admission, view_slot
from ui.i18n import t


def megabytes(n: int) -> str:
    """Bytes as MB (2^20) with a thousands separator, or GB above 10 000 MB."""
    mb = n / MIB
    return f"{mb / 1024:,.1f} GB" if mb >= 10_000 else f"{mb:,.0f} MB" if mb >= 10 else f"{mb:.1f} MB"


def flops(gflop: float) -> str:
    return t("budget.flops", n=f"{gflop:,.0f}" if gflop >= 10 else f"{gflop:.2g}")


def refusal(v: Verdict) -> str:
    """The message of a refused action: its cost by part, the budget, and the nearest affordable settings."""
    parts = ", ".join(f"{t('budget.part.' + name)} {megabytes(b)}" for name, b in v.cost.parts.items() if b > 0)
    text = t("budget.refused", action=t(f"budget.action.{v.cost.action}"), mem=megabytes(v.cost.memory), parts=parts,
             flops=flops(v.cost.gflop), budget_mem=megabytes(v.budget.memory),
             budget_flops=flops(v.budget.gflop_for(v.cost.action)))
    if v.suggestions:
        options = " / ".join(t(f"budget.try.{knob}", n=n) for knob, n in v.suggestions.items())
        return text + " " + t("budget.suggest", options=options)
    return text + " " + t("budget.no_suggestion")


def verdict(action: str, config: ModelConfig, **sizes) -> Verdict:
    """:func:`engine.cost.check` against the server's current budget (``sizes``: tokens, steps, batch, seq_len)."""
    return check(action, config, Budget.from_env(), **sizes)


def refuse_over_budget(action: str, config: ModelConfig, **sizes) -> None:
    """Stop the page with the cost message when ``action`` does not fit the budget; otherwise do nothing."""
    v = verdict(action, config, **sizes)
    if not v.ok:
        st.error(refusal(v))
        st.stop()


@contextmanager
def heavy_work(action: str, config: ModelConfig, tokens: int, show: bool = True) -> Iterator[None]:
    """Run a trace or gradient computation over :data:`ui.admission.HEAVY_GFLOP` through the server's line of
    heavy jobs; one over :data:`ui.admission.VIEW_GFLOP` through the page views' line (:func:`view_work`); small
    ones run at once, never queued. ``show``: say on the page that it waits for a slot (leave it False inside
    ``st.cache_data`` functions, whose elements would be replayed)."""
    cost = (trace_cost if action == "trace" else gradient_cost)(config, tokens)
    if cost.gflop < HEAVY_GFLOP:
        with view_work(cost.gflop):
            yield
        return
    line = admission()
    note = st.empty() if show and line.running >= line.limit else None
    if note is not None:
        note.info(t("queue.busy"))
    with line.slot(action):
        if note is not None:
            note.empty()
        yield


@contextmanager
def view_work(gflop: float) -> Iterator[None]:
    """Page-view work of ``gflop`` GFLOP: over :data:`ui.admission.VIEW_GFLOP` it waits for the views' line
    (one at a time, in order of arrival: :func:`ui.admission.view_line`), below it runs at once."""
    if gflop < VIEW_GFLOP:
        yield
        return
    with view_slot():
        yield
