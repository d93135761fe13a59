"""The page context every page gets from the sidebar (:class:`Explorer`), and the cached forward pass on it."""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st
import torch

from engine import CausalLM, ModelConfig
from engine.model import CausalLMOutput
from engine.tokenizer import TextTokenizer
from ui.budget import refuse_over_budget
from ui.caches import cached_trace, nonfinite_parts, register_model
from ui.escape import plotly
from ui.i18n import t

@dataclass
class Explorer:
    """What a page needs: the config, the (shared, read-only) model, the input and its display tokens.

    ``model_key`` identifies the weights: the model is registered under it, so every cache in ui/caches/
    keys the model by it; ``input_ids`` is ``[1, T]``; ``tokens`` has T display strings; ``tokenizer`` is None
    in random-id mode.
    """

    config: ModelConfig
    model: CausalLM
    model_key: str
    input_ids: torch.Tensor
    tokens: list[str]
    tokenizer: TextTokenizer | None
    source: str = "random"
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        register_model(self.model, self.model_key)

    def token_strings(self, ids: list[int]) -> list[str]:
        """Display strings for ids (the tokenizer's pieces, or ``#id`` in random-id mode)."""
        if self.tokenizer is None:
            return [f"#{i}" for i in ids]
        known = [i for i in ids if i < self.tokenizer.vocab_size]  # the model's V may exceed the tokenizer's
        pieces = dict(zip(known, self.tokenizer.token_strings(known))) if known else {}
        return [pieces.get(i, f"#{i}") for i in ids]

    def tick_labels(self) -> list[str]:
        """One Plotly axis label per position, unique even when tokens repeat, escaped for Plotly: ``"3 月"``."""
        return [plotly(f"{p} {tok}") for p, tok in enumerate(self.tokens)]


def trace(ctx: Explorer, labels: torch.Tensor | None = None) -> CausalLMOutput:
    """Cached full forward of the context's input (hidden states, attentions, activation record).

    Shows a warning on the page when any output is NaN or Inf. The returned tensors are shared: read only.
    """
    ids = tuple(ctx.input_ids[0].tolist())
    refuse_over_budget("trace", ctx.config, tokens=len(ids))  # engine/cost.py: never start what the budget refuses
    lab = tuple(labels[0].tolist()) if labels is not None else None
    out = cached_trace(ctx.model, ids, lab)
    bad = nonfinite_parts(ctx.model, ids, lab)
    if bad:
        st.warning(t("common.nonfinite", parts=", ".join(bad)))
    return out
