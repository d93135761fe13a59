"""The shared sidebar: language, presenter mode, model source, preset, sliders and input; returns the page context.

Every page calls :func:`explorer` first. It renders the same widgets under the same namespaced keys on every
page, all through :mod:`ui.state` (each control's own default is the app's default, its value is in the URL and
survives page switches; bad link values are named and removed from the link), builds a :class:`ModelConfig`
(fields without a slider come from the last preset or upload), fetches the cached model, tokenizes the input and
returns an :class:`ui.context.Explorer`. Bad input is turned into a message and ``st.stop()``; widget values are
never lost.

The sidebar by concern: options and defaults (settings/schema.py), shared caches (ui/caches/), the page context
(ui/context.py), the model source and checkpoint picker (ui/checkpoint_picker.py), share link / download /
upload (ui/share.py), presenter mode (ui/presenter.py). Names
other modules import from here are re-exported below.
"""

from __future__ import annotations

import sys

import streamlit as st
import torch

from settings.build import input_limit, random_ids
from settings.schema import (DEFAULT_TEXT, DEFAULTS, FFN_KINDS, FFN_OPTIONS, HIDDEN_OPTIONS, INIT_OPTIONS, LEGACY_LABELS,
                             MAX_LAYERS, MAX_TOKENS, NORM_POSITION_OPTIONS, NORM_TYPE_OPTIONS, POSITION_OPTIONS,
                             VOCAB_OPTIONS, Clamped, all_presets, config_to_widgets, divisors, fixed_label, init_label,
                             heads_options as heads_options_for,
                             nearest, preset_values, variant_fields, widgets_to_config)
from engine import PRESET_SOURCES, VARIANT_PRESET_SOURCES, ModelConfig
from engine.tokenizer import TextTokenizer
from ui.budget import refuse_over_budget
from ui.caches import build_model, random_model_key, tokenizer_for
from ui.checkpoint_picker import TRAINED_KEY, checkpoint_model, readonly_config, source_widgets
from ui.compare import compare_widgets, read_link
from ui.context import Explorer, trace
from ui.escape import md_code
from ui.examples import declared_languages, example_buttons
from ui.i18n import LANGS, browser_lang, labeler, t
from ui.input_notes import random_input_tokens, tokenizer_note, unknown_note
from ui.memory import memory_readout
from ui.page_scope import remember_page
from ui.presenter import presenter_mode, presenter_toggle
from ui.variant_controls import variant_widgets
from ui.share import export_json, parse_config_upload, parse_upload, share_widgets
from ui.state import (MAX_TEXT, apply_pending, clamp_note, control, cut_utf16, drop_unknown_params, fixed_fields, repair,
                      rerun_if_pending, reset, show_messages, translated_choice, utf16_len)

__all__ = [  # what pages, other ui modules and tests import from here
    "DEFAULTS", "DEFAULT_TEXT", "FFN_KINDS", "MAX_LAYERS", "MAX_TOKENS", "TRAINED_KEY", "Explorer", "build_model",
    "config_to_widgets", "explorer", "export_json", "fixed_label", "parse_config_upload", "parse_upload",
    "presenter_mode", "tokenizer_for", "trace",
]


def _clamp(key: str, options: list, notes: list[str]) -> None:
    """Keep a dependent widget's value valid when its options change: move it to the nearest option."""
    value = st.session_state.get(key, DEFAULTS.get(key))
    if value not in options:
        new = nearest(options, value) if isinstance(value, (int, float)) else options[0]
        st.session_state[key] = new
        notes.append(clamp_note(Clamped(key, value, new)))


def _apply_preset() -> None:
    """on_change of the preset picker: copy the preset's values (and its tutorial's input) into the widgets."""
    name = st.session_state.get("cfg.preset")
    if name not in all_presets():
        return
    values = preset_values(name)
    st.session_state.update(values)


def _reset() -> None:
    """on_click of "reset to defaults": every sidebar control and fixed field back to the app's defaults."""
    reset({**DEFAULTS, "cfg.preset": ""})


def language_picker() -> None:
    """Language switch (zh/en), defaulting to the browser's locale and kept in the URL as ``ui.lang``."""
    control(st.sidebar.segmented_control, "Language / 语言", "ui.lang", browser_lang(), kind="choice",
            options=list(LANGS), format_func=fixed_label)  # linked as zh / en (its labels read as aliases)


