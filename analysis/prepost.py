"""The same weights under every norm placement (Pre-Norm, Post-Norm, Gemma's sandwich, OLMo-2's post-sub-layer
order): the twin models, the residual norm and the divergence of the hidden states by depth, and LM-loss gradient
norms by block and against depth (the norm placement page, formerly Pre vs Post).

Twins share every tensor of the model they are built from (``load_state_dict(assign=True)``): the embedding,
attention, feed-forward, final norm and head, and each norm that sits in the same place in both (:data:`NORM_SLOTS`).
A norm the twin has and the model lacks starts at its init (scale 1, bias 0: it only normalises).

Gradients are taken with ``torch.autograd.grad``, which never writes ``.grad``, so a shared model stays untouched.
References: R. Xiong et al., "On Layer Normalization in the Transformer Architecture", ICML 2020.
"""

from __future__ import annotations

import math
from typing import Sequence

import pandas as pd
import torch

from analysis.trace import residual_stream
from engine.config import NORM_POSITIONS, ModelConfig
from engine.layers import build_norm
from engine.model import CausalLM
from engine.seeding import seeded

#: The four placements, in the page's order (keys of ``engine.model.NORM_PLACEMENTS``).
PLACEMENTS: tuple[str, ...] = NORM_POSITIONS

#: Where each of a placement's block norms sits (transformers' names -> a slot): before attention ("attn_in"), on
#: attention's output ("attn_out"), before the feed-forward ("mlp_in"), on its output ("mlp_out"). Twins share a
#: norm's tensors when both have a norm in that slot. Post-Norm's two norms sit on the residual sums; they are
#: matched with Pre-Norm's by name, block norm 1 and 2, as this page always has (Pre <-> Post share every weight).
NORM_SLOTS: dict[str, dict[str, str]] = {
    "pre": {"input_layernorm": "attn_in", "post_attention_layernorm": "mlp_in"},
    "post": {"input_layernorm": "attn_in", "post_attention_layernorm": "mlp_in"},
    "sandwich": {"input_layernorm": "attn_in", "post_attention_layernorm": "attn_out",
                 "pre_feedforward_layernorm": "mlp_in", "post_feedforward_layernorm": "mlp_out"},
    "post_sublayer": {"post_attention_layernorm": "attn_out", "post_feedforward_layernorm": "mlp_out"},
}


def norms_at_init(source: str, placement: str) -> tuple[str, ...]:
    """The block norms of ``placement`` that a model placed as ``source`` has no norm for (they start at init)."""
    have = set(NORM_SLOTS[source].values())
    return tuple(name for name, slot in NORM_SLOTS[placement].items() if slot not in have)


def placement_twin(model: CausalLM, placement: str) -> CausalLM:
    """The model's weights under another norm placement (the model itself for its own placement; never modified).

    The twin is built on the meta device from ``config.replace(norm_position=placement)`` and loads, in strict mode
    with ``assign=True``, the model's own tensors: every non-norm parameter by name, each block norm from the norm
    in the same slot (:data:`NORM_SLOTS`), and a fresh norm at init (scale 1, bias 0) where the model has none
    there. So the twin holds the very same storage: read-only use only, like every cached model.
    """
    if placement == model.config.norm_position:
        return model
    config = model.config.replace(norm_position=placement)
    with torch.device("meta"):  # no random init that the shared weights would replace
        twin = CausalLM(config)
    source = model.state_dict()
    theirs = {slot: name for name, slot in NORM_SLOTS[model.config.norm_position].items()}
    ours = NORM_SLOTS[placement]
    ref = model.norm.weight
    fresh = {k: v.to(dtype=ref.dtype, device=ref.device) for k, v in build_norm(config).state_dict().items()}
    state = {}
    for key in twin.state_dict():
        parts = key.split(".")  # layers.{i}.{norm}.{weight|bias}
        if parts[0] == "layers" and len(parts) == 4 and parts[2] in ours:
            mine = theirs.get(ours[parts[2]])
            state[key] = source[f"layers.{parts[1]}.{mine}.{parts[3]}"] if mine else fresh[parts[3]].clone()
        else:
            state[key] = source[key]
    # assign=True: the twin holds the very same storage (no copy). assign wraps each state-dict entry in its own
    # Parameter, so a tied head is re-tied to make it one Parameter again.
    twin.load_state_dict(state, strict=True, assign=True)
    for name, buf in model.named_buffers():  # fixed tables outside the state dict (sinusoidal positions): shared too
        owner, _, attr = name.rpartition(".")
        setattr(twin.get_submodule(owner), attr, buf)
    if model.lm_head.weight is model.embed_tokens.weight:
        twin.lm_head.weight = twin.embed_tokens.weight
    return twin.eval()


