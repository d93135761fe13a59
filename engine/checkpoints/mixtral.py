"""Mixtral checkpoints (``MixtralForCausalLM``): the Llama block with a mixture-of-experts FFN.

transformers ``models/mixtral/modeling_mixtral.py`` (read, not copied): the router ``block_sparse_moe.gate`` picks
``num_experts_per_tok`` of ``num_local_experts`` SwiGLU experts from the softmax of its logits and always
renormalises the chosen probabilities. Files store each expert as ``block_sparse_moe.experts.{e}.w1`` (gate),
``w3`` (up) and ``w2`` (down); they are renamed to ours (``mlp.gate``, ``mlp.experts.{e}.{gate,up,down}_proj``).
"""

from __future__ import annotations

import re
from typing import Any

from ..config import ModelConfig
from .family import Family, Plan, sliding_layout
from .llama import LAYER_PARAMS, llama_like_config, make_plan

_W = {"w1": "gate_proj", "w3": "up_proj", "w2": "down_proj"}
_EXPERT = re.compile(r"^(?:model\.)?layers\.(\d+)\.block_sparse_moe\.(?:gate\.weight|experts\.(\d+)\.(w[123])\.weight)$")
_dense_plan = make_plan(LAYER_PARAMS - {f"mlp.{p}_proj.{k}" for p in ("gate", "up", "down") for k in ("weight", "bias")})


def config(cfg: dict[str, Any]) -> ModelConfig:
    """Llama's mapping with ``num_local_experts`` / ``num_experts_per_tok`` (renormalised top-k) and a window."""
    return llama_like_config(cfg, num_local_experts=cfg.get("num_local_experts", 8),
                             num_experts_per_tok=cfg.get("num_experts_per_tok", 2), norm_topk_prob=True,
                             **sliding_layout(cfg))


def plan(name: str) -> Plan:
    """Mixtral's expert names renamed to ours; everything else as Llama's."""
    m = _EXPERT.match(name)
    if m is None:
        return _dense_plan(name)
    layer, expert, w = m.groups()
    if expert is None:
        return "copy", [f"layers.{layer}.mlp.gate.weight"]
    return "copy", [f"layers.{layer}.mlp.experts.{expert}.{_W[w]}.weight"]


FAMILY = Family("mixtral", architectures=("MixtralForCausalLM",), model_types=("mixtral",), config=config, plan=plan,
                check_common=False)
