"""The shared sidebar: model source, preset, sliders, input text, and the cached model/trace behind them.

Every page calls :func:`explorer` first. It renders the same widgets under the same namespaced keys on every
page (``persist_state="session"`` keeps values across page switches; ``bind="query-params"`` puts the view in
the URL), builds a :class:`ModelConfig`, fetches the cached model, tokenizes the input and returns an
:class:`Explorer` context. Bad input is turned into a message and ``st.stop()``; widget values are never lost.

Caching: models are built once per (config, seed) with ``st.cache_resource`` and are shared by every session,
so nothing here or in a page may mutate them. Traces (forward passes with the full activation record) are cached the same
way, keyed by the model key and the token ids.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import streamlit as st
import torch

from engine import PRESET_SOURCES, PRESETS, CausalLM, ModelConfig
from engine.analysis import finite_report, run_trace
from engine.model import CausalLMOutput
from engine.seeding import seeded
from engine.checkpoints import (
    CheckpointError,
    CheckpointInfo,
    default_allowed_roots,
    default_models_dir,
    list_checkpoints,
    load_pretrained,
    resolve_checkpoint,
)
from engine.tokenizer import TextTokenizer, bundled_tokenizer
from ui.budget import heavy_work, refuse_over_budget
from ui.bytecache import byte_cached
from ui.i18n import LANGS, browser_lang, labeler, t
from ui.input_notes import random_input_tokens, tokenizer_note
from ui.presenter import presenter_mode, presenter_toggle
from ui.smollm2 import model_label, named_models, prepare_with_progress

# ---- slider ranges (select_slider options keep common sizes reachable with one drag) ----------------
VOCAB_OPTIONS = [16, 30, 64, 128, 256, 512, 1000, 2000, 4000, 8000, 10000, 16000, 32000, 50257]
HIDDEN_OPTIONS = [4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768]
FFN_OPTIONS = [8, 16, 32, 64, 128, 256, 344, 512, 1024, 2048, 3072]
INIT_OPTIONS = [0.002, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 10.0, 1e3, 1e10, 1e20]
MAX_LAYERS = 48
MAX_TOKENS = 256  # input tokens drawn at most (position limit of slider-built models)
FFN_KINDS = {"relu": ("relu", False), "gelu": ("gelu", False), "gelu_new": ("gelu_new", False), "swiglu": ("silu", True)}
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
    "cfg.max_position_embeddings": MAX_TOKENS,  # no widget: set by presets and config uploads
    "cfg.seed": 0,
    "input.mode": "text",
    "input.text": DEFAULT_TEXT,
    "input.random_len": 8,
}
WIDGET = dict(persist_state="session", bind="query-params")
# Bound widgets write their *displayed* option label into the URL, so these labels must not depend on the
# interface language: a link made in Chinese has to open in English too. Technical names stay as they are.
FIXED_LABELS = {
    "layernorm": "LayerNorm", "rmsnorm": "RMSNorm", "pre": "Pre-Norm", "post": "Post-Norm",
    "relu": "ReLU", "gelu": "GELU", "gelu_new": "GELU-tanh (GPT-2)", "swiglu": "SwiGLU",
    "learned": "learned 可学习", "sinusoidal": "sinusoidal 正弦", "rope": "RoPE", "none": "none 无",
    "text": "文本 text", "random": "随机 id / random ids", "zh": "中文", "en": "English",
}


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
        """One axis label per position, unique even when tokens repeat: ``"3 月"``."""
        return [f"{p} {tok}" for p, tok in enumerate(self.tokens)]


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


def _clamp(key: str, options: list, notes: list[str]) -> None:
    """Keep a dependent widget's value valid when its options change: move it to the nearest option."""
    value = st.session_state.get(key, DEFAULTS.get(key))
    if value not in options:
        nearest = min(options, key=lambda o: (abs(o - value) if value is not None else 0, o))
        st.session_state[key] = nearest
        notes.append(t("common.clamped", name=t(f"{key}.label"), old=value, new=nearest))


def _nearest(options: list, value):
    return min(options, key=lambda o: (abs(o - value), o))


