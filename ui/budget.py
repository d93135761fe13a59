"""The server's per-action budget, in the page: refuse what costs too much, with its cost and a way out.

The estimates are :mod:`engine.cost`'s (torch-free arithmetic); the limits are read from the environment on each
check (``EXPLORER_MAX_ACTION_MB``, ``EXPLORER_MAX_ACTION_GFLOP``, ``EXPLORER_MAX_TRAIN_GFLOP``; see the README), so
a lecturer raises them for a big server without touching code.
"""

from __future__ import annotations

import streamlit as st

from engine.cost import MIB, Budget, Verdict, check
from engine.config import ModelConfig
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
