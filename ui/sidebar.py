"""The shared sidebar: model source, preset, sliders, input text, and the cached model/trace behind them.

Every page calls :func:`explorer` first. It renders the same widgets under the same namespaced keys on every
page, all through :mod:`ui.state` (each control's own default is the app's default, its value is in the URL and
survives page switches; bad link values are named and repaired), builds a :class:`ModelConfig` (fields without a
slider come from the last preset or upload), fetches the cached model, tokenizes the input and returns an
:class:`Explorer` context. Bad input is turned into a message and ``st.stop()``; widget values are never lost.

Caching: models are built once per (config, seed) with ``st.cache_resource`` and are shared by every session,
so nothing here or in a page may mutate them. Traces (forward passes with the full activation record) are cached the same
way, keyed by the model key and the token ids.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field

import streamlit as st
import torch

from engine import PRESET_SOURCES, PRESETS, CausalLM, ModelConfig
from analysis.trace import finite_report, run_trace
from engine.model import CausalLMOutput
from engine.seeding import seeded
from engine.checkpoints import (
    CheckpointError,
    CheckpointInfo,
    config_from_hf,
    default_allowed_roots,
    default_models_dir,
    list_checkpoints,
    load_pretrained,
    read_config,
    resolve_checkpoint,
)
from engine.tokenizer import TextTokenizer, bundled_tokenizer
from ui.budget import heavy_work, refuse_over_budget
from ui.bytecache import byte_cached
from ui.escape import md, md_code, plotly
from ui.i18n import LANGS, browser_lang, labeler, t
from ui.input_notes import random_input_tokens, tokenizer_note
from ui.presenter import presenter_mode, presenter_toggle
from ui.smollm2 import model_label, named_models, prepare_with_progress
from ui.state import (BIND, CHECKED_KEY, FIXED_KEY, MAX_TEXT, add_message, apply_pending, control, cut_utf16, repair,
                      rerun_if_pending, reset, show, show_messages, translated_choice, utf16_len)

# ---- slider ranges (select_slider options keep common sizes reachable with one drag) ----------------
VOCAB_OPTIONS = [16, 30, 64, 128, 256, 512, 1000, 2000, 4000, 8000, 10000, 16000, 32000, 50257]
HIDDEN_OPTIONS = [4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768]
FFN_OPTIONS = [8, 16, 32, 64, 128, 256, 344, 512, 1024, 2048, 3072]
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
FIXED_DEFAULTS = {"max_position_embeddings": MAX_TOKENS, "rope_theta": 10000.0, "norm_eps": 1e-5, "bias": None,
                  "attention_bias": None}
POSITION_OPTIONS = ["learned", "sinusoidal", "rope", "none"]
# Bound widgets write their *displayed* option label into the URL, so these labels must not depend on the
# interface language: a link made in Chinese has to open in English too. They are technical names, the same in
# both languages. Options whose names are words (positions, input mode) are translated instead and kept in the URL
# by their id (ui.state.translated_choice with url=True).
FIXED_LABELS = {
    "layernorm": "LayerNorm", "rmsnorm": "RMSNorm", "pre": "Pre-Norm", "post": "Post-Norm",
    "relu": "ReLU", "gelu": "GELU", "gelu_new": "GELU-tanh (GPT-2)", "swiglu": "SwiGLU", "silu": "SiLU",
    "reglu": "ReGLU", "geglu": "GEGLU", "geglu_new": "GEGLU-tanh", "zh": "中文", "en": "English",
}
# What older links wrote for the translated options (their bilingual labels), read as the options' ids.
LEGACY_LABELS = {"learned 可学习": "learned", "sinusoidal 正弦": "sinusoidal", "RoPE": "rope", "none 无": "none",
                 "文本 text": "text", "随机 id / random ids": "random"}


def fixed_label(value: str) -> str:
    """Language-independent label of an option of a URL-bound widget."""
    return FIXED_LABELS.get(value, value)


@dataclass
class Explorer:
    """What a page needs: the config, the (shared, read-only) model, the input and its display tokens.

    ``model_key`` identifies the weights (for cache keys); ``input_ids`` is ``[1, T]``; ``tokens`` has T
    display strings; ``tokenizer`` is None in random-id mode.
    """

    config: ModelConfig
    model: CausalLM
    model_key: str
    input_ids: torch.Tensor
    tokens: list[str]
    tokenizer: TextTokenizer | None
    source: str = "random"
    notes: list[str] = field(default_factory=list)

    def token_strings(self, ids: list[int]) -> list[str]:
        """Display strings for ids (the tokenizer's pieces, or ``#id`` in random-id mode)."""
        if self.tokenizer is None:
            return [f"#{i}" for i in ids]
        known = [i for i in ids if i < self.tokenizer.vocab_size]  # the model's V may exceed the tokenizer's
        pieces = dict(zip(known, self.tokenizer.token_strings(known))) if known else {}
        return [pieces.get(i, f"#{i}") for i in ids]

    def tick_labels(self) -> list[str]:
        """One Plotly axis label per position, unique even when tokens repeat, escaped for Plotly: ``"3 月"``."""
        return [plotly(f"{p} {tok}") for p, tok in enumerate(self.tokens)]


# ---- caches ------------------------------------------------------------------------------------------
@byte_cached  # ui/bytecache.py: models and traces share one store bounded in bytes (EXPLORER_CACHE_MB)
def build_model(config_json: str, seed: int) -> CausalLM:
    """A randomly initialised model for (config, seed). Shared by all sessions: never mutate it.

    Built under :func:`engine.seeding.seeded`: sessions build concurrently, and unserialised draws from torch's
    global RNG would give weights that match neither seed.
    """
    with seeded(seed):
        return CausalLM(ModelConfig.from_dict(json.loads(config_json)))


@st.cache_resource(max_entries=8, show_spinner=False)
def tokenizer_for(vocab_size: int) -> TextTokenizer:
    """The bundled-corpus tokenizer at ``vocab_size`` (trained once per size; GPT-2's size gets a byte-level BPE)."""
    return bundled_tokenizer(vocab_size)


@byte_cached
def _trace(_model: CausalLM, model_key: str, ids: tuple[int, ...], labels: tuple[int, ...] | None) -> CausalLMOutput:
    input_ids = torch.tensor([ids])
    lab = torch.tensor([labels]) if labels is not None else None
    with heavy_work("trace", _model.config, len(ids)):  # a large trace waits for a slot of the heavy-job line
        return run_trace(_model, input_ids, lab)


@st.cache_resource(max_entries=32, show_spinner=False)
def _nonfinite_parts(_out: CausalLMOutput, model_key: str, ids: tuple[int, ...], labels: tuple[int, ...] | None
                     ) -> list[str]:
    """Names of the trace's outputs holding NaN or Inf (cached with the trace: scanning every hidden state
    and attention pattern on each rerun cost ~10 ms on the attention page)."""
    return [name for name, ok in finite_report(_out).items() if not ok]


def trace(ctx: Explorer, labels: torch.Tensor | None = None) -> CausalLMOutput:
    """Cached full forward of the context's input (hidden states, attentions, activation record).

    Shows a warning on the page when any output is NaN or Inf. The returned tensors are shared: read only.
    """
    ids = tuple(ctx.input_ids[0].tolist())
    refuse_over_budget("trace", ctx.config, tokens=len(ids))  # engine/cost.py: never start what the budget refuses
    lab = tuple(labels[0].tolist()) if labels is not None else None
    out = _trace(ctx.model, ctx.model_key, ids, lab)
    bad = _nonfinite_parts(out, ctx.model_key, ids, lab)
    if bad:
        st.warning(t("common.nonfinite", parts=", ".join(bad)))
    return out


# ---- widgets -----------------------------------------------------------------------------------------
def _divisors(n: int, limit: int = 64) -> list[int]:
    return [d for d in range(1, min(n, limit) + 1) if n % d == 0]


def _nearest(options: list, value):
    return min(options, key=lambda o: (abs(o - value), o))


def _clamp(key: str, options: list, notes: list[str]) -> None:
    """Keep a dependent widget's value valid when its options change: move it to the nearest option."""
    value = st.session_state.get(key, DEFAULTS.get(key))
    if value not in options:
        nearest = _nearest(options, value) if isinstance(value, (int, float)) else options[0]
        st.session_state[key] = nearest
        notes.append(t("common.clamped", name=t(f"{key}.label"), old=value, new=nearest))


def ffn_kind(c: ModelConfig) -> str:
    """The FFN choice (key of FFN_KINDS) of a config."""
    return next(k for k, v in FFN_KINDS.items() if v == (c.hidden_act, c.mlp_gated))


def config_to_widgets(c: ModelConfig) -> tuple[dict, list[str]]:
    """Widget values that rebuild ``c`` from the sliders, and notes for values moved to the nearest slider stop.

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
    notes = []
    if c.num_hidden_layers > MAX_LAYERS:
        notes.append(t("common.clamped", name=t("cfg.num_hidden_layers.label"), old=c.num_hidden_layers, new=MAX_LAYERS))
        values["cfg.num_hidden_layers"] = MAX_LAYERS
    for key, options in (("cfg.vocab_size", VOCAB_OPTIONS), ("cfg.hidden_size", HIDDEN_OPTIONS),
                         ("cfg.intermediate_size", FFN_OPTIONS), ("cfg.initializer_range", INIT_OPTIONS)):
        if values[key] not in options:
            new = _nearest(options, values[key])
            notes.append(t("common.clamped", name=t(f"{key}.label"), old=values[key], new=new))
            values[key] = new
    return values, notes


def fixed_fields() -> dict:
    """The config fields without a slider: the preset's or upload's values, else FIXED_DEFAULTS."""
    return {**FIXED_DEFAULTS, **st.session_state.get(FIXED_KEY, {})}


def _apply_preset() -> None:
    """on_change of the preset picker: copy the preset's values (and its tutorial's input) into the widgets."""
    name = st.session_state.get("cfg.preset")
    if name not in PRESETS:
        return
    values, _ = config_to_widgets(PRESETS[name])
    if name in RANDOM_INPUT_PRESETS:  # these tutorials feed random ids / random vectors, not text
        values["input.mode"] = "random"
        values["input.random_len"] = RANDOM_INPUT_PRESETS[name]
    else:
        values["input.mode"] = "text"
        values["input.text"] = DEFAULT_TEXT
    st.session_state.update(values)


def _reset() -> None:
    """on_click of "reset to defaults": every sidebar control and fixed field back to the app's defaults."""
    reset({**DEFAULTS, "cfg.preset": ""})


