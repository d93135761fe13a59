"""Qwen3-MoE and Qwen2-MoE checkpoints (``Qwen3MoeForCausalLM``, ``Qwen2MoeForCausalLM``): Qwen's block with a
mixture-of-experts FFN in every layer.

transformers ``models/qwen3_moe/modeling_qwen3_moe.py`` and ``models/qwen2_moe/modeling_qwen2_moe.py`` (read, not
copied): router ``mlp.gate``, experts ``mlp.experts.{e}.{gate,up,down}_proj`` of width ``moe_intermediate_size``
(our names already), top-k of the softmax renormalised only with ``norm_topk_prob``. Qwen3-MoE adds per-head
QK-norm; Qwen2-MoE adds q/k/v biases and a shared expert (``mlp.shared_expert``, ``mlp.shared_expert_gate``).
"""

from __future__ import annotations

from typing import Any

from ..config import ModelConfig
from .errors import UnsupportedCheckpointError
from .family import Family, sliding_layout
from .llama import LAYER_PARAMS, llama_like_config, make_plan
from .qwen3 import config as qwen3_config


def moe_fields(cfg: dict[str, Any]) -> dict[str, Any]:
    """The expert fields of a Qwen MoE ``config.json``.

    Raises:
        UnsupportedCheckpointError: dense layers among the MoE ones (``mlp_only_layers``, ``decoder_sparse_step``).
    """
    if cfg.get("mlp_only_layers"):
        raise UnsupportedCheckpointError(f"config.json field 'mlp_only_layers' = {cfg['mlp_only_layers']}: "
                                         "dense layers between mixture-of-experts layers are not supported")
    if cfg.get("decoder_sparse_step", 1) != 1:
        raise UnsupportedCheckpointError(f"config.json field 'decoder_sparse_step' = {cfg['decoder_sparse_step']}: "
                                         "only a mixture of experts in every layer is supported")
    return {"num_local_experts": cfg.get("num_experts", cfg.get("num_local_experts", 8)),
            "num_experts_per_tok": cfg.get("num_experts_per_tok", 8), "norm_topk_prob": bool(cfg.get("norm_topk_prob", False)),
            "moe_intermediate_size": cfg.get("moe_intermediate_size"),
            "shared_expert_intermediate_size": cfg.get("shared_expert_intermediate_size", 0)}


def _without_moe(cfg: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in cfg.items() if k not in ("num_experts", "num_local_experts", "num_experts_per_tok",
                                                       "moe_intermediate_size", "shared_expert_intermediate_size")}


def config(cfg: dict[str, Any]) -> ModelConfig:
    """Qwen3's mapping (QK-norm per head) with the expert fields."""
    return qwen3_config(_without_moe(cfg)).replace(**moe_fields(cfg))


def qwen2_moe_config(cfg: dict[str, Any]) -> ModelConfig:
    """Qwen2's mapping (q/k/v biases) with the expert fields and the shared expert."""
    return llama_like_config(cfg, qkv_bias_only=True, **moe_fields(cfg), **sliding_layout(cfg, flag=True))


_EXPERT_PARAMS = {"mlp.gate.weight", "self_attn.q_norm.weight", "self_attn.k_norm.weight",
                  "mlp.shared_expert_gate.weight",
                  *(f"mlp.shared_expert.{p}_proj.weight" for p in ("gate", "up", "down"))}
_plan = make_plan(LAYER_PARAMS | _EXPERT_PARAMS)


def plan(name: str):
    """Our names, with ``mlp.experts.{e}.*`` for any e (checked against the model's shapes afterwards)."""
    step = _plan(name)
    if step is None and ".mlp.experts." in name:
        n = name.removeprefix("model.")
        tail = n.split(".mlp.experts.", 1)[1].split(".", 1)
        if len(tail) == 2 and tail[0].isdigit() and tail[1] in {f"{p}_proj.weight" for p in ("gate", "up", "down")}:
            return "copy", [n]
    return step


FAMILY = Family("qwen3_moe", architectures=("Qwen3MoeForCausalLM",), model_types=("qwen3_moe",), config=config,
                plan=plan, check_common=False)
QWEN2_MOE = Family("qwen2_moe", architectures=("Qwen2MoeForCausalLM",), model_types=("qwen2_moe",),
                   config=qwen2_moe_config, plan=plan, check_common=False)
