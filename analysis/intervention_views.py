"""The Interventions page's experiments as it runs them, and the numbers it shows around them, built on
:mod:`analysis.interventions`.

Experiments whole (each a sweep and the runs that follow it; ``progress(done, total)`` counts plain forwards of the
prompt, as the sweeps do), with their cost in plain forwards for an estimate before they start:
    * induction: every head ablated, then heads removed together (:func:`induction_experiment`);
    * a prompt pair: every (layer, position) of the residual stream patched, then each head of the layers that
      matter (:func:`pair_experiment`).

Around a sweep: the time of one plain forward (:func:`forward_seconds`), the previews drawn before it runs (each
head's scores, the next-token probabilities), one map cell's intervention (:func:`cell_interventions`, for
:func:`analysis.interventions.before_after`) and what it changed in one head's pattern
(:func:`head_pattern_change`), and the heads-removed-together table. Layers, heads and positions are 0-based here.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch

from engine.interventions import ActivationPatch, HeadAblation
from engine.model import CausalLM

from .heads import induction_scores
from .interventions import (MATTER_LAYERS, PairCheck, Progress, experiment_cost, head_patching, induction_ablation,
                            induction_loss, layers_that_matter, residual_patching, score_frame, top_heads)

TOP_K = (3, 10)  # after the induction sweep: its top k heads removed together, for each k


# -------------------------------------------------------------------------------------------------- experiments


def induction_experiment(model: CausalLM, ids: torch.Tensor, period: int, progress: Progress = None,
                         top_k: Sequence[int] = TOP_K) -> tuple[pd.DataFrame, dict, list[tuple[str, list, float]]]:
    """The induction experiment: :func:`analysis.interventions.induction_ablation` of ``ids`` ``[1, 2n]``, then
    heads removed together.

    Returns:
        ``(frame, summary)`` of ``induction_ablation`` and ``groups``: ``(name, heads [(layer, head), ...], loss on
        the second copy)`` for ``"prev"`` (the head with the highest previous-token score), ``"induction"`` (the
        highest induction score), ``"pair"`` (both together) and ``"top{k}"`` (the k heads whose ablation raised
        the loss most) for each k of ``top_k`` smaller than the number of heads.
    """
    frame, summary = induction_ablation(model, ids, period, progress=progress)
    p, i = summary["prev_head"], summary["induction_head"]
    groups = [("prev", [(p["layer"], p["head"])], p["loss"]), ("induction", [(i["layer"], i["head"])], i["loss"])]
    pair = [(p["layer"], p["head"]), (i["layer"], i["head"])]
    groups.append(("pair", pair, induction_loss(model, ids, period, sorted(set(pair)))))
    for k in top_k:
        if k < len(frame):
            heads = top_heads(frame, k)
            groups.append((f"top{k}", heads, induction_loss(model, ids, period, heads)))
    return frame, summary, groups


def induction_forwards(model: CausalLM, T: int, top_k: Sequence[int] = TOP_K) -> float:
    """Plain forwards of the ``T``-token prompt :func:`induction_experiment` costs: the sweep, the plain run and
    the pair, and one per k of ``top_k``."""
    return experiment_cost(model, T, "induction") + 2 + len(top_k)


def pair_forwards(model: CausalLM, T: int) -> tuple[float, float]:
    """Plain forwards of a ``T``-token prompt :func:`pair_experiment` costs: ``(the residual sweep, each head of the
    layers that matter)``, the second as the share :data:`~analysis.interventions.MATTER_LAYERS` / L of every
    layer's heads."""
    L = model.config.num_hidden_layers
    return experiment_cost(model, T, "residual"), experiment_cost(model, T, "heads") * MATTER_LAYERS / L


def pair_experiment(model: CausalLM, check: PairCheck, progress: Progress = None) -> tuple:
    """The prompt-pair experiment: :func:`analysis.interventions.residual_patching`, then
    :func:`analysis.interventions.head_patching` in the layers that matter; ``progress`` counts both sweeps
    against the total of :func:`pair_forwards`.

    Returns:
        ``(residual frame, residual summary, layers that matter [l, ...], head frame, head summary)``.
    """
    first, rest = pair_forwards(model, check.clean_ids.shape[1])

    def phase1(done: float, total: float) -> None:
        if progress is not None:
            progress(done, total + rest)

    res_frame, res_summary = residual_patching(model, check, progress=phase1)
    layers = layers_that_matter(res_frame)

    def phase2(done: float, total: float) -> None:
        if progress is not None:
            progress(first + done, first + total)

    z_frame, z_summary = head_patching(model, check, layers, progress=phase2)
    return res_frame, res_summary, layers, z_frame, z_summary


