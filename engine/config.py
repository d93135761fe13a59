"""Model configuration: one frozen dataclass that flows through the whole project.

Field names follow Hugging Face ``config.json`` files (``GPT2Config`` / ``LlamaConfig``), so a checkpoint's
config maps onto it directly. Validation happens at construction, in the style of nanoGPT's ``GPTConfig`` and
TransformerLens's ``HookedTransformerConfig.__post_init__``: every message names the offending values.
"""

from __future__ import annotations

import dataclasses
import math
import json
from dataclasses import dataclass
from typing import Any

# Valid option strings. The registries in ``engine.layers`` are keyed by exactly these values.
HIDDEN_ACTS = ("relu", "gelu", "gelu_new", "silu")
NORM_TYPES = ("layernorm", "rmsnorm", "gemma_rmsnorm")
# Where a block's norms sit (keys of ``engine.model.NORM_PLACEMENTS``): "pre" x + f(norm(x)); "post" norm(x + f(x));
# "sandwich" x + norm(f(norm(x))) (Gemma 2/3); "post_sublayer" x + norm(f(x)) (OLMo-2).
NORM_POSITIONS = ("pre", "post", "sandwich", "post_sublayer")
POSITION_EMBEDDINGS = ("learned", "sinusoidal", "rope", "none")
# QK-norm: "none"; "per_head" (an RMSNorm over head_dim, shared by the heads: Qwen3, Gemma 3); "per_projection"
# (one RMSNorm over the whole q or k projection, n_heads*head_dim wide: OLMo-2). Keys of ``engine.layers.QK_NORMS``.
QK_NORMS = ("none", "per_head", "per_projection")
# RoPE frequency schemes (keys of ``engine.layers.ROPE_INIT``): the plain one, and YaRN (Peng et al. 2023).
ROPE_TYPES = ("default", "yarn")
# Per-layer attention kinds, Hugging Face ``layer_types`` values. Keys of ``engine.layers.ATTENTION_MASKS``.
LAYER_TYPES = ("full_attention", "sliding_attention")


def repeat_layer_types(pattern: tuple[str, ...], num_hidden_layers: int) -> tuple[str, ...]:
    """A per-layer pattern repeated (or cut) to ``num_hidden_layers`` entries."""
    return tuple(pattern[i % len(pattern)] for i in range(num_hidden_layers))


