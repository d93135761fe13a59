"""The caches of the pages' views, keyed by the model's stable key (:func:`ui.caches.model_key`, through
``hash_funcs=HASH``) and the token ids. Shared by all sessions: read only. The ``byte_cached`` ones live in the
server's byte store with the models and traces (server/bytecache.py: bounded in bytes, by age, and given back
once their sessions closed); they return the shared object itself, not a copy as ``st.cache_data`` does."""

from __future__ import annotations

import copy
import json
import threading
from typing import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import torch

import analysis
from analysis import follow, heads, lens, prepost
from engine import CausalLM, ModelConfig
from engine.cost import lens_flops
from engine.parity import attention_paths_agree, reference_check
from engine.tokenizer import TextTokenizer
from server.budget import view_work
from server.bytecache import byte_cached, shared_cache, tensor_bytes
from ui.budget import heavy_work
from ui.caches import HASH, cached_trace, model_key, register_model
from ui.figures.attention import layers_heads_grid
from ui.i18n import t


def figure_bytes(fig: go.Figure) -> int:
    """What a figure holds beyond its few KB of layout: the bytes of its traces' arrays (cells, their text)."""
    return sum(np.asarray(trace[name]).nbytes for trace in fig.data for name in ("x", "y", "z", "text", "customdata")
               if name in trace and trace[name] is not None)


def attention_grid(model: CausalLM, ids: tuple[int, ...], n_grid: int, lang: str) -> go.Figure:
    """The Attention page's layers x heads small multiples (about 2/3 of that page's rerun time when built): kept
    per model, input and language in the server's byte store (:func:`_attention_grid`); each run gets its own copy
    (the page styles the figure it draws). The copy is made from a deep copy of the shared figure's spec: plotly's
    constructors write into what they are given (each trace's ``type`` taken out while it is built), so a figure
    built from the shared one would, for a moment, take it apart under another session copying it at once."""
    shared = _attention_grid(model, ids, n_grid, lang)  # read only: every session's runs share it
    return go.Figure(copy.deepcopy(shared.to_plotly_json()))


@byte_cached(hash_funcs=HASH, sizeof=figure_bytes)  # SmolLM2: 270 maps of 32 x 32, ~2 MB of cells
def _attention_grid(model: CausalLM, ids: tuple[int, ...], n_grid: int, lang: str) -> go.Figure:
    attentions = cached_trace(model, ids).attentions
    tri = np.triu(np.ones((n_grid, n_grid), dtype=bool), k=1)
    grid = []
    for layer in attentions:
        a = layer[0].float().cpu().numpy()[:, :n_grid, :n_grid]  # (nh, n, n)
        grid.append([np.where(tri, np.nan, a[h]) for h in range(a.shape[0])])
    nh = len(grid[0])
    return layers_heads_grid(grid, [t("attn.layer_short", lang=lang, layer=i + 1) for i in range(len(grid))],
                             [t("attn.head_short", lang=lang, head=h + 1) for h in range(nh)],
                             t("attn.grid_chart", lang=lang, L=len(grid), nh=nh), t("attn.unit_prob", lang=lang))


@byte_cached(hash_funcs=HASH)  # SmolLM2: 30 layers x 9 heads x 100 x 100 floats, ~11 MB
def repeat_attentions(model: CausalLM, period: int, exclude: tuple[int, ...]) -> tuple[torch.Tensor, ...]:
    """Attention patterns of the model on ``period`` random tokens repeated once (shared: read only)."""
    ids = heads.repeated_random_tokens(model.config.vocab_size, period, seed=0, exclude=exclude)  # (1, 2n)
    with torch.no_grad():
        return model(ids, output_attentions=True).attentions


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=HASH)
def role_table(model: CausalLM, ids: tuple[int, ...], period: int, exclude: tuple[int, ...]) -> pd.DataFrame:
    """:func:`analysis.heads.head_roles` of every head on the input and on the repeated random tokens."""
    return heads.head_roles(cached_trace(model, ids).attentions, repeat_attentions(model, period, exclude), period, ids)


@st.cache_resource(show_spinner=False)
def _lens_pending() -> tuple[dict, threading.Lock]:
    """The lens tables being computed (key -> the computing session's latest progress fraction and an event set
    when it is done), shared by all sessions; the tables themselves live in the server's byte store."""
    return {}, threading.Lock()


