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


# ---- loss, next token, overview, lens (and the head roles' grids: CellChange)
class PositionChange(NamedTuple):
    """The position whose loss changes most from A to B (0-based, the row of ``analysis.loss.loss_table``), and
    its loss in A and in B (nats)."""
    position: int
    a: float
    b: float


class CellChange(NamedTuple):
    """The largest change of a layers x heads score between A and B: 0-based layer of A and of B (another layer
    where the depths differ: :func:`depth_pairs`), head, and the two scores."""
    layer_a: int
    layer_b: int
    head: int
    a: float
    b: float


def loss_by_position(loss_a: pd.DataFrame, loss_b: pd.DataFrame) -> pd.DataFrame:
    """The loss of each predicting position both sides have (``analysis.loss.loss_table`` tables; rows 0..n-1, n
    the shorter table's length), aligned by position. Columns ``position``, ``a``, ``b`` (nats; NaN where that
    side masks the target), ``ratio`` (B / A; NaN where either is masked)."""
    n = min(len(loss_a), len(loss_b))
    a = loss_a["loss"].to_numpy(dtype=float)[:n]
    b = loss_b["loss"].to_numpy(dtype=float)[:n]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = b / a
    return pd.DataFrame({"position": np.arange(n), "a": a, "b": b, "ratio": ratio})


def mean_loss(table: pd.DataFrame) -> float:
    """A loss table's mean loss over its supervised targets (the page's L = sum / N); NaN when none is."""
    kept = table["loss"][~table["masked"].to_numpy(dtype=bool)].to_numpy(dtype=float)
    return float(kept.sum() / kept.size) if kept.size else float("nan")


def largest_loss_change(by_position: pd.DataFrame) -> PositionChange | None:
    """The position of :func:`loss_by_position` whose loss moves most, ``|B − A|`` (the first of equals); None when
    no position has a finite loss on both sides."""
    i = _largest_abs((by_position["b"] - by_position["a"]).to_numpy(dtype=float))
    if i is None:
        return None
    return PositionChange(int(by_position["position"].iloc[i]), float(by_position["a"].iloc[i]),
                          float(by_position["b"].iloc[i]))


def same_tokens(a: Sequence[str], b: Sequence[str], n: int) -> bool:
    """Whether the first ``n`` display tokens of A and B agree (then a position's text names it on both sides)."""
    return list(a[:n]) == list(b[:n]) and min(len(a), len(b)) >= n


def probability_change(logits_a: torch.Tensor, logits_b: torch.Tensor, ids: Sequence[int],
                       temperature: float = 1.0) -> pd.DataFrame:
    """The next-token probability of each of ``ids`` under A's and B's logits ``[V]`` (one vocabulary), as
    ``analysis.next_token.next_token_table`` computes it (``softmax(logits / temperature)`` in float64). Columns
    ``token_id``, ``a``, ``b``, ``change`` (A − B)."""
    probs = [torch.softmax(x.double() / temperature, dim=-1) for x in (logits_a, logits_b)]
    index = torch.tensor(list(ids), dtype=torch.long)
    a, b = (p[index].cpu().numpy() for p in probs)
    return pd.DataFrame({"token_id": list(ids), "a": a, "b": b, "change": a - b})


def top_ids(top_a: pd.DataFrame, top_b: pd.DataFrame) -> list[int]:
    """The token ids of two top-k tables (``next_token_table``): A's in rank order, then B's that A lacks."""
    ids = top_a["token_id"].tolist()
    return ids + [i for i in top_b["token_id"].tolist() if i not in set(ids)]


def topk_by_text(top_a: pd.DataFrame, top_b: pd.DataFrame) -> pd.DataFrame:
    """Two top-k tables of different vocabularies compared by token text: the texts both lists hold (in A's rank
    order; ids shown as the same text add up). Columns ``token``, ``a``, ``b``, ``change`` (A − B)."""
    sums = [t.groupby("token", sort=False)["probability"].sum() for t in (top_a, top_b)]
    shared = [text for text in sums[0].index if text in sums[1].index]
    a = sums[0].reindex(shared).to_numpy(dtype=float)
    b = sums[1].reindex(shared).to_numpy(dtype=float)
    return pd.DataFrame({"token": shared, "a": a, "b": b, "change": a - b})


def largest_change(table: pd.DataFrame) -> int | None:
    """The row of a table with a ``change`` column whose ``|change|`` is largest (the first of equals); None when
    no change is finite."""
    return _largest_abs(table["change"].to_numpy(dtype=float))


def _largest_abs(values: np.ndarray) -> int | None:
    """The index of the largest finite ``|value|`` (the first of equals); None when none is finite."""
    finite = np.isfinite(values)
    return int(np.flatnonzero(finite)[np.argmax(np.abs(values[finite]))]) if finite.any() else None



def parameter_change(params_a: pd.DataFrame, params_b: pd.DataFrame) -> pd.DataFrame:
    """Two ``analysis.anatomy.parameter_table`` tables aligned by component (A's order, then components only B
    has; a component a side lacks counts 0). Columns ``component``, ``a``, ``b``, ``change`` (B − A)."""
    counts = [p.set_index("component")["params"] for p in (params_a, params_b)]
    names = list(counts[0].index) + [c for c in counts[1].index if c not in counts[0].index]
    a, b = (c.reindex(names, fill_value=0).to_numpy(dtype=np.int64) for c in counts)
    return pd.DataFrame({"component": names, "a": a, "b": b, "change": b - a})


def first_top_depth_at(lens_table: pd.DataFrame, position: int) -> int:
    """The depth from which the final prediction at ``position`` is the lens's top token for good
    (``analysis.lens.first_top_depth``, the single view's sentence), of a ``logit_lens`` table."""
    from analysis.lens import first_top_depth

    first = first_top_depth(lens_table[lens_table["position"] == position])
    return int(first["depth"].iloc[0])


def lens_by_relative_depth(lens_a: pd.DataFrame, lens_b: pd.DataFrame, position_a: int,
                           position_b: int) -> pd.DataFrame:
    """The lens at one position of each side (``logit_lens`` tables; each side's own position, e.g. its last),
    aligned by relative depth: depth d of a model of L blocks at d / L (the embedding at 0, the output at 1), so
    models of different depths meet at their ends. Columns ``side`` ("a", "b"), ``depth``, ``relative``,
    ``p_final``, ``rank_final``, ``top``: whether the final prediction is the lens's top token there."""
    frames = []
    for side, table, position in (("a", lens_a, position_a), ("b", lens_b, position_b)):
        rows = table[table["position"] == position].sort_values("depth")
        L = int(table["depth"].max())
        frames.append(pd.DataFrame({
            "side": side, "depth": rows["depth"].to_numpy(), "relative": rows["depth"].to_numpy() / max(L, 1),
            "p_final": rows["p_final"].to_numpy(), "rank_final": rows["rank_final"].to_numpy(),
            "top": rows["rank_final"].to_numpy() == 0}))
    return pd.concat(frames, ignore_index=True)


def shared_start(a: Sequence, b: Sequence) -> int:
    """How many items two sequences share from the start (the new tokens of two generations: ids in one
    vocabulary, text across two)."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


# ---- head roles, rope, interventions, experts
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
