"""Massive activations in the residual stream and the attention that goes to the first token.

Sun et al. 2024, "Massive Activations in Large Language Models": in many pretrained LLMs a few residual-stream
activations are orders of magnitude larger than the rest (their criterion: |h| > 100 and about 1,000 times the
median |h| of the hidden state), sit in fixed feature dimensions, appear at the first token (and delimiters),
and stay nearly constant over the middle layers. Xiao et al. 2023, "Efficient Streaming Language Models with
Attention Sinks": many heads put a large share of their attention on the first token whatever it is.
This module measures both on one input; it claims nothing beyond the numbers.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import torch

MASSIVE_MIN_ABS = 100.0  # Sun et al. 2024: larger than 100 ...
MASSIVE_MIN_RATIO = 1000.0  # ... and about 1,000 times the median magnitude


def massive_activations(residual: Sequence[torch.Tensor], batch: int = 0) -> pd.DataFrame:
    """Per depth, the largest |h| of the residual stream and where it is, against the median |h|.

    Args:
        residual: the L+1 residual-stream states ``[B, T, H]`` before the final norm (embedding output, then each
            block's output; ``analysis.trace.residual_stream``).
    Returns:
        One row per depth with columns ``depth`` (0 = embedding, i = after block i), ``max_abs``, ``position``
        and ``dim`` of that maximum, ``value`` (signed), ``median_abs`` (median of |h| over every position and
        dimension), ``ratio`` (max_abs / median_abs), ``second_abs`` (the largest |h| in any other dimension),
        and ``massive`` (max_abs > 100 and ratio > 1000, Sun et al.'s criterion).
    """
    rows = []
    for depth, h in enumerate(residual):
        x = h[batch].detach().double()  # (T, H)
        a = x.abs()  # (T, H)
        flat = int(a.argmax())
        pos, dim = divmod(flat, a.shape[1])
        max_abs = float(a[pos, dim])
        median = float(a.median())
        others = torch.cat([a[:, :dim], a[:, dim + 1:]], dim=1)  # (T, H-1)
        second = float(others.max()) if others.numel() else float("nan")
        ratio = max_abs / median if median > 0 else float("inf")
        rows.append((depth, max_abs, pos, dim, float(x[pos, dim]), median, ratio, second,
                     bool(max_abs > MASSIVE_MIN_ABS and ratio > MASSIVE_MIN_RATIO)))
    return pd.DataFrame(rows, columns=["depth", "max_abs", "position", "dim", "value", "median_abs", "ratio",
                                       "second_abs", "massive"])


def massive_summary(df: pd.DataFrame) -> dict | None:
    """What the table shows, for a sentence: None when no depth passes the criterion, else the depths that
    do (first, last, count), the (position, dimension) pairs holding the maximum there (most frequent first),
    the largest max_abs and the median range over those depths."""
    hit = df[df["massive"]]
    if hit.empty:
        return None
    where = hit.groupby(["position", "dim"]).size().sort_values(ascending=False)
    return {
        "first": int(hit["depth"].min()), "last": int(hit["depth"].max()), "count": len(hit),
        "places": [(int(p), int(d), int(n)) for (p, d), n in where.items()],
        "peak": float(hit["max_abs"].max()), "peak_depth": int(hit.loc[hit["max_abs"].idxmax(), "depth"]),
        "median_min": float(hit["median_abs"].min()), "median_max": float(hit["median_abs"].max()),
    }


def sink_table(first_token: np.ndarray) -> pd.DataFrame:
    """Per-layer view of the first-token shares ``[L, nh]`` (``analysis.heads.first_token_shares``).

    Columns: ``layer`` (0-based), ``mean`` (over heads), ``max`` (over heads), ``argmax_head``, ``heads_over_half``
    (how many heads put more than half of their attention on the first token).
    """
    s = np.asarray(first_token, dtype=np.float64)  # (L, nh)
    return pd.DataFrame({
        "layer": np.arange(s.shape[0]), "mean": s.mean(1), "max": s.max(1), "argmax_head": s.argmax(1),
        "heads_over_half": (s > 0.5).sum(1),
    })
