"""The same weights under Pre-Norm and Post-Norm: the twin model, per-depth divergence of the hidden states, and
LM-loss gradient norms by block (the Pre vs Post page).

Gradients are taken with ``torch.autograd.grad``, which never writes ``.grad``, so a shared model stays untouched.
References: R. Xiong et al., "On Layer Normalization in the Transformer Architecture", ICML 2020.
"""

from __future__ import annotations

import math
from typing import Sequence

import pandas as pd
import torch

from analysis.trace import residual_stream
from engine.config import ModelConfig
from engine.model import CausalLM
from engine.seeding import seeded


def norm_placement_pair(model: CausalLM) -> tuple[CausalLM, CausalLM]:
    """The same weights under Pre-Norm and Post-Norm: ``(pre_model, post_model)``.

    The given model is one of the two (returned as is, never modified); the other is a new model built
    from ``config.replace(norm_position=...)`` that loads the same state dict in strict mode with
    ``assign=True``, so both share their parameter tensors: read-only use only, like every cached model.
    """
    other_position = "post" if model.config.norm_position == "pre" else "pre"
    with torch.device("meta"):  # no random init that the shared weights would replace (a third of the page's time)
        other = CausalLM(model.config.replace(norm_position=other_position))
    # assign=True: the new model holds the very same storage (no copy, no extra memory). assign wraps each
    # state-dict entry in its own Parameter, so a tied head is re-tied to make it one Parameter again.
    other.load_state_dict(model.state_dict(), strict=True, assign=True)
    for name, buf in model.named_buffers():  # fixed tables outside the state dict (sinusoidal positions): shared too
        owner, _, attr = name.rpartition(".")
        setattr(other.get_submodule(owner), attr, buf)
    if model.lm_head.weight is model.embed_tokens.weight:
        other.lm_head.weight = other.embed_tokens.weight
    return (model, other) if model.config.norm_position == "pre" else (other, model)


@torch.no_grad()
def placement_divergence(pre: CausalLM, post: CausalLM, input_ids: torch.Tensor, batch: int = 0) -> pd.DataFrame:
    """Per-depth divergence between Pre-Norm and Post-Norm hidden states on the same input.

    Columns: ``depth`` (0 = embedding, i = block i), ``pre_norm`` and ``post_norm`` (mean L2 norm over
    positions), ``cosine`` (mean over positions of the cosine similarity), ``rel_l2`` (mean over positions of
    ``||h_pre - h_post|| / ||h_pre||``).
    """
    hp = residual_stream(pre(input_ids, output_activations=True))  # depth 0..L, before the final norm
    hq = residual_stream(post(input_ids, output_activations=True))
    rows = []
    for depth, (a, b) in enumerate(zip(hp, hq)):
        a, b = a[batch].double(), b[batch].double()  # (T, H)
        na, nb = a.norm(dim=-1), b.norm(dim=-1)  # (T,)
        cos = torch.nn.functional.cosine_similarity(a, b, dim=-1)  # (T,)
        rel = (a - b).norm(dim=-1) / na.clamp_min(1e-30)  # (T,)
        rows.append((depth, float(na.mean()), float(nb.mean()), float(cos.mean()), float(rel.mean())))
    return pd.DataFrame(rows, columns=["depth", "pre_norm", "post_norm", "cosine", "rel_l2"])


def gradient_norms(model: CausalLM, input_ids: torch.Tensor, labels: torch.Tensor | None = None) -> pd.DataFrame:
    """L2 norm of the LM-loss gradient of each block's parameters (and the embedding and head).

    Uses ``torch.autograd.grad``, so no ``.grad`` field of the (possibly shared) model is written.
    Columns: ``layer`` (0..L-1 blocks; -1 embedding; L final norm + head), ``component`` ("embed",
    "block i", "final norm + head"), ``grad_norm``. NaN everywhere when no target is supervised.

    Raises:
        ValueError: see :meth:`CausalLM.forward`.
    """
    labels = input_ids if labels is None else labels
    with torch.enable_grad():
        out = model(input_ids, labels=labels)
        groups: list[tuple[int, str, list[torch.nn.Parameter]]] = [(-1, "embed", list(model.embed_tokens.parameters())
                                                                    + (list(model.embed_positions.parameters())
                                                                       if model.embed_positions is not None else []))]
        for i, layer in enumerate(model.layers):
            groups.append((i, f"block {i + 1}", list(layer.parameters())))
        L = len(model.layers)
        head = list(model.norm.parameters())
        if model.lm_head.weight is not model.embed_tokens.weight:
            head.append(model.lm_head.weight)
        groups.append((L, "final norm + head", head))
        params = [p for _, _, ps in groups for p in ps]
        if not torch.isfinite(out.loss):
            return pd.DataFrame([(i, c, float("nan")) for i, c, _ in groups], columns=["layer", "component", "grad_norm"])
        grads = torch.autograd.grad(out.loss, params, allow_unused=True)
    rows, k = [], 0
    for i, comp, ps in groups:
        sq = 0.0
        for _ in ps:
            g = grads[k]
            k += 1
            if g is not None:
                sq += float(g.double().pow(2).sum())
        rows.append((i, comp, math.sqrt(sq)))
    return pd.DataFrame(rows, columns=["layer", "component", "grad_norm"])


def last_block_gradient_by_depth(config: ModelConfig, seed: int, input_ids: torch.Tensor, depths: Sequence[int],
                                 progress=None) -> pd.DataFrame:
    """Xiong et al. 2020, Theorem 1: the LM-loss gradient of the last block against the number of blocks L.

    For each L in ``depths`` a model ``CausalLM(config.replace(num_hidden_layers=L))`` is initialised with
    ``seed`` (as the sidebar builds it), and its Pre-Norm / Post-Norm twin shares its weights
    (:func:`norm_placement_pair`). Only the last block's parameters are differentiated (``torch.autograd.grad``:
    no ``.grad`` written, and autograd stops at that block). Labels = ``input_ids`` ``[1, T]``, T >= 2.

    Args:
        progress: optional callable ``(done, total)`` called after each depth.
    Returns:
        Columns ``layers`` (L), ``placement`` ("pre"/"post"), ``grad_norm`` (L2 norm over all gradients of block L).
    """
    rows = []
    for k, L in enumerate(depths):
        with seeded(seed):
            model = CausalLM(config.replace(num_hidden_layers=int(L)))
        for placement, m in zip(("pre", "post"), norm_placement_pair(model)):
            params = list(m.layers[-1].parameters())
            with torch.enable_grad():
                loss = m(input_ids, labels=input_ids).loss
                # allow_unused: an expert no token is routed to (MoE) has no gradient, i.e. zero
                grads = (torch.autograd.grad(loss, params, allow_unused=True) if torch.isfinite(loss)
                         else [torch.tensor(math.nan)])
            rows.append((int(L), placement,
                         math.sqrt(sum(float(g.double().pow(2).sum()) for g in grads if g is not None))))
        if progress is not None:
            progress(k + 1, len(depths))
    return pd.DataFrame(rows, columns=["layers", "placement", "grad_norm"])
