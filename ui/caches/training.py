"""The Training lab's caches: the corpus as token ids, and what a finished run is compared on (keyed by the
run's id: a run's models are its own, never rebuilt from a config). Shared by all sessions: read only."""

from __future__ import annotations

import numpy as np
import streamlit as st
import torch

import analysis
import analysis.probes
from engine import CausalLM
from engine.tokenizer import load_corpus
from ui.caches import tokenizer_for


@st.cache_data(max_entries=12, show_spinner=False)
def corpus_ids(vocab_size: int, corpus: str) -> np.ndarray:
    """The bundled corpus ``corpus`` ("zh" / "en" / "all") encoded with the sidebar's BPE at ``vocab_size``
    (``tokenizer_for``), so the trained model reads the ids the pages show. 1-D int64."""
    return np.asarray(tokenizer_for(vocab_size).encode(load_corpus(corpus)), dtype=np.int64)


@st.cache_data(max_entries=16, show_spinner=False)
def before_after(_init: CausalLM, _trained: CausalLM, job_id: str, ids: tuple[int, ...], tokens: tuple[str, ...],
                 layer: int, head: int, n_attn: int) -> dict:
    """Attention of one head on the first ``n_attn`` tokens (``[n, n]``, NaN above the diagonal), and the
    per-position loss table and mean loss of the whole input (every token, labels = input ids: the Loss page's
    mean with nothing masked), for the "before" clone and the trained model of job ``job_id`` (keyed by the
    job id, never by weights)."""
    input_ids = torch.tensor([ids])
    out = {}
    for which, model in (("init", _init), ("trained", _trained)):
        tr = analysis.run_trace(model, input_ids, input_ids)
        out[which] = {
            "attn": analysis.attention_stage(tr, layer, head, "softmax")[:n_attn, :n_attn],
            "loss": analysis.loss_table(tr, input_ids, input_ids, list(tokens)),
            "mean_loss": float(tr.loss),
        }
    return out


@st.cache_data(max_entries=8, show_spinner=False)
def poem_probe(_trained: CausalLM, _init: CausalLM, job_id: str, vocab_size: int, context_len: int) -> dict:
    """:func:`analysis.probes.poem_probe` of job ``job_id`` (keyed by the job id, never by weights), for a run
    that did not measure it in its own process (``EXPLORER_JOB_PROCESSES=0`` measures it in the job's thread)."""
    return analysis.probes.poem_probe(_trained, _init, tokenizer_for(vocab_size), context_len,
                                      stream=corpus_ids(vocab_size, "zh"))