def config_widgets(notes: list[str]) -> ModelConfig:
    """The model sliders; returns the validated config or shows the validation error and stops.

    In presenter mode they sit in a collapsed expander (values kept), leaving the room to the charts. Every
    control is drawn by :func:`ui.state.control` with the app's default as its own (see ui/state.py).
    """
    sb = st.sidebar.expander(t("cfg.section"), expanded=not presenter_mode())
    presets = [""] + list(all_presets())  # the tutorials' presets first, then the 2024-2026 variants
    translated_choice(sb.selectbox, t("cfg.preset.label"), "cfg.preset", "", presets,
                      labeler("preset.", none_key="cfg.preset.none"), on_pick=_apply_preset, help=t("cfg.preset.help"))
    if st.session_state.get("cfg.preset") in {**PRESET_SOURCES, **VARIANT_PRESET_SOURCES}:
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
    heads_options = heads_options_for(hidden, rope)
    _clamp("cfg.num_attention_heads", heads_options, notes)
    heads = choice(sb.select_slider, "cfg.num_attention_heads", heads_options,
                   nearest(heads_options, DEFAULTS["cfg.num_attention_heads"]), help=t("cfg.num_attention_heads.help"))
    kv_options = divisors(heads)
    _clamp("cfg.num_key_value_heads", kv_options, notes)
    kv = choice(sb.select_slider, "cfg.num_key_value_heads", kv_options,
                nearest(kv_options, DEFAULTS["cfg.num_key_value_heads"]), help=t("cfg.num_key_value_heads.help"))
    ffn_size = choice(sb.select_slider, "cfg.intermediate_size", FFN_OPTIONS)
    c1, c2 = sb.columns(2)
    norm = choice(c1.radio, "cfg.norm_type", NORM_TYPE_OPTIONS, format_func=fixed_label)
    placement = choice(c2.radio, "cfg.norm_position", NORM_POSITION_OPTIONS, format_func=labeler("cfg.norm_position."))
    ffn = choice(sb.selectbox, "cfg.ffn", list(FFN_KINDS), format_func=fixed_label)
    tied = control(sb.toggle, t("cfg.tie_word_embeddings.label"), "cfg.tie_word_embeddings",
                   DEFAULTS["cfg.tie_word_embeddings"], kind="bool", help=t("cfg.tie_word_embeddings.help"))
    init = choice(sb.select_slider, "cfg.initializer_range", INIT_OPTIONS, format_func=init_label,
                  help=t("cfg.initializer_range.help"))
    # a float input shown without decimals: Streamlit's int input raises on "inf" in a link
    control(sb.number_input, t("cfg.seed.label"), "cfg.seed", float(DEFAULTS["cfg.seed"]), kind="int", lo=0,
            hi=2**31 - 1, min_value=0.0, max_value=float(2**31 - 1), step=1.0, format="%.0f")

    rerun_if_pending()  # a bad link value: repair it before anything is built from it
    values = {"cfg.vocab_size": vocab, "cfg.hidden_size": hidden, "cfg.num_hidden_layers": layers,
              "cfg.num_attention_heads": heads, "cfg.num_key_value_heads": kv, "cfg.intermediate_size": ffn_size,
              "cfg.ffn": ffn, "cfg.norm_type": norm, "cfg.norm_position": placement,
              "cfg.position_embedding": position, "cfg.tie_word_embeddings": tied, "cfg.initializer_range": init}
    variant_widgets(fixed_fields(), layers, fixed_fields()["max_position_embeddings"])
    try:
        config = widgets_to_config(values, fixed_fields())
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
    variant = variant_fields(config)
    if variant:
        container.caption(t("cfg.fixed.variant", fields=" · ".join(variant)))