def config_to_widgets(c: ModelConfig) -> tuple[dict, list[str]]:
    """Widget values that rebuild ``c`` from the sliders, and notes for values moved to the nearest slider stop.

    The heads and KV heads are checked again (and clamped) when the widgets render.
    """
    act = "swiglu" if c.mlp_gated and c.hidden_act == "silu" else c.hidden_act
    values = {
        "cfg.vocab_size": c.vocab_size, "cfg.hidden_size": c.hidden_size,
        "cfg.num_hidden_layers": min(c.num_hidden_layers, MAX_LAYERS),
        "cfg.num_attention_heads": c.num_attention_heads, "cfg.num_key_value_heads": c.kv_heads,
        "cfg.intermediate_size": c.intermediate_size, "cfg.norm_type": c.norm_type,
        "cfg.norm_position": c.norm_position, "cfg.ffn": act, "cfg.position_embedding": c.position_embedding,
        "cfg.tie_word_embeddings": c.tie_word_embeddings, "cfg.initializer_range": c.initializer_range,
        "cfg.max_position_embeddings": c.max_position_embeddings,
    }
    notes = []
    for key, options in (("cfg.vocab_size", VOCAB_OPTIONS), ("cfg.hidden_size", HIDDEN_OPTIONS),
                         ("cfg.intermediate_size", FFN_OPTIONS), ("cfg.initializer_range", INIT_OPTIONS)):
        if values[key] not in options:
            new = _nearest(options, values[key])
            notes.append(t("common.clamped", name=t(f"{key}.label"), old=values[key], new=new))
            values[key] = new
    return values, notes


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


MAX_CONFIG_UPLOAD = 64 * 1024  # bytes: a config.json is ~1 KB


def parse_config_upload(data: bytes) -> ModelConfig:
    """Validate an uploaded config JSON (our field names, as written by the download button).

    Raises:
        ValueError: too large, not UTF-8 JSON, not an object, unknown fields or invalid values (the message
            says which).
    """
    if len(data) > MAX_CONFIG_UPLOAD:
        raise ValueError(f"the file has {len(data):,} bytes; a config is at most {MAX_CONFIG_UPLOAD:,} bytes")
    try:
        payload = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"not a JSON file: {err}") from None
    try:
        return ModelConfig.from_dict(payload)
    except TypeError as err:
        raise ValueError(str(err)) from None


def _apply_upload() -> None:
    """on_change of the config uploader: validate, then copy the values into the widgets."""
    upload = st.session_state.get("cfg.upload")
    if upload is None:
        return
    try:
        config = parse_config_upload(upload.getvalue())
    except ValueError as err:
        st.session_state["cfg.upload_msg"] = ("error", t("share.upload_bad", error=str(err)))
        return
    values, notes = config_to_widgets(config)
    st.session_state.update(values)
    st.session_state["cfg.preset"] = ""
    st.session_state["cfg.upload_msg"] = ("success", " ".join([t("share.upload_ok")] + notes))


