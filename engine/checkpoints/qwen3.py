"""Qwen3 checkpoints (``Qwen3ForCausalLM``): the Llama layout plus QK-norm per head.

transformers ``models/qwen3/modeling_qwen3.py`` (read, not copied): ``self_attn.q_norm`` / ``k_norm`` are RMSNorms
of width head_dim applied to every head of q and k before RoPE (our ``qk_norm="per_head"``); a sliding window
applies only with ``use_sliding_window`` and then to the layers ``layer_types`` marks "sliding_attention".
"""

from __future__ import annotations

import json
from typing import Any

from ..config import ModelConfig
from .errors import UnsupportedCheckpointError
from .family import Family, reject_moe, sliding_layout
from .llama import LAYER_PARAMS, llama_like_config, make_plan


def config(cfg: dict[str, Any]) -> ModelConfig:
    """Llama's mapping with ``qk_norm="per_head"``, no biases and the window of ``use_sliding_window``.

    Raises:
        UnsupportedCheckpointError: ``attention_bias`` true (Qwen3 then biases q/k/v *and* o_proj but not the MLP,
            which our ``bias``/``attention_bias`` pair cannot say); mixture-of-experts fields.
    """
    reject_moe(cfg)
    if cfg.get("attention_bias", False):
        raise UnsupportedCheckpointError(
            f"config.json field 'attention_bias' = {json.dumps(cfg['attention_bias'])}: Qwen3 then puts biases on "
            "q/k/v and o_proj but not on the MLP, which is not supported"
        )
    return llama_like_config(cfg, qk_norm="per_head", **sliding_layout(cfg, flag=True))


plan = make_plan(LAYER_PARAMS | {"self_attn.q_norm.weight", "self_attn.k_norm.weight"})

FAMILY = Family("qwen3", architectures=("Qwen3ForCausalLM",), model_types=("qwen3",), config=config, plan=plan,
                check_common=False)
