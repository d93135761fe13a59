"""Per-position loss accounting under ``-100`` label masking, and the ``logits_to_keep`` check (the Loss page)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import torch

from engine.loss import IGNORE_INDEX
from engine.model import CausalLM, CausalLMOutput


def loss_table(out: CausalLMOutput, input_ids: torch.Tensor, labels: torch.Tensor, tokens: Sequence[str],
               batch: int = 0) -> pd.DataFrame:
    """Per-position loss accounting, one row per predicting position t = 0 .. T-2.

    Columns: ``position`` (t), ``input_token`` (token at t), ``target_token`` (token at t+1), ``masked``
    (label at t+1 is -100), ``loss`` (nats, NaN when masked), ``contribution`` (loss / number of supervised
    targets, NaN when masked), ``share`` (contribution / mean loss, a fraction). Supervised contributions sum
    to ``out.loss``; with no supervised target every loss and contribution is NaN.
    """
    tl = out.token_losses[batch].double().cpu().numpy()  # (T-1,)
    lab = labels[batch, 1:].cpu().numpy()
    masked = lab == IGNORE_INDEX
    n = int((~masked).sum())
    contribution = tl / n if n else np.full_like(tl, np.nan)
    mean = float(np.nansum(tl) / n) if n else float("nan")
    share = contribution / mean if n and mean != 0 else np.full_like(tl, np.nan)
    T = input_ids.shape[1]
    return pd.DataFrame({
        "position": np.arange(T - 1),
        "input_token": list(tokens[: T - 1]),
        "target_token": list(tokens[1:T]),
        "masked": masked,
        "loss": tl,
        "contribution": contribution,
        "share": share,
    })


@torch.no_grad()
def logits_to_keep_check(model: CausalLM, input_ids: torch.Tensor, k: int) -> dict:
    """Compare ``model(input_ids, logits_to_keep=k)`` with the last k positions of the full logits.

    Both forwards take the same (non-cached) path, so only the LM head's input differs: the kept run applies
    the head to the last ``min(k, T)`` hidden states only (transformers' ``logits_to_keep`` idea; generation
    needs just the last position).

    Args:
        input_ids: ``[1, T]``; k: number of positions to keep, ``>= 1``.
    Returns:
        ``{"kept_shape": [1, k', V], "full_shape": [1, T, V], "max_abs_diff": float (logit units),
        "scale": max |logit| of the full logits, "equal": bool (torch.equal, bit-for-bit)}`` with ``k' = min(k, T)``.
    Raises:
        ValueError: ``k < 1``, or invalid ``input_ids`` (see :meth:`CausalLM.forward`).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    full = model(input_ids).logits  # (1, T, V)
    kept = model(input_ids, logits_to_keep=k).logits  # (1, k', V)
    tail = full[:, -kept.shape[1]:, :]  # (1, k', V)
    diff = (kept.double() - tail.double()).abs()
    return {
        "kept_shape": list(kept.shape),
        "full_shape": list(full.shape),
        "max_abs_diff": float(diff.max()) if diff.numel() else 0.0,
        "scale": float(full.abs().max()),
        "equal": bool(torch.equal(kept, tail)),
    }
