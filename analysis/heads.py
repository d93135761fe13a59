"""What each attention head does: previous-token, induction and first-token (sink) scores, and entropy.

Every score is an average of attention probabilities (so it lies in [0, 1]): the weight a query puts on one
particular key, averaged over the queries for which that key is defined.

* previous-token score: weight on key t-1 from query t, over t = 1 .. T-1.
* first-token share (attention sink): weight on key 0 from query t, over t = 1 .. T-1 (query 0 can only see
  key 0, so it is left out).
* induction score (Olsson et al. 2022, "In-context Learning and Induction Heads"): on a sequence of n random
  tokens followed by the same n tokens again, the weight from query t in the second copy on key t-n+1, the
  token that followed the earlier occurrence of the current token; averaged over t = n .. 2n-1. An induction
  head scores near 1, a head that ignores the repeat scores about 1/(t+1).
* entropy: of each query's attention row, in nats, averaged over queries (as ``analysis.attention.head_entropy``).

References: Olsson et al. 2022; Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits"
(previous-token heads); Xiao et al. 2023, "Efficient Streaming Language Models with Attention Sinks".
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import torch

ROLE_COLUMNS = ("prev_token", "induction", "first_token", "entropy")


def _rows(attentions: Sequence[torch.Tensor], batch: int = 0) -> torch.Tensor:
    """Stack the per-layer patterns ``L x [B, nh, T, T]`` into ``[L, nh, T, T]`` float64."""
    return torch.stack([a[batch].detach().double() for a in attentions])  # (L, nh, T, T)


def previous_token_scores(attentions: Sequence[torch.Tensor], batch: int = 0) -> np.ndarray:
    """Mean weight from query t on key t-1 (t = 1 .. T-1) per layer and head, ``[L, nh]``; NaN when T = 1."""
    a = _rows(attentions, batch)  # (L, nh, T, T)
    if a.shape[-1] < 2:
        return np.full(a.shape[:2], np.nan)
    return a.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1).numpy()  # (L, nh)


def first_token_shares(attentions: Sequence[torch.Tensor], batch: int = 0) -> np.ndarray:
    """Mean weight from query t on key 0 (t = 1 .. T-1) per layer and head, ``[L, nh]``; NaN when T = 1."""
    a = _rows(attentions, batch)  # (L, nh, T, T)
    if a.shape[-1] < 2:
        return np.full(a.shape[:2], np.nan)
    return a[..., 1:, 0].mean(-1).numpy()  # (L, nh)


def mean_entropy(attentions: Sequence[torch.Tensor], batch: int = 0) -> np.ndarray:
    """Mean over queries of each attention row's entropy in nats, ``[L, nh]``."""
    a = _rows(attentions, batch)  # (L, nh, T, T)
    ent = -torch.where(a > 0, a * a.log(), torch.zeros_like(a)).sum(-1)  # (L, nh, T)
    return ent.mean(-1).numpy()


def induction_scores(attentions: Sequence[torch.Tensor], period: int, batch: int = 0) -> np.ndarray:
    """Induction score per layer and head, ``[L, nh]``, on a sequence whose second half repeats its first.

    Args:
        attentions: patterns of a forward on ``x_0 .. x_{n-1} x_0 .. x_{n-1}`` (``T = 2n``, ``n = period``),
            optionally preceded by nothing else.
        period: n, the length of the repeated block.
    Returns:
        For each head, the mean over queries t = n .. 2n-1 of the weight on key t-n+1.
    Raises:
        ValueError: ``period < 1`` or the patterns are shorter than ``2 * period``.
    """
    a = _rows(attentions, batch)  # (L, nh, T, T)
    T = a.shape[-1]
    if period < 1 or T < 2 * period:
        raise ValueError(f"need a sequence of 2 * period = {2 * period} tokens, got T = {T}")
    # key = query - period + 1: the diagonal at offset 1 - period, from query `period` on
    stripe = a.diagonal(offset=1 - period, dim1=-2, dim2=-1)  # (L, nh, T - period + 1), queries period-1 ..
    return stripe[..., 1:period + 1].mean(-1).numpy()  # queries period .. 2*period-1