def share_widgets(config: ModelConfig) -> None:
    """Copy-link button, config download and upload (validated, size-limited)."""
    with st.sidebar.expander(t("share.title")):
        copy_link_button()
        st.download_button(t("share.download"), config.to_json().encode("utf-8"), file_name="config.json",
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


def _init_defaults() -> None:
    for k, v in DEFAULTS.items():
        st.session_state.setdefault(k, v)


def language_picker() -> None:
    """Language switch (zh/en), defaulting to the browser's locale and kept in the URL as ``ui.lang``."""
    asked = st.query_params.get("ui.lang")
    if "ui.lang" not in st.session_state and asked in LANGS:  # also accept ?ui.lang=zh / en in a typed link
        st.session_state["ui.lang"] = asked
    st.sidebar.segmented_control(
        "Language / 语言", LANGS, key="ui.lang",
        default=None if "ui.lang" in st.session_state else browser_lang(),
        format_func=fixed_label, **WIDGET,
    )
    # A click on the selected segment deselects it (value None): current_lang() then falls back to the URL
    # and the browser's locale.


def config_widgets(notes: list[str]) -> ModelConfig:
    """The model sliders; returns the validated config or shows the validation error and stops.

    In presenter mode they sit in a collapsed expander (values kept), leaving the room to the charts.
    """
    sb = st.sidebar.expander(t("cfg.section"), expanded=not presenter_mode())
    sb.selectbox(t("cfg.preset.label"), [""] + list(PRESETS), key="cfg.preset", on_change=_apply_preset,
                 format_func=labeler("preset.", none_key="cfg.preset.none"),
                 help=t("cfg.preset.help"), persist_state="session")
    if st.session_state.get("cfg.preset") in PRESET_SOURCES:
        sb.caption(t("cfg.preset.source", source=PRESET_SOURCES[st.session_state["cfg.preset"]]))
    sb.select_slider(t("cfg.vocab_size.label"), VOCAB_OPTIONS, key="cfg.vocab_size", help=t("cfg.vocab_size.help"), **WIDGET)
    sb.select_slider(t("cfg.hidden_size.label"), HIDDEN_OPTIONS, key="cfg.hidden_size", **WIDGET)
    sb.slider(t("cfg.num_hidden_layers.label"), 1, MAX_LAYERS, key="cfg.num_hidden_layers", **WIDGET)
    sb.selectbox(t("cfg.position_embedding.label"), ["learned", "sinusoidal", "rope", "none"],
                 key="cfg.position_embedding", format_func=fixed_label, **WIDGET)
    hidden = st.session_state["cfg.hidden_size"]
    rope = st.session_state["cfg.position_embedding"] == "rope"
    heads = [d for d in _divisors(hidden) if not rope or (hidden // d) % 2 == 0] or [1]
    _clamp("cfg.num_attention_heads", heads, notes)
    sb.select_slider(t("cfg.num_attention_heads.label"), heads, key="cfg.num_attention_heads",
                     help=t("cfg.num_attention_heads.help"), **WIDGET)
    kv = _divisors(st.session_state["cfg.num_attention_heads"])
    _clamp("cfg.num_key_value_heads", kv, notes)
    sb.select_slider(t("cfg.num_key_value_heads.label"), kv, key="cfg.num_key_value_heads",
                     help=t("cfg.num_key_value_heads.help"), **WIDGET)
    sb.select_slider(t("cfg.intermediate_size.label"), FFN_OPTIONS, key="cfg.intermediate_size", **WIDGET)
    c1, c2 = sb.columns(2)
    c1.radio(t("cfg.norm_type.label"), ["layernorm", "rmsnorm"], key="cfg.norm_type",
             format_func=fixed_label, **WIDGET)
    c2.radio(t("cfg.norm_position.label"), ["pre", "post"], key="cfg.norm_position",
             format_func=fixed_label, **WIDGET)
    sb.selectbox(t("cfg.ffn.label"), list(FFN_KINDS), key="cfg.ffn", format_func=fixed_label, **WIDGET)
    sb.toggle(t("cfg.tie_word_embeddings.label"), key="cfg.tie_word_embeddings", help=t("cfg.tie_word_embeddings.help"), **WIDGET)
    sb.select_slider(t("cfg.initializer_range.label"), INIT_OPTIONS, key="cfg.initializer_range",
                     help=t("cfg.initializer_range.help"), **WIDGET)
    sb.number_input(t("cfg.seed.label"), 0, 2**31 - 1, step=1, key="cfg.seed", **WIDGET)

    s = st.session_state
    act, gated = FFN_KINDS[s["cfg.ffn"]]
    try:
        return ModelConfig(
            vocab_size=s["cfg.vocab_size"], hidden_size=s["cfg.hidden_size"], num_hidden_layers=s["cfg.num_hidden_layers"],
            num_attention_heads=s["cfg.num_attention_heads"], num_key_value_heads=s["cfg.num_key_value_heads"],
            intermediate_size=s["cfg.intermediate_size"], hidden_act=act, mlp_gated=gated,
            norm_type=s["cfg.norm_type"], norm_position=s["cfg.norm_position"],
            position_embedding=s["cfg.position_embedding"],
            max_position_embeddings=int(s.get("cfg.max_position_embeddings", MAX_TOKENS)),
            bias=not gated, tie_word_embeddings=s["cfg.tie_word_embeddings"],
            initializer_range=float(s["cfg.initializer_range"]),
        )
    except ValueError as err:
        st.error(t("common.bad_config", error=str(err)))
        st.stop()


def input_widgets(config: ModelConfig, notes: list[str], tokenizer: TextTokenizer | None = None
                  ) -> tuple[torch.Tensor, list[str], TextTokenizer | None]:
    """Text or random-id input; returns ``(input_ids [1, T], display tokens, tokenizer or None)``.

    ``tokenizer`` is the model's own (a checkpoint's); by default the bundled-corpus BPE at the model's
    vocabulary size is used.
    """
    sb = st.sidebar
    sb.radio(t("input.mode.label"), ["text", "random"], key="input.mode", horizontal=True,
             format_func=fixed_label, **WIDGET)
    limit = min(MAX_TOKENS, config.max_position_embeddings) if config.has_position_limit else MAX_TOKENS
    if st.session_state["input.mode"] == "random":
        sb.slider(t("input.random_len.label"), 1, 64, key="input.random_len", **WIDGET)
        gen = torch.Generator().manual_seed(int(st.session_state["cfg.seed"]))
        ids = torch.randint(0, config.vocab_size, (1, st.session_state["input.random_len"]), generator=gen)
        tokens, note = random_input_tokens(st.session_state.get("cfg.preset"), ids[0].tolist())
        if note:
            sb.caption(note)
        return ids, tokens, None
    sb.text_area(t("input.text.label"), key="input.text", max_chars=20000, help=t("input.text.help"), **WIDGET)
    text = st.session_state["input.text"]
    tok = tokenizer
    if tok is None:
        with st.spinner(t("input.training_tokenizer", size=config.vocab_size)):
            tok = tokenizer_for(config.vocab_size)
    ids = tok.encode(text)
    if not ids:
        st.info(t("input.empty"))
        st.stop()
    if len(ids) > limit:
        notes.append(t("input.truncated", n=len(ids), limit=limit))
        ids = ids[:limit]
    unk = tok.unk_token_id
    if unk is not None and all(i == unk for i in ids):
        notes.append(t("input.all_unknown"))
    pieces = tok.token_strings(ids)
    sb.caption(t("input.pieces", n=len(ids)) + " " + " · ".join(f"`{p}`" for p in pieces[:64]))
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


def source_widgets() -> str:
    """Model source picker; returns "random", "trained" or "checkpoint"."""
    st.sidebar.radio(t("model.source.label"), SOURCES, key="model.source", horizontal=False,
                     format_func=labeler("model.source."), persist_state="session")
    source = st.session_state.get("model.source", "random")
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
    infos = [c for c in available_checkpoints() if c.supported]
    named = named_models()  # models shipped in pip packages (SmolLM2), listed first
    if not infos and not named:
        st.sidebar.warning(t("model.no_checkpoints", folder=str(default_models_dir())))
        st.info(t("model.no_checkpoints", folder=str(default_models_dir())))
        st.stop()
    names = named + [c.name for c in infos]
    sizes = {c.name: c.size_bytes for c in infos}
    if st.session_state.get("model.checkpoint") not in names:
        st.session_state["model.checkpoint"] = names[0]
    st.sidebar.selectbox(t("model.checkpoint.label"), names, key="model.checkpoint",
                         format_func=lambda n: model_label(n) if n in named else f"{n} ({sizes[n] / 2**20:.0f} MB)",
                         **WIDGET)
    name = st.session_state["model.checkpoint"]
    try:
        if name in named:
            prepare_with_progress(name)  # first use: convert the GGUF file once, with a progress bar
        with st.spinner(t("model.loading", name=name)):
            model, tok = load_checkpoint(name)
    except (CheckpointError, OSError, ValueError) as err:
        st.error(t("model.load_failed", name=name, error=str(err)))
        st.stop()
    return model, tok, f"checkpoint:{name}"


def explorer() -> Explorer:
    """Render the shared sidebar and return the page context (see module docstring)."""
    _leave_legacy_multipage_mode()
    _init_defaults()
    language_picker()
    presenter_toggle(**WIDGET)
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
        refuse_over_budget("build", config)  # the slider maxima are refused with their cost, never built
        with st.spinner(t("common.building_model")):
            config_json = config.to_json()
            seed = int(st.session_state["cfg.seed"])
            model = build_model(config_json, seed)
        key = "random:" + hashlib.sha1(f"{config_json}|{seed}".encode()).hexdigest()[:16]
    input_ids, tokens, tok = input_widgets(config, notes, tok)
    for n in notes:
        st.caption("⚠️ " + n)
    share_widgets(config)
    return Explorer(config=config, model=model, model_key=key, input_ids=input_ids, tokens=tokens,
                    tokenizer=tok, source=source, notes=notes)