def placement_models(model: CausalLM, placements: Sequence[str] = PLACEMENTS) -> dict[str, CausalLM]:
    """``{placement: model}`` for ``placements`` on the model's weights (:func:`placement_twin`), the model's own
    placement first (it is the model itself), the others in the given order."""
    own = model.config.norm_position
    order = ([own] if own in placements else []) + [p for p in placements if p != own]
    return {p: placement_twin(model, p) for p in order}


def norm_placement_pair(model: CausalLM) -> tuple[CausalLM, CausalLM]:
    """The same weights under Pre-Norm and Post-Norm: ``(pre_model, post_model)`` (:func:`placement_twin`; the
    given model is one of them when it is placed Pre or Post)."""
    return placement_twin(model, "pre"), placement_twin(model, "post")


@torch.no_grad()
def placement_divergence(pre: CausalLM, post: CausalLM, input_ids: torch.Tensor, batch: int = 0) -> pd.DataFrame:
    """Per-depth divergence between Pre-Norm and Post-Norm hidden states on the same input.

    Columns: ``depth`` (0 = embedding, i = block i), ``pre_norm`` and ``post_norm`` (mean L2 norm over
    positions), ``cosine`` (mean over positions of the cosine similarity), ``rel_l2`` (mean over positions of
    ``||h_pre - h_post|| / ||h_pre||``).
    """
    hp = residual_stream(pre(input_ids, logits_to_keep=1, output_activations=True))  # depth 0..L, before the final
    hq = residual_stream(post(input_ids, logits_to_keep=1, output_activations=True))  # norm; the logits are unused
    rows = []
    for depth, (a, b) in enumerate(zip(hp, hq)):
        a, b = a[batch].double(), b[batch].double()  # (T, H)
        na, nb = a.norm(dim=-1), b.norm(dim=-1)  # (T,)
        cos = torch.nn.functional.cosine_similarity(a, b, dim=-1)  # (T,)
        rel = (a - b).norm(dim=-1) / na.clamp_min(1e-30)  # (T,)
        rows.append((depth, float(na.mean()), float(nb.mean()), float(cos.mean()), float(rel.mean())))
    return pd.DataFrame(rows, columns=["depth", "pre_norm", "post_norm", "cosine", "rel_l2"])


@torch.no_grad()
def placement_comparison(models: dict[str, CausalLM], input_ids: torch.Tensor,
                         batch: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The residual stream of each placement by depth, on the same input; the first entry of ``models`` (the
    model's own placement) is the reference.

    Returns:
        ``norms``: columns ``depth`` (0 = embedding, i = block i, before the final norm) and ``{placement}_norm``
        for each placement in ``models``' order (mean over positions of the L2 norm).
        ``drift``: one row per depth and other placement: ``depth``, ``placement``, ``cosine`` (mean over positions
        of the cosine similarity with the reference's hidden state), ``rel_l2`` (mean of
        ``||h - h_ref|| / ||h_ref||``).
    """
    streams = {p: [h[batch].double() for h in residual_stream(m(input_ids, logits_to_keep=1, output_activations=True))]
               for p, m in models.items()}  # each: depth 0..L of (T, H); the head on the last position only (unused)
    reference = next(iter(streams.values()))
    norms = {"depth": list(range(len(reference)))}
    drift = []
    for p, hs in streams.items():
        norms[f"{p}_norm"] = [float(h.norm(dim=-1).mean()) for h in hs]
        if hs is reference:
            continue
        for depth, (a, b) in enumerate(zip(reference, hs)):
            cos = torch.nn.functional.cosine_similarity(b, a, dim=-1)  # (T,)
            rel = (b - a).norm(dim=-1) / a.norm(dim=-1).clamp_min(1e-30)  # (T,)
            drift.append((depth, p, float(cos.mean()), float(rel.mean())))
    return pd.DataFrame(norms), pd.DataFrame(drift, columns=["depth", "placement", "cosine", "rel_l2"])


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
                                 progress=None, placements: Sequence[str] = ("pre", "post")) -> pd.DataFrame:
    """Xiong et al. 2020, Theorem 1: the LM-loss gradient of the last block against the number of blocks L.

    For each L in ``depths`` a model ``CausalLM(config.replace(num_hidden_layers=L))`` is initialised with
    ``seed`` (as the sidebar builds it), and its twins under ``placements`` share its weights
    (:func:`placement_models`). Only the last block's parameters are differentiated (``torch.autograd.grad``:
    no ``.grad`` written, and autograd stops at that block). Labels = ``input_ids`` ``[1, T]``, T >= 2.

    Args:
        progress: optional callable ``(done, total)`` called after each depth.
    Returns:
        Columns ``layers`` (L), ``placement`` (the config's own placement first when it is among ``placements``),
        ``grad_norm`` (L2 norm over all gradients of block L).
    """
    rows = []
    for k, L in enumerate(depths):
        with seeded(seed):
            model = CausalLM(config.replace(num_hidden_layers=int(L)))
        for placement, m in placement_models(model, placements).items():
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
