"""What a view's settings are: the sidebar's options and defaults, and the mapping between a ``ModelConfig`` and
the sidebar's values.

Pure data and functions, no Streamlit and no words of either language: the slider ranges, the app's defaults, the
language-independent labels of technical options, the key of the config fields without a slider
(:data:`FIXED_KEY`), and :func:`config_to_widgets` (a preset or an upload -> the values that rebuild it, and each
value it moved to the nearest slider stop as a :class:`Clamped` record the interface words). The sidebar
(``ui/sidebar.py``), the lessons and their check all read their settings from here.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

from engine import ModelConfig
from engine.config import repeat_layer_types

FIXED_KEY = "cfg.fixed"  # config fields without a control, set by a preset or an upload


class Clamped(NamedTuple):
    """A value moved to the nearest stop of its control: ``key`` (a ``cfg.*`` control), from ``old`` to ``new``."""
    key: str
    old: Any
    new: Any


# ---- slider ranges (select_slider options keep common sizes reachable with one drag) ----------------
VOCAB_OPTIONS = [16, 30, 64, 128, 256, 512, 1000, 2000, 4000, 6400, 8000, 10000, 16000, 32000, 50257]
HIDDEN_OPTIONS = [4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768]
FFN_OPTIONS = [8, 16, 32, 64, 128, 256, 344, 384, 512, 1024, 2048, 3072]
INIT_OPTIONS = [0.002, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 10.0, 1e3, 1e10, 1e20]
MAX_LAYERS = 48
MAX_TOKENS = 256  # input tokens drawn at most (position limit of slider-built models)
# FFN activation choice -> (hidden_act, mlp_gated): every combination the engine builds, so any config has a setting
FFN_KINDS = {"relu": ("relu", False), "gelu": ("gelu", False), "gelu_new": ("gelu_new", False), "silu": ("silu", False),
             "reglu": ("relu", True), "geglu": ("gelu", True), "geglu_new": ("gelu_new", True), "swiglu": ("silu", True)}
DEFAULT_TEXT = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"
# The MiniMind demo feeds torch.randint ids (T=6); the GPT-2 walkthrough feeds torch.randn(3, 4) for "猫吃鱼"
# (3 tokens; 猫 and 吃 are not in the bundled corpus, so real text would be [UNK] anyway).
RANDOM_INPUT_PRESETS = {"minimind_demo": 6, "gpt2_walkthrough": 3}
DEFAULTS = {
    "cfg.vocab_size": 4000,
    "cfg.hidden_size": 64,
    "cfg.num_hidden_layers": 2,
    "cfg.num_attention_heads": 4,
    "cfg.num_key_value_heads": 4,
    "cfg.intermediate_size": 256,
    "cfg.norm_type": "layernorm",
    "cfg.norm_position": "pre",
    "cfg.ffn": "gelu",
    "cfg.position_embedding": "learned",
    "cfg.tie_word_embeddings": True,
    "cfg.initializer_range": 0.02,
    "cfg.seed": 0,
    "input.mode": "text",
    "input.text": DEFAULT_TEXT,
    "input.random_len": 8,
}
# Config fields without a slider, and their values when no preset or upload has set them (``bias`` None: no
# biases exactly when the FFN is gated, as in Llama). A preset or upload stores its own in FIXED_KEY.
# Every ModelConfig field that no slider sets is one of them (the block variants' fields included), so an upload
# or a preset of any config the engine builds comes back whole.
SLIDER_FIELDS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                 "intermediate_size", "hidden_act", "mlp_gated", "norm_type", "norm_position", "position_embedding",
                 "tie_word_embeddings", "initializer_range")
FIXED_DEFAULTS = {**{f.name: f.default for f in dataclasses.fields(ModelConfig) if f.name not in SLIDER_FIELDS},
                  "max_position_embeddings": MAX_TOKENS, "bias": None}
POSITION_OPTIONS = ["learned", "sinusoidal", "rope", "none"]
NORM_TYPE_OPTIONS = ["layernorm", "rmsnorm", "gemma_rmsnorm"]
NORM_POSITION_OPTIONS = ["pre", "post", "sandwich", "post_sublayer"]  # labels: cfg.norm_position.<id>
# Fields the fixed-fields caption always shows; every other field without a slider is shown when a preset or an
# upload sets it away from its default (the block variants: QK-norm, windows, sinks, experts...).
CAPTION_FIELDS = ("norm_eps", "rope_theta", "bias", "attention_bias", "max_position_embeddings")
# Labels of technical options: names, the same in both languages. Every choice control is linked by its option's
# id (ui.state.translated_choice), whatever its label; a link may also name an option by its label in either
# language, as older links did.
FIXED_LABELS = {
    "layernorm": "LayerNorm", "rmsnorm": "RMSNorm", "gemma_rmsnorm": "RMSNorm (1+w)", "pre": "Pre-Norm", "post": "Post-Norm",
    "relu": "ReLU", "gelu": "GELU", "gelu_new": "GELU-tanh (GPT-2)", "swiglu": "SwiGLU", "silu": "SiLU",
    "reglu": "ReGLU", "geglu": "GEGLU", "geglu_new": "GEGLU-tanh", "zh": "中文", "en": "English",
}
# What older links wrote for the translated options (their bilingual labels), read as the options' ids.
LEGACY_LABELS = {"learned 可学习": "learned", "sinusoidal 正弦": "sinusoidal", "RoPE": "rope", "none 无": "none",
                 "文本 text": "text", "随机 id / random ids": "random"}


def fixed_label(value: str) -> str:
    """Language-independent label of a technical option."""
    return FIXED_LABELS.get(value, value)


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def init_label(value: float) -> str:
    """An init std as the slider shows it: 0.002, 0.02 … 10, then powers of ten (10³, 10¹⁰, 10²⁰), never
    Python's ``1e+20``."""
    if value < 1000:
        return f"{value:g}"
    exponent = math.log10(value)
    if exponent.is_integer():
        return "10" + str(int(exponent)).translate(_SUPERSCRIPT)
    return f"{value:,.0f}"


