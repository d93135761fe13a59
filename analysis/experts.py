"""Mixture-of-experts routing (Experts page): which experts the router picks for each token, and how evenly the
tokens spread over the experts.

Read from a :func:`analysis.trace.run_trace` output's activation record: ``blocks.{i}.mlp.hook_router_logits``
``[B, T, E]`` and ``blocks.{i}.mlp.hook_expert_indices`` / ``hook_expert_weights`` ``[B, T, k]`` (recorded by
``engine.layers.MoE``, which routes each token to the top-k of ``softmax(router logits)``). The probabilities are
the router's full softmax over all E experts (before the top-k renormalisation); the chosen experts are the ones
the forward actually used (the recorded indices), so the page shows what the model did, not a recomputation.

Column vocabulary as elsewhere: ``position`` 0-based, ``expert`` 0-based, ``layer`` 0-based.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from engine.model import CausalLMOutput

ROUTER = "blocks.{}.mlp.hook_router_logits"
INDICES = "blocks.{}.mlp.hook_expert_indices"
WEIGHTS = "blocks.{}.mlp.hook_expert_weights"


def moe_layers(out: CausalLMOutput) -> list[int]:
    """The 0-based blocks whose FFN is a mixture of experts (a router recorded), in order; [] for a dense model."""
    acts = out.activations or {}
    layers = sorted(int(k.split(".")[1]) for k in acts if k.endswith(".mlp.hook_router_logits"))
    return layers


def _routing(out: CausalLMOutput, layer: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(logits [N, E], probs [N, E] float64, indices [N, k], weights [N, k])`` of one block, N = B*T tokens."""
    acts = out.activations or {}
    key = ROUTER.format(layer)
    if key not in acts:
        raise ValueError(f"block {layer} has no router (a dense FFN, or no activation record)")
    logits = acts[key].detach().double()
    E = logits.shape[-1]
    logits = logits.reshape(-1, E)  # (N, E)
    probs = torch.softmax(logits, dim=-1)  # (N, E), float64 for the table
    indices = acts[INDICES.format(layer)].reshape(logits.shape[0], -1)  # (N, k)
    weights = acts[WEIGHTS.format(layer)].detach().double().reshape(logits.shape[0], -1)  # (N, k)
    return logits, probs, indices, weights


def router_table(out: CausalLMOutput, layer: int) -> pd.DataFrame:
    """One row per token and expert of block ``layer`` (0-based): what the router gave that expert.

    Columns: ``position``, ``expert``, ``logit`` (the router's score), ``probability`` (softmax over the E
    experts: each position's rows sum to 1), ``chosen`` (bool: the token was routed to the expert), ``rank``
    (1 = the expert with the highest probability among the chosen, ..., k; 0 when not chosen), ``weight`` (the
    weight of the expert's output in the token's FFN output: the top-k probabilities, renormalised to sum 1 when
    the model does so; 0 when not chosen). Positions run over the flattened batch (one sequence: 0..T-1).
    """
    logits, probs, indices, weights = _routing(out, layer)
    N, E = probs.shape
    rank = np.zeros((N, E), dtype=np.int64)
    weight = np.zeros((N, E), dtype=np.float64)
    idx = indices.cpu().numpy()
    w = weights.cpu().numpy()
    rows = np.arange(N)
    for j in range(idx.shape[1]):  # slot j of the top-k: torch.topk's order, highest probability first
        rank[rows, idx[:, j]] = j + 1
        weight[rows, idx[:, j]] = w[:, j]
    return pd.DataFrame({
        "position": np.repeat(np.arange(N), E),
        "expert": np.tile(np.arange(E), N),
        "logit": logits.cpu().numpy().reshape(-1),
        "probability": probs.cpu().numpy().reshape(-1),
        "chosen": (rank > 0).reshape(-1),
        "rank": rank.reshape(-1),
        "weight": weight.reshape(-1),
    })


def expert_load(out: CausalLMOutput, layer: int | None = None) -> pd.DataFrame:
    """How the tokens spread over the experts, in block ``layer`` (0-based) or over every MoE block (None).

    Columns: ``expert``; ``tokens``: routed (token, block) pairs that went to the expert; ``share``: the fraction
    of tokens routed to it (``tokens`` / (N tokens x blocks)): the shares sum to k, each is k/E when the load is
    even, 1 when every token goes there; ``load``: its part of all routed slots (``share`` / k, sums to 1);
    ``mean_probability``: its mean router probability (sums to 1).

    Raises:
        ValueError: the model has no router (dense) or ``layer`` has none.
    """
    layers = moe_layers(out) if layer is None else [layer]
    if not layers:
        raise ValueError("the model has no mixture-of-experts block")
    counts = prob_sum = None
    rows = 0
    for i in layers:
        _, probs, indices, _ = _routing(out, i)
        E = probs.shape[1]
        c = torch.bincount(indices.reshape(-1).cpu(), minlength=E).double()  # (E,)
        counts = c if counts is None else counts + c
        p = probs.sum(dim=0).cpu()
        prob_sum = p if prob_sum is None else prob_sum + p
        rows += probs.shape[0]
        k = indices.shape[1]
    counts_np = counts.numpy()
    return pd.DataFrame({
        "expert": np.arange(len(counts_np)),
        "tokens": counts_np.astype(np.int64),
        "share": counts_np / rows,
        "load": counts_np / (rows * k),
        "mean_probability": (prob_sum / rows).numpy(),
    })


def load_summary(load: pd.DataFrame, top_k: int) -> dict:
    """The numbers of the sentence under the load chart, from an :func:`expert_load` frame.

    Returns ``most`` / ``least`` (0-based expert with the largest / smallest share; the lowest index on a tie),
    ``most_share`` / ``least_share``, ``uniform`` (k/E, every expert's share when the load is even),
    ``most_ratio`` / ``least_ratio`` (share / uniform), ``idle`` (experts no token went to), ``spread`` (largest
    minus smallest share) and ``aux_loss``: the Switch Transformer load-balancing loss
    ``E * sum_e share_e * mean_probability_e`` (Fedus et al. 2021 eq. 4 with transformers' top-k counting, as
    ``engine.layers.router_load``): k when the load and the probabilities are even, larger the more the tokens
    and the probability crowd onto the same experts.
    """
    E = len(load)
    share = load["share"].to_numpy(dtype=np.float64)
    uniform = top_k / E
    most, least = int(np.argmax(share)), int(np.argmin(share))
    aux = E * float((share * load["mean_probability"].to_numpy(dtype=np.float64)).sum())
    return {
        "most": most, "least": least, "most_share": float(share[most]), "least_share": float(share[least]),
        "uniform": uniform, "most_ratio": float(share[most]) / uniform, "least_ratio": float(share[least]) / uniform,
        "idle": int((share == 0).sum()), "spread": float(share[most] - share[least]), "aux_loss": aux,
    }


def routed_expert_parameters(model: torch.nn.Module) -> int:
    """Parameters of the routed experts of every block (``layers.{i}.mlp.experts.*``; not the router, not a shared
    expert): what a mixture of experts adds over one dense FFN per block, and most of what a token leaves unused."""
    return sum(p.numel() for name, p in model.named_parameters() if ".mlp.experts." in name)
