"""Mistral checkpoints (``MistralForCausalLM``): the Llama layout with a sliding window on every layer.

transformers ``models/mistral/modeling_mistral.py`` (read, not copied): the same tensor names as Llama; with
``sliding_window`` set every layer sees only its last ``sliding_window`` keys (``create_sliding_window_causal_mask``),
with ``sliding_window`` null it is full causal attention.
"""

from __future__ import annotations

from typing import Any

from ..config import ModelConfig
from .family import Family, reject_moe, sliding_layout
from .llama import llama_like_config, plan


def config(cfg: dict[str, Any]) -> ModelConfig:
    """Llama's mapping with ``sliding_window`` (every layer sliding; ``layer_types`` as given when present)."""
    reject_moe(cfg)
    return llama_like_config(cfg, **sliding_layout(cfg))


FAMILY = Family("mistral", architectures=("MistralForCausalLM",), model_types=("mistral",), config=config,
                plan=plan, check_common=False)
