"""Compare side by side: two whole views, A and B, in the session; the sidebar shows and edits one of them.

The sidebar's controls always hold the side being edited (its letter in :data:`SIDE_KEY`); the other side's
values wait in :data:`OTHER_KEY` (``settings.sides.SIDE_KEYS`` and the fields without a slider). "Compare" copies
the view to the other side and edits B; picking the other letter, "Swap" and the presets exchange the two through
:func:`ui.state.set_controls`, the one way a callback sets the controls. "Stop comparing" forgets the side not
shown. A page gets both sides from :func:`compared`: the sidebar's :class:`ui.context.Explorer` and the other
side's, built by :func:`settings.build.build_parts` through the same cached builders, so each side is computed and
cached exactly as a single view of its settings.

The link carries the sidebar's side as a single view does and the other side under its letter
(``settings.sides.side_params``), with ``compare=<the sidebar's letter>``; a link's other side is checked once per
session with the sidebar's messages (:func:`read_link`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import streamlit as st

from engine import ModelConfig
from server import budget
from analysis.compare import unaligned
from settings.build import build_parts
from settings.schema import FIXED_KEY, LEGACY_LABELS, fixed_label, link_id
from settings.sides import (COMPARE_PARAM, LINK_SPECS, NEEDS, PRESETS, SIDE_DEFAULTS, SIDE_KEYS, SIDES, all_side_params,
                            clamp_heads, other, preset_sides, side_param, side_params)
from ui.budget import refusal
from ui.caches import build_model, checkpoint_menu, load_checkpoint, model_key, named_models, tokenizer_for
from ui.checkpoint_picker import TRAINED_KEY
from ui.context import Explorer
from ui.escape import md, md_code
from ui.i18n import t
from ui.state import (CHECKED_KEY, MAX_TEXT, add_message, clamp_note, current, cut_utf16, link_problem, read_choice,
                      register_params, set_controls, show, translated_choice, utf16_len)

OTHER_KEY = "compare.other"  # the side the sidebar does not show: its values; absent while not comparing
SIDE_KEY = "compare.side"  # the letter of the side the sidebar shows and edits
register_params(*all_side_params())


@dataclass
class Pair:
    """Both sides of a comparison (each a whole page context) and the letter of the one the sidebar edits."""
    a: Explorer
    b: Explorer
    edited: str

    def sides(self) -> list[tuple[str, Explorer]]:
        return [("a", self.a), ("b", self.b)]


def comparing() -> bool:
    return OTHER_KEY in st.session_state


def one_side_note() -> None:
    """On a page that draws one view (Norm placement, Follow a token, the Training lab): while comparing, a line
    saying it shows the sidebar's side only."""
    if comparing():
        st.caption(t("compare.one_side_page", side=side_name(st.session_state[SIDE_KEY])))


def side_name(letter: str) -> str:
    return t("compare.side", side=letter.upper())


# ---- the sides in the session -----------------------------------------------------------------------------
def _live() -> dict:
    """The view the sidebar shows: its controls' values and the fields without a slider."""
    values = {k: current(k, SIDE_DEFAULTS[k]) for k in SIDE_KEYS}
    values[FIXED_KEY] = dict(st.session_state.get(FIXED_KEY) or {})
    return values


def _show(values: dict) -> None:
    """Callback: the sidebar shows ``values`` from the next run on."""
    if values.get(FIXED_KEY):
        st.session_state[FIXED_KEY] = dict(values[FIXED_KEY])
    else:
        st.session_state.pop(FIXED_KEY, None)
    shown = {k: values[k] for k in SIDE_KEYS}
    shown["cfg.seed"] = float(shown["cfg.seed"])  # the seed's number input holds a float
    set_controls(shown)


def _exchange() -> None:
    """The sidebar and the side waiting trade places (after a pick of the other letter: each side keeps its
    letter; after "Swap": each keeps its place, so A and B trade letters)."""
    shown = _live()
    _show(st.session_state[OTHER_KEY])
    st.session_state[OTHER_KEY] = shown


def start() -> None:
    """"Compare": B is a copy of the view, and the sidebar edits B."""
    st.session_state[OTHER_KEY] = _live()
    st.session_state[SIDE_KEY] = "b"


def stop() -> None:
    """"Stop comparing": the sidebar's side stays, the other is forgotten."""
    st.session_state.pop(OTHER_KEY, None)


def compare_with(values: dict, fixed: dict) -> None:
    """A lesson step that compares (a callback, after the step's side A is set in the sidebar): B's sidebar
    ``values`` and ``fixed`` fields wait beside it; the sidebar edits A."""
    other_side = {k: values.get(k, SIDE_DEFAULTS[k]) for k in SIDE_KEYS}
    other_side["cfg.seed"] = float(other_side["cfg.seed"])
    other_side[FIXED_KEY] = dict(fixed)
    st.session_state[OTHER_KEY] = other_side
    st.session_state[SIDE_KEY] = "a"


