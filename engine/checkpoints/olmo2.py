"""OLMo-2 checkpoints (``Olmo2ForCausalLM``): the Llama tensors with OLMo-2's norm order and QK-norm.

transformers ``models/olmo2/modeling_olmo2.py`` (read, not copied): no norm before a sub-layer; each sub-layer's
output is normalised inside the residual branch (``x + post_attention_layernorm(attn(x))``, then
``x + post_feedforward_layernorm(mlp(x))``: our ``norm_position="post_sublayer"``), and ``self_attn.q_norm`` /
``k_norm`` are RMSNorms over the whole q and k projections (``qk_norm="per_projection"``).
"""

from __future__ import annotations

import json
from typing import Any

from ..config import ModelConfig
from .errors import UnsupportedCheckpointError
from .family import Family, reject_unsupported_common
from .llama import LAYER_PARAMS, llama_like_config, make_plan


def config(cfg: dict[str, Any]) -> ModelConfig:
    """Llama's mapping with OLMo-2's norm order and whole-projection QK-norm.

    Raises:
        UnsupportedCheckpointError: ``attention_bias`` true (biases on q/k/v/o but not the MLP); MoE or sliding windows.
    """
    reject_unsupported_common(cfg)
    if cfg.get("attention_bias", False):
        raise UnsupportedCheckpointError(
            f"config.json field 'attention_bias' = {json.dumps(cfg['attention_bias'])}: OLMo-2 then puts biases on "
            "q/k/v and o_proj but not on the MLP, which is not supported"
        )
    return llama_like_config(cfg, norm_position="post_sublayer", qk_norm="per_projection")


plan = make_plan((LAYER_PARAMS - {"input_layernorm.weight"})
                 | {"self_attn.q_norm.weight", "self_attn.k_norm.weight", "post_feedforward_layernorm.weight"})

FAMILY = Family("olmo2", architectures=("Olmo2ForCausalLM",), model_types=("olmo2",), config=config, plan=plan,
                check_common=False)
