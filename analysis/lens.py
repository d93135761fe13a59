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


LENS_ROWS = 128  # residual rows per product with the head (SmolLM2: 128 x 49,152 logits, 25 MB at a time; 1.1x
# faster than one product per depth on one core, and larger chunks lose it again in the reductions over V)


@torch.no_grad()
def logit_lens(model: CausalLM, residual: Sequence[torch.Tensor], batch: int = 0,
               progress: Callable[[float], None] | None = None,
               positions: Sequence[int] | None = None, depths: Sequence[int] | None = None) -> pd.DataFrame:
    """For every depth and position: the lens's top token and the probability it gives the model's final
    prediction.

    Args:
        model: the model that produced ``residual`` (its ``norm`` and ``lm_head`` are used, read only).
        residual: the L+1 residual-stream states ``[B, T, H]`` before the final norm (:func:`residual_stream`).
        progress: called with the fraction of rows done (for a progress bar).
        positions, depths: only these positions and depths (ascending), e.g. the cells a chart draws; None: all.
            Each row is the same numbers either way: rows do not interact.
    Returns:
        One row per (depth, position), depth 0 = embedding, depth i = after block i. Columns ``depth``,
        ``position``, ``top_id`` (argmax of the lens distribution), ``top_prob``, ``final_id`` (the model's own
        argmax at that position: the lens at depth L), ``p_final`` (the lens probability of ``final_id``),
        ``rank_final`` (0 = it is the lens's top token).
    """
    L = len(residual) - 1
    at = torch.arange(residual[0].shape[1]) if positions is None else torch.as_tensor(list(positions), dtype=torch.long)
    depths = list(range(L + 1)) if depths is None else list(depths)
    P, D = len(at), len(depths)
    final = lens_logits(model, residual[L][batch, at]).argmax(-1)  # (P,) the model's own prediction
    rows = torch.cat([residual[d][batch, at] for d in depths])  # (D * P, H): each depth's positions, depth-major
    finals = final.repeat(D)  # (D * P,) each row's final prediction
    parts = []
    for start in range(0, len(rows), LENS_ROWS):  # a few hundred rows per product: the head's weights are read
        logits = lens_logits(model, rows[start:start + LENS_ROWS])  # (R, V)   once per chunk, not once per depth
        lse = logits.logsumexp(-1)  # (R,) the softmax's normaliser: no (R, V) probability table is built
        top_logit, top_id = logits.max(-1)  # (R,), (R,)
        final_logit = logits.gather(-1, finals[start:start + LENS_ROWS, None])[:, 0]  # (R,)
        # (R,) tokens scored strictly higher; counted in int32 (6x faster than the default int64 sum over V)
        rank = (logits > final_logit[:, None]).sum(-1, dtype=torch.int32)
        parts.append((top_id, (top_logit - lse).exp(), (final_logit - lse).exp(), rank))
        if progress is not None:
            progress(min(start + LENS_ROWS, len(rows)) / len(rows))
    top_id, top_prob, p_final, rank = (torch.cat(c).numpy() for c in zip(*parts))
    return pd.DataFrame({"depth": np.repeat(np.array(depths, dtype=np.int64), P), "position": np.tile(at.numpy(), D),
                         "top_id": top_id, "top_prob": top_prob, "final_id": finals.numpy(), "p_final": p_final,
                         "rank_final": rank.astype(np.int64)})


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
