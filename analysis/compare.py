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


# ---- loss, next token, overview, lens
class PositionChange(NamedTuple):
    """The position whose loss changes most from A to B (0-based, the row of ``analysis.loss.loss_table``), and
    its loss in A and in B (nats)."""
    position: int
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
