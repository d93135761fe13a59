"""Comparing two views, A and B (the "Compare" sidebar): their differences, aligned where their shapes differ,
and the numbers of the sentence under each compared chart.

Every function takes what a single view computes (an attention matrix of ``attention_stage``, the attentions of a
trace, the ``residual_norms`` table) for each side, so a side's numbers are the single view's. Where the shapes
differ (another vocabulary, depth, head count or length) what both have is aligned by index from the start
(positions 0..n-1, blocks 1..L, heads 1..n) and :func:`unaligned` says what is left over.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
import pandas as pd
import torch


class Change(NamedTuple):
    """The largest change of one attention weight between A and B: 0-based layer, head, query and key; the weights."""
    layer: int
    head: int
    query: int
    key: int
    a: float
    b: float


def aligned_square(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The leading ``n x n`` block both ``[T, T]`` matrices have (``n`` = the shorter length)."""
    n = min(a.shape[0], b.shape[0])
    return a[:n, :n], b[:n, :n]


def attention_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A − B over the positions both have (``[n, n]``); NaN where either side's cell is masked."""
    a, b = aligned_square(a, b)
    return a - b


def symmetric_limit(*mats: np.ndarray) -> float:
    """The largest finite ``|value|`` of all ``mats`` (0 when none is finite): one diverging colour scale,
    ``-limit..limit`` centred at zero, for every chart that shares it."""
    values = [np.abs(m[np.isfinite(m)]) for m in mats]
    return float(max((v.max() for v in values if v.size), default=0.0))


def largest_attention_change(att_a: Sequence[torch.Tensor], att_b: Sequence[torch.Tensor]) -> Change | None:
    """The attention weight (softmax) that changes most from A to B, over the layers, heads and positions both
    have (``att_*``: a trace's ``attentions``, one ``[1, heads, T, T]`` per layer); None when nothing is aligned
    or no weight is finite."""
    best: Change | None = None
    best_delta = -1.0
    for layer in range(min(len(att_a), len(att_b))):
        a, b = att_a[layer][0].float(), att_b[layer][0].float()
        heads, n = min(a.shape[0], b.shape[0]), min(a.shape[-1], b.shape[-1])
        a, b = a[:heads, :n, :n], b[:heads, :n, :n]
        delta = torch.nan_to_num((a - b).abs(), nan=-1.0)
        flat = int(delta.argmax())
        value = float(delta.flatten()[flat])
        if value > best_delta:
            h, q, k = np.unravel_index(flat, delta.shape)
            best_delta = value
            best = Change(layer, int(h), int(q), int(k), float(a[h, q, k]), float(b[h, q, k]))
    return best if best_delta >= 0 else None


def unaligned(a: dict[str, int], b: dict[str, int]) -> dict[str, tuple[int, int]]:
    """The sizes that differ between A and B (``{"layers": 2, "heads": 4, "tokens": 9, ...}`` each): ``{name:
    (A's, B's)}``; what lies past the smaller one has no counterpart."""
    return {name: (a[name], b[name]) for name in a if name in b and a[name] != b[name]}


def norms_by_depth(res_a: pd.DataFrame, res_b: pd.DataFrame) -> pd.DataFrame:
    """The mean residual norm at each depth of A and B (``analysis.norms.residual_norms`` tables; each over its
    own positions), aligned by stage: the embedding, block i with block i, the final norm with the final norm.

    Columns: ``stage`` ("embed", "block i", "final norm", in depth order), ``a``, ``b``, ``ratio`` (B / A); a
    block only one side has is NaN on the other.
    """
    means = [r.groupby("stage", sort=False)["norm"].mean() for r in (res_a, res_b)]
    deeper = max(means, key=len)
    stages = list(deeper.index)
    table = pd.DataFrame({"stage": stages, "a": means[0].reindex(stages).to_numpy(),
                          "b": means[1].reindex(stages).to_numpy()})
    table["ratio"] = table["b"] / table["a"]
    return table


def last_block_norms(res_a: pd.DataFrame, res_b: pd.DataFrame) -> tuple[float, float]:
    """The mean residual norm after each side's last block (A's, B's): depth L of each (before the final norm)."""
    return tuple(float(r[r["depth"] == r["depth"].max() - 1]["norm"].mean()) for r in (res_a, res_b))


# ---- head roles, rope, interventions, experts
class CellChange(NamedTuple):
    """The largest change of a layers x heads score between A and B: 0-based layer of A and of B (another layer
    where the depths differ: :func:`depth_pairs`), head, and the two scores."""
    layer_a: int
    layer_b: int
    head: int
    a: float
    b: float