def _field_text(value) -> str:
    """A fixed field's value as the caption shows it: runs of a repeated list entry as ``entry ×n``."""
    if isinstance(value, tuple):
        runs: list[list] = []
        for v in value:
            if runs and runs[-1][0] == v:
                runs[-1][1] += 1
            else:
                runs.append([v, 1])
        return "[" + ", ".join(v if n == 1 else f"{v} ×{n}" for v, n in runs) + "]"
    if isinstance(value, bool):
        return str(value).lower()
    return f"{value:g}" if isinstance(value, float) else str(value)


def variant_fields(c: ModelConfig) -> list[str]:
    """``name value`` of every field without a slider that differs from its default, besides CAPTION_FIELDS
    (``head_dim`` when it is not H / n_heads)."""
    shown = []
    for name, default in FIXED_DEFAULTS.items():
        if name in CAPTION_FIELDS:
            continue
        value = getattr(c, name)
        if name == "head_dim":
            if value * c.num_attention_heads != c.hidden_size:
                shown.append(f"head_dim {value}")
        elif value != default:
            shown.append(f"{name} {_field_text(value)}")
    return shown


def divisors(n: int, limit: int = 64) -> list[int]:
    return [d for d in range(1, min(n, limit) + 1) if n % d == 0]


def heads_options(hidden: int, rope: bool) -> list[int]:
    """The head counts the sidebar offers at width ``hidden``: its divisors, and under RoPE only those whose
    head width is even (RoPE rotates pairs of dimensions)."""
    return [d for d in divisors(hidden) if not rope or (hidden // d) % 2 == 0] or [1]


def link_id(value: Any) -> str:
    """How a link writes a choice's value: the option itself (an id such as ``rmsnorm``, a number as ``0.02``)."""
    return f"{value:g}" if isinstance(value, float) else str(value).lower() if isinstance(value, bool) else str(value)


def nearest(options: list, value):
    return min(options, key=lambda o: (abs(o - value), o))


def ffn_kind(c: ModelConfig) -> str:
    """The FFN choice (key of FFN_KINDS) of a config."""
    return next(k for k, v in FFN_KINDS.items() if v == (c.hidden_act, c.mlp_gated))


def config_to_widgets(c: ModelConfig) -> tuple[dict, list[Clamped]]:
    """Widget values that rebuild ``c`` from the sliders, and the values moved to the nearest slider stop.

    The fields without a slider are returned under FIXED_KEY. The heads and KV heads are checked again (and
    clamped) when the widgets render.
    """
    values = {
        "cfg.vocab_size": c.vocab_size, "cfg.hidden_size": c.hidden_size,
        "cfg.num_hidden_layers": c.num_hidden_layers,
        "cfg.num_attention_heads": c.num_attention_heads, "cfg.num_key_value_heads": c.kv_heads,
        "cfg.intermediate_size": c.intermediate_size, "cfg.norm_type": c.norm_type,
        "cfg.norm_position": c.norm_position, "cfg.ffn": ffn_kind(c), "cfg.position_embedding": c.position_embedding,
        "cfg.tie_word_embeddings": c.tie_word_embeddings, "cfg.initializer_range": c.initializer_range,
        FIXED_KEY: {name: getattr(c, name) for name in FIXED_DEFAULTS},
    }
    if c.head_dim * c.num_attention_heads == c.hidden_size:  # the derived width: it follows the sliders
        values[FIXED_KEY]["head_dim"] = None
    notes = []
    if c.num_hidden_layers > MAX_LAYERS:
        notes.append(Clamped("cfg.num_hidden_layers", c.num_hidden_layers, MAX_LAYERS))
        values["cfg.num_hidden_layers"] = MAX_LAYERS
    for key, options in (("cfg.vocab_size", VOCAB_OPTIONS), ("cfg.hidden_size", HIDDEN_OPTIONS),
                         ("cfg.intermediate_size", FFN_OPTIONS), ("cfg.initializer_range", INIT_OPTIONS)):
        if values[key] not in options:
            new = nearest(options, values[key])
            notes.append(Clamped(key, values[key], new))
            values[key] = new
    return values, notes


def all_presets() -> dict[str, ModelConfig]:
    """The preset picker's entries: the tutorials' presets, then the 2024-2026 variant presets."""
    from engine import PRESETS, VARIANT_PRESETS

    return {**PRESETS, **VARIANT_PRESETS}


def preset_values(name: str) -> dict:
    """The sidebar values picking preset ``name`` sets: its config's (fixed fields under FIXED_KEY) and its
    tutorial's input (random ids for the tutorials that feed random ids, else the default text)."""
    values, _ = config_to_widgets(all_presets()[name])
    if name in RANDOM_INPUT_PRESETS:  # these tutorials feed random ids / random vectors, not text
        values["input.mode"] = "random"
        values["input.random_len"] = RANDOM_INPUT_PRESETS[name]
    else:
        values["input.mode"] = "text"
        values["input.text"] = DEFAULT_TEXT
    return values


def widgets_to_config(values: dict, fixed: dict | None = None) -> ModelConfig:
    """The ``ModelConfig`` the sidebar builds from its values (``cfg.*`` keys, as in DEFAULTS) and the fields
    without a slider (``fixed``, default FIXED_DEFAULTS); the inverse of :func:`config_to_widgets`. Raises the
    config's ``ValueError`` for an impossible combination."""
    fixed = {**FIXED_DEFAULTS, **{k: v for k, v in (fixed or {}).items() if k in FIXED_DEFAULTS}}
    pattern, layers = fixed["layer_types"], values["cfg.num_hidden_layers"]
    if pattern and len(pattern) != layers:  # the layer slider moved: the preset's pattern repeats (5 local : 1 global)
        fixed["layer_types"] = repeat_layer_types(pattern, layers)
    act, gated = FFN_KINDS[values["cfg.ffn"]]
    return ModelConfig(
        vocab_size=values["cfg.vocab_size"], hidden_size=values["cfg.hidden_size"],
        num_hidden_layers=values["cfg.num_hidden_layers"], num_attention_heads=values["cfg.num_attention_heads"],
        num_key_value_heads=values["cfg.num_key_value_heads"], intermediate_size=values["cfg.intermediate_size"],
        hidden_act=act, mlp_gated=gated, norm_type=values["cfg.norm_type"], norm_position=values["cfg.norm_position"],
        position_embedding=values["cfg.position_embedding"],
        tie_word_embeddings=values["cfg.tie_word_embeddings"], initializer_range=float(values["cfg.initializer_range"]),
        **{**fixed, "bias": (not gated) if fixed["bias"] is None else fixed["bias"]},
    )

