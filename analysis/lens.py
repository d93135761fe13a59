"""The logit lens (nostalgebraist 2020, "interpreting GPT: the logit lens"), correctly normalised.

The residual stream after each block is decoded as if it were the last one: passed through the model's own
final norm and LM head, ``softmax(lm_head(norm(h_l)))``. After the last block this *is* the model's output, so
the lens at the last depth equals the model's logits. This is the raw lens: no learned per-layer translator
(the "tuned lens" of Belrose et al. 2023 fits one), so early layers are read in a basis they were not trained
to be read in, and their top tokens are often noise.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch

from analysis.trace import residual_stream  # noqa: F401  (defined once, in trace; re-exported for lens users)
from engine import CausalLM


@torch.no_grad()
def lens_logits(model: CausalLM, hidden: torch.Tensor) -> torch.Tensor:
    """``lm_head(norm(hidden))``: ``[..., H]`` -> ``[..., V]``, through the model's own final norm and head."""
    return model.lm_head(model.norm(hidden))  # (..., V)


@torch.no_grad()
def logit_lens(model: CausalLM, residual: Sequence[torch.Tensor], batch: int = 0,
               progress: Callable[[float], None] | None = None) -> pd.DataFrame:
    """For every depth and position: the lens's top token and the probability it gives the model's final
    prediction.

    Args:
        model: the model that produced ``residual`` (its ``norm`` and ``lm_head`` are used, read only).
        residual: the L+1 residual-stream states ``[B, T, H]`` before the final norm (:func:`residual_stream`).
        progress: called with the fraction of depths done (for a progress bar).
    Returns:
        One row per (depth, position), depth 0 = embedding, depth i = after block i. Columns ``depth``,
        ``position``, ``top_id`` (argmax of the lens distribution), ``top_prob``, ``final_id`` (the model's own
        argmax at that position: the lens at depth L), ``p_final`` (the lens probability of ``final_id``),
        ``rank_final`` (0 = it is the lens's top token).
    """
    L = len(residual) - 1
    final = lens_logits(model, residual[L][batch]).argmax(-1)  # (T,)
    frames = []
    for depth, h in enumerate(residual):
        logits = lens_logits(model, h[batch])  # (T, V)
        lse = logits.logsumexp(-1)  # (T,) the softmax's normaliser: no (T, V) probability table is built
        top_logit, top_id = logits.max(-1)  # (T,), (T,)
        final_logit = logits.gather(-1, final[:, None])[:, 0]  # (T,)
        top_prob, p_final = (top_logit - lse).exp(), (final_logit - lse).exp()  # (T,), (T,)
        rank = (logits > final_logit[:, None]).sum(-1)  # (T,) tokens scored strictly higher
        T = h.shape[1]
        frames.append(pd.DataFrame({
            "depth": depth, "position": np.arange(T), "top_id": top_id.numpy(), "top_prob": top_prob.numpy(),
            "final_id": final.numpy(), "p_final": p_final.numpy(), "rank_final": rank.numpy(),
        }))
        if progress is not None:
            progress((depth + 1) / (L + 1))
    return pd.concat(frames, ignore_index=True)


def first_top_depth(lens: pd.DataFrame) -> pd.DataFrame:
    """Per position, the first depth from which the model's final prediction stays the lens's top token
    (``rank_final == 0`` at that depth and every later one). Columns ``position``, ``depth``."""
    rows = []
    for pos, g in lens.sort_values("depth").groupby("position"):
        top = (g["rank_final"] == 0).to_numpy()
        # the last run of True at the end (the final depth is always True: the lens there is the model)
        d = len(top)
        while d > 0 and top[d - 1]:
            d -= 1
        rows.append((int(pos), int(g["depth"].iloc[d]) if d < len(top) else int(g["depth"].iloc[-1])))
    return pd.DataFrame(rows, columns=["position", "depth"])
