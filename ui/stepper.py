"""The decode stepper's runs: prompt, KV cache, next logits, step records, shared by every session on the same run.

A run is identified by the model, the prompt ids and the sampling settings (seed included). Every step draws
with the generator of ``(seed, step)``, so the same key always gives the same tokens: a run is therefore
computed once per server for every session with that key (a class that opened one link and presses "Next token"
computes each step once, whoever presses first), kept in the byte-bounded store (``server/bytecache.py``, which
re-measures it as it grows), and only grows. A session keeps just its key and its step count
(:class:`RunRef` in ``st.session_state["gen._run"]``); what it shows at step n is :meth:`SharedRun.at`, a view
of the shared run's first n steps (the KV cache cut to the prompt + n positions, no copy). A run the store has
dropped is replayed from the prefill when a session asks for it again.

A new prompt, model or sampling setting starts the page at step 0 (:func:`new_run`); a session's first run (a
link's) goes to the link's step count (a link's step count replays the same run).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pandas as pd
import streamlit as st
import torch

from analysis.generation import filter_summary, filter_table, recompute_check
from engine import CausalLM, KVCache
from engine.generation import decode_step, forward_flops
from server.budget import view_work
from server.bytecache import shared_cache

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
    """What a session shows: the run's first ``len(steps)`` steps (a view of a :class:`SharedRun`; read only)."""

    key: tuple
    prompt: list[int]
    ids: list[int]
    cache: KVCache
    logits: torch.Tensor  # (V,) next-token logits, from the cache
    steps: list[dict] = field(default_factory=list)

    @property
    def prefill_len(self) -> int:
        return len(self.prompt)


@dataclass(frozen=True)
class RunRef:
    """What a session keeps of its run between reruns: the key and the decoded ids (no tensors)."""

    key: tuple
    ids: list[int]


@dataclass
class SharedRun:
    """One decode run for every session with its key. Grows under ``lock``; earlier steps never change.

    ``logits[k]`` (V,) are the next-token logits after k steps; ``cache`` holds every position decoded so far.
    """

    key: tuple
    prompt: list[int]
    cache: KVCache
    logits: list[torch.Tensor]
    tokens: list[int] = field(default_factory=list)
    steps: list[dict] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def at(self, n: int) -> Run:
        """The run after its first ``n`` steps (``n <= len(self.steps)``): the cache cut to prompt + n positions."""
        S = len(self.prompt) + n
        cache = KVCache()
        cache.key_cache = [k[:, :, :S] for k in list(self.cache.key_cache)]  # (B, n_kv, S, hd) views
        cache.value_cache = [v[:, :, :S] for v in list(self.cache.value_cache)]
        return Run(self.key, list(self.prompt), self.prompt + self.tokens[:n], cache, self.logits[n], self.steps[:n])


@torch.no_grad()
def prefill(model: CausalLM, key: tuple, prompt: list[int]) -> SharedRun:
    """Run the prompt once with ``use_cache=True``: the cache then holds every prompt position."""
    with view_work(forward_flops(model.config, len(prompt), len(prompt)) / 1e9):
        out = model(torch.tensor([prompt]), use_cache=True, logits_to_keep=1)
    return SharedRun(key, list(prompt), out.past_key_values, [out.logits[0, -1]])


def advance(model: CausalLM, run: SharedRun, sampling: Sampling, strings_after) -> None:
    """One decode step (``run.lock`` held): pick a token from the latest logits, feed it against the cache, record
    what happened, and check it against a full recompute of the sequence.

    ``strings_after(prefix, ids)`` labels candidate ids as the token following ``prefix`` (``Explorer.strings_after``;
    language-neutral, so the shared run's tables serve every session).
    """
    prefix = run.prompt + run.tokens
    S = len(prefix) + 1
    with view_work((forward_flops(model.config, 1, S) + forward_flops(model.config, S, S)) / 1e9):
        step = decode_step(model, run.logits[-1], run.cache, step=len(run.steps), **sampling.kwargs())
        ids = run.prompt + run.tokens + [step.token_id]
        check = recompute_check(model, ids, step.logits)
    run.cache = step.past_key_values
    run.steps.append(dict(
        token_id=step.token_id, position=len(ids) - 1, probability=step.probability,
        raw_probability=step.raw_probability, attentions=step.attentions,
        filters=filter_table(step.filters, lambda c: strings_after(prefix, c), TOP_N),
        summary=filter_summary(step.filters), check=check,
    ))
    run.logits.append(step.logits)
    run.tokens.append(step.token_id)  # last: a reader that sees n tokens finds n steps and n + 1 logits


def new_run(key: tuple) -> bool:
    """True when this session's run was made for another model, prompt or sampling setting (temperature, top-k,
    top-p, min-p, sampling on/off, seed) than ``key``'s: the page then starts a new run at step 0. A session's
    first run (a link's) is not new: it replays to the link's step."""
    run = st.session_state.get("gen._run")
    return run is not None and run.key != key


def current_run(model: CausalLM, key: tuple, prompt: list[int], wanted: int, sampling: Sampling, strings_after,
                progress_text: str) -> Run:
    """This session's run at ``wanted`` steps: the shared run of ``key``, continued when it has fewer steps
    (with a progress bar when more than a few must be computed, e.g. a link that opens at step 20)."""
    store_key = ("ui.stepper.run", key)
    shared = shared_cache().get_or_create(store_key, lambda: prefill(model, key, prompt))
    if len(shared.tokens) < wanted:
        with shared.lock:  # one session computes the next steps; the others wait for them and reuse them
            missing = wanted - len(shared.tokens)
            bar = st.progress(0.0, text=progress_text) if missing > 3 else None
            for i in range(missing):
                advance(model, shared, sampling, strings_after)
                if bar is not None:
                    bar.progress((i + 1) / missing, text=progress_text)
            if bar is not None:
                bar.empty()
        shared_cache().remeasure(store_key)  # the run grew: the store's bound counts it at its new size
    run = shared.at(wanted)
    st.session_state["gen._run"] = RunRef(key, list(run.ids))
    return run


def history_frame(run: Run, token_strings) -> pd.DataFrame:
    """One row per step: ``step``, ``position``, ``token``, ``probability`` (in the distribution drawn from),
    ``raw_probability``, ``max_abs_diff`` (cached vs recomputed logits), ``flops_cached``, ``flops_full``; the
    tokens labelled as one sequence (``token_strings(run.ids)``)."""
    labels = token_strings(run.ids)
    rows = [(k, s["position"], labels[s["position"]], s["probability"], s["raw_probability"],
             s["check"]["max_abs_diff"], s["check"]["flops_cached"], s["check"]["flops_full"])
            for k, s in enumerate(run.steps, 1)]
    return pd.DataFrame(rows, columns=["step", "position", "token", "probability", "raw_probability", "max_abs_diff",
                                       "flops_cached", "flops_full"])