# ------------------------------------------------------------------------------------------------ around a sweep


def forward_seconds(model: CausalLM, ids: torch.Tensor, repeats: int = 2) -> float:
    """Seconds one plain forward of ``ids`` ``[1, T]`` takes here: the fastest of ``repeats`` (the first pays
    one-time costs)."""
    times = []
    with torch.no_grad():
        for _ in range(repeats):
            start = time.perf_counter()
            model(ids)
            times.append(time.perf_counter() - start)
    return min(times)


def head_scores(model: CausalLM, ids: torch.Tensor, period: int) -> pd.DataFrame:
    """Each head's previous-token and induction score on the repeated sequence ``ids`` ``[1, 2n]`` (one forward):
    :func:`analysis.interventions.score_frame`."""
    with torch.no_grad():
        att = model(ids, output_attentions=True).attentions
    return score_frame(att, period)


def next_token_probs(model: CausalLM, ids: torch.Tensor) -> torch.Tensor:
    """Next-token probabilities after the last token of ``ids`` ``[1, T]``: ``[V]``, float64."""
    with torch.no_grad():
        return torch.softmax(model(ids).logits[0, -1].double(), -1)


def cell_interventions(model: CausalLM, what: tuple) -> list:
    """The intervention of one map cell (0-based): ``what`` is ``("ablate", layer, head)`` (the head zero-ablated),
    ``("resid", layer, position, clean_ids)`` (``blocks.{layer}.hook_resid_pre`` at ``position`` patched from the
    run of ``clean_ids``) or ``("z", layer, head, clean_ids)`` (the head's ``hook_z`` patched at every position)."""
    if what[0] == "ablate":
        return [HeadAblation(what[1], what[2])]
    with torch.no_grad():
        rec = model(torch.tensor([what[3]]), output_activations=True).activations
    if what[0] == "resid":
        name = f"blocks.{what[1]}.hook_resid_pre"
        return [ActivationPatch(name, [what[2]], rec[name])]
    name = f"blocks.{what[1]}.attn.hook_z"
    return [ActivationPatch(name, None, rec[name], head=what[2])]


def head_pattern_change(patterns: tuple[torch.Tensor, torch.Tensor], head: int, period: int | None = None) -> dict:
    """One head's attention without and with an intervention, and what changed.

    Args:
        patterns: ``(before, after)`` of :func:`analysis.interventions.before_after`, each ``[n_heads, T, T]``.
        period: the copy length of a repeated sequence, for the head's induction score (None: not one).
    Returns:
        ``"before"`` / ``"after"``: ``[T, T]`` DataFrames, NaN above the diagonal (keys a query cannot see);
        ``"delta"``, ``"query"``, ``"key"``: the largest ``|after - before|`` on or below the diagonal and where;
        ``"scores"``: the head's induction score ``(before, after)`` when ``period`` is given, else None.
    """
    before, after = (p[head].float().numpy() for p in patterns)  # (T, T) each
    T = before.shape[0]
    tri = np.triu(np.ones((T, T), dtype=bool), 1)
    diff = np.abs(np.where(tri, 0.0, after - before))  # (T, T)
    q, k = np.unravel_index(int(np.argmax(diff)), diff.shape)
    scores = None if period is None else tuple(
        float(induction_scores((torch.tensor(x)[None, None],), period)[0, 0]) for x in (before, after))
    return {"before": pd.DataFrame(np.where(tri, np.nan, before)), "after": pd.DataFrame(np.where(tri, np.nan, after)),
            "delta": float(diff[q, k]), "query": int(q), "key": int(k), "scores": scores}


def heads_text(heads: Sequence[tuple[int, int]]) -> str:
    """Heads ``[(layer, head), ...]`` (0-based) written 1-based as ``layer.head``, comma-separated: ``"1.2, 3.4"``."""
    return ", ".join(f"{l + 1}.{h + 1}" for l, h in heads)


def together_table(base: float, groups: Sequence[tuple[str, list, float]], label: Callable[[str], str]) -> pd.DataFrame:
    """The heads-removed-together bars: a row ``"none"`` (nothing removed: ``base``, the plain run's loss), then
    each of :func:`induction_experiment`'s ``groups``: ``label`` (``label(name)``), ``heads`` (:func:`heads_text`)
    and ``loss``."""
    rows = [("none", [], base)] + list(groups)
    return pd.DataFrame({"label": [label(r[0]) for r in rows], "heads": [heads_text(r[1]) for r in rows],
                         "loss": [r[2] for r in rows]})
