"""A training run's logs as tidy frames: loss per step, gradient norm per block and step, the per-block profile,
and the poem-slot attention scores (the Training lab)."""

from __future__ import annotations

import math
from typing import Sequence

import pandas as pd


def training_history(history: Sequence, initial_val_loss: float | None = None) -> pd.DataFrame:
    """A training run's per-step log (``engine.train.StepInfo`` objects) as one row per step.

    Columns: ``step`` (int; 1-based updates, plus a step-0 row when ``initial_val_loss`` is given),
    ``loss`` (training loss of the step's batch, nats; NaN on the step-0 row), ``val_loss`` (nats; NaN where
    not measured), ``lr``, ``grad_norm`` (global L2 norm before clipping), ``tokens_per_s``, ``elapsed_s``.
    Empty history and no initial loss -> an empty frame with these columns.
    """
    cols = ["step", "loss", "val_loss", "lr", "grad_norm", "tokens_per_s", "elapsed_s"]
    rows = []
    if initial_val_loss is not None:
        rows.append((0, math.nan, float(initial_val_loss), math.nan, math.nan, math.nan, 0.0))
    for h in history:
        rows.append((int(h.step), float(h.loss), math.nan if h.val_loss is None else float(h.val_loss),
                     float(h.lr), float(h.grad_norm), float(h.tokens_per_s), float(h.elapsed_s)))
    return pd.DataFrame(rows, columns=cols)


def layer_grad_history(history: Sequence) -> pd.DataFrame:
    """Gradient L2 norm of every block at every step of a run (``StepInfo.layer_grad_norms``), long format.

    Columns: ``step`` (1-based), ``layer`` (0-based block index), ``grad_norm`` (L2 norm over all gradients
    of that block, before clipping).
    """
    rows = [(int(h.step), i, float(v)) for h in history for i, v in enumerate(h.layer_grad_norms)]
    return pd.DataFrame(rows, columns=["step", "layer", "grad_norm"])


def layer_grad_profile(history: Sequence) -> pd.DataFrame:
    """Per-block gradient L2 norm at the first step and averaged over all steps of a run.

    Columns: ``layer`` (0-based), ``first_step`` (norm at the run's first step), ``mean_grad_norm`` (mean over
    the steps). Empty history -> empty frame. Xiong et al. 2020 compare such depth profiles for Pre-Norm and
    Post-Norm.
    """
    grads = layer_grad_history(history)
    if grads.empty:
        return pd.DataFrame(columns=["layer", "first_step", "mean_grad_norm"])
    first = grads[grads["step"] == grads["step"].min()].set_index("layer")["grad_norm"]
    mean = grads.groupby("layer")["grad_norm"].mean()
    return pd.DataFrame({"layer": mean.index.to_numpy(), "first_step": first.reindex(mean.index).to_numpy(),
                         "mean_grad_norm": mean.to_numpy()})


def slot_attention_table(scores: Sequence[tuple[int, int, float]]) -> pd.DataFrame:
    """``analysis.probes.head_slot_attention`` output as a frame: columns ``layer``, ``head`` (0-based) and
    ``score`` (mean attention probability to the same slot of the previous line, in [0, 1])."""
    return pd.DataFrame(list(scores), columns=["layer", "head", "score"])
