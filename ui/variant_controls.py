"""The sidebar's "Block variants (2024–2026)" group: QK-norm, a sliding window and its per-layer pattern, attention
sinks, and a mixture-of-experts FFN, as controls.

These are config fields without a slider (``settings.schema.FIXED_DEFAULTS``): a preset or an upload sets them, and they
live in the session's fixed fields (``ui.state.FIXED_KEY``), the one place the config is built from. The controls
here edit that store: each widget shows the field's current value (set before it is drawn, so a preset picked a
moment ago shows at once) and its ``on_change`` writes the new value back. So a variant preset can be taken apart
one switch at a time, and a plain model can gain a window or experts, without a second source of truth. Like every
fixed field they are not part of a link (the share panel says which fields a link leaves out).

Options are the valid ones only: a window up to the position limit, top-k up to the number of experts; the layer
pattern is offered only with a window (sliding layers without a window are not a model).
"""

from __future__ import annotations

import streamlit as st

from engine.config import QK_NORMS, repeat_layer_types
from ui.i18n import labeler, t
from ui.state import FIXED_KEY

WINDOWS = [0, 2, 4, 8, 16, 32, 64, 128, 256]  # 0 = no sliding window
EXPERTS = [0, 2, 4, 8]  # 0 = one dense FFN
# Per-layer patterns (Hugging Face ``layer_types`` repeated over the layers): every layer slides (Mistral),
# sliding and full in turn (Gemma 2, gpt-oss), five sliding to one full (Gemma 3).
PATTERNS = {
    "all": None,
    "alternate": ("sliding_attention", "full_attention"),
    "five_to_one": ("sliding_attention",) * 5 + ("full_attention",),
}
PREFIX = "cfg.variant."


def _pattern_id(layer_types: tuple | None, layers: int) -> str | None:
    """The pattern control's option for a config's ``layer_types`` (None: a pattern of its own, kept as it is)."""
    for name, pattern in PATTERNS.items():
        if layer_types == (None if pattern is None else repeat_layer_types(pattern, layers)):
            return name
    return None


def _store(field: str, value) -> None:
    fixed = dict(st.session_state.get(FIXED_KEY, {}))
    fixed[field] = value
    st.session_state[FIXED_KEY] = fixed


def _on_window() -> None:
    w = st.session_state[PREFIX + "sliding_window"]
    _store("sliding_window", w or None)
    if not w:  # no window: no sliding layers either
        _store("layer_types", None)


def _on_pattern(layers: int) -> None:
    pattern = PATTERNS[st.session_state[PREFIX + "layer_types"]]
    _store("layer_types", None if pattern is None else repeat_layer_types(pattern, layers))


def _on_experts() -> None:
    e = st.session_state[PREFIX + "num_local_experts"]
    _store("num_local_experts", e)
    k = st.session_state.get(PREFIX + "num_experts_per_tok", 2)
    if e and k > e:  # top-k cannot choose more experts than there are
        _store("num_experts_per_tok", e)


def _widget(key: str, value) -> str:
    """Put the store's value into the widget's state before it is drawn; returns the widget key."""
    st.session_state[PREFIX + key] = value
    return PREFIX + key


def variant_widgets(fixed: dict, layers: int, max_positions: int) -> None:
    """Draw the group (collapsed: the default view stays simple) from the fixed fields ``fixed``."""
    box = st.sidebar.expander(t("variants.section"), expanded=False)
    box.caption(t("variants.caption"))
    box.radio(t("variants.qk_norm"), list(QK_NORMS), key=_widget("qk_norm", fixed["qk_norm"]), horizontal=True,
              format_func=labeler("variants.qk_norm."), on_change=lambda: _store(
                  "qk_norm", st.session_state[PREFIX + "qk_norm"]), help=t("variants.qk_norm.help"))
    windows = [w for w in WINDOWS if w <= max_positions]
    window = fixed["sliding_window"] or 0
    if window not in windows:  # a preset's or an upload's own window: offered as it is
        windows = sorted({*windows, window})
    box.select_slider(t("variants.sliding_window"), windows, key=_widget("sliding_window", window),
                      format_func=lambda w: t("variants.off") if w == 0 else str(w), on_change=_on_window,
                      help=t("variants.sliding_window.help"))
    if window:
        stored = fixed["layer_types"] and repeat_layer_types(tuple(fixed["layer_types"]), layers)  # as built
        pattern = _pattern_id(stored or None, layers)
        if pattern is None:
            box.caption(t("variants.own_pattern"))
        else:
            box.radio(t("variants.layer_types"), list(PATTERNS), key=_widget("layer_types", pattern),
                      format_func=labeler("variants.layer_types."), on_change=_on_pattern, args=(layers,))
    box.toggle(t("variants.attention_sinks"), key=_widget("attention_sinks", bool(fixed["attention_sinks"])),
               on_change=lambda: _store("attention_sinks", st.session_state[PREFIX + "attention_sinks"]),
               help=t("variants.attention_sinks.help"))
    experts = fixed["num_local_experts"]
    options = sorted({*EXPERTS, experts})
    box.select_slider(t("variants.num_local_experts"), options, key=_widget("num_local_experts", experts),
                      format_func=lambda e: t("variants.dense") if e == 0 else str(e), on_change=_on_experts,
                      help=t("variants.num_local_experts.help"))
    if experts:
        top = list(range(1, experts + 1))
        box.select_slider(t("variants.num_experts_per_tok"), top,
                          key=_widget("num_experts_per_tok", min(fixed["num_experts_per_tok"], experts)),
                          on_change=lambda: _store("num_experts_per_tok", st.session_state[PREFIX + "num_experts_per_tok"]))