@dataclass(frozen=True)
class ModelConfig:
    """Hyper-parameters of a decoder-only Transformer.

    Sizes (all positive integers):
        vocab_size: V, number of token ids.
        hidden_size: H, width of the residual stream.
        num_hidden_layers: L, number of blocks.
        num_attention_heads: n_heads, query heads per block.
        num_key_value_heads: n_kv_heads; ``None`` means ``num_attention_heads`` (multi-head attention),
            fewer means grouped-query attention (Ainslie et al. 2023, "GQA").
        head_dim: width of one attention head; ``None`` (the default) means H / n_heads. Set explicitly when the
            heads are wider or narrower than that (Qwen3-0.6B: H=1024, 16 heads of 128; Gemma 3: 256); the value
            is then stored as given. The q/o projections are n_heads*head_dim wide either way.
        intermediate_size: width of the feed-forward hidden layer.
        max_position_embeddings: longest sequence the position scheme accepts (a hard limit for
            "learned" and "sinusoidal"; for "rope" and "none" it only sizes the default rope cache).

    Variants:
        hidden_act: "relu", "gelu" (exact erf), "gelu_new" (tanh approximation, GPT-2) or "silu".
        mlp_gated: if True the FFN is ``down(act(gate(x)) * up(x))`` (Shazeer 2020, "GLU Variants");
            gated silu is SwiGLU.
        norm_type: "layernorm" (Ba et al. 2016), "rmsnorm" (Zhang & Sennrich 2019) or "gemma_rmsnorm" (RMSNorm whose
            scale is ``1 + weight``, the weight starting at 0, all in float32: Gemma).
        norm_position: "pre" (x + f(norm(x)), GPT-2/Llama), "post" (norm(x + f(x)), Vaswani et al. 2017),
            "sandwich" (x + norm(f(norm(x))): Gemma 2/3, four norms per block) or "post_sublayer" (x + norm(f(x)),
            the norm inside the residual branch after the sub-layer: OLMo-2).
        position_embedding: "learned" (GPT-2), "sinusoidal" (Vaswani et al. 2017), "rope" (Su et al. 2021)
            or "none".
        rope_theta: RoPE base frequency.
        norm_eps: epsilon of every norm (inside the square root).
        bias: whether linear layers carry biases (GPT-2: True, Llama: False).
        attention_bias: biases on q/k/v only (Qwen2 style); ``None`` means follow ``bias``.
        tie_word_embeddings: the LM head reuses the token embedding matrix (Press & Wolf 2017).
        initializer_range: std of the normal initialisation of weights.
        qk_norm: "none", "per_head" (RMSNorm over head_dim on every q and k head before RoPE, one weight of
            head_dim shared by the heads: Qwen3, Gemma 3) or "per_projection" (RMSNorm over the whole q and k
            projection, n_heads*head_dim and n_kv_heads*head_dim wide: OLMo-2). Weights ``self_attn.q_norm`` and
            ``self_attn.k_norm``.
        sliding_window: w, the number of keys a "sliding_attention" layer sees (itself and the w - 1 before it,
            transformers' ``kv_idx > q_idx - sliding_window``); ``None`` for none (Mistral: every layer slides).
        layer_types: one of "full_attention" / "sliding_attention" per layer (Gemma 2/3, gpt-oss, Qwen3); ``None``
            means every layer is "sliding_attention" when ``sliding_window`` is set, else "full_attention".
        attention_sinks: one learned logit per head (``self_attn.sinks`` ``[n_heads]``) joins every softmax row as
            a column with no value, so a head can put weight on "nothing" (gpt-oss).
        query_pre_attn_scalar: scores are ``Q K^T / sqrt(query_pre_attn_scalar)``; ``None`` means head_dim (Gemma 2/3
            set it explicitly).
        attn_logit_softcapping, final_logit_softcapping: c in ``c * tanh(x / c)`` on the scaled attention scores
            (before the mask) and on the logits (Gemma 2); ``None`` for none.
        embedding_multiplier: the token embeddings are multiplied by it before the first block (Gemma: sqrt(H);
            transformers' name from Granite).
        rope_local_base_freq: RoPE base of the "sliding_attention" layers (Gemma 3: 10,000 there, ``rope_theta`` =
            1,000,000 on the full layers); ``None`` means ``rope_theta`` everywhere.

    Mixture of experts (the FFN of every block becomes ``engine.layers.MoE`` when ``num_local_experts`` > 0):
        num_local_experts: E experts (Mixtral's name; Qwen3-MoE's ``num_experts``); 0 = one dense FFN.
        num_experts_per_tok: k, the experts each token is routed to (top-k of the router's softmax).
        norm_topk_prob: renormalise the k chosen probabilities to sum to 1 (Mixtral: always; Qwen3-MoE: a flag).
        moe_intermediate_size: width of each expert's FFN; ``None`` means ``intermediate_size`` (Mixtral).
        shared_expert_intermediate_size: width of an expert every token also goes through, scaled by
            ``sigmoid(shared_expert_gate(x))`` (Qwen2-MoE); 0 = none.
        router_bias: the router ``mlp.gate`` has a bias (gpt-oss).

    gpt-oss's details:
        swiglu_limit, swiglu_alpha: with a limit L the gated FFN is ``(clamp(up, -L, L) + 1) * g * sigmoid(alpha * g)``
            with ``g = clamp(gate, max=L)`` (gpt-oss: L = 7, alpha = 1.702); ``None`` is the plain ``act(gate) * up``.
        rope_type: "default" or "yarn" (YaRN, Peng et al. 2023: frequencies between ``rope_beta_fast`` and
            ``rope_beta_slow`` rotations over ``rope_original_max_position_embeddings`` are blended towards
            ``1 / rope_factor`` of themselves, and cos/sin are scaled by ``0.1 ln(factor) + 1``); the ``rope_*``
            fields are the keys of transformers' ``rope_parameters`` (``factor``, ``original_max_position_embeddings``,
            ``beta_fast``, ``beta_slow``, ``truncate``).

    Raises:
        ValueError: on non-positive sizes, hidden size not divisible by heads, heads not divisible by KV
            heads, odd head dimension with RoPE, or unknown option strings (the message lists valid ones);
            a sliding window above ``max_position_embeddings``, ``layer_types`` of the wrong length or with
            sliding layers but no ``sliding_window``.
    """

    vocab_size: int = 512
    hidden_size: int = 64
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int | None = None
    head_dim: int | None = None
    intermediate_size: int = 256
    hidden_act: str = "gelu"
    mlp_gated: bool = False
    norm_type: str = "layernorm"
    norm_position: str = "pre"
    position_embedding: str = "learned"
    max_position_embeddings: int = 512
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    bias: bool = True
    attention_bias: bool | None = None
    tie_word_embeddings: bool = True
    initializer_range: float = 0.02
    qk_norm: str = "none"
    sliding_window: int | None = None
    layer_types: tuple[str, ...] | None = None
    attention_sinks: bool = False
    query_pre_attn_scalar: float | None = None
    attn_logit_softcapping: float | None = None
    final_logit_softcapping: float | None = None
    embedding_multiplier: float = 1.0
    rope_local_base_freq: float | None = None
    num_local_experts: int = 0
    num_experts_per_tok: int = 2
    norm_topk_prob: bool = True
    moe_intermediate_size: int | None = None
    shared_expert_intermediate_size: int = 0
    router_bias: bool = False
    swiglu_limit: float | None = None
    swiglu_alpha: float = 1.702
    rope_type: str = "default"
    rope_factor: float = 1.0
    rope_original_max_position_embeddings: int | None = None
    rope_beta_fast: float = 32.0
    rope_beta_slow: float = 1.0
    rope_truncate: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.layer_types, list):  # from JSON: stored as a tuple so the frozen config stays hashable
            object.__setattr__(self, "layer_types", tuple(self.layer_types))
        sizes = {
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "intermediate_size": self.intermediate_size,
            "max_position_embeddings": self.max_position_embeddings,
        }
        if self.num_key_value_heads is not None:
            sizes["num_key_value_heads"] = self.num_key_value_heads
        if self.head_dim is not None:
            sizes["head_dim"] = self.head_dim
        for name, value in sizes.items():
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("query_pre_attn_scalar", "attn_logit_softcapping", "final_logit_softcapping",
                     "rope_local_base_freq", "swiglu_limit"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not math.isfinite(value) or value <= 0):
                raise ValueError(f"{name} must be a positive number or null, got {value!r}")
        for name, value in (("norm_eps", self.norm_eps), ("rope_theta", self.rope_theta),
                            ("initializer_range", self.initializer_range),
                            ("embedding_multiplier", self.embedding_multiplier), ("swiglu_alpha", self.swiglu_alpha),
                            ("rope_factor", self.rope_factor), ("rope_beta_fast", self.rope_beta_fast),
                            ("rope_beta_slow", self.rope_beta_slow)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isinf(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
        for name, value in (("mlp_gated", self.mlp_gated), ("bias", self.bias),
                            ("tie_word_embeddings", self.tie_word_embeddings), ("attention_sinks", self.attention_sinks),
                            ("router_bias", self.router_bias), ("rope_truncate", self.rope_truncate)):
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be true or false, got {value!r}")
        if self.attention_bias is not None and not isinstance(self.attention_bias, bool):
            raise ValueError(f"attention_bias must be true, false or null, got {self.attention_bias!r}")
        for name, value, valid in (
            ("hidden_act", self.hidden_act, HIDDEN_ACTS),
            ("norm_type", self.norm_type, NORM_TYPES),
            ("norm_position", self.norm_position, NORM_POSITIONS),
            ("position_embedding", self.position_embedding, POSITION_EMBEDDINGS),
            ("qk_norm", self.qk_norm, QK_NORMS),
            ("rope_type", self.rope_type, ROPE_TYPES),
        ):
            if value not in valid:
                raise ValueError(f"unknown {name}={value!r}; valid values: {', '.join(valid)}")
        if self.head_dim is None:
            if self.hidden_size % self.num_attention_heads:
                raise ValueError(
                    f"hidden_size={self.hidden_size} is not divisible by num_attention_heads="
                    f"{self.num_attention_heads} (or set head_dim)"
                )
            object.__setattr__(self, "head_dim", self.hidden_size // self.num_attention_heads)  # the derived width
        if self.num_attention_heads % self.kv_heads:
            raise ValueError(
                f"num_attention_heads={self.num_attention_heads} is not divisible by "
                f"num_key_value_heads={self.kv_heads}"
            )
        if self.position_embedding == "rope" and self.head_dim % 2:
            raise ValueError(
                f"RoPE needs an even head dimension, but head_dim={self.head_dim} (hidden_size={self.hidden_size}, "
                f"num_attention_heads={self.num_attention_heads})"
            )
        if not (self.norm_eps > 0):
            raise ValueError(f"norm_eps must be > 0, got {self.norm_eps!r}")
        if not (self.rope_theta > 0):
            raise ValueError(f"rope_theta must be > 0, got {self.rope_theta!r}")
        if not (self.initializer_range >= 0):
            raise ValueError(f"initializer_range must be >= 0, got {self.initializer_range!r}")
        self._check_attention_layout()
        self._check_experts()
        if self.rope_type == "yarn":
            if self.position_embedding != "rope":
                raise ValueError(f"rope_type='yarn' needs position_embedding='rope', got {self.position_embedding!r}")
            original = self.rope_original_max_position_embeddings
            if isinstance(original, bool) or not isinstance(original, int) or original <= 0:
                raise ValueError(f"rope_type='yarn' needs rope_original_max_position_embeddings > 0, got {original!r}")
            if not self.rope_factor >= 1:
                raise ValueError(f"rope_factor must be >= 1 for YaRN, got {self.rope_factor!r}")

    def _check_experts(self) -> None:
        """The mixture-of-experts fields: sizes, and top-k no larger than the number of experts."""
        E, k = self.num_local_experts, self.num_experts_per_tok
        for name, value, least in (("num_local_experts", E, 0), ("num_experts_per_tok", k, 1),
                                   ("shared_expert_intermediate_size", self.shared_expert_intermediate_size, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
        width = self.moe_intermediate_size
        if width is not None and (isinstance(width, bool) or not isinstance(width, int) or width <= 0):
            raise ValueError(f"moe_intermediate_size must be a positive integer or null, got {width!r}")
        if not isinstance(self.norm_topk_prob, bool):
            raise ValueError(f"norm_topk_prob must be true or false, got {self.norm_topk_prob!r}")
        if E and k > E:
            raise ValueError(f"num_experts_per_tok={k} is larger than num_local_experts={E}: top-k cannot choose "
                             "more experts than there are")

    def _check_attention_layout(self) -> None:
        """``sliding_window`` and ``layer_types``: see the class docstring (Raises)."""
        w = self.sliding_window
        if w is not None:
            if isinstance(w, bool) or not isinstance(w, int) or w <= 0:
                raise ValueError(f"sliding_window must be a positive integer or null, got {w!r}")
            if w > self.max_position_embeddings:
                raise ValueError(f"sliding_window={w} is larger than max_position_embeddings="
                                 f"{self.max_position_embeddings}: no sequence is long enough for the window to act")
        if self.layer_types is None:
            return
        if not isinstance(self.layer_types, tuple) or len(self.layer_types) != self.num_hidden_layers:
            raise ValueError(f"layer_types must list one entry per layer (num_hidden_layers={self.num_hidden_layers}), "
                             f"got {self.layer_types!r}")
        unknown = sorted({str(t) for t in self.layer_types} - set(LAYER_TYPES))
        if unknown:
            raise ValueError(f"unknown layer_types entries {unknown}; valid values: {', '.join(LAYER_TYPES)}")
        if w is None and "sliding_attention" in self.layer_types:
            raise ValueError("layer_types has 'sliding_attention' layers but sliding_window is null")

    # ---- derived sizes -------------------------------------------------------------------------
    @property
    def kv_heads(self) -> int:
        """n_kv_heads, with ``None`` resolved to ``num_attention_heads``."""
        return self.num_key_value_heads or self.num_attention_heads

    @property
    def qkv_bias(self) -> bool:
        """Whether q/k/v projections carry a bias (``attention_bias`` overrides ``bias``)."""
        return self.bias if self.attention_bias is None else self.attention_bias

    def layer_type(self, layer_idx: int) -> str:
        """``layer_types[layer_idx]``, or the default: "sliding_attention" when ``sliding_window`` is set."""
        if self.layer_types is not None:
            return self.layer_types[layer_idx]
        return "full_attention" if self.sliding_window is None else "sliding_attention"

    @property
    def expert_intermediate_size(self) -> int:
        """Width of one routed expert's FFN (``moe_intermediate_size``, else ``intermediate_size``)."""
        return self.moe_intermediate_size or self.intermediate_size

    @property
    def has_position_limit(self) -> bool:
        """True when sequences longer than ``max_position_embeddings`` cannot be encoded."""
        return self.position_embedding in ("learned", "sinusoidal")

    # ---- (de)serialisation ---------------------------------------------------------------------
    def replace(self, **changes: Any) -> "ModelConfig":
        """Return a validated copy with some fields changed (``dataclasses.replace``). A ``head_dim`` that was the
        derived H / n_heads is derived again from the new sizes; ``layer_types`` repeats its pattern over a new
        ``num_hidden_layers``."""
        if "head_dim" not in changes and self.head_dim * self.num_attention_heads == self.hidden_size:
            changes["head_dim"] = None
        layers = changes.get("num_hidden_layers", self.num_hidden_layers)
        if "layer_types" not in changes and self.layer_types is not None and layers != len(self.layer_types):
            # another depth keeps the per-layer pattern, repeated (Gemma 3's 5 local : 1 global)
            changes["layer_types"] = repeat_layer_types(self.layer_types, layers)
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of the fields (JSON-serialisable)."""
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        """Pretty JSON of :meth:`to_dict`."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ModelConfig":
        """Build from a dict of our own field names.

        Raises:
            ValueError: on unknown keys (named) or on invalid values (see the class docstring).
            TypeError: if ``data`` is not a dict.
        """
        if not isinstance(data, dict):
            raise TypeError(f"config must be a JSON object, got {type(data).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown config fields: {', '.join(unknown)}; valid fields: {', '.join(sorted(names))}")
        return cls(**data)


# ---- presets -------------------------------------------------------------------------------------
# Each preset reproduces the setup of one of the tutorials this project grew from (MiniMind's block demo, a NumPy
# GPT decoder, a GPT-2 block walkthrough) or a familiar model shape.
PRESETS: dict[str, ModelConfig] = {
    # 000: MiniMind block demo: VOCAB, HIDDEN, N_LAYERS, N_HEADS, INTER = 30, 16, 3, 4, 32; RMSNorm, SwiGLU, tied.
    "minimind_demo": ModelConfig(
        vocab_size=30, hidden_size=16, num_hidden_layers=3, num_attention_heads=4, intermediate_size=32,
        hidden_act="silu", mlp_gated=True, norm_type="rmsnorm", norm_position="pre",
        position_embedding="none", max_position_embeddings=64, norm_eps=1e-6, bias=False,
        tie_word_embeddings=True,
    ),
    # 004: GPT-2 block walkthrough, "猫吃鱼": 3 tokens, d_model 4, 2 heads, d_ff 16, LayerNorm, GELU, Pre-Norm.
    "gpt2_walkthrough": ModelConfig(
        vocab_size=256, hidden_size=4, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16,
        hidden_act="gelu", norm_type="layernorm", norm_position="pre", position_embedding="learned",
        max_position_embeddings=64, bias=True, tie_word_embeddings=True,
    ),
    # 001: NumPy GPT decoder: Post-LN, LayerNorm, ReLU, learned positions, hidden 256, 8 heads, 6 layers, FFN 1024.
    "numpy_decoder": ModelConfig(
        vocab_size=10000, hidden_size=256, num_hidden_layers=6, num_attention_heads=8, intermediate_size=1024,
        hidden_act="relu", norm_type="layernorm", norm_position="post", position_embedding="learned",
        max_position_embeddings=512, bias=True, tie_word_embeddings=False,
    ),
    # GPT-2 small (124M): the shape of the released checkpoint.
    "gpt2_small": ModelConfig(
        vocab_size=50257, hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
        hidden_act="gelu_new", norm_type="layernorm", norm_position="pre", position_embedding="learned",
        max_position_embeddings=1024, bias=True, tie_word_embeddings=True,
    ),
    # A small Llama-style model: RMSNorm, RoPE, SwiGLU, GQA, no biases, untied head.
    "llama_small": ModelConfig(
        vocab_size=2000, hidden_size=128, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=2,
        intermediate_size=344, hidden_act="silu", mlp_gated=True, norm_type="rmsnorm", norm_position="pre",
        position_embedding="rope", max_position_embeddings=512, norm_eps=1e-6, bias=False,
        tie_word_embeddings=False,
    ),
}

# What the tutorials call their input rows when they feed random vectors instead of text: the GPT-2
# walkthrough's three tokens are the words 猫 吃 鱼 ("cat eats fish"), each a random vector (torch.randn(3, 4)).
PRESET_INPUT_LABELS: dict[str, tuple[str, ...]] = {
    "gpt2_walkthrough": ("猫", "吃", "鱼"),
}

PRESET_SOURCES: dict[str, str] = {
    "minimind_demo": "MiniMind tutorial, ch. 5: Transformer Block and full forward",
    "gpt2_walkthrough": "GPT-2 from scratch: the Pre-LN block, 猫吃鱼 with d_model=4",
    "numpy_decoder": "A GPT decoder in NumPy: Post-LN, ReLU FFN, learned positions",
    "gpt2_small": "GPT-2 small (Radford et al. 2019), 124M parameters",
    "llama_small": "Llama-family layout (Touvron et al. 2023), scaled down",
}


# ---- variant presets ------------------------------------------------------------------------------
# Small models of the 2024-2026 families (the block of each, at explorer sizes). Kept apart from PRESETS until the
# sidebar can show their fields (norm placements beyond Pre/Post, sliding windows, sinks, experts).
VARIANT_PRESETS: dict[str, ModelConfig] = {
    # Qwen3: QK-norm per head, GQA, SwiGLU, RoPE base 1,000,000, heads wider than H / n_heads (like Qwen3-0.6B).
    "qwen3_like": ModelConfig(
        vocab_size=2000, hidden_size=128, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=4,
        head_dim=32, intermediate_size=384, hidden_act="silu", mlp_gated=True, norm_type="rmsnorm",
        position_embedding="rope", rope_theta=1_000_000.0, max_position_embeddings=512, norm_eps=1e-6, bias=False,
        tie_word_embeddings=True, qk_norm="per_head",
    ),
    # Gemma 3 (270M's layout): sandwich norms with (1 + w), QK-norm, 5 sliding : 1 full, local RoPE base 10,000.
    "gemma3_like": ModelConfig(
        vocab_size=2000, hidden_size=128, num_hidden_layers=6, num_attention_heads=4, num_key_value_heads=1,
        head_dim=64, intermediate_size=512, hidden_act="gelu_new", mlp_gated=True, norm_type="gemma_rmsnorm",
        norm_position="sandwich", position_embedding="rope", rope_theta=1_000_000.0, rope_local_base_freq=10_000.0,
        max_position_embeddings=512, norm_eps=1e-6, bias=False, tie_word_embeddings=True, qk_norm="per_head",
        sliding_window=64, layer_types=("sliding_attention",) * 5 + ("full_attention",), query_pre_attn_scalar=64,
        embedding_multiplier=128 ** 0.5,
    ),
    # OLMo-2: the norm after each sub-layer inside the residual, QK-norm over the whole projection.
    "olmo2_like": ModelConfig(
        vocab_size=2000, hidden_size=128, num_hidden_layers=4, num_attention_heads=8, intermediate_size=344,
        hidden_act="silu", mlp_gated=True, norm_type="rmsnorm", norm_position="post_sublayer", position_embedding="rope",
        rope_theta=500_000.0, max_position_embeddings=512, norm_eps=1e-6, bias=False, tie_word_embeddings=False,
        qk_norm="per_projection",
    ),
    # gpt-oss: sinks, alternating sliding (128) and full layers, biases, 8 experts top-2 with a biased router and the
    # clamped SwiGLU (YaRN is left out: it matters only beyond the original context).
    "gpt_oss_like": ModelConfig(
        vocab_size=2000, hidden_size=128, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=2,
        head_dim=16, intermediate_size=128, hidden_act="silu", mlp_gated=True, norm_type="rmsnorm",
        position_embedding="rope", rope_theta=150_000.0, max_position_embeddings=512, norm_eps=1e-5, bias=True,
        tie_word_embeddings=False, attention_sinks=True, sliding_window=128,
        layer_types=("sliding_attention", "full_attention") * 2, num_local_experts=8, num_experts_per_tok=2,
        router_bias=True, swiglu_limit=7.0,
    ),
    # MiniMind-MoE: MiniMind's small block with 4 routed experts (top-2) and one shared expert (here gated by
    # sigmoid(shared_expert_gate(x)) as in Qwen2-MoE; MiniMind adds its shared expert ungated).
    "minimind_moe": ModelConfig(
        vocab_size=6400, hidden_size=128, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=2,
        intermediate_size=344, hidden_act="silu", mlp_gated=True, norm_type="rmsnorm", position_embedding="rope",
        rope_theta=1_000_000.0, max_position_embeddings=512, norm_eps=1e-5, bias=False, tie_word_embeddings=True,
        num_local_experts=4, num_experts_per_tok=2, moe_intermediate_size=344, shared_expert_intermediate_size=344,
    ),
}

VARIANT_PRESET_SOURCES: dict[str, str] = {
    "qwen3_like": "Qwen3 (Qwen team 2025): QK-norm per head, scaled down",
    "gemma3_like": "Gemma 3 (Gemma team 2025), the 270M layout scaled down: sandwich norms, 5 local : 1 global",
    "olmo2_like": "OLMo 2 (OLMo team 2024): norms after the sub-layers, QK-norm, scaled down",
    "gpt_oss_like": "gpt-oss (OpenAI 2025): sinks, sliding windows, mixture of experts, scaled down",
    "minimind_moe": "MiniMind-MoE: MiniMind's block with routed and shared experts",
}
