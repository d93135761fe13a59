"""The server's budget in the page: a refused action's message (its cost, the budget, a way out) and the note
shown while heavy work waits for a slot. The arithmetic and the line are :mod:`server.budget`'s.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

import streamlit as st

from engine.config import ModelConfig
from engine.cost import MIB, Verdict
from server import budget
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


def refuse_over_budget(action: str, config: ModelConfig, **sizes) -> None:
    """Stop the page with the cost message when ``action`` does not fit the budget; otherwise do nothing."""
    v = budget.verdict(action, config, **sizes)
    if not v.ok:
        st.error(refusal(v))
        st.stop()


def _busy_note() -> Callable[[], None]:
    note = st.empty()
    note.info(t("queue.busy"))
    return note.empty


@contextmanager
def heavy_work(action: str, config: ModelConfig, tokens: int, show: bool = True) -> Iterator[None]:
    """:func:`server.budget.heavy_work`, saying on the page while it waits for a slot. ``show``: leave it False
    inside ``st.cache_data`` functions, whose elements would be replayed."""
    with budget.heavy_work(action, config, tokens, waiting=_busy_note if show else None):
        yield
