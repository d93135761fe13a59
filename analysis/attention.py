"""Attention as numbers: one head at each stage of its computation, all probabilities in long format, row-sum
and causality checks, and the mean entropy per head (the Attention page).

Column vocabulary: ``layer``, ``head``, ``query``, ``key`` are 0-based.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd
import torch

from engine.model import CausalLMOutput


ATTENTION_STAGES = ("raw", "scaled", "masked", "softmax")


def attention_stage(out: CausalLMOutput, layer: int, head: int, stage: str = "softmax", batch: int = 0) -> np.ndarray:
    """One head's attention matrix at one stage of its computation, ``[T, T]`` float32 (queries x keys).

    Stages: "raw" = Q K^T; "scaled" = Q K^T / sqrt(head_dim); "masked" = scaled with the layer's mask applied;
    "softmax" = the probabilities. The cells the layer's mask removes are NaN in "masked" and "softmax", so charts
    draw them as empty: the future (key > query) and, on a sliding-window layer, the keys before its window (the
    band). The mask is read from the run itself (its -inf cells), so every mask the engine applies is shown. In
    "raw" and "scaled" every cell is a real number (the mask is not applied yet).

    Raises:
        ValueError: unknown stage (valid ones listed).
    """
    if stage not in ATTENTION_STAGES:
        raise ValueError(f"unknown stage {stage!r}; valid: {', '.join(ATTENTION_STAGES)}")
    prefix = f"blocks.{layer}.attn."
    raw = out.activations[prefix + "hook_attn_scores_raw"][batch, head]  # (T, T)
    T = raw.shape[-1]
    if stage == "raw":
        m = raw
    elif stage == "scaled":
        m = raw / math.sqrt(out.activations[prefix + "hook_q"].shape[-1])
    elif stage == "masked":
        m = out.activations[prefix + "hook_attn_scores"][batch, head]
    else:
        m = out.activations[prefix + "hook_pattern"][batch, head]
    m = m.float().cpu().numpy().copy()
    if stage in ("masked", "softmax"):
        m[masked_cells(out, layer, batch)[head]] = np.nan  # not part of the distribution
    return m


def masked_cells(out: CausalLMOutput, layer: int, batch: int = 0) -> np.ndarray:
    """``[n_heads, T, T]`` bool: the cells the layer's mask removed (-inf scores): the future, and the keys before a
    sliding window. Without recorded scores (a run without activations): the causal triangle."""
    scores = out.activations.get(f"blocks.{layer}.attn.hook_attn_scores") if out.activations else None
    if scores is None:
        nh, T = out.attentions[layer].shape[1], out.attentions[layer].shape[-1]
        return np.broadcast_to(np.triu(np.ones((T, T), dtype=bool), k=1), (nh, T, T))
    return torch.isneginf(scores[batch]).cpu().numpy()  # (nh, T, T)


def attention_sink(out: CausalLMOutput, layer: int, head: int, batch: int = 0) -> np.ndarray | None:
    """``[T]`` the share of each query's softmax that goes to the head's learned sink logit (gpt-oss ``sinks``: a
    column with no value), or None when the layer has no sink. A row's key weights sum to 1 minus it."""
    sink = out.activations.get(f"blocks.{layer}.attn.hook_sink") if out.activations else None
    return None if sink is None else sink[batch, head].float().cpu().numpy()


def attention_long(out: CausalLMOutput, tokens: Sequence[str], batch: int = 0) -> pd.DataFrame:
    """All attention probabilities in long format, causal cells only (key <= query).

    Columns: ``layer``, ``head``, ``query``, ``key``, ``query_token``, ``key_token``, ``weight``.
    """
    frames = []
    for i, att in enumerate(out.attentions):
        a = att[batch].float().cpu().numpy()  # (nh, T, T)
        nh, T, _ = a.shape
        h_idx, q_idx, k_idx = np.nonzero(np.tril(np.ones((T, T), dtype=bool))[None].repeat(nh, 0))
        frames.append(pd.DataFrame({
            "layer": i, "head": h_idx, "query": q_idx, "key": k_idx,
            "query_token": [tokens[q] for q in q_idx], "key_token": [tokens[k] for k in k_idx],
            "weight": a[h_idx, q_idx, k_idx],
        }))
    return pd.concat(frames, ignore_index=True)


def attention_checks(out: CausalLMOutput, batch: int = 0) -> pd.DataFrame:
    """Sanity checks per layer: max |row sum - 1| (the sink's share counted in the row where the layer has a sink),
    max |weight in a masked cell| (above the diagonal, and before a sliding window), and NaN/Inf presence.

    Columns: ``layer``, ``max_row_sum_error``, ``max_upper_triangle``, ``finite``.
    """
    rows = []
    for i, att in enumerate(out.attentions):
        a = att[batch].double()  # (nh, T, T)
        sink = out.activations.get(f"blocks.{i}.attn.hook_sink") if out.activations else None
        total = a.sum(-1) + (sink[batch].double() if sink is not None else 0.0)  # (nh, T)
        masked = torch.from_numpy(np.ascontiguousarray(masked_cells(out, i, batch)))
        rows.append((
            i,
            float((total - 1).abs().max()),
            float(a[masked].abs().max()) if bool(masked.any()) else 0.0,
            bool(torch.isfinite(a).all()),
        ))
    return pd.DataFrame(rows, columns=["layer", "max_row_sum_error", "max_upper_triangle", "finite"])


def head_entropy(out: CausalLMOutput, batch: int = 0) -> pd.DataFrame:
    """Mean attention entropy per head, in nats (0 = attends to one key; ln(t+1) = uniform over t+1 keys).

    Columns: ``layer``, ``head``, ``entropy`` (mean over query positions), ``max_entropy`` (mean of ln(t+1),
    the uniform-attention reference).
    """
    rows = []
    for i, att in enumerate(out.attentions):
        a = att[batch].double()  # (nh, T, T)
        ent = -(torch.where(a > 0, a * a.log(), torch.zeros_like(a))).sum(-1)  # (nh, T)
        T = a.shape[-1]
        uniform = float(torch.log(torch.arange(1, T + 1, dtype=torch.float64)).mean())
        for h in range(a.shape[0]):
            rows.append((i, h, float(ent[h].mean()), uniform))
    return pd.DataFrame(rows, columns=["layer", "head", "entropy", "max_entropy"])
