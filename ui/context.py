"""The page context every page gets from the sidebar (:class:`Explorer`), and the cached forward pass on it."""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st
import torch

from engine import CausalLM, ModelConfig
from engine.model import CausalLMOutput
from engine.tokenizer import TextTokenizer
from engine.tokenizer.pieces import CHAR_MAX_BYTES, TokenPiece, token_pieces
from ui.budget import refuse_over_budget
from ui.caches import cached_trace, nonfinite_parts, register_model
from ui.escape import plotly
from ui.i18n import t
from ui.tokens import label

@dataclass
class Explorer:
    """What a page needs: the config, the (shared, read-only) model, the input and its display tokens.

    ``model_key`` identifies the weights: the model is registered under it, so every cache in ui/caches/
    keys the model by it; ``input_ids`` is ``[1, T]``; ``tokens`` has T display strings (the one display rule,
    ``token_pieces``); ``tokenizer`` is None in random-id mode; ``languages`` are the model's declared languages
    (empty when it declares none: random init, a trained model, a checkpoint folder).
    """

    config: ModelConfig
    model: CausalLM
    model_key: str
    input_ids: torch.Tensor
    tokens: list[str]
    tokenizer: TextTokenizer | None
    source: str = "random"
    notes: list[str] = field(default_factory=list)
    languages: tuple[str, ...] = ()  # what the model declares it was trained on (``GGUFModelSpec.languages``)
    model_title: str = ""  # the model's display name, for sentences about it

    def __post_init__(self) -> None:
        register_model(self.model, self.model_key)

    def token_pieces(self, ids: list[int]) -> list[TokenPiece | str]:
        """The display rule (``engine.tokenizer.pieces.token_pieces``) for one sequence of ids: a
        :class:`TokenPiece` per id, ``#id`` for an id the tokenizer does not know (the model's V may exceed the
        tokenizer's) and for every id in random-id mode."""
        tok = self.tokenizer
        if tok is None:
            return [f"#{i}" for i in ids]
        known = [i for i in ids if i < tok.vocab_size]
        units = dict(zip(known, tok.units(known))) if known else {}
        names = dict(zip(known, tok.raw_tokens(known))) if known else {}
        got = token_pieces([units.get(i) for i in ids], [names.get(i, f"#{i}") for i in ids])
        return [p if i in units else f"#{i}" for p, i in zip(got, ids)]

    def token_strings(self, ids: list[int]) -> list[str]:
        """Display strings of one sequence of ids (the labels of :meth:`token_pieces`)."""
        return [label(p) for p in self.token_pieces(ids)]

    def pieces_after(self, prefix: list[int], ids: list[int]) -> list[TokenPiece | str]:
        """Each of ``ids`` as the token that would follow ``prefix`` (next-token candidates, lens predictions):
        bytes completing a character the prefix began are named (``‹8A›床₂/₂``); ``#id`` as in :meth:`token_pieces`."""
        tok = self.tokenizer
        if tok is None:
            return [f"#{i}" for i in ids]
        tail = list(prefix)[-(CHAR_MAX_BYTES - 1):]
        while any(i >= tok.vocab_size for i in tail):  # an unknown id ends the byte stream
            tail = tail[1:]
        known = [i for i in ids if i < tok.vocab_size]
        pieces = dict(zip(known, tok.pieces_after(tail, known))) if known else {}
        return [pieces.get(i, f"#{i}") for i in ids]

    def strings_after(self, prefix: list[int], ids: list[int]) -> list[str]:
        """The labels of :meth:`pieces_after`."""
        return [label(p) for p in self.pieces_after(prefix, ids)]

    @property
    def pieces(self) -> list[TokenPiece | str]:
        """:meth:`token_pieces` of the input (what ``tokens`` shows), for sentences that name a token."""
        return self.token_pieces(self.input_ids[0].tolist()) if self.tokenizer is not None else list(self.tokens)

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
