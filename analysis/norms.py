"""Norms of the residual stream and of each sublayer's output, per layer and position (the Layer norms page)."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from analysis.trace import residual_stream, vector_norm
from engine.model import CausalLMOutput


def residual_norms(out: CausalLMOutput, tokens: Sequence[str], batch: int = 0) -> pd.DataFrame:
    """L2 norm of the residual stream at every depth and position.

    Rows: depth 0 = embedding output, depth i = output of block i (1..L), depth L+1 = after the final norm.
    Columns: ``depth`` (int), ``stage`` ("embed", "block i", "final norm"), ``position``, ``token``, ``norm``.
    """
    states = residual_stream(out) + [out.activations["ln_final.hook_normalized"]]
    L = len(states) - 2
    rows = []
    for depth, h in enumerate(states):
        stage = "embed" if depth == 0 else ("final norm" if depth == L + 1 else f"block {depth}")
        for pos, value in enumerate(vector_norm(h[batch])):
            rows.append((depth, stage, pos, tokens[pos], float(value)))
    return pd.DataFrame(rows, columns=["depth", "stage", "position", "token", "norm"])


def sublayer_norms(out: CausalLMOutput, batch: int = 0) -> pd.DataFrame:
    """Mean over positions of the L2 norm of each block's attention output and MLP output.

    Columns: ``layer`` (0-based), ``component`` ("attn_out" or "mlp_out"), ``norm`` (mean over positions),
    ``norm_max`` (max over positions).
    """
    L = len(out.attentions)
    rows = []
    for i in range(L):
        for comp, key in (("attn_out", "hook_attn_out"), ("mlp_out", "hook_mlp_out")):
            n = vector_norm(out.activations[f"blocks.{i}.{key}"][batch])
            rows.append((i, comp, float(n.mean()), float(n.max())))
    return pd.DataFrame(rows, columns=["layer", "component", "norm", "norm_max"])
