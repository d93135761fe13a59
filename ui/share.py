"""Sharing a view: the copy-link button, the config download, and the validated, size-limited config upload.

A model trained in this session cannot travel in a link (a link carries settings; its weights live only in this
session). For one, the share panel says so and offers, instead of the copy button, one click that puts the
trained model's configuration into the sliders at random init (through :func:`config_to_widgets`, as an upload
does, with the session's seed): the address bar and "Copy link" then carry that view, made by the same widgets
as every other link, and the trained model stays in the session (the Model radio switches back to it).
"""

from __future__ import annotations

import json
import math

import streamlit as st

from engine import ModelConfig
from ui.caches import random_model_key
from ui.i18n import t
from ui.options import DEFAULT_TEXT, FIXED_DEFAULTS, config_to_widgets, widgets_to_config
from ui.state import FIXED_KEY, MAX_TEXT, cut_utf16, show, utf16_len

LINKED_MSG_KEY = "share.linked_msg"  # what "link the same config at random init" did, shown once in the panel
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


def _link_random_init(config: ModelConfig, trained_from: str | None) -> None:
    """on_click of "link the same config at random init": the trained model's config into the sliders, the
    source back to random init (the trained model itself stays in the session)."""
    values, notes = config_to_widgets(config)
    st.session_state.update(values)
    st.session_state["cfg.preset"] = ""
    st.session_state["model.source"] = "random"
    seed = int(st.session_state.get("cfg.seed", 0))
    same = trained_from == random_model_key(config.to_json(), seed)
    plain = {k: v for k, v in values.items() if k != FIXED_KEY}
    linked = widgets_to_config(plain, FIXED_DEFAULTS)  # what a link rebuilds: a preset's fields without a slider
    lost = [f for f in FIXED_DEFAULTS if getattr(linked, f) != getattr(config, f)]  # are not in links
    if lost:
        notes.append(t("share.fixed_not_linked", fields=", ".join(lost)))
    text = t("share.random_linked", seed=seed, same=t("share.random_same_start") if same else "",
             trained=t("model.source.trained"))
    st.session_state[LINKED_MSG_KEY] = " ".join([text] + notes)


def share_widgets(config: ModelConfig, trained: dict | None = None) -> None:
    """Copy-link button, config download and upload (validated, size-limited).

    ``trained``: the session's trained model (``ui.checkpoint_picker.TRAINED_KEY``'s value) while it is the one
    shown; its link cannot carry it, so the panel says so and offers the same config at random init instead.
    """
    linked = st.session_state.pop(LINKED_MSG_KEY, None)
    # open after that click: the sidebar has redrawn its sliders above, so the panel is a new, folded element
    with st.sidebar.expander(t("share.title"), expanded=linked is not None):
        if linked:
            st.success(linked)
        if trained is None:
            copy_link_button()
        else:
            st.info(t("share.trained_no_link"))
            st.button(t("share.link_random"), key="share.link_random", on_click=_link_random_init,
                      args=(config, trained.get("source")))
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