MAX_CONFIG_UPLOAD = 64 * 1024  # bytes: a config.json is ~1 KB
MAX_JSON_DEPTH = 8  # our file nests 2 levels; a deeper one is refused before parsing
MAX_POSITIONS = 32_768  # position table rows: max_position_embeddings x H floats are allocated (learned / sinusoidal)
# JSON type of every field of our config file, and how a message names it (ModelConfig then checks the values)
_INT, _NUM, _BOOL, _STR = ((int,), "a whole number"), ((int, float), "a number"), ((bool,), "true or false"), ((str,), "a string")
FIELD_TYPES = {
    "vocab_size": _INT, "hidden_size": _INT, "num_hidden_layers": _INT, "num_attention_heads": _INT,
    "num_key_value_heads": ((int, type(None)), "a whole number or null"), "intermediate_size": _INT,
    "hidden_act": _STR, "mlp_gated": _BOOL, "norm_type": _STR, "norm_position": _STR, "position_embedding": _STR,
    "max_position_embeddings": _INT, "rope_theta": _NUM, "norm_eps": _NUM, "bias": _BOOL,
    "attention_bias": ((bool, type(None)), "true, false or null"), "tie_word_embeddings": _BOOL,
    "initializer_range": _NUM,
}


def json_depth(text: str) -> int:
    """Deepest nesting of ``[`` / ``{`` in a JSON text (strings skipped), counted without parsing."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _check_types(payload: dict) -> None:
    """Every known field has its JSON type, and numbers are finite (unknown fields: ModelConfig names them)."""
    for name, value in payload.items():
        if name not in FIELD_TYPES:
            continue
        kinds, wanted = FIELD_TYPES[name]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise ValueError(f"{name} must be {wanted}, got {show(json.dumps(value, ensure_ascii=False))}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {json.dumps(value)}")


def parse_upload(data: bytes) -> tuple[ModelConfig, dict]:
    """Validate an uploaded config file: ``(config, extras)``; extras may hold "seed" and "input".

    Accepts the download button's file (``{"config": {...}, "seed": 0, "input": {...}}``) and a bare config
    object with our field names. Size and nesting depth are checked before parsing, every field's type after.

    Raises:
        ValueError: a message for the user naming what is wrong.
    """
    if len(data) > MAX_CONFIG_UPLOAD:
        raise ValueError(f"the file has {len(data):,} bytes; a config is at most {MAX_CONFIG_UPLOAD:,} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not a JSON file: it is not UTF-8 text") from None
    if json_depth(text) > MAX_JSON_DEPTH:
        raise ValueError(f"not a config: it nests more than {MAX_JSON_DEPTH} levels deep")
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"not a JSON file: {err.msg} (line {err.lineno}, column {err.colno})") from None
    except ValueError:  # a number with thousands of digits
        raise ValueError("not a config: it contains a number with thousands of digits") from None
    if not isinstance(payload, dict):
        raise ValueError(f"config must be a JSON object, got {type(payload).__name__}")
    extras: dict = {}
    if isinstance(payload.get("config"), dict):
        extras = {k: v for k, v in payload.items() if k != "config"}
        unknown = sorted(set(extras) - {"seed", "input"})
        if unknown:
            raise ValueError(f"unknown fields: {', '.join(show(u) for u in unknown)}; valid: config, seed, input")
        payload = payload["config"]
        _check_extras(extras)
    _check_types(payload)
    positions = payload.get("max_position_embeddings", 0)
    if positions > MAX_POSITIONS:
        hidden = payload.get("hidden_size", ModelConfig.hidden_size)
        raise ValueError(
            f"max_position_embeddings = {positions:,} is more than this app allows ({MAX_POSITIONS:,}): a position "
            f"table of {positions:,} × {hidden:,} floats would take {positions * hidden * 4 / 2**30:,.1f} GiB of memory")
    try:
        return ModelConfig.from_dict(payload), extras
    except TypeError as err:
        raise ValueError(str(err)) from None


def _check_extras(extras: dict) -> None:
    seed = extras.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**31:
        raise ValueError(f"seed must be a whole number from 0 to {2**31 - 1:,}, got {show(seed)}")
    inp = extras.get("input", {})
    if not isinstance(inp, dict):
        raise ValueError("input must be an object with mode, text and random_len")
    mode, text, n = inp.get("mode", "text"), inp.get("text", ""), inp.get("random_len", 8)
    if mode not in ("text", "random"):
        raise ValueError(f"input.mode must be \"text\" or \"random\", got {show(mode)}")
    if not isinstance(text, str):
        raise ValueError("input.text must be a string")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 64:
        raise ValueError(f"input.random_len must be a whole number from 1 to 64, got {show(n)}")


def parse_config_upload(data: bytes) -> ModelConfig:
    """The config of an uploaded file (see :func:`parse_upload`)."""
    return parse_upload(data)[0]


def export_json(config: ModelConfig) -> str:
    """The download: the config, the seed and the input, so an upload restores the whole view."""
    s = st.session_state
    payload = {"config": config.to_dict(), "seed": int(s.get("cfg.seed", 0)),
               "input": {"mode": s.get("input.mode", "text"), "text": s.get("input.text", DEFAULT_TEXT),
                         "random_len": int(s.get("input.random_len", 8))}}
    return json.dumps(payload, indent=2, ensure_ascii=False)


def _apply_upload() -> None:
    """on_change of the config uploader: validate, then copy the values (and seed and input) into the widgets."""
    upload = st.session_state.get("cfg.upload")
    if upload is None:
        return
    try:
        config, extras = parse_upload(upload.getvalue())
    except ValueError as err:
        st.session_state["cfg.upload_msg"] = ("error", t("share.upload_bad", error=str(err)))
        return
    values, notes = config_to_widgets(config)
    if "seed" in extras:
        values["cfg.seed"] = float(extras["seed"])
    inp = extras.get("input", {})
    values.update({f"input.{k}": v for k, v in inp.items()})
    if "text" in inp and utf16_len(inp["text"]) > MAX_TEXT:
        values["input.text"] = cut_utf16(inp["text"])
        notes.append(t("state.text_cut", n=f"{utf16_len(inp['text']):,}", limit=f"{MAX_TEXT:,}"))
    st.session_state.update(values)
    st.session_state["cfg.preset"] = ""
    st.session_state["cfg.upload_msg"] = ("success", " ".join([t("share.upload_ok")] + notes))


def share_widgets(config: ModelConfig) -> None:
    """Copy-link button, config download and upload (validated, size-limited)."""
    with st.sidebar.expander(t("share.title")):
        copy_link_button()
        st.download_button(t("share.download"), export_json(config).encode("utf-8"), file_name="config.json",
                           mime="application/json", key="share.download", on_click="ignore")
        st.file_uploader(t("share.upload"), type=["json"], key="cfg.upload", on_change=_apply_upload,
                         max_upload_size=1)
        msg = st.session_state.pop("cfg.upload_msg", None)
        if msg:
            getattr(st, msg[0])(msg[1])


def copy_link_button() -> None:
    """A button that copies the page's full URL (every control is in it) to the clipboard.

    Runs in a same-origin component iframe; where the clipboard API is unavailable (plain http on a LAN) the
    link is shown selected for a manual copy.
    """
    label, done = t("share.copy"), t("share.copied")
    st.iframe(
        f"""<button id="b" style="font:14px sans-serif;padding:6px 10px;border-radius:6px;border:1px solid #ccc;
        background:#fff;cursor:pointer">🔗 {label}</button>
        <input id="u" style="display:none;width:95%;margin-top:4px" readonly>
        <script>
        const b = document.getElementById('b'), u = document.getElementById('u');
        b.onclick = async () => {{
          const url = window.parent.location.href;
          try {{ await navigator.clipboard.writeText(url); b.textContent = '✅ {done}'; }}
          catch (e) {{ u.style.display = 'block'; u.value = url; u.select(); }}
        }};
        </script>""",
        height=52,
    )


def language_picker() -> None:
    """Language switch (zh/en), defaulting to the browser's locale and kept in the URL as ``ui.lang``."""
    asked = st.query_params.get("ui.lang")
    if "ui.lang" not in st.session_state and asked in LANGS:  # also accept ?ui.lang=zh / en in a typed link
        st.session_state["ui.lang"] = asked
        st.session_state.setdefault(CHECKED_KEY, set()).add("ui.lang")
    control(st.sidebar.segmented_control, "Language / 语言", "ui.lang", browser_lang(), kind="choice",
            options=list(LANGS), format_func=fixed_label)
    # A click on the selected segment deselects it (value None): current_lang() then falls back to the URL
    # and the browser's locale.


