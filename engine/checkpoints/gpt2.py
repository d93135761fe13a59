"""GPT-2 checkpoints (``GPT2LMHeadModel``): config mapping and weight names.

Layout (transformers ``models/gpt2/modeling_gpt2.py``, read, not copied): ``transformer.{wte, wpe, h.i.{ln_1,
attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, ln_f}`` + ``lm_head``. ``c_attn``/``c_proj``/``c_fc`` are
``Conv1D`` modules whose weight is stored ``[in, out]`` (transposed relative to ``nn.Linear``); ``c_attn`` packs q,
k, v along ``out``. ``attn.bias``/``attn.masked_bias`` are causal-mask buffers of older files, not parameters.
The square ``c_proj`` passes every shape check when the transpose is forgotten: the parity tests catch it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..config import ModelConfig
from .errors import UnsupportedCheckpointError
from .family import Family, Plan, rope_theta, strip_prefix

_ACTS = {"gelu_new": "gelu_new", "gelu_pytorch_tanh": "gelu_new", "gelu": "gelu", "relu": "relu",
         "silu": "silu", "swish": "silu"}
_LAYER = re.compile(r"^h\.(\d+)\.(.+)$")
_IGNORED = ("attn.bias", "attn.masked_bias")  # causal-mask buffers of older GPT2Attention
_TOP = {"wte.weight": "embed_tokens.weight", "wpe.weight": "embed_positions.weight",
        "ln_f.weight": "norm.weight", "ln_f.bias": "norm.bias", "lm_head.weight": "lm_head.weight"}
_QKV = ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"]
_IN_LAYER = {
    "ln_1.weight": ("copy", ["input_layernorm.weight"]),
    "ln_1.bias": ("copy", ["input_layernorm.bias"]),
    "ln_2.weight": ("copy", ["post_attention_layernorm.weight"]),
    "ln_2.bias": ("copy", ["post_attention_layernorm.bias"]),
    "attn.c_attn.weight": ("split_t", [n + ".weight" for n in _QKV]),  # [H, 3H] -> three [H, H]
    "attn.c_attn.bias": ("split", [n + ".bias" for n in _QKV]),  # [3H] -> three [H]
    "attn.c_proj.weight": ("t", ["self_attn.o_proj.weight"]),
    "attn.c_proj.bias": ("copy", ["self_attn.o_proj.bias"]),
    "mlp.c_fc.weight": ("t", ["mlp.up_proj.weight"]),
    "mlp.c_fc.bias": ("copy", ["mlp.up_proj.bias"]),
    "mlp.c_proj.weight": ("t", ["mlp.down_proj.weight"]),
    "mlp.c_proj.bias": ("copy", ["mlp.down_proj.bias"]),
}


def config(cfg: dict[str, Any]) -> ModelConfig:
    """``n_embd``, ``n_layer``, ``n_head``, ``n_inner`` (``None`` -> 4 * n_embd), ``n_positions``,
    ``layer_norm_epsilon``, ``activation_function``; learned positions, LayerNorm, Pre-Norm, biases everywhere,
    tied head unless ``tie_word_embeddings`` is false."""
    if cfg.get("rope_scaling") not in (None, {}):
        rope_theta(cfg, 10000.0)  # GPT-2 has no RoPE: any non-default scaling is an error
    for field, bad, why in (
        ("add_cross_attention", True, "cross-attention layers are not supported"),
        ("scale_attn_by_inverse_layer_idx", True, "per-layer attention scaling is not implemented"),
        ("scale_attn_weights", False, "unscaled attention scores are not implemented"),
    ):
        if cfg.get(field, not bad) == bad:
            raise UnsupportedCheckpointError(f"config.json field '{field}' = {json.dumps(bad)}: {why}")
    act = cfg.get("activation_function", "gelu_new")
    if act not in _ACTS:
        raise UnsupportedCheckpointError(
            f"config.json field 'activation_function' = {act!r} is not supported; supported: {', '.join(_ACTS)}"
        )
    H = cfg.get("n_embd", cfg.get("hidden_size", 768))
    inner = cfg.get("n_inner")
    return ModelConfig(
        vocab_size=cfg.get("vocab_size", 50257),
        hidden_size=H,
        num_hidden_layers=cfg.get("n_layer", cfg.get("num_hidden_layers", 12)),
        num_attention_heads=cfg.get("n_head", cfg.get("num_attention_heads", 12)),
        num_key_value_heads=None,
        intermediate_size=inner if inner is not None else 4 * H,
        hidden_act=_ACTS[act],
        mlp_gated=False,
        norm_type="layernorm",
        norm_position="pre",
        position_embedding="learned",
        max_position_embeddings=cfg.get("n_positions", cfg.get("max_position_embeddings", 1024)),
        norm_eps=float(cfg.get("layer_norm_epsilon", 1e-5)),
        bias=True,
        attention_bias=None,
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)),
        initializer_range=float(cfg.get("initializer_range", 0.02)),
    )


def plan(name: str) -> Plan:
    """Our names for one stored GPT-2 tensor (the ``transformer.`` prefix is optional)."""
    n = strip_prefix(name, "transformer.")
    if n in _TOP:
        return "copy", [_TOP[n]]
    m = _LAYER.match(n)
    if not m:
        return None
    i, rest = m.groups()
    if rest in _IGNORED:
        return "ignore", []
    if rest not in _IN_LAYER:
        return None
    kind, names = _IN_LAYER[rest]
    return kind, [f"layers.{i}.{x}" for x in names]


FAMILY = Family("gpt2", architectures=("GPT2LMHeadModel", "GPT2Model"), model_types=("gpt2",), config=config, plan=plan)
