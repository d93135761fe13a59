"""engine: a hand-written, configurable decoder-only Transformer in PyTorch (no streamlit, no plotly).

Dimension vocabulary used in every shape comment of this package:

    B           batch size
    T           sequence length (tokens)
    H           hidden size (``hidden_size``, the residual-stream width)
    n_heads     query heads (``num_attention_heads``)
    n_kv_heads  key/value heads (``num_key_value_heads``; fewer than n_heads = grouped-query attention)
    head_dim    H / n_heads
    I           FFN intermediate size (``intermediate_size``)
    V           vocabulary size (``vocab_size``)
    L           number of blocks (``num_hidden_layers``)

Entry points: :class:`ModelConfig` (with :data:`PRESETS`) and :class:`CausalLM`; :mod:`engine.generation` decodes
with the :class:`KVCache` (``model(ids, use_cache=True).past_key_values``).
"""

from .config import PRESET_SOURCES, PRESETS, VARIANT_PRESET_SOURCES, VARIANT_PRESETS, ModelConfig
from .kv_cache import KVCache
from .loss import IGNORE_INDEX
from .model import ACTIVATION_KEYS_PER_BLOCK, CausalLM, CausalLMOutput, TransformerBlock
from . import checkpoints  # noqa: E402,F401  connects CausalLM.from_pretrained / save_pretrained (see engine.checkpoints)

__all__ = [
    "ACTIVATION_KEYS_PER_BLOCK",
    "CausalLM",
    "CausalLMOutput",
    "IGNORE_INDEX",
    "KVCache",
    "ModelConfig",
    "PRESETS",
    "PRESET_SOURCES",
    "TransformerBlock",
    "VARIANT_PRESETS",
    "VARIANT_PRESET_SOURCES",
]