def _lens_key(model: CausalLM, ids: tuple[int, ...], positions: tuple[int, ...] | None,
              depths: tuple[int, ...] | None) -> tuple:
    return ("ui.caches.views.lens_table", model_key(model), ids, positions, depths)


def lens_whole(model: CausalLM, ids: tuple[int, ...]) -> tuple[bool, pd.DataFrame | None]:
    """``(True, table)`` when some session computed this model's and input's whole lens table, else
    ``(False, None)``; never computes."""
    return shared_cache().peek(_lens_key(model, ids, None, None))


def lens_table(model: CausalLM, ids: tuple[int, ...], progress: Callable[[float], None],
               positions: tuple[int, ...] | None = None, depths: tuple[int, ...] | None = None) -> pd.DataFrame:
    """The logit-lens table of this model and input (of ``positions`` and ``depths`` only, ascending, e.g. the cells
    a chart draws; None: all), computed once for every session that asks: a session asking while another computes
    it waits for that computation (its bar follows the other's progress) instead of computing it again. Some cells
    are the whole table's rows when some session computed the whole. The computation waits for the page views' line
    (:func:`server.budget.view_work`): for SmolLM2 each cell is a row through the 49,152-row head."""
    if positions is not None or depths is not None:
        found, whole = lens_whole(model, ids)
        if found:
            keep = whole["position"].isin(positions or whole["position"]) & whole["depth"].isin(depths or whole["depth"])
            return whole[keep].reset_index(drop=True)
    pending, lock = _lens_pending()
    key = _lens_key(model, ids, positions, depths)
    while True:
        with lock:
            found, table = shared_cache().peek(key)
            if found:
                return table
            job = pending.get(key)
            if job is None:
                job = pending[key] = {"fraction": 0.0, "done": threading.Event()}
                break
        while not job["done"].wait(0.25):  # another session computes it
            progress(job["fraction"])

    def report(fraction: float) -> None:
        job["fraction"] = fraction
        progress(fraction)

    try:
        residual = lens.residual_stream(cached_trace(model, ids))
        cells = len(ids if positions is None else positions) * len(residual if depths is None else depths)
        with view_work(lens_flops(model.config, cells) / 1e9):
            table = lens.logit_lens(model, residual, progress=report, positions=positions, depths=depths)
        return shared_cache().get_or_create(key, lambda: table)  # kept in the byte budget (SmolLM2: ~0.5 MB)
    finally:
        with lock:
            pending.pop(key, None)
        job["done"].set()  # the waiters find the table (or, after an error, compute it themselves)


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=HASH)
def follow_view(model: CausalLM, ids: tuple[int, ...], position: int) -> pd.DataFrame:
    """:func:`analysis.follow.follow_steps` of one position (the lens of its ~2L+1 residual rows in one product
    with the head: a wait in the views' line for a large vocabulary)."""
    c = model.config
    with view_work(2e-9 * (2 * c.num_hidden_layers + 1) * c.hidden_size * c.vocab_size):
        return follow.follow_steps(model, cached_trace(model, ids), position)


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=HASH)
def attribution_view(model: CausalLM, ids: tuple[int, ...], position: int, token: int, other: int | None,
                     by_head: bool) -> follow.Attribution:
    """:func:`analysis.follow.logit_attribution` of one position and token (minus ``other``'s logit)."""
    return follow.logit_attribution(model, cached_trace(model, ids), position, token, other, by_head)


@st.cache_resource(max_entries=1, show_spinner=False)
def pretrained_tokenizer(name: str) -> tuple[TextTokenizer | None, str]:
    """A named model's tokenizer (SmolLM2's), or None and the reason it is not available."""
    try:
        return TextTokenizer.from_pretrained(name), ""
    except Exception as err:  # missing package, missing method, broken file: the page says so
        return None, f"{type(err).__name__}: {err}"


def _twins_own_bytes(models: dict[str, CausalLM]) -> int:
    """The bytes the twins add to the model (their norms): its shared weights are counted where it is held."""
    return tensor_bytes(models) - tensor_bytes(next(iter(models.values())))


