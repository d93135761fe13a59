"""The Training lab's caches: the corpus as token ids, and what a finished run is compared on (keyed by the
run's id: a run's models are its own, never rebuilt from a config). Shared by all sessions: read only."""

from __future__ import annotations

import numpy as np
import streamlit as st
import torch

import analysis
from analysis.probes import head_slot_attention, measure_poem_structure, poem_slot_pairs
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
    """``measure_poem_structure`` (trained vs the "before" clone) and ``head_slot_attention`` on the poem window
    of ``poem_slot_pairs``, for job ``job_id``. Also the share of "，" and "。" among all tokens of the poem
    stream (``freq``): what a model that only knows how common they are would predict everywhere. Returns
    ``{"error": message}`` when the probe cannot run (e.g. "，"/"。" are not tokens of this vocabulary)."""
    tok = tokenizer_for(vocab_size)
    comma, period = tok.encode("，"), tok.encode("。")
    unk = tok.unk_token_id
    if len(comma) != 1 or len(period) != 1 or comma == period or unk in (comma[0], period[0]):
        return {"error": "punct"}
    stream = corpus_ids(vocab_size, "zh")
    freq = {"comma": float(np.mean(stream == comma[0])), "period": float(np.mean(stream == period[0]))}
    try:
        ps = measure_poem_structure(_trained, tok, init_model=_init, context_len=context_len)
        mc = _trained.config
        window, pairs = poem_slot_pairs(tok, n_tokens=min(64, mc.max_position_embeddings) if mc.has_position_limit else 64)
        scores = head_slot_attention(_trained, window, pairs)
        init_scores = head_slot_attention(_init, window, pairs)
    except ValueError as err:
        return {"error": str(err)}
    return {
        "structure": ps.to_dict(),
        "freq": freq,
        "slots": analysis.slot_attention_table(scores),
        "init_slots": analysis.slot_attention_table(init_scores),
        "uniform_slot": float(np.mean([1.0 / (q + 1) for q, _ in pairs])),
        "n_pairs": len(pairs),
        "window": tok.decode(window),
    }
