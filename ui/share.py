"""Sharing a view: the copy-link button, the config download, and the validated, size-limited config upload.

A model trained in this session cannot travel in a link (a link carries settings; its weights live only in this
session). For one, the share panel says so and offers, instead of the copy button, one click that puts the
trained model's configuration into the sliders at random init (through :func:`config_to_widgets`, as an upload
does, with the session's seed): the address bar and "Copy link" then carry that view, made by the same widgets
as every other link, and the trained model stays in the session (the Model radio switches back to it).

The panel also shows the view's link as a QR code, drawn here with ``segno`` as an SVG ``data:`` URI (nothing is
fetched from another host), and a button that opens it full screen for the projector with the link in large
type. The link is the browser's address (``st.context.url``, the page's path included) with this run's query
parameters; a page may still write parameters after the sidebar is drawn (Generate's step count), so the app
redraws the panel's code once the page has run (:func:`refresh_qr`, called by ``app.py``).
"""

from __future__ import annotations

import html
import json
import math
import re
from urllib.parse import quote, urlencode, urlsplit

import segno
import streamlit as st

from engine import ModelConfig
from ui.caches import random_model_key
from ui.i18n import t
from settings.schema import DEFAULT_TEXT, FIXED_DEFAULTS, config_to_widgets, widgets_to_config
from ui.state import FIXED_KEY, MAX_TEXT, clamp_note, cut_utf16, show, utf16_len

