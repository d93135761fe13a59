"""The decode stepper's run, kept in one browser session's state: prompt, KV cache, next logits, step records.

A run is identified by the model, the prompt ids and the sampling settings (seed included). When any of them
changes, the run is replayed from the prefill up to the same number of steps: every step draws with the
generator of ``(seed, step)``, so the same seed and settings always give the same tokens. The cache lives in
``st.session_state`` (never in a shared cache): it belongs to this session's run and is updated in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import streamlit as st
import torch

from analysis.generation import filter_summary, filter_table, recompute_check
from engine import CausalLM, KVCache
from engine.generation import decode_step

TOP_N = 10  # tokens shown per distribution


@dataclass(frozen=True)
class Sampling:
    """The settings of a run (``do_sample`` False = greedy)."""

    do_sample: bool
    temperature: float
    top_k: int
    top_p: float
    min_p: float
    seed: int

    def kwargs(self) -> dict:
        return dict(do_sample=self.do_sample, temperature=self.temperature, top_k=self.top_k, top_p=self.top_p,
                    min_p=self.min_p, seed=self.seed)


@dataclass
class Run:
    key: tuple
    prompt: list[int]
    ids: list[int]
    cache: KVCache
    logits: torch.Tensor  # (V,) next-token logits, from the cache
    steps: list[dict] = field(default_factory=list)

    @property
    def prefill_len(self) -> int:
        return len(self.prompt)


@torch.no_grad()
def prefill(model: CausalLM, key: tuple, prompt: list[int]) -> Run:
    """Run the prompt once with ``use_cache=True``: the cache then holds every prompt position."""
    out = model(torch.tensor([prompt]), use_cache=True, logits_to_keep=1)
    return Run(key, list(prompt), list(prompt), out.past_key_values, out.logits[0, -1])


def advance(model: CausalLM, run: Run, sampling: Sampling, token_strings) -> None:
    """One decode step: pick a token from ``run.logits``, feed it against the cache, record what happened."""
    step = decode_step(model, run.logits, run.cache, step=len(run.steps), **sampling.kwargs())
    run.ids.append(step.token_id)
    run.cache, run.logits = step.past_key_values, step.logits
    run.steps.append(dict(
        token_id=step.token_id, position=len(run.ids) - 1, probability=step.probability,
        raw_probability=step.raw_probability, attentions=step.attentions,
        filters=filter_table(step.filters, token_strings, TOP_N), summary=filter_summary(step.filters),
        check=recompute_check(model, run.ids, step.logits),
    ))


def current_run(model: CausalLM, key: tuple, prompt: list[int], wanted: int, sampling: Sampling, token_strings,
                progress_text: str) -> Run:
    """The session's run with ``wanted`` steps: continued when the key matches, else replayed from the prefill
    (with a progress bar when more than a few steps must be recomputed)."""
    run = st.session_state.get("gen._run")
    if run is None or run.key != key or len(run.steps) > wanted:
        run = prefill(model, key, prompt)
        st.session_state["gen._run"] = run
    missing = wanted - len(run.steps)
    bar = st.progress(0.0, text=progress_text) if missing > 3 else None
    for i in range(missing):
        advance(model, run, sampling, token_strings)
        if bar is not None:
            bar.progress((i + 1) / missing, text=progress_text)
    if bar is not None:
        bar.empty()
    return run


def history_frame(run: Run, token_strings) -> pd.DataFrame:
    """One row per step: ``step``, ``position``, ``token``, ``probability`` (in the distribution drawn from),
    ``raw_probability``, ``max_abs_diff`` (cached vs recomputed logits), ``flops_cached``, ``flops_full``."""
    rows = [(k, s["position"], token_strings([s["token_id"]])[0], s["probability"], s["raw_probability"],
             s["check"]["max_abs_diff"], s["check"]["flops_cached"], s["check"]["flops_full"])
            for k, s in enumerate(run.steps, 1)]
    return pd.DataFrame(rows, columns=["step", "position", "token", "probability", "raw_probability", "max_abs_diff",
                                       "flops_cached", "flops_full"])
