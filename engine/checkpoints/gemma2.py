"""Gemma 2 checkpoints (``Gemma2ForCausalLM``): sandwich norms, Gemma's RMSNorm, scaled embeddings, soft-capping.

transformers ``models/gemma2/modeling_gemma2.py`` (read, not copied): each sub-layer has a norm before and after it
(``input_layernorm`` / ``post_attention_layernorm`` around attention, ``pre_feedforward_layernorm`` /
``post_feedforward_layernorm`` around the MLP: our ``norm_position="sandwich"``); ``Gemma2RMSNorm`` scales by
``1 + weight`` (``norm_type="gemma_rmsnorm"``); embeddings are multiplied by sqrt(hidden_size); scores use
``query_pre_attn_scalar ** -0.5`` and are soft-capped (``attn_logit_softcapping``), as are the logits
(``final_logit_softcapping``); ``layer_types`` alternates sliding and full layers; the FFN is GeGLU (tanh GELU).
"""

from __future__ import annotations

from typing import Any

from ..config import ModelConfig
from .errors import UnsupportedCheckpointError
from .family import Family, reject_moe, sliding_layout
from .llama import LAYER_PARAMS, llama_like_config, make_plan

_ACTS = {"gelu_pytorch_tanh": "gelu_new", "gelu_new": "gelu_new", "gelu": "gelu", "silu": "silu", "relu": "relu"}


def gemma_fields(cfg: dict[str, Any]) -> dict[str, Any]:
    """The :class:`ModelConfig` fields every Gemma generation shares (on top of Llama's mapping).

    Raises:
        UnsupportedCheckpointError: ``use_bidirectional_attention`` true, an unknown ``hidden_activation``,
            ``attention_bias`` true, or mixture-of-experts fields.
    """
    reject_moe(cfg)
    if cfg.get("use_bidirectional_attention"):
        raise UnsupportedCheckpointError("config.json field 'use_bidirectional_attention' = true: only causal "
                                         "attention is supported")
    if cfg.get("attention_bias", False):
        raise UnsupportedCheckpointError("config.json field 'attention_bias' = true: Gemma without biases only")
    act = cfg.get("hidden_activation") or cfg.get("hidden_act") or "gelu_pytorch_tanh"
    if act not in _ACTS:
        raise UnsupportedCheckpointError(
            f"config.json field 'hidden_activation' = {act!r} is not supported; supported: {', '.join(_ACTS)}")
    H = cfg.get("hidden_size", 2304)
    return {"hidden_act": _ACTS[act], "norm_type": "gemma_rmsnorm", "norm_position": "sandwich",
            "embedding_multiplier": H ** 0.5, "query_pre_attn_scalar": cfg.get("query_pre_attn_scalar", 256),
            "attn_logit_softcapping": cfg.get("attn_logit_softcapping"),
            "final_logit_softcapping": cfg.get("final_logit_softcapping"),
            "tie_word_embeddings": bool(cfg.get("tie_word_embeddings", True)), **sliding_layout(cfg)}


def config(cfg: dict[str, Any]) -> ModelConfig:
    """Llama's mapping with :func:`gemma_fields`."""
    return llama_like_config({k: v for k, v in cfg.items() if k != "hidden_act"}, **gemma_fields(cfg))


SANDWICH_PARAMS = LAYER_PARAMS | {"pre_feedforward_layernorm.weight", "post_feedforward_layernorm.weight"}
plan = make_plan(SANDWICH_PARAMS)

FAMILY = Family("gemma2", architectures=("Gemma2ForCausalLM",), model_types=("gemma2",), config=config, plan=plan,
                check_common=False)