def input_widgets(config: ModelConfig, notes: list[str], tokenizer: TextTokenizer | None = None,
                  languages: tuple[str, ...] = ()) -> tuple[torch.Tensor, list[str], TextTokenizer | None]:
    """Text or random-id input; returns ``(input_ids [1, T], display tokens, tokenizer or None)``.

    ``tokenizer`` is the model's own (a checkpoint's); by default the bundled-corpus BPE at the model's
    vocabulary size is used. Example prompts in the model's ``languages`` are offered under the text box. Text
    longer than MAX_TEXT UTF-16 units (typed, pasted or from a link) is cut, with
    a message.
    """
    sb = st.sidebar
    mode = translated_choice(sb.radio, t("input.mode.label"), "input.mode", DEFAULTS["input.mode"], ["text", "random"],
                             labeler("input.mode."), url=True, aliases=LEGACY_LABELS, horizontal=True)
    limit = input_limit(config)
    if mode == "random":
        n = control(sb.slider, t("input.random_len.label"), "input.random_len", DEFAULTS["input.random_len"],
                    kind="int", lo=1, hi=64)
        ids = random_ids(config, n, int(st.session_state["cfg.seed"]))
        tokens, note = random_input_tokens(st.session_state.get("cfg.preset"), ids[0].tolist())
        if note:
            sb.caption(note)
        return ids, tokens, None
    # no max_chars: the browser would silently refuse a longer paste; it is cut here instead, with a message
    text = control(sb.text_area, t("input.text.label"), "input.text", DEFAULTS["input.text"], kind="text",
                   help=t("input.text.help"))
    example_buttons(sb.popover(t("examples.label"), icon="📝"), languages, "sidebar")
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
        pieces = [tok.token_strings([i])[0] for i in outside[:8]]  # each on its own: they are no sequence
        st.error(t("input.outside_vocab", n=len(outside), v=f"{config.vocab_size:,}",
                   tokens=", ".join(f"{md_code(p)} (id {i:,})" for p, i in zip(pieces, outside))))
        st.stop()
    if len(ids) > limit:
        notes.append(t("input.truncated", n=len(ids), limit=limit))
        ids = ids[:limit]
    unk = tok.unk_token_id
    if unk is not None and all(i == unk for i in ids):
        notes.append(t("input.all_unknown"))
    unknown = unknown_note(tok, text, len(ids), sliders=tokenizer is None)
    if unknown:  # shown above every page's charts, with the other input notes
        notes.append(unknown)
    pieces = tok.token_strings(ids)
    sb.caption(t("input.pieces", n=len(ids)) + " " + " · ".join(md_code(p) for p in pieces[:64]))
    sb.caption(tokenizer_note(tok))
    return torch.tensor([ids]), pieces, tok


def explorer() -> Explorer:
    """Render the shared sidebar and return the page context (see module docstring). Call it at the page's top
    level: its namespace is noted, to be released after the run (:mod:`ui.page_scope`)."""
    remember_page(sys._getframe(1).f_globals)
    apply_pending()
    drop_unknown_params()
    language_picker()
    presenter_toggle()
    read_link()  # a link's comparison: its messages join the box below
    show_messages()
    compare_widgets()
    notes: list[str] = []
    source = source_widgets()
    tok: TextTokenizer | None = None
    languages, title = (), ""
    if source == "checkpoint":
        model, tok, key = checkpoint_model(notes)
        config = model.config
        readonly_config(config)
        languages, title = declared_languages(key.split(":", 1)[1])
    elif source == "trained":
        trained = st.session_state[TRAINED_KEY]
        model, key, config = trained["model"], f"trained:{trained['id']}", trained["model"].config
        readonly_config(config)
    else:
        config = config_widgets(notes)
        model = key = None  # built below, once the whole sidebar (and its share link) is drawn
    input_ids, tokens, tok = input_widgets(config, notes, tok, languages)
    rerun_if_pending()
    for n in notes:
        st.caption("⚠️ " + n)
    share_widgets(config, st.session_state[TRAINED_KEY] if source == "trained" else None)
    if model is None:
        # The slider maxima are refused with their cost, never built; the sidebar above stays complete, so the
        # input settings stay in the URL and a refused view can still be shared.
        refuse_over_budget("build", config)
        with st.spinner(t("common.building_model")):
            config_json = config.to_json()
            seed = int(st.session_state["cfg.seed"])
            model = build_model(config_json, seed)
        key = random_model_key(config_json, seed)
    memory_readout()  # the lecturer's view of the server's memory, folded at the sidebar's foot
    return Explorer(config=config, model=model, model_key=key, input_ids=input_ids, tokens=tokens,
                    tokenizer=tok, source=source, notes=notes, languages=languages,
                    model_title=title)