def config_widgets(notes: list[str]) -> ModelConfig:
    """The model sliders; returns the validated config or shows the validation error and stops.

    In presenter mode they sit in a collapsed expander (values kept), leaving the room to the charts. Every
    control is drawn by :func:`ui.state.control` with the app's default as its own (see ui/state.py).
    """
    sb = st.sidebar.expander(t("cfg.section"), expanded=not presenter_mode())
    presets = [""] + list(PRESETS)
    translated_choice(sb.selectbox, t("cfg.preset.label"), "cfg.preset", "", presets,
                      labeler("preset.", none_key="cfg.preset.none"), on_pick=_apply_preset, help=t("cfg.preset.help"))
    if st.session_state.get("cfg.preset") in PRESET_SOURCES:
        sb.caption(t("cfg.preset.source", source=t(f"preset_source.{st.session_state['cfg.preset']}")))

    def choice(widget, key, options, default=None, **kw):
        return control(widget, t(f"{key}.label"), key, DEFAULTS[key] if default is None else default,
                       kind="choice", options=options, **kw)

    vocab = choice(sb.select_slider, "cfg.vocab_size", VOCAB_OPTIONS, help=t("cfg.vocab_size.help"))
    hidden = choice(sb.select_slider, "cfg.hidden_size", HIDDEN_OPTIONS)
    layers = control(sb.slider, t("cfg.num_hidden_layers.label"), "cfg.num_hidden_layers",
                     DEFAULTS["cfg.num_hidden_layers"], kind="int", lo=1, hi=MAX_LAYERS)
    position = translated_choice(sb.selectbox, t("cfg.position_embedding.label"), "cfg.position_embedding",
                                 DEFAULTS["cfg.position_embedding"], POSITION_OPTIONS,
                                 labeler("cfg.position_embedding."), url=True, aliases=LEGACY_LABELS)
    rope = position == "rope"
    heads_options = [d for d in _divisors(hidden) if not rope or (hidden // d) % 2 == 0] or [1]
    _clamp("cfg.num_attention_heads", heads_options, notes)
    heads = choice(sb.select_slider, "cfg.num_attention_heads", heads_options,
                   _nearest(heads_options, DEFAULTS["cfg.num_attention_heads"]), help=t("cfg.num_attention_heads.help"))
    kv_options = _divisors(heads)
    _clamp("cfg.num_key_value_heads", kv_options, notes)
    kv = choice(sb.select_slider, "cfg.num_key_value_heads", kv_options,
                _nearest(kv_options, DEFAULTS["cfg.num_key_value_heads"]), help=t("cfg.num_key_value_heads.help"))
    ffn_size = choice(sb.select_slider, "cfg.intermediate_size", FFN_OPTIONS)
    c1, c2 = sb.columns(2)
    norm = choice(c1.radio, "cfg.norm_type", ["layernorm", "rmsnorm"], format_func=fixed_label)
    placement = choice(c2.radio, "cfg.norm_position", ["pre", "post"], format_func=fixed_label)
    ffn = choice(sb.selectbox, "cfg.ffn", list(FFN_KINDS), format_func=fixed_label)
    tied = control(sb.toggle, t("cfg.tie_word_embeddings.label"), "cfg.tie_word_embeddings",
                   DEFAULTS["cfg.tie_word_embeddings"], kind="bool", help=t("cfg.tie_word_embeddings.help"))
    init = choice(sb.select_slider, "cfg.initializer_range", INIT_OPTIONS, help=t("cfg.initializer_range.help"))
    # a float input shown without decimals: Streamlit's int input raises on "inf" in a link
    control(sb.number_input, t("cfg.seed.label"), "cfg.seed", float(DEFAULTS["cfg.seed"]), kind="int", lo=0,
            hi=2**31 - 1, min_value=0.0, max_value=float(2**31 - 1), step=1.0, format="%.0f")

    rerun_if_pending()  # a bad link value: repair it before anything is built from it
    act, gated = FFN_KINDS[ffn]
    fixed = fixed_fields()
    try:
        config = ModelConfig(
            vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
            num_key_value_heads=kv, intermediate_size=ffn_size, hidden_act=act, mlp_gated=gated,
            norm_type=norm, norm_position=placement, position_embedding=position,
            max_position_embeddings=fixed["max_position_embeddings"], rope_theta=fixed["rope_theta"],
            norm_eps=fixed["norm_eps"], bias=(not gated) if fixed["bias"] is None else fixed["bias"],
            attention_bias=fixed["attention_bias"], tie_word_embeddings=tied, initializer_range=float(init),
        )
    except ValueError as err:
        st.error(t("common.bad_config", error=str(err)))
        st.stop()
    _fixed_caption(sb, config)
    sb.button(t("state.reset"), key="state.reset", on_click=_reset, help=t("state.reset.help"))
    return config


def _fixed_caption(container, config: ModelConfig) -> None:
    """The config fields without a slider, read-only (a preset or an upload may have set them)."""
    qkv = t("cfg.fixed.follows_bias") if config.attention_bias is None else str(config.attention_bias).lower()
    container.caption(t("cfg.fixed", eps=f"{config.norm_eps:g}", theta=f"{config.rope_theta:g}",
                        bias=str(config.bias).lower(), qkv=qkv, positions=f"{config.max_position_embeddings:,}"))


def input_widgets(config: ModelConfig, notes: list[str], tokenizer: TextTokenizer | None = None
                  ) -> tuple[torch.Tensor, list[str], TextTokenizer | None]:
    """Text or random-id input; returns ``(input_ids [1, T], display tokens, tokenizer or None)``.

    ``tokenizer`` is the model's own (a checkpoint's); by default the bundled-corpus BPE at the model's
    vocabulary size is used. Text longer than MAX_TEXT UTF-16 units (typed, pasted or from a link) is cut, with
    a message.
    """
    sb = st.sidebar
    mode = translated_choice(sb.radio, t("input.mode.label"), "input.mode", DEFAULTS["input.mode"], ["text", "random"],
                             labeler("input.mode."), url=True, aliases=LEGACY_LABELS, horizontal=True)
    limit = min(MAX_TOKENS, config.max_position_embeddings) if config.has_position_limit else MAX_TOKENS
    if mode == "random":
        n = control(sb.slider, t("input.random_len.label"), "input.random_len", DEFAULTS["input.random_len"],
                    kind="int", lo=1, hi=64)
        gen = torch.Generator().manual_seed(int(st.session_state["cfg.seed"]))
        ids = torch.randint(0, config.vocab_size, (1, n), generator=gen)
        tokens, note = random_input_tokens(st.session_state.get("cfg.preset"), ids[0].tolist())
        if note:
            sb.caption(note)
        return ids, tokens, None
    # no max_chars: the browser would silently refuse a longer paste; it is cut here instead, with a message
    text = control(sb.text_area, t("input.text.label"), "input.text", DEFAULTS["input.text"], kind="text",
                   help=t("input.text.help"))
    if utf16_len(text) > MAX_TEXT:
        repair("input.text", cut_utf16(text), t("state.text_cut", n=f"{utf16_len(text):,}", limit=f"{MAX_TEXT:,}"))
        text = cut_utf16(text)
    rerun_if_pending()
    tok = tokenizer
    if tok is None:
        with st.spinner(t("input.training_tokenizer", size=config.vocab_size)):
            tok = tokenizer_for(config.vocab_size)
    ids = tok.encode(text)
    if not ids:
        st.info(t("input.empty"))
        st.stop()
    outside = sorted({i for i in ids if i >= config.vocab_size})
    if outside:  # a checkpoint whose tokenizer is larger than its model's vocabulary
        pieces = tok.token_strings(outside[:8])
        st.error(t("input.outside_vocab", n=len(outside), v=f"{config.vocab_size:,}",
                   tokens=", ".join(f"{md_code(p)} (id {i:,})" for p, i in zip(pieces, outside))))
        st.stop()
    if len(ids) > limit:
        notes.append(t("input.truncated", n=len(ids), limit=limit))
        ids = ids[:limit]
    unk = tok.unk_token_id
    if unk is not None and all(i == unk for i in ids):
        notes.append(t("input.all_unknown"))
    pieces = tok.token_strings(ids)
    sb.caption(t("input.pieces", n=len(ids)) + " " + " · ".join(md_code(p) for p in pieces[:64]))
    sb.caption(tokenizer_note(tok))
    return torch.tensor([ids]), pieces, tok


def _leave_legacy_multipage_mode() -> None:
    """Make Streamlit use ``app.py``'s ``st.navigation`` even on a fresh server's first request.

    Streamlit treats a ``pages/`` folder next to the entry script as a legacy (v1) multipage app until some
    script calls ``st.navigation``: the very first request to a URL such as ``/overview`` then runs
    ``pages/overview.py`` directly, with file-name navigation and without ``app.py``. The flag is
    process-wide, so turning it off once and rerunning puts this and every later session on ``app.py``.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


SOURCES = ("random", "trained", "checkpoint")
TRAINED_KEY = "train.trained"  # session_state: {"model": CausalLM, "id": str} set by the Train page


@st.cache_data(ttl=30, show_spinner=False)
def available_checkpoints() -> list[CheckpointInfo]:
    """Checkpoint folders under the models directory and the Hugging Face cache (refreshed every 30 s)."""
    return list_checkpoints()


@st.cache_resource(max_entries=2, show_spinner=False)
def load_checkpoint(name: str) -> tuple[CausalLM, TextTokenizer | None]:
    """Load a listed checkpoint by its *name* (never a browser-supplied path) with its tokenizer.

    The folder is looked up among :func:`available_checkpoints` and re-checked to lie inside the allowed
    roots, so the browser can only make the server read checkpoints that are listed.
    """
    if name in named_models():  # SmolLM2 from its pip package, read from the verified conversion cache
        return load_pretrained(name), TextTokenizer.from_pretrained(name)
    info = {c.name: c for c in available_checkpoints()}.get(name)
    if info is None:
        raise CheckpointError(f"no checkpoint named {name!r} in the models directory")
    roots = default_allowed_roots()
    folder = resolve_checkpoint(info.path, roots)
    model = load_pretrained(folder, allowed_roots=roots)
    try:
        tok = TextTokenizer.from_folder(folder)
    except FileNotFoundError:
        tok = None  # our own saved models carry no tokenizer: the bundled BPE at their vocab size is used
    return model, tok


def tokenizer_overflow(folder) -> tuple[int, int] | None:
    """``(tokenizer size, model vocabulary)`` when the folder's tokenizer has more tokens than its model has
    embeddings (ids past V would index outside the embedding), else None. Reads only config.json and the
    tokenizer files, never the weights; a folder without a tokenizer uses the bundled one and is fine."""
    try:
        vocab = config_from_hf(read_config(folder)).vocab_size
        tok = TextTokenizer.from_folder(folder).vocab_size
    except Exception:  # noqa: BLE001  unreadable (tokenizers raises plain Exceptions): the load says why
        return None
    return (tok, vocab) if tok > vocab else None


@st.cache_data(ttl=30, show_spinner=False)
def checkpoint_menu() -> tuple[list[CheckpointInfo], list[tuple[str, str, dict]]]:
    """The listed checkpoints split into ``(offered, not offered)``; each one not offered comes with a string
    key and its fields saying why (an unsupported config, or a tokenizer larger than the model's vocabulary)."""
    offered, refused = [], []
    for info in available_checkpoints():
        overflow = tokenizer_overflow(info.path) if info.supported else None
        if not info.supported:
            refused.append((info.name, "model.not_offered.unsupported", {"why": info.problem}))
        elif overflow:
            refused.append((info.name, "model.not_offered.tok_larger",
                            {"tok": f"{overflow[0]:,}", "v": f"{overflow[1]:,}"}))
        else:
            offered.append(info)
    return offered, refused


def source_widgets() -> str:
    """Model source picker; returns "random", "trained" or "checkpoint"."""
    source = translated_choice(st.sidebar.radio, t("model.source.label"), "model.source", "random", list(SOURCES),
                               labeler("model.source."))
    if source == "trained" and TRAINED_KEY not in st.session_state:
        st.sidebar.info(t("model.no_trained"))
        return "random"
    return source


def _readonly_config(config: ModelConfig) -> None:
    """The loaded model's configuration, shown where the sliders were (read-only)."""
    st.sidebar.caption(t("model.readonly"))
    rows = {k: str(v) for k, v in config.to_dict().items()}
    st.sidebar.dataframe(rows, width="stretch", height=260)


def _checkpoint_model(notes: list[str]) -> tuple[CausalLM, TextTokenizer | None, str]:
    infos, refused = checkpoint_menu()
    for name, key, fields in refused:  # said, not offered as a broken entry
        st.sidebar.warning(t(key, name=md(name), **{k: md(v) for k, v in fields.items()}))
    named = named_models()  # models shipped in pip packages (SmolLM2), listed first
    if not infos and not named:
        st.sidebar.warning(t("model.no_checkpoints", folder=str(default_models_dir())))
        st.info(t("model.no_checkpoints", folder=str(default_models_dir())))
        st.stop()
    names = named + [c.name for c in infos]
    sizes = {c.name: c.size_bytes for c in infos}
    if st.session_state.get("model.checkpoint", names[0]) not in names:  # a listed folder went away
        st.session_state["model.checkpoint"] = names[0]
    name = control(st.sidebar.selectbox, t("model.checkpoint.label"), "model.checkpoint", names[0], kind="choice",
                   options=names,
                   format_func=lambda n: model_label(n) if n in named else f"{n} ({sizes[n] / 2**20:.0f} MB)")
    try:
        if name in named:
            prepare_with_progress(name)  # first use: convert the GGUF file once, with a progress bar
        with st.spinner(t("model.loading", name=name)):
            model, tok = load_checkpoint(name)
    except (CheckpointError, OSError, ValueError) as err:
        st.error(t("model.load_failed", name=name, error=str(err)))
        st.stop()
    if tok is not None and tok.vocab_size > model.config.vocab_size:  # ids past V would index outside the embedding
        st.sidebar.warning(t("model.tok_larger", tok=f"{tok.vocab_size:,}", v=f"{model.config.vocab_size:,}",
                             last=f"{model.config.vocab_size - 1:,}"))
    return model, tok, f"checkpoint:{name}"


def explorer() -> Explorer:
    """Render the shared sidebar and return the page context (see module docstring)."""
    _leave_legacy_multipage_mode()
    apply_pending()
    language_picker()
    presenter_toggle()
    show_messages()
    notes: list[str] = []
    source = source_widgets()
    tok: TextTokenizer | None = None
    if source == "checkpoint":
        model, tok, key = _checkpoint_model(notes)
        config = model.config
        _readonly_config(config)
    elif source == "trained":
        trained = st.session_state[TRAINED_KEY]
        model, key, config = trained["model"], f"trained:{trained['id']}", trained["model"].config
        _readonly_config(config)
    else:
        config = config_widgets(notes)
        model = key = None  # built below, once the whole sidebar (and its share link) is drawn
    input_ids, tokens, tok = input_widgets(config, notes, tok)
    rerun_if_pending()
    for n in notes:
        st.caption("⚠️ " + n)
    share_widgets(config)
    if model is None:
        # The slider maxima are refused with their cost, never built; the sidebar above stays complete, so the
        # input settings stay in the URL and a refused view can still be shared.
        refuse_over_budget("build", config)
        with st.spinner(t("common.building_model")):
            config_json = config.to_json()
            seed = int(st.session_state["cfg.seed"])
            model = build_model(config_json, seed)
        key = "random:" + hashlib.sha1(f"{config_json}|{seed}".encode()).hexdigest()[:16]
    return Explorer(config=config, model=model, model_key=key, input_ids=input_ids, tokens=tokens,
                    tokenizer=tok, source=source, notes=notes)
