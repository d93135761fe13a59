"""Gemma 3 text checkpoints (``Gemma3ForCausalLM``, e.g. Gemma-3-270M): Gemma 2's block plus QK-norm and a RoPE
base of its own on the sliding layers.

transformers ``models/gemma3/modeling_gemma3.py`` (read, not copied): ``self_attn.q_norm`` / ``k_norm`` are Gemma
RMSNorms of width head_dim (``qk_norm="per_head"``); the full layers use ``rope_parameters["full_attention"]`` and
the sliding ones ``rope_parameters["sliding_attention"]`` (older files: ``rope_theta`` and ``rope_local_base_freq``);
usually no soft-capping; ``layer_types`` has five sliding layers to one full one.
"""

from __future__ import annotations

from typing import Any

from ..config import ModelConfig
from .errors import UnsupportedCheckpointError
from .family import Family, rope_theta
from .gemma2 import SANDWICH_PARAMS, gemma_fields
from .llama import llama_like_config, make_plan


def rope_bases(cfg: dict[str, Any]) -> tuple[float, float]:
    """``(rope_theta of the full layers, rope_local_base_freq of the sliding ones)``.

    Raises:
        UnsupportedCheckpointError: RoPE scaling of either kind (named by its field).
    """
    params = cfg.get("rope_parameters")
    if isinstance(params, dict) and params and all(isinstance(v, dict) for v in params.values()):
        unknown = sorted(set(params) - {"full_attention", "sliding_attention"})
        if unknown:
            raise UnsupportedCheckpointError(f"config.json field 'rope_parameters' has entries {unknown}")
        full = rope_theta({"rope_parameters": params.get("full_attention", {})}, 1_000_000.0)
        local = rope_theta({"rope_parameters": params.get("sliding_attention", {})}, 10_000.0)
        return full, local
    return rope_theta(cfg, 1_000_000.0), float(cfg.get("rope_local_base_freq", 10_000.0))


def config(cfg: dict[str, Any]) -> ModelConfig:
    """Llama's mapping with Gemma's fields, per-head QK-norm and the two RoPE bases."""
    full, local = rope_bases(cfg)
    plain = {k: v for k, v in cfg.items() if k not in ("hidden_act", "rope_parameters", "rope_scaling")}
    return llama_like_config(plain, **gemma_fields(cfg), qk_norm="per_head", rope_theta=full,
                             rope_local_base_freq=local)


plan = make_plan(SANDWICH_PARAMS | {"self_attn.q_norm.weight", "self_attn.k_norm.weight"})

FAMILY = Family("gemma3", architectures=("Gemma3ForCausalLM",), model_types=("gemma3_text",), config=config,
                plan=plan, check_common=False)