def layer_grid(table: pd.DataFrame, column: str, across: str = "head") -> np.ndarray:
    """``[L, n]``: ``column`` of a table with one row per 0-based ``layer`` and ``across`` (``head``: ``head_roles``,
    an intervention's frame; ``position``: a residual patching frame), layer by layer."""
    return table.pivot(index="layer", columns=across, values=column).sort_index().sort_index(axis=1).to_numpy(float)


def depth_pairs(la: int, lb: int) -> list[tuple[int, int]]:
    """0-based (A's layer, B's layer) pairs at the same relative depth: every layer of the shallower side with the
    deeper side's layer whose span ``[j/L, (j+1)/L)`` holds the middle ``(i + 0.5) / L`` of its own; the identity
    where the depths are equal."""
    short, deep = min(la, lb), max(la, lb)
    pairs = [(i, int((i + 0.5) * deep / short)) for i in range(short)]
    return pairs if la <= lb else [(j, i) for i, j in pairs]


def grid_difference(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int]]] | None:
    """A − B of two ``[L, nh]`` grids, row by row over :func:`depth_pairs` (``[min L, nh]``) and those pairs;
    None where the column counts differ (the heads of two layers of other widths have no order in common; two
    prompts of other lengths no position by position)."""
    if a.shape[1] != b.shape[1]:
        return None
    rows = depth_pairs(a.shape[0], b.shape[0])
    return np.stack([a[i] - b[j] for i, j in rows]), rows


def largest_cell_change(a: np.ndarray, b: np.ndarray) -> CellChange | None:
    """The cell whose score changes most from A to B over :func:`grid_difference` (the first such cell, layer by
    layer, on a tie); None where the head counts differ or no difference is finite."""
    got = grid_difference(a, b)
    if got is None:
        return None
    diff, rows = got
    delta = np.where(np.isfinite(diff), np.abs(diff), -1.0)
    row, head = np.unravel_index(int(np.argmax(delta)), delta.shape)
    if delta[row, head] < 0:
        return None
    i, j = rows[row]
    return CellChange(i, j, int(head), float(a[i, head]), float(b[j, head]))


def top_cell(grid: np.ndarray, lowest: bool = False) -> tuple[int, int, float] | None:
    """0-based (layer, head) and value of the highest finite cell (the lowest with ``lowest``; the first, layer by
    layer, on a tie); None when no cell is finite."""
    finite = np.isfinite(grid)
    if not finite.any():
        return None
    score = np.where(finite, -grid if lowest else grid, -np.inf)
    layer, head = np.unravel_index(int(np.argmax(score)), grid.shape)
    return int(layer), int(head), float(grid[layer, head])


def plane_ratio(waves_a: pd.DataFrame, waves_b: pd.DataFrame) -> pd.DataFrame | None:
    """B / A of each plane's wavelength at each side's main base (the first base of ``analysis.rope.wavelengths``):
    columns ``plane``, ``a``, ``b``, ``ratio``; None where the sides have other numbers of planes (another head
    width: plane i of one is not plane i of the other)."""
    mains = [w[w["base"] == w["base"].iloc[0]] for w in (waves_a, waves_b)]
    if len(mains[0]) != len(mains[1]):
        return None
    table = pd.DataFrame({"plane": mains[0]["plane"].to_numpy(), "a": mains[0]["wavelength"].to_numpy(),
                          "b": mains[1]["wavelength"].to_numpy()})
    table["ratio"] = table["b"] / table["a"]
    return table


def distance_difference(scores_a: pd.DataFrame, scores_b: pd.DataFrame) -> pd.DataFrame:
    """A − B of a head's mean score at each distance both sides have (``analysis.rope.head_scores_by_distance``
    tables; the shorter input's distances): columns ``distance``, ``a``, ``b``, ``difference``."""
    n = min(len(scores_a), len(scores_b))
    table = pd.DataFrame({"distance": scores_a["distance"].to_numpy()[:n], "a": scores_a["mean"].to_numpy()[:n],
                          "b": scores_b["mean"].to_numpy()[:n]})
    table["difference"] = table["a"] - table["b"]
    return table


def load_difference(load_a: pd.DataFrame, load_b: pd.DataFrame) -> pd.DataFrame | None:
    """A − B of each expert's share of the tokens (``analysis.experts.expert_load`` tables): columns ``expert``
    (0-based), ``a``, ``b``, ``difference``; None where the sides have other numbers of experts (expert i of one
    is not expert i of the other)."""
    if len(load_a) != len(load_b):
        return None
    table = pd.DataFrame({"expert": load_a["expert"].to_numpy(), "a": load_a["share"].to_numpy(),
                          "b": load_b["share"].to_numpy()})
    table["difference"] = table["a"] - table["b"]
    return table
