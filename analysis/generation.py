"""Decode-stepper tables: sampling filters, the new query's attention row, cache growth, the cache-vs-recompute
check and the KV-cache memory calculator. Model outputs (torch) in, pandas DataFrames out."""

from __future__ import annotations

from typing import Callable, Sequence

import pandas as pd
import torch

from engine import CausalLM, KVCache, ModelConfig
from engine.generation import FILTER_ORDER, FilterStep, forward_flops
from engine.kv_cache import cached_positions, kv_cache_bytes

STAGES = ("softmax",) + FILTER_ORDER  # the raw distribution, then after each filter

# Reference shapes for the memory calculator: (layers, query heads, KV heads, head_dim).
REFERENCE_SHAPES = {
    "SmolLM2-135M": (30, 9, 3, 64),
    "GPT-2 small": (12, 12, 12, 64),
    "Llama-3-8B": (32, 32, 8, 128),
    "Gemma-3-1B": (26, 4, 1, 256),
}
# Sliding-window patterns of the reference shapes: (window, every n-th layer is a full one). Gemma 3: 5 local
# layers (window 512) to 1 global.
REFERENCE_WINDOWS = {"Gemma-3-1B": (512, 6)}


def filter_table(filters: Sequence[FilterStep], token_strings: Callable[[list[int]], list[str]],
                 top_n: int = 10) -> pd.DataFrame:
    """The ``top_n`` most probable tokens of the raw distribution, at every stage of the filter chain.

    Columns: ``rank`` (1-based, by raw probability), ``token_id``, ``token``, ``stage`` (``softmax``, then
    the filter names in the order applied), ``probability`` (after that stage, renormalised), ``kept``.
    """
    raw = filters[0].before  # (V,)
    top = torch.topk(raw, min(top_n, raw.shape[-1]))
    ids = top.indices.tolist()
    names = token_strings(ids)
    dists = [raw] + [f.after for f in filters]  # 5 x (V,)
    rows = []
    for stage, dist in zip(STAGES, dists):
        for rank, (tid, name) in enumerate(zip(ids, names), 1):
            p = float(dist[tid])
            rows.append((rank, tid, name, stage, p, p > 0))
    return pd.DataFrame(rows, columns=["rank", "token_id", "token", "stage", "probability", "kept"])


def filter_summary(filters: Sequence[FilterStep]) -> pd.DataFrame:
    """One row per filter: ``filter``, ``setting``, ``kept_before``, ``kept_after`` (tokens with p > 0 out of
    V), ``removed``, ``mass_removed`` (probability the removed tokens had just before the filter)."""
    rows = []
    for f in filters:
        removed = f.removed  # (V,)
        rows.append((f.name, f.value, int((f.before > 0).sum()), int((f.after > 0).sum()), int(removed.sum()),
                     float(f.before[removed].sum())))
    return pd.DataFrame(rows, columns=["filter", "setting", "kept_before", "kept_after", "removed", "mass_removed"])


def query_row(attentions: Sequence[torch.Tensor], layer: int, tokens: Sequence[str], prefill_len: int) -> pd.DataFrame:
    """The new token's attention over every cached key, in one layer, one row per head.

    Args:
        attentions: L tensors ``[n_heads, S]`` (:attr:`engine.generation.DecodeStep.attentions`).
        tokens: S display strings of the key positions; prefill_len: how many keys came from the prompt.
    Returns:
        Columns ``head``, ``key_position``, ``key_token``, ``source`` ("prefill"/"decode"), ``weight``.
    """
    row = attentions[layer].float()  # (n_heads, S)
    n_heads, S = row.shape
    data = [(h, j, tokens[j], "prefill" if j < prefill_len else "decode", float(row[h, j]))
            for h in range(n_heads) for j in range(S)]
    return pd.DataFrame(data, columns=["head", "key_position", "key_token", "source", "weight"])


def cache_growth(cache: KVCache, prefill_len: int) -> pd.DataFrame:
    """Cached positions per layer, read from the cache itself: ``layer``, ``source`` (prefill/decode),
    ``positions``; plus ``kv_heads`` and ``head_dim`` of the stored keys."""
    rows = []
    for layer in range(len(cache)):
        k, _ = cache[layer]  # (B, n_kv_heads, S, head_dim)
        S = cache.get_seq_length(layer)
        for source, n in (("prefill", min(prefill_len, S)), ("decode", max(0, S - prefill_len))):
            rows.append((layer, source, n, int(k.shape[1]), int(k.shape[3])))
    return pd.DataFrame(rows, columns=["layer", "source", "positions", "kv_heads", "head_dim"])