def text_induction_scores(attentions: Sequence[torch.Tensor], ids: Sequence[int], batch: int = 0) -> np.ndarray:
    """Induction on the text itself: for every query whose token occurred before, the weight on the tokens
    that followed its earlier occurrences (summed), averaged over such queries. ``[L, nh]``, NaN when no token
    of the text repeats (beyond an occurrence at the position just before)."""
    ids = list(ids)
    a = _rows(attentions, batch)  # (L, nh, T, T)
    total = torch.zeros(a.shape[:2], dtype=torch.float64)
    n = 0
    for t, tok in enumerate(ids):
        keys = [j + 1 for j in range(t - 1) if ids[j] == tok]  # the token after each earlier occurrence (j+1 < t)
        if keys:
            total += a[..., t, keys].sum(-1)
            n += 1
    return (total / n).numpy() if n else np.full(a.shape[:2], np.nan)


def repeated_random_tokens(vocab_size: int, period: int, seed: int = 0, exclude: Iterable[int] = ()) -> torch.Tensor:
    """``[1, 2 * period]`` ids: ``period`` random tokens (uniform over the vocabulary minus ``exclude``, e.g. the
    special tokens) followed by the same tokens again."""
    allowed = torch.tensor(sorted(set(range(vocab_size)) - set(exclude)))  # (V',)
    gen = torch.Generator().manual_seed(seed)
    first = allowed[torch.randint(0, len(allowed), (period,), generator=gen)]  # (n,)
    return torch.cat([first, first]).unsqueeze(0)  # (1, 2n)


def head_roles(attentions: Sequence[torch.Tensor], induction_attentions: Sequence[torch.Tensor], period: int,
               ids: Sequence[int] | None = None, batch: int = 0) -> pd.DataFrame:
    """One row per (layer, head) with every role score.

    Args:
        attentions: patterns of the forward on the sidebar text (previous-token, first-token, entropy and,
            when ``ids`` are given, the text induction score come from these).
        induction_attentions: patterns of the forward on :func:`repeated_random_tokens` with ``period``.
    Returns:
        Columns ``layer``, ``head`` (0-based), ``prev_token``, ``induction``, ``first_token``, ``entropy``
        (nats), ``max_entropy`` (uniform causal attention on this text: the mean of ln(t+1)), and
        ``text_induction`` (NaN without ``ids`` or without a repeated token).
    """
    L, nh = len(attentions), attentions[0].shape[1]
    T = attentions[0].shape[-1]
    scores = {
        "prev_token": previous_token_scores(attentions, batch),
        "induction": induction_scores(induction_attentions, period, batch),
        "first_token": first_token_shares(attentions, batch),
        "entropy": mean_entropy(attentions, batch),
        "text_induction": (text_induction_scores(attentions, ids, batch) if ids is not None
                           else np.full((L, nh), np.nan)),
    }
    layer, head = np.divmod(np.arange(L * nh), nh)
    df = pd.DataFrame({"layer": layer, "head": head, **{k: v.reshape(-1) for k, v in scores.items()}})
    df["max_entropy"] = float(np.log(np.arange(1, T + 1)).mean())
    return df[["layer", "head", "prev_token", "induction", "first_token", "entropy", "max_entropy", "text_induction"]]


def top_heads(roles: pd.DataFrame, column: str, k: int = 3) -> pd.DataFrame:
    """The ``k`` heads with the highest ``column`` score (ties broken by layer, then head)."""
    return roles.sort_values([column, "layer", "head"], ascending=[False, True, True]).head(k)


def uniform_reference(T: int, first_query: int = 1, last_query: int | None = None) -> float:
    """The score a head with uniform causal attention would get: the mean of 1/(t+1) over queries
    t = first_query .. last_query (default T-1). Previous-token and first-token scores use queries 1 .. T-1;
    the induction score on a 2n-token repeat uses queries n .. 2n-1."""
    last = T - 1 if last_query is None else last_query
    t = np.arange(first_query, last + 1)
    return float((1.0 / (t + 1)).mean()) if len(t) else float("nan")