QR_SLOT_KEY = "share._qr_slot"  # this run's placeholder of the panel's QR code (redrawn by refresh_qr)
QR_FULL_KEY = "share.qr_full"  # the button that opens the full-screen QR code
QR_MAX_BYTES = 2953  # the most bytes a QR code holds (version 40, lowest error correction, byte mode)
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")
LINKED_MSG_KEY = "share.linked_msg"  # what "link the same config at random init" did, shown once in the panel
MAX_CONFIG_UPLOAD = 64 * 1024  # bytes: a config.json is ~1 KB
MAX_JSON_DEPTH = 8  # our file nests 2 levels; a deeper one is refused before parsing
MAX_POSITIONS = 32_768  # position table rows: max_position_embeddings x H floats are allocated (learned / sinusoidal)
# JSON type of every field of our config file, and how a message names it (ModelConfig then checks the values)
_INT, _NUM, _BOOL, _STR = ((int,), "a whole number"), ((int, float), "a number"), ((bool,), "true or false"), ((str,), "a string")
_OPT_NUM = ((int, float, type(None)), "a number or null")
FIELD_TYPES = {
    "vocab_size": _INT, "hidden_size": _INT, "num_hidden_layers": _INT, "num_attention_heads": _INT,
    "num_key_value_heads": ((int, type(None)), "a whole number or null"), "intermediate_size": _INT,
    "hidden_act": _STR, "mlp_gated": _BOOL, "norm_type": _STR, "norm_position": _STR, "position_embedding": _STR,
    "max_position_embeddings": _INT, "rope_theta": _NUM, "norm_eps": _NUM, "bias": _BOOL,
    "attention_bias": ((bool, type(None)), "true, false or null"), "tie_word_embeddings": _BOOL,
    "initializer_range": _NUM,
    # the block variants (ModelConfig checks their values: options, ranges, layer_types' length and entries)
    "head_dim": ((int, type(None)), "a whole number or null"), "qk_norm": _STR,
    "sliding_window": ((int, type(None)), "a whole number or null"),
    "layer_types": ((list, type(None)), "a list of layer kinds or null"), "attention_sinks": _BOOL,
    "query_pre_attn_scalar": _OPT_NUM, "attn_logit_softcapping": _OPT_NUM, "final_logit_softcapping": _OPT_NUM,
    "embedding_multiplier": _NUM, "rope_local_base_freq": _OPT_NUM, "num_local_experts": _INT,
    "num_experts_per_tok": _INT, "norm_topk_prob": _BOOL,
    "moe_intermediate_size": ((int, type(None)), "a whole number or null"),
    "shared_expert_intermediate_size": _INT, "router_bias": _BOOL, "swiglu_limit": _OPT_NUM, "swiglu_alpha": _NUM,
    "rope_type": _STR, "rope_factor": _NUM,
    "rope_original_max_position_embeddings": ((int, type(None)), "a whole number or null"),
    "rope_beta_fast": _NUM, "rope_beta_slow": _NUM, "rope_truncate": _BOOL,
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
    values, clamped = config_to_widgets(config)
    notes = [clamp_note(c) for c in clamped]
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
    values, clamped = config_to_widgets(config)
    notes = [clamp_note(c) for c in clamped]
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
            qr_panel()
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


# ---- the link as a QR code ------------------------------------------------------------------------------
def view_link() -> str | None:
    """The link to this view: the browser's address of the page (``st.context.url``, no query) with the run's
    query parameters, percent-encoded; None where no browser sent its address (AppTest)."""
    try:
        base = st.context.url
    except Exception:  # outside a script run
        return None
    if not base:
        return None
    pairs = [(k, v) for k in st.query_params for v in st.query_params.get_all(k)]
    query = urlencode(pairs, quote_via=quote)
    return f"{base}?{query}" if query else base


def qr_code(link: str) -> segno.QRCode | None:
    """The QR code of ``link`` (a full-size code, never a Micro QR, which many phone cameras do not read; the
    highest error correction that fits the smallest version), or None when the link is too long for one."""
    try:
        return segno.make(link, micro=False)
    except segno.DataOverflowError:
        return None


def qr_data_uri(code: segno.QRCode) -> str:
    """The code as an SVG ``data:`` URI: black on white with the standard 4-module quiet zone, and a viewBox
    instead of a size, so the image scales to whatever width the page gives it."""
    return code.svg_data_uri(omitsize=True, border=4, dark="#000", light="#fff")


def is_local(link: str) -> bool:
    """A link that only the server's own machine can open (students' phones cannot)."""
    host = urlsplit(link).hostname or ""
    return host in LOCAL_HOSTS or host.startswith("127.")


def qr_html(link: str, code: segno.QRCode, size: str, font: str) -> str:
    """The code and the link it encodes, in one block: ``size`` the image's CSS width, ``font`` the link's size."""
    return (f'<div class="share-qr" style="text-align:center">'
            f'<img class="share-qr-img" alt="{html.escape(t("share.qr_alt"))}" src="{qr_data_uri(code)}" '
            f'style="width:{size};height:auto;max-width:100%;image-rendering:pixelated">'
            f'<div class="share-qr-link" style="font:{font} ui-monospace,monospace;overflow-wrap:anywhere;'
            f'margin-top:0.3em">{_breakable(link)}</div></div>')


def _breakable(link: str) -> str:
    """The link as HTML text that wraps after its separators (``/ ? &``) rather than inside the host name."""
    return "<wbr>".join(html.escape(part) for part in re.split(r"(?<=[/?&])", link))


def _qr_notes(link: str, code: segno.QRCode | None) -> list[str]:
    notes = []
    if code is None:
        notes.append(t("share.qr_too_long", n=f"{len(link.encode('utf-8')):,}", max=f"{QR_MAX_BYTES:,}"))
    if is_local(link):
        notes.append(t("share.qr_local", host=urlsplit(link).hostname or ""))
    return notes


def _draw_qr(slot, link: str | None) -> None:
    """The panel's small code and the link it encodes (or why there is no code)."""
    with slot.container():
        if link is None:
            return
        code = qr_code(link)
        if code is not None:
            st.html(qr_html(link, code, "11rem", "0.7rem"))
        for note in _qr_notes(link, code):
            st.caption("⚠️ " + note)


def _full_screen(link: str) -> None:
    """The dialog for the projector: the code as large as the window allows, the link in large type below."""
    code = qr_code(link)

    def body() -> None:
        if code is None:
            st.warning(t("share.qr_too_long", n=f"{len(link.encode('utf-8')):,}", max=f"{QR_MAX_BYTES:,}"))
            return
        largest = "2rem" if len(link) <= 60 else "1.4rem" if len(link) <= 160 else "1rem"
        font = f"clamp(1rem, 5.2vw, {largest})"  # on a phone: a host and port still fit on one line
        local = is_local(link)
        if local:  # above the code: on a 1280 x 720 projector a warning below it is out of sight
            st.warning(t("share.qr_local", host=urlsplit(link).hostname or ""))
        st.html(qr_html(link, code, "min(42vh, 80vw)" if local else "min(55vh, 80vw)", font))

    st.dialog(t("share.qr_title"), width="large")(body)()


def qr_panel() -> None:
    """In the share panel: the code (in a placeholder that :func:`refresh_qr` redraws at the end of the run)
    and the button that opens it full screen."""
    slot = st.empty()
    link = view_link()
    st.session_state[QR_SLOT_KEY] = (slot, link)
    _draw_qr(slot, link)
    if link is not None and st.button(t("share.qr_full"), key=QR_FULL_KEY, help=t("share.qr_full_help")):
        _full_screen(link)


def refresh_qr() -> None:
    """End of a run (``app.py``, after the page): redraw the panel's code when the page changed the link
    after the sidebar was drawn (Generate's step count, a page's choice in the link)."""
    slot, drawn = st.session_state.pop(QR_SLOT_KEY, (None, None))
    if slot is None:
        return
    link = view_link()
    if link != drawn:
        _draw_qr(slot, link)
