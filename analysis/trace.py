"""A forward with everything recorded, and what can be trusted in it.

:func:`run_trace` is the one forward the pages share (hidden states, attentions and the activation record);
:func:`residual_stream` reads the residual stream out of it; :func:`finite_report` says which of its numbers
are trustworthy (NaN/Inf, or a norm overflowing). Pure with respect to the model: ``torch.no_grad``, no hooks,
no parameter changed, so a model shared between browser sessions stays untouched.
References: TransformerLens activation names.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from engine.layers import norm_statistics_dtype
from engine.model import CausalLM, CausalLMOutput


@torch.no_grad()
def run_trace(model: CausalLM, input_ids: torch.Tensor, labels: torch.Tensor | None = None) -> CausalLMOutput:
    """Forward with everything recorded: hidden states, attentions and the full activation record.

    Args:
        input_ids: ``[B, T]``; labels: optional ``[B, T]`` aligned labels (-100 = unsupervised).
    Returns:
        :class:`CausalLMOutput` with ``hidden_states``, ``attentions`` and ``activations`` filled.
    Raises:
        ValueError: see :meth:`CausalLM.forward`.
    """
    return model(input_ids, labels=labels, output_attentions=True, output_hidden_states=True, output_activations=True)


def vector_norm(x: torch.Tensor) -> np.ndarray:
    """L2 norm over the hidden dimension of ``[T, H]`` -> ``[T]`` float64 numpy."""
    return torch.linalg.vector_norm(x.double(), dim=-1).cpu().numpy()


def residual_stream(out: CausalLMOutput) -> list[torch.Tensor]:
    """The L+1 residual-stream states before the final norm, each ``[B, T, H]``: the embedding output, then
    the output of every block (``blocks.{i}.hook_resid_post``).

    ``out.hidden_states`` follows transformers (its last entry is after the final norm), so block L's raw
    output comes from the activation record: ``out`` must be a :func:`run_trace` (``output_activations=True``) output.

    Raises:
        ValueError: ``out`` has no activation record.
    """
    if out.activations is None:
        raise ValueError("need a forward with output_activations=True (analysis.trace.run_trace)")
    L = sum(1 for k in out.activations if k.endswith(".hook_resid_post"))
    return [out.activations["blocks.0.hook_resid_pre"]] + [out.activations[f"blocks.{i}.hook_resid_post"] for i in range(L)]


def norm_overflow_limit(dtype: torch.dtype) -> float:
    """Largest residual-stream magnitude a norm can take in ``dtype``: ``sqrt(finfo(stats dtype).max)``.

    The norms compute their statistics in :func:`engine.layers.norm_statistics_dtype` (float32 for float16
    and bfloat16, the input's own dtype otherwise); above this limit a square overflows, the variance becomes
    inf, and the norm silently returns its bias (zeros), so everything after it is finite but wrong.
    float32 and half precision: about 1.8e19; float64: about 1.3e154.
    """
    return math.sqrt(torch.finfo(norm_statistics_dtype(dtype)).max)


def finite_report(out: CausalLMOutput) -> dict[str, bool]:
    """Which outputs are numerically trustworthy: ``{"logits", "hidden_states", "attentions", "norms"}`` -> bool.

    ``hidden_states`` is False when a residual-stream state is NaN or Inf (in float16 anything above 65504 is
    Inf). ``norms`` is False when some residual-stream entry reaches :func:`norm_overflow_limit` of the dtype in
    use. The residual stream is read from the activation record when ``out`` has one (block L's output before
    the final norm), else from ``out.hidden_states``.
    """
    rep = {"logits": bool(torch.isfinite(out.logits).all())}
    if out.hidden_states is not None:
        states = residual_stream(out) if out.activations is not None else list(out.hidden_states)
        rep["hidden_states"] = all(bool(torch.isfinite(h).all()) for h in states + [out.hidden_states[-1]])
        rep["norms"] = all(bool((h.abs() < norm_overflow_limit(h.dtype)).all()) for h in states)
    if out.attentions is not None:
        rep["attentions"] = all(bool(torch.isfinite(a).all()) for a in out.attentions)
    return rep


def activation_frame(out: CausalLMOutput, hook: str, batch: int = 0) -> pd.DataFrame:
    """One cached activation as a wide table: rows = positions, columns = hidden units ``0..H-1``.

    Args:
        hook: an activation key of shape ``[B, T, H]`` (e.g. ``"blocks.0.hook_resid_mid"``).
    Raises:
        KeyError: unknown hook (the message lists the block keys); ValueError: not a ``[B, T, H]`` tensor.
    """
    if out.activations is None or hook not in out.activations:
        raise KeyError(f"{hook!r} is not in the activation record")
    x = out.activations[hook][batch]
    if x.dim() != 2:
        raise ValueError(f"{hook} has shape {tuple(out.activations[hook].shape)}, expected [B, T, H]")
    frame = pd.DataFrame(x.float().cpu().numpy())
    frame.index.name = "position"
    return frame
