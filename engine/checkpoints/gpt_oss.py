"""gpt-oss checkpoints (``GptOssForCausalLM``), unquantised: sinks, sliding windows, YaRN, biases, MoE.

transformers ``models/gpt_oss/modeling_gpt_oss.py`` (read, not copied): a Pre-Norm RMSNorm block whose attention has
biases on q/k/v/o, one learned sink logit per head (``self_attn.sinks``) and, on the ``layer_types``
"sliding_attention" layers, a window; RoPE with YaRN scaling (``rope_parameters``); the FFN is a mixture of experts
whose router has a bias and whose experts use a clamped SwiGLU (``swiglu_limit``, ``swiglu_alpha``). The experts of
a layer are stored together (``mlp.experts.gate_up_proj`` ``[E, H, 2I]`` with gate and up interleaved,
``down_proj`` ``[E, I, H]``, and their biases) and are split into ours on load. The released checkpoints hold the
experts in MXFP4 (``_blocks``/``_scales`` tensors): those are refused as unexpected tensors, not dequantised.
"""

from __future__ import annotations

import re
from typing import Any

from ..config import ModelConfig
from .errors import UnsupportedCheckpointError
from .family import Family, Plan, sliding_layout, strip_prefix

_LAYER = re.compile(r"^layers\.(\d+)\.(.+)$")
_COPIED = {"input_layernorm.weight", "post_attention_layernorm.weight", "self_attn.sinks",
           *(f"self_attn.{p}_proj.{k}" for p in "qkvo" for k in ("weight", "bias"))}
_EXPERTS = {
    "mlp.experts.gate_up_proj": ("experts_gate_up", ["mlp.experts.{e}.gate_proj.weight", "mlp.experts.{e}.up_proj.weight"]),
    "mlp.experts.gate_up_proj_bias": ("experts_gate_up_bias", ["mlp.experts.{e}.gate_proj.bias", "mlp.experts.{e}.up_proj.bias"]),
    "mlp.experts.down_proj": ("experts_down", ["mlp.experts.{e}.down_proj.weight"]),
    "mlp.experts.down_proj_bias": ("experts_rows", ["mlp.experts.{e}.down_proj.bias"]),
    "mlp.router.weight": ("copy", ["mlp.gate.weight"]),
    "mlp.router.bias": ("copy", ["mlp.gate.bias"]),
}


def rope_fields(cfg: dict[str, Any]) -> dict[str, Any]:
    """``rope_theta`` and the YaRN fields from ``rope_parameters`` (or ``rope_scaling`` + ``rope_theta``).

    Raises:
        UnsupportedCheckpointError: a rope type other than default and yarn, or YaRN's ``mscale`` /
            ``attention_factor`` overrides.
    """
    params = dict(cfg.get("rope_parameters") or cfg.get("rope_scaling") or {})
    theta = float(params.get("rope_theta", cfg.get("rope_theta", 150000.0)))
    kind = params.get("rope_type", params.get("type", "default"))
    if kind == "default":
        return {"rope_theta": theta}
    if kind != "yarn":
        raise UnsupportedCheckpointError(f"config.json field 'rope_parameters' asks for rope_type={kind!r}; "
                                         "supported: default, yarn")
    for key in ("mscale", "mscale_all_dim", "attention_factor"):
        if params.get(key) is not None:
            raise UnsupportedCheckpointError(f"config.json field 'rope_parameters' sets {key}={params[key]}: "
                                             "not supported")
    return {"rope_theta": theta, "rope_type": "yarn", "rope_factor": float(params.get("factor", 32.0)),
            "rope_original_max_position_embeddings": int(params.get("original_max_position_embeddings", 4096)),
            "rope_beta_fast": float(params.get("beta_fast") or 32.0), "rope_beta_slow": float(params.get("beta_slow") or 1.0),
            "rope_truncate": bool(params.get("truncate", True))}


def config(cfg: dict[str, Any]) -> ModelConfig:
    """The gpt-oss mapping (see the module docstring).

    Raises:
        UnsupportedCheckpointError: ``attention_bias`` false (the experts keep their biases, so o_proj's would have
            to differ from theirs), a quantisation config, or an unsupported RoPE.
    """
    if cfg.get("quantization_config"):
        raise UnsupportedCheckpointError("config.json field 'quantization_config' is set: quantised (MXFP4) experts "
                                         "are not supported; use an unquantised (bf16/f32) copy")
    if not cfg.get("attention_bias", True):
        raise UnsupportedCheckpointError("config.json field 'attention_bias' = false: gpt-oss without attention "
                                         "biases is not supported")
    I = cfg.get("intermediate_size", 2880)
    return ModelConfig(
        vocab_size=cfg.get("vocab_size", 201088), hidden_size=cfg.get("hidden_size", 2880),
        num_hidden_layers=cfg.get("num_hidden_layers", 36), num_attention_heads=cfg.get("num_attention_heads", 64),
        num_key_value_heads=cfg.get("num_key_value_heads", 8), head_dim=cfg.get("head_dim", 64), intermediate_size=I,
        hidden_act="silu", mlp_gated=True, norm_type="rmsnorm", norm_position="pre", position_embedding="rope",
        max_position_embeddings=cfg.get("max_position_embeddings", 131072), norm_eps=float(cfg.get("rms_norm_eps", 1e-5)),
        bias=True, tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        initializer_range=float(cfg.get("initializer_range", 0.02)), attention_sinks=True,
        num_local_experts=cfg.get("num_local_experts", 128), num_experts_per_tok=cfg.get("num_experts_per_tok", 4),
        norm_topk_prob=True, router_bias=True, swiglu_limit=float(cfg.get("swiglu_limit", 7.0)),
        swiglu_alpha=float(cfg.get("swiglu_alpha", 1.702)), **sliding_layout(cfg), **rope_fields(cfg),
    )


def plan(name: str) -> Plan:
    """gpt-oss names: attention and norms as ours, the router and the stacked experts renamed and split."""
    n = strip_prefix(name, "model.")
    if n in ("embed_tokens.weight", "norm.weight", "lm_head.weight"):
        return "copy", [n]
    m = _LAYER.match(n)
    if m is None:
        return None
    layer, rest = m.groups()
    if rest in _COPIED:
        return "copy", [n]
    if rest in _EXPERTS:
        kind, targets = _EXPERTS[rest]
        return kind, [f"layers.{layer}.{t}" for t in targets]
    return None


FAMILY = Family("gpt_oss", architectures=("GptOssForCausalLM",), model_types=("gpt_oss",), config=config, plan=plan,
                check_common=False)
