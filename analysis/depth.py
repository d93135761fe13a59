"""Describing a per-block profile along depth: one rule for every sentence about gradient norms by depth,
and the power-law fits of the Pre vs Post page's depth-scaling chart. Pure numbers in, numbers out."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd


FLAT_RATIO = 1.25  # values within a factor 1.25 of each other (max / min) are "roughly flat"
TREND_RHO = 0.8  # a rank correlation with depth of at least +0.8 (at most -0.8) is a steady rise (fall)


def rank_correlation(values: Sequence[float]) -> float:
    """Spearman's rank correlation between ``values`` and their position (0, 1, 2, ...): +1 for a strictly rising
    sequence, -1 for a strictly falling one; ties get their mean rank. NaN for fewer than two values or constant
    values."""
    v = pd.Series(np.asarray(values, dtype=np.float64))
    if v.size < 2 or v.nunique() < 2:
        return math.nan
    ranks = v.rank(method="average").to_numpy()
    return float(np.corrcoef(np.arange(v.size, dtype=np.float64), ranks)[0, 1])


def trend_kind(values: Sequence[float]) -> str:
    """One word for positive values along depth: "flat", "grows", "shrinks" or "mixed".

    "flat": ``max / min <= FLAT_RATIO``. Otherwise the Spearman rank correlation with depth
    (:func:`rank_correlation`) decides: ``>= TREND_RHO`` "grows", ``<= -TREND_RHO`` "shrinks", in between
    "mixed" (no steady trend). A single dip does not undo a steady rise, and the ends need not be the extremes.
    Fewer than two values, or a value that is not finite and positive: "".
    """
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2 or not (np.isfinite(v).all() and (v > 0).all()):
        return ""
    if v.max() / v.min() <= FLAT_RATIO:
        return "flat"
    rho = rank_correlation(v) * (1 + 1e-12)  # exactly 0.8 (one swap in five) counts, whatever the float rounding
    return "grows" if rho >= TREND_RHO else "shrinks" if rho <= -TREND_RHO else "mixed"


def depth_profile(values: Sequence[float]) -> dict:
    """The one rule the pages use to put a per-block profile (block 1 .. L) into words.

    Block 1 is described on its own, against block 2 (under Post-Norm it is the only block that reads the raw
    embedding, and often stands apart), then blocks 2 .. L as one trend (:func:`trend_kind`).

    Returns:
        ``{"L", "first", "second", "last", "step": block 2 / block 1, "step_kind": trend_kind of blocks 1-2,
        "rest_kind": trend_kind of blocks 2..L ("" when L < 3), "rest_rho": their rank correlation with depth,
        "rest_ratio": block L / block 2,
        "rest_spread": max / min over blocks 2..L, "rest_lowest", "rest_highest": 1-based blocks}``; ``L < 2`` or
        a value that is not finite and positive gives ``{"L": L}`` only.
    """
    v = np.asarray(values, dtype=np.float64)
    L = int(v.size)
    if L < 2 or not (np.isfinite(v).all() and (v > 0).all()):
        return {"L": L}
    rest = v[1:]
    return {
        "L": L, "first": float(v[0]), "second": float(v[1]), "last": float(v[-1]),
        "step": float(v[1] / v[0]), "step_kind": trend_kind(v[:2]),
        "rest_kind": trend_kind(rest) if L >= 3 else "", "rest_rho": rank_correlation(rest),
        "rest_ratio": float(v[-1] / v[1]), "rest_spread": float(rest.max() / rest.min()),
        "rest_lowest": int(rest.argmin()) + 2, "rest_highest": int(rest.argmax()) + 2,
    }


def power_law_fit(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least-squares line through ``(log x, log y)``: ``y ≈ c * x^slope``; returns ``(slope, c)``.

    Non-finite or non-positive points are left out; fewer than two points left gives ``(nan, nan)``.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if ok.sum() < 2:
        return math.nan, math.nan
    slope, intercept = np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)
    return float(slope), float(math.exp(intercept))


def inverse_sqrt_reference(x: Sequence[float], y: Sequence[float]) -> float:
    """The ``c`` of the reference curve ``c / sqrt(x)`` closest to the points in log space (geometric mean of
    ``y * sqrt(x)`` over the finite, positive points; NaN when there are none)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    return float(np.exp(np.mean(np.log(y[ok]) + 0.5 * np.log(x[ok])))) if ok.any() else math.nan