@byte_cached(hash_funcs=HASH, sizeof=_twins_own_bytes)
def placement_models(model: CausalLM) -> dict[str, CausalLM]:
    """``{placement: model}`` for the four norm placements on the model's weights, its own placement first (the
    model itself, never modified; :func:`analysis.prepost.placement_models`).

    The twins share the model's tensors (counted once, with the model); the entry is used with the model and
    leaves the store soon after it.
    """
    models = prepost.placement_models(model)
    for placement, twin in models.items():
        if twin is not model:
            register_model(twin, f"{model_key(model)}|{placement}")
    return models


@byte_cached(hash_funcs=HASH)  # shared, not copied per session: read only
def placement_comparison(model: CausalLM, ids: tuple[int, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``analysis.prepost.placement_comparison`` of the four placements on ids ``[1, T]``: (norms by depth, drift
    from the model's own placement by depth)."""
    return prepost.placement_comparison(placement_models(model), torch.tensor([ids]))


@byte_cached(hash_funcs=HASH)
def gradients(model: CausalLM, ids: tuple[int, ...]) -> pd.DataFrame:
    """``analysis.gradient_norms`` of the LM loss (labels = input ids) for the four placements, stacked with a
    ``placement`` column (the model's own first). Uses autograd.grad: no ``.grad`` is written on the shared models."""
    input_ids = torch.tensor([ids])
    with heavy_work("gradient", model.config, len(ids), show=False):  # large ones wait for a heavy-job slot
        return pd.concat([analysis.gradient_norms(m, input_ids).assign(placement=p)
                          for p, m in placement_models(model).items()], ignore_index=True)


@byte_cached
def depth_sweep(config_json: str, seed: int, ids: tuple[int, ...], depths: tuple[int, ...],
                _progress: Callable[[float], None] | None = None) -> pd.DataFrame:
    """``analysis.last_block_gradient_by_depth`` for the sidebar's config and seed at every depth of ``depths``:
    one row per depth and placement, the config's own first. Computed once for every session that asks (the
    others wait for it, then find it: ``depth_sweep.peek``); ``_progress(fraction)`` after each depth."""
    config = ModelConfig.from_dict(json.loads(config_json))
    parts = []
    for k, layers in enumerate(depths):
        deep = config.replace(num_hidden_layers=layers)
        with heavy_work("gradient", deep, len(ids), show=False):  # large ones wait for a heavy-job slot
            parts.append(analysis.last_block_gradient_by_depth(config, seed, torch.tensor([ids]), [layers],
                                                               placements=prepost.PLACEMENTS))
        if _progress is not None:
            _progress((k + 1) / len(depths))
    return pd.concat(parts, ignore_index=True)


@byte_cached(hash_funcs=HASH)  # with peek: the Loss page draws a check some session made without asking
def keep_check(model: CausalLM, ids: tuple[int, ...], k: int) -> dict:
    """:func:`analysis.loss.logits_to_keep_check` on ``ids`` with ``logits_to_keep=k``."""
    return analysis.logits_to_keep_check(model, torch.tensor([ids]), k)


@byte_cached(hash_funcs=HASH)  # with peek: a page draws a continuation some session computed without asking
def continuation(model: CausalLM, ids: tuple[int, ...], n: int, temperature: float, greedy: bool,
                 seed: int) -> list[int]:
    """:func:`analysis.next_token.generate`: ``n`` new token ids after the prompt ``ids``."""
    return analysis.generate(model, torch.tensor([ids]), n, temperature=temperature, greedy=greedy, seed=seed)


@st.cache_resource(max_entries=2, show_spinner=False, hash_funcs=HASH)
def reference_rows(model: CausalLM) -> list[dict]:
    """:func:`engine.parity.reference_check` once per loaded model (two forwards on the stored prompts)."""
    return reference_check(model)


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=HASH)
def attention_paths(model: CausalLM, ids: tuple[int, ...], _eager_logits: torch.Tensor) -> dict:
    """:func:`engine.parity.attention_paths_agree` on the text on screen (one SDPA forward; the eager logits
    ``[1, T, V]`` are the trace's)."""
    return attention_paths_agree(model, torch.tensor([ids]), _eager_logits)