@torch.no_grad()
def recompute_check(model: CausalLM, ids: Sequence[int], cached_logits: torch.Tensor) -> dict:
    """Compare the cached step's logits ``[V]`` with a full forward of the whole sequence ``ids``.

    Returns:
        ``max_abs_diff`` (max |cached - recomputed| over V), ``flops_cached`` (one query row against
        S = len(ids) keys), ``flops_full`` (all S positions again), ``saving`` (their ratio).
    """
    S = len(ids)
    full = model(torch.tensor([list(ids)]), logits_to_keep=1).logits[0, -1]  # (V,)
    cached = forward_flops(model.config, 1, S)
    recompute = forward_flops(model.config, S, S)
    return dict(max_abs_diff=float((cached_logits - full).abs().max()), flops_cached=cached, flops_full=recompute,
                saving=recompute / cached)


def gqa_kv_heads(n_heads: int, kv_heads: int) -> int | None:
    """KV heads for the "GQA" column: the model's own when it is grouped, else groups of 4, 2 or 3 query heads
    (the first that leaves more than one KV head); None when no grouping lies between MHA and MQA."""
    if 1 < kv_heads < n_heads:
        return kv_heads
    for group in (4, 2, 3):
        if n_heads % group == 0 and n_heads // group > 1:
            return n_heads // group
    return None


def memory_table(config: ModelConfig, current_name: str, seq_len: int, bytes_per_value: int) -> pd.DataFrame:
    """KV-cache size at ``seq_len`` tokens (batch 1) for the current model and the reference shapes, as MHA,
    GQA and MQA: ``bytes = 2 * L * n_kv_heads * head_dim * T * bytes_per_value``; for a model with sliding-window
    layers one more row, ``window``: its own KV heads, each layer counted with the positions it keeps
    (``min(T, window - 1)`` on a sliding layer, :func:`engine.kv_cache.cached_positions`), i.e.
    ``2 * n_kv_heads * head_dim * bytes_per_value * sum over layers``.

    Columns: ``model``, ``attention`` (MHA/GQA/MQA/window), ``layers``, ``heads``, ``kv_heads``, ``head_dim``,
    ``bytes``, ``mib``, ``configured`` (True for the variant the model actually uses: its window row if it has
    one).
    """
    own = cached_positions(config, seq_len)
    shapes = {current_name: (config.num_hidden_layers, config.num_attention_heads, config.kv_heads, config.head_dim,
                             own if min(own) < seq_len else None), **{
        name: (layers, heads, kv, hd, _pattern_positions(layers, seq_len, *REFERENCE_WINDOWS[name])
               if name in REFERENCE_WINDOWS else None)
        for name, (layers, heads, kv, hd) in REFERENCE_SHAPES.items()}}
    rows = []
    for name, (layers, heads, kv, hd, kept) in shapes.items():
        for kind, n_kv in (("MHA", heads), ("GQA", gqa_kv_heads(heads, kv)), ("MQA", 1)):
            if n_kv is None or (kind == "MQA" and heads == 1):  # one head: MHA and MQA are the same model
                continue
            b = kv_cache_bytes(layers, n_kv, hd, seq_len, bytes_per_value)
            rows.append((name, kind, layers, heads, n_kv, hd, b, b / 2**20, n_kv == kv and kept is None))
        if kept is not None:  # the same KV heads, each sliding layer keeping only its window
            b = 2 * kv * hd * bytes_per_value * sum(kept)
            rows.append((name, "window", layers, heads, kv, hd, b, b / 2**20, True))
    return pd.DataFrame(rows, columns=["model", "attention", "layers", "heads", "kv_heads", "head_dim", "bytes",
                                       "mib", "configured"])


def _pattern_positions(layers: int, seq_len: int, window: int, every: int) -> list[int]:
    """Positions each layer keeps when every ``every``-th layer is full and the others slide over ``window``."""
    return [seq_len if (i + 1) % every == 0 else min(seq_len, window - 1) for i in range(layers)]
