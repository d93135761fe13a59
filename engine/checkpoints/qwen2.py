"""Qwen2 checkpoints (``Qwen2ForCausalLM``): the Llama layout plus biases on q/k/v only.

transformers ``models/qwen2/modeling_qwen2.py`` (read, not copied): the same tensor names as Llama.
"""

from __future__ import annotations

from typing import Any

from ..config import ModelConfig
from .family import Family
from .llama import llama_like_config, plan


def config(cfg: dict[str, Any]) -> ModelConfig:
    """Llama's mapping with ``attention_bias=True`` (q/k/v) and ``bias=False`` (o_proj, MLP)."""
    return llama_like_config(cfg, qkv_bias_only=True)


FAMILY = Family("qwen2", architectures=("Qwen2ForCausalLM",), model_types=("qwen2",), config=config, plan=plan)
