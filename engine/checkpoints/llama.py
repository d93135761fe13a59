"""Llama checkpoints (``LlamaForCausalLM``; also SmolLM, SmolLM2 and MiniMind's Llama-format release).

Layout (transformers ``models/llama/modeling_llama.py``, read, not copied): ``model.{embed_tokens, layers.i.
{input_layernorm, self_attn.{q,k,v,o}_proj, post_attention_layernorm, mlp.{gate,up,down}_proj}, norm}`` +
``lm_head``: the same names as our modules, so every tensor is copied as stored (``model.`` prefix optional).
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from ..config import ModelConfig
from .errors import UnsupportedCheckpointError
from .family import Family, Plan, rope_theta, strip_prefix

_ACTS = {"silu": "silu", "swish": "silu", "gelu": "gelu", "gelu_new": "gelu_new",
         "gelu_pytorch_tanh": "gelu_new", "relu": "relu"}
_LAYER = re.compile(r"^layers\.(\d+)\.(.+)$")
LAYER_PARAMS = _LAYER_PARAMS = frozenset({
    "input_layernorm.weight", "post_attention_layernorm.weight",
    *(f"self_attn.{p}_proj.{kind}" for p in "qkvo" for kind in ("weight", "bias")),
    *(f"mlp.{p}_proj.{kind}" for p in ("gate", "up", "down") for kind in ("weight", "bias")),
})


def llama_like_config(cfg: dict[str, Any], qkv_bias_only: bool = False, **fields: Any) -> ModelConfig:
    """The Llama mapping; ``qkv_bias_only`` is Qwen2's variant (biases on q/k/v, none on o_proj and the MLP).

    RMSNorm (``rms_norm_eps``), RoPE (``rope_parameters.rope_theta`` as transformers 5 writes it, or the older
    top-level ``rope_theta``), SwiGLU, grouped-query attention (``num_key_value_heads``), biases from
    ``attention_bias``/``mlp_bias`` (must agree), head untied unless ``tie_word_embeddings``. ``fields`` are further
    :class:`ModelConfig` fields a family sets (Qwen3's ``qk_norm``, Mistral's ``sliding_window``); a family that
    passes ``sliding_window`` handles the window itself.
    """
    if ("sliding_window" not in fields and not qkv_bias_only and cfg.get("sliding_window") is not None
            and cfg.get("use_sliding_window", True)):
        raise UnsupportedCheckpointError(
            f"config.json field 'sliding_window' = {cfg['sliding_window']}: sliding-window attention is not supported"
        )
    act = cfg.get("hidden_act", "silu")
    if act not in _ACTS:
        raise UnsupportedCheckpointError(
            f"config.json field 'hidden_act' = {act!r} is not supported; supported: {', '.join(_ACTS)}"
        )
    H = cfg.get("hidden_size", 4096)
    n_heads = cfg.get("num_attention_heads", 32)
    if qkv_bias_only:
        bias, attention_bias = False, True  # Qwen2Attention: q/k/v with bias, o_proj and MLP without
    else:
        attn_b, mlp_b = bool(cfg.get("attention_bias", False)), bool(cfg.get("mlp_bias", False))
        if attn_b != mlp_b:
            raise UnsupportedCheckpointError(
                f"config.json fields 'attention_bias' = {json.dumps(attn_b)} and 'mlp_bias' = {json.dumps(mlp_b)} "
                "differ; this model ties o_proj's bias to the MLP's, so both must be equal"
            )
        bias, attention_bias = attn_b, None
    return ModelConfig(**({
        "vocab_size": cfg.get("vocab_size", 32000),
        "hidden_size": H,
        "num_hidden_layers": cfg.get("num_hidden_layers", 32),
        "num_attention_heads": n_heads,
        "num_key_value_heads": cfg.get("num_key_value_heads") or n_heads,
        "head_dim": cfg.get("head_dim"),  # None: hidden_size / num_attention_heads
        "intermediate_size": cfg.get("intermediate_size", 11008),
        "hidden_act": _ACTS[act],
        "mlp_gated": True,
        "norm_type": "rmsnorm",
        "norm_position": "pre",
        "position_embedding": "rope",
        "max_position_embeddings": cfg.get("max_position_embeddings", 2048),
        "rope_theta": rope_theta(cfg, 10000.0),
        "norm_eps": float(cfg.get("rms_norm_eps", 1e-6)),
        "bias": bias,
        "attention_bias": attention_bias,
        "tie_word_embeddings": bool(cfg.get("tie_word_embeddings", False)),
        "initializer_range": float(cfg.get("initializer_range", 0.02)),
    } | fields))


def make_plan(layer_params: frozenset[str] | set[str]) -> Callable[[str], Plan]:
    """A plan for a family whose stored names are ours (``transformer.``/``model.`` prefixes optional), with
    ``layer_params`` the names allowed under ``layers.{i}.``; old files' ``rotary_emb.inv_freq`` buffers are ignored."""
    def plan(name: str) -> Plan:
        n = strip_prefix(name, "transformer.", "model.")
        if n in ("embed_tokens.weight", "norm.weight", "lm_head.weight"):
            return "copy", [n]
        if n.endswith("rotary_emb.inv_freq"):  # buffer saved by old transformers versions
            return "ignore", []
        m = _LAYER.match(n)
        if m and m.group(2) in layer_params:
            return "copy", [n]
        return None

    return plan


plan = make_plan(_LAYER_PARAMS)


FAMILY = Family("llama", architectures=("LlamaForCausalLM",), model_types=("llama",), config=llama_like_config,
                plan=plan)