def apply_preset(name: str) -> None:
    """A comparison preset made from the view on screen; the sidebar edits B."""
    a, b = preset_sides(name, _live())
    _show(b)
    st.session_state[OTHER_KEY] = a
    st.session_state[SIDE_KEY] = "b"


def compare_widgets() -> None:
    """The sidebar's Compare box: start (and the presets), or which side it edits, Swap and Stop comparing."""
    box = st.sidebar.container(border=True, key="compare.box")
    if comparing():
        translated_choice(box.segmented_control, t("compare.edits"), SIDE_KEY, "b", list(SIDES),
                          format_func=side_name, on_pick=_exchange)
        box.button(t("compare.swap"), key="compare.swap", on_click=_exchange, help=t("compare.swap_help"),
                   width="stretch")
        box.button(t("compare.stop"), key="compare.stop", on_click=stop, width="stretch")
        box.caption(t("compare.pages_note", side=side_name(st.session_state[SIDE_KEY])))
    else:
        box.button(t("compare.start"), key="compare.start", on_click=start, help=t("compare.start_help"),
                   icon="🆚", width="stretch")
    presets = box.popover(t("compare.presets"), width="stretch")
    for name in PRESETS:
        missing = _missing(NEEDS.get(name))
        presets.button(t(f"compare.preset.{name}"), key=f"compare.preset.{name}", on_click=apply_preset,
                       args=(name,), width="stretch", disabled=missing is not None, help=missing)
    sync_link()


def _missing(need: str | None) -> str | None:
    """Why a preset cannot be made here (no model trained in this session, a packaged model not installed), or
    None."""
    if need == "trained":
        return None if st.session_state.get(TRAINED_KEY) else t("compare.preset_needs_run")
    if need is not None and need not in named_models():
        return t("compare.preset_needs_model", name=need)
    return None


# ---- the link --------------------------------------------------------------------------------------------
def _checkpoints() -> list[str]:
    return named_models() + [c.name for c in checkpoint_menu()[0]]


def _read_value(key: str, raw: list[str]) -> tuple[object, str | None]:
    """A side's link value of ``key``: ``(value, None)``, or ``(None, why not)`` in the sidebar's words."""
    spec = LINK_SPECS[key]
    if spec["kind"] == "choice":
        options = spec["options"] if spec["options"] is not None else _checkpoints()
        return read_choice(raw, options, fixed_label, LEGACY_LABELS)
    if len(raw) > 1:
        return None, t("state.link.repeated")
    problem = link_problem(raw[0], spec["kind"], lo=spec.get("lo"), hi=spec.get("hi"))
    if problem:
        return None, problem
    if spec["kind"] == "int":
        return (float if key == "cfg.seed" else int)(float(raw[0])), None
    return (raw[0].lower() == "true" if spec["kind"] == "bool" else raw[0]), None


def read_link() -> None:
    """Once per session: a link's comparison (``compare`` and the other side's ``a.*`` / ``b.*`` values) into the
    session. A bad value is named in the sidebar's message box as a single view's is, dropped from the address
    bar, and its default used; a head count is moved to the nearest option at that width, with a note."""
    checked = st.session_state.setdefault(CHECKED_KEY, set())
    if COMPARE_PARAM in checked:
        return
    checked.add(COMPARE_PARAM)
    params = st.query_params
    lettered = [k for k in params if k[:2] in ("a.", "b.")]
    if COMPARE_PARAM not in params and not lettered:
        return
    side, dropped = "a", []
    raw = params.get_all(COMPARE_PARAM)
    if raw and (len(raw) > 1 or raw[0] not in SIDES):
        add_message(t("state.link.bad", name=t("compare.edits"), param=COMPARE_PARAM, value=md(show(raw[-1])),
                      why=t("state.link.choice", options="a, b"), default="a"))
        dropped.append(COMPARE_PARAM)
    elif raw:
        side = raw[0]
    letter, values = other(side), dict(SIDE_DEFAULTS)
    for key in LINK_SPECS:
        param = side_param(letter, key)
        got = params.get_all(param)
        if not got:
            continue
        if key == "model.source" and got == ["trained"]:  # a model trained in another session never travels
            add_message(t("compare.side_note", side=letter.upper(), note=t("model.trained_link")))
            dropped.append(param)
            continue
        value, problem = _read_value(key, got)
        if problem:
            add_message(t("state.link.bad", name=f"{side_name(letter)} · {t(key + '.label')}", param=param,
                          value=md(show(got[-1])), why=problem, default=md(show(link_id(SIDE_DEFAULTS[key]) or "—"))))
            dropped.append(param)
        else:
            values[key] = value
    strays = [k for k in lettered if k.startswith(side + ".") or k.split(".", 1)[1] not in LINK_SPECS]
    if strays:  # the sidebar's own side has no letter
        add_message(t("state.link.unknown", params=", ".join(md_code(show(k)) for k in strays[:12])))
        dropped += strays
    if values["model.source"] == "checkpoint" and not values["model.checkpoint"]:  # as the picker: its first entry
        values["model.checkpoint"] = next(iter(_checkpoints()), "")
    for moved in clamp_heads(values):
        add_message(t("compare.side_note", side=letter.upper(), note=clamp_note(moved)))
    if utf16_len(values["input.text"]) > MAX_TEXT:
        add_message(t("compare.side_note", side=letter.upper(), note=t(
            "state.text_cut", n=f"{utf16_len(values['input.text']):,}", limit=f"{MAX_TEXT:,}")))
        values["input.text"] = cut_utf16(values["input.text"])
    for param in dropped:
        del st.query_params[param]
    values[FIXED_KEY] = {}
    st.session_state[OTHER_KEY] = values
    st.session_state[SIDE_KEY] = side


def sync_link() -> None:
    """Every run: the other side's values (and ``compare``) in the address bar while comparing, none after."""
    want: dict[str, str] = {}
    if comparing():
        side = st.session_state[SIDE_KEY]
        want = {COMPARE_PARAM: side, **side_params(st.session_state[OTHER_KEY], other(side))}
    for key in list(st.query_params):
        if (key == COMPARE_PARAM or key[:2] in ("a.", "b.")) and key not in want:
            del st.query_params[key]
    for key, value in want.items():
        if st.query_params.get_all(key) != [value]:
            st.query_params[key] = value


# ---- the other side's view --------------------------------------------------------------------------------
class _Refused(Exception):
    """The other side's model is over the budget (its message: :func:`ui.budget.refusal`)."""


def _other_view(values: dict, letter: str) -> Explorer | None:
    """The page context of the side the sidebar does not show, built as the sidebar builds a single view (the same
    cached model, tokenizer and checkpoint); None, with a message, where it cannot be built."""
    trained = st.session_state.get(TRAINED_KEY)

    def model_for(config_json: str, seed: int):
        verdict = budget.verdict("build", ModelConfig.from_dict(json.loads(config_json)))
        if not verdict.ok:  # the sidebar's refusal, said for this side: the sidebar's side is still drawn
            raise _Refused(refusal(verdict))
        return build_model(config_json, seed)

    try:
        config, model, ids, tokens, tok = build_parts(
            values, model_for, tokenizer_for, load_checkpoint, (lambda: trained["model"]) if trained else None)
    except _Refused as refused:
        st.error(t("compare.side_note", side=letter.upper(), note=str(refused)))
        return None
    except Exception as err:  # noqa: BLE001  an impossible combination, a checkpoint gone: said, never raised
        st.warning(t("compare.side_failed", side=letter.upper(), error=str(err)))
        return None
    if ids.shape[1] == 0:
        st.info(t("compare.side_empty", side=letter.upper()))
        return None
    try:
        key = model_key(model)
    except KeyError:  # the model trained in this session
        key = f"trained:{trained['id']}"
    return Explorer(config=config, model=model, model_key=key, input_ids=ids, tokens=tokens, tokenizer=tok,
                    source=values["model.source"])


def compared(ctx: Explorer) -> Pair | None:
    """Both sides while comparing (``ctx``, the sidebar's, in its place), else None."""
    if not comparing():
        return None
    edited = st.session_state[SIDE_KEY]
    shown = _other_view(st.session_state[OTHER_KEY], other(edited))
    if shown is None:
        return None
    return Pair(ctx, shown, edited) if edited == "a" else Pair(shown, ctx, edited)


def unaligned_notes(pair: Pair, skip: tuple[str, ...] = ()) -> list[str]:
    """What of the two sides has no counterpart (another vocabulary, depth, head count or length), one sentence
    each (``analysis.compare.unaligned``); the sizes in ``skip`` (a page that aligns them otherwise) left out."""
    sizes = [{"vocab": s.config.vocab_size, "layers": s.config.num_hidden_layers,
              "heads": s.config.num_attention_heads, "tokens": int(s.input_ids.shape[1])} for s in (pair.a, pair.b)]
    return [t(f"compare.unaligned.{name}", a=f"{a:,}", b=f"{b:,}", n=min(a, b), last=min(a, b) - 1)
            for name, (a, b) in unaligned(*sizes).items() if name not in skip]


# ---- loss, next token, overview, lens
def same_vocabulary(pair: Pair) -> bool:
    """Whether a token id means the same token on both sides: one vocabulary size and one tokenizer (both random
    ids, or tokenizers of the same name and vocabulary)."""
    a, b = pair.a, pair.b
    if a.config.vocab_size != b.config.vocab_size or (a.tokenizer is None) != (b.tokenizer is None):
        return False
    return a.tokenizer is b.tokenizer or a.tokenizer is None or (
        a.tokenizer.name == b.tokenizer.name and a.tokenizer.vocab_size == b.tokenizer.vocab_size)
