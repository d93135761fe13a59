"""Sidebar state: one mechanism for defaults, URL binding, page switches, bad links and resets.

How Streamlit (1.67) treats a keyed widget created with ``bind="query-params"``:

* the URL holds the widget's value only while it differs from the widget's *own* default (``value=`` /
  ``index=``; without one, its minimum or first option), and a URL value equal to that default is removed;
* on a fresh load a URL value that parses seeds the widget; one that does not is dropped silently (or, for a
  number input given ``inf``, raises);
* a page switch mounts the widget anew on the next page at its own default unless the server marks a value
  to restore.

The old sidebar gave its widgets no default and wrote the app's defaults with ``st.session_state.setdefault``
before creating them. Those values were never in the URL, so on the first click on another page each widget
mounted at its own default (the slider minimums, an empty text) and nothing restored the app's value. The same
mismatch made share links drop every value equal to a widget's minimum. Here:

1. every control is created by :func:`control` with the app's default as the widget's own default, so "absent
   from the URL" always means "the app's default", both when a link is made and when a page is switched;
2. nothing writes a control's key before its widget is created except callbacks (preset, upload, reset), the
   clamp of a dependent range, and :func:`repair`;
3. link values are checked against the control's options before Streamlit sees them; a bad one is named in one
   sidebar message, deleted from the URL and the run restarted at once (:func:`check_link`), so the widget is
   never seeded from it and the address bar no longer carries it;
4. config fields without a control (``norm_eps``, ``rope_theta``...) live in :data:`FIXED_KEY`, a plain session
   value no widget owns, so no widget cleanup or page switch can drop them;
5. every choice control (select box, radio, segmented control, select slider) is drawn by
   :func:`translated_choice`: a bound widget would write its displayed label into the URL, so a choice is not
   bound; its link value is the option's id (``cfg.norm_type=rmsnorm``; a label in either language is read as
   an alias), read once per session and written back on every run;
6. a number is checked like a whole number (:func:`link_problem`'s "float": in range, on the slider's step), and
   a link's parameters that no page reads (:data:`LINK_PARAMS`; new ones via :func:`register_params`) are named
   once and removed from the address bar (:func:`drop_unknown_params`).
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable

import streamlit as st
from streamlit.errors import StreamlitAPIException

from settings.schema import FIXED_DEFAULTS, FIXED_KEY, Clamped, link_id  # noqa: F401  (link_id: re-exported)
from ui.escape import md, md_code
from ui.i18n import LANGS, current_lang, t

BIND = dict(persist_state="session", bind="query-params")
PENDING_KEY = "state.pending"  # {widget key: value} to write before the widgets of the next run
MESSAGES_KEY = "state.messages"  # sidebar messages about the link / repaired values (shown until dismissed)
CHECKED_KEY = "state.checked"  # widget keys whose link value has been checked in this session
VALUES_KEY = "state.values"  # {control key: value}: the session's values, which no widget cleanup can drop
PAGE_KEY = "state.page"  # the page this run draws (app.py writes it before the page runs)
SEEN_KEY = "state.seen"  # {(page, control key): the value the control showed at the end of its page's last run}
DEFAULTS_KEY = "state.defaults"  # {control key: its own default}, for every control drawn in this session
SESSION_CONTROLS = ("ui.",)  # the language and presenter mode: the reader's, never a page's or a step's
MAX_TEXT = 20_000  # UTF-16 code units, as the browser counts a string's length
_MISSING = object()
def utf16_len(text: str) -> int:
    """Length of ``text`` as JavaScript counts it (an emoji outside the BMP counts 2)."""
    return len(text.encode("utf-16-le")) // 2


def cut_utf16(text: str, limit: int = MAX_TEXT) -> str:
    """The longest prefix of ``text`` of at most ``limit`` UTF-16 units (never half a surrogate pair)."""
    return text.encode("utf-16-le")[: 2 * limit].decode("utf-16-le", errors="ignore")


def show(value: Any, limit: int = 40) -> str:
    """A user-supplied value shortened for a message."""
    s = str(value)
    return s if len(s) <= limit else s[:limit] + f"… ({len(s):,})"


def fixed_fields() -> dict:
    """The config fields without a slider: the preset's or upload's values, else the defaults."""
    return {**FIXED_DEFAULTS, **st.session_state.get(FIXED_KEY, {})}


def clamp_note(c: Clamped) -> str:
    """The sentence for a value moved to its control's nearest stop."""
    return t("common.clamped", name=t(f"{c.key}.label"), old=c.old, new=c.new)


# ---- messages and repairs ----------------------------------------------------------------------------
def add_message(text: str) -> None:
    msgs = st.session_state.setdefault(MESSAGES_KEY, [])
    if text not in msgs:
        msgs.append(text)


def repair(key: str, value: Any, message: str | None = None) -> None:
    """Set widget ``key`` to ``value`` on an immediate rerun (a widget's value cannot change after it is drawn)."""
    st.session_state.setdefault(PENDING_KEY, {})[key] = value
    if message:
        add_message(message)


def set_controls(values: dict[str, Any]) -> None:
    """A callback's new values for the session's controls (``{widget key: value}``): written as repairs (applied
    before any widget of the next run) and as the session's control values, so every page draws them."""
    store = st.session_state.setdefault(VALUES_KEY, {})
    for key, value in values.items():
        repair(key, value)
        store[key] = value


def apply_pending() -> None:
    """Start of a run: write the repairs asked for by the previous run, before any widget is created."""
    for key, value in st.session_state.pop(PENDING_KEY, {}).items():
        st.session_state[key] = value


def rerun_if_pending() -> None:
    """End of the sidebar: rerun at once when a repair is waiting (the page then runs on the repaired values)."""
    if st.session_state.get(PENDING_KEY):
        st.rerun()


def show_messages(container=None) -> None:
    """The link / repair messages, in one box with a dismiss button."""
    msgs = st.session_state.get(MESSAGES_KEY)
    if not msgs:
        return
    box = (container or st.sidebar).container(border=True)
    box.warning("\n\n".join(msgs))
    box.button(t("state.dismiss"), key="state.dismiss", on_click=lambda: st.session_state.pop(MESSAGES_KEY, None))


# ---- link values ----------------------------------------------------------------------------------------
_INT = re.compile(r"[0-9]{1,12}(\.0*)?")  # a float number input writes "7.0"


def on_grid(raw: str, lo: float, hi: float, step: float) -> bool:
    """True when the URL string ``raw`` is a number a slider over ``lo..hi`` in steps of ``step`` can show."""
    try:
        value = float(raw)
    except ValueError:
        return False
    if not (math.isfinite(value) and lo - 1e-9 <= value <= hi + 1e-9):
        return False
    k = (value - lo) / step
    return abs(k - round(k)) < 1e-6


def link_problem(raw: str, kind: str, lo: float | None = None, hi: float | None = None, step: float = 1) -> str | None:
    """Why the URL string ``raw`` is not a valid value of a control, or None when it is.

    ``kind``: "int" (a whole number in ``lo..hi``), "float" (a number in ``lo..hi`` on the slider's ``step``
    grid), "bool" ("true"/"false"), "text" (any string; its length is checked by the caller) or "multi" (a
    multiselect's values: left to Streamlit, which drops the ones that are not options). Choices are read by
    :func:`link_choice` (ids, and labels as aliases).
    """
    if kind == "int":
        if _INT.fullmatch(raw) and lo <= int(float(raw)) <= hi:
            return None
        return t("state.link.int", lo=f"{lo:,}", hi=f"{hi:,}")
    if kind == "float":
        if on_grid(raw, lo, hi, step):
            return None
        return t("state.link.float", lo=f"{lo:g}", hi=f"{hi:g}", step=f"{step:g}")
    if kind == "bool":
        return None if raw.lower() in ("true", "false") else t("state.link.bool")
    return None


def check_link(key: str, label: str, default: Any, kind: str, **spec) -> None:
    """Before drawing control ``key`` for the first time in this session: check its URL value, if any.

    A bad value is named in one sidebar message, removed from the URL, and the run restarts at once without it.
    Repairing the widget's value after Streamlit has seeded it does not work: Streamlit first coerces the link's
    value (``3.5`` -> 3 in an int slider, ``3.5`` is a valid float for a number input) and writes the coerced
    value back into the URL, and a later programmatic reset to the default does not always remove it again.
    On the first run of a session no widget is bound yet, so ``st.query_params`` may still delete the key; the
    rerun then seeds every widget from the cleaned query string.
    """
    checked = st.session_state.setdefault(CHECKED_KEY, set())
    if key in checked:
        return
    checked.add(key)
    if key not in st.query_params or kind == "multi":
        return
    raw = st.query_params.get_all(key)
    problem = t("state.link.repeated") if len(raw) > 1 else link_problem(raw[0], kind, **spec)
    if not problem:
        return
    shown = int(default) if kind == "int" else f"{default:g}" if kind == "float" else default
    add_message(t("state.link.bad", name=label, param=key, value=md(show(raw[-1])), why=problem,
                  default=md(show(shown))))
    try:
        del st.query_params[key]
    except StreamlitAPIException:  # already bound in this session (drawn earlier): repair the value instead
        repair(key, default)
        return
    st.rerun()


# ---- the parameters a link may carry ---------------------------------------------------------------------
# Every URL parameter some page of the app reads (a linked control, a linked counter), and Streamlit's own. A
# link's other parameters are named once and removed (:func:`drop_unknown_params`). A new linked control adds
# its key with :func:`register_params` (at import time of a module every page imports) or to this list.
LINK_PARAMS: set[str] = {
    "embed", "embed_options",  # Streamlit's
    "ui.lang", "ui.presenter", "model.source", "model.checkpoint",
    "cfg.vocab_size", "cfg.hidden_size", "cfg.num_hidden_layers", "cfg.position_embedding", "cfg.num_attention_heads",
    "cfg.num_key_value_heads", "cfg.intermediate_size", "cfg.norm_type", "cfg.norm_position", "cfg.ffn",
    "cfg.tie_word_embeddings", "cfg.initializer_range", "cfg.seed",
    "input.mode", "input.random_len", "input.text",
    "attn.layer", "attn.head", "attn.stage", "heads.layer", "heads.head", "lens.start", "lens.depth_start", "attn.start",
    "experts.start",
    "loss.prompt_len",
    "loss.masked", "next.position", "prepost.depth", "train.layer", "train.head",
    "gen.sample", "gen.temperature", "gen.top_k", "gen.top_p", "gen.min_p", "gen.seed", "gen.steps",
    "lesson", "step",  # a lesson's step (ui/teaching/steps.py)
    "class", "lecturer",  # class mode's join code and the lecturer's private link (ui/teaching/class_mode.py)
    "train.run", "train.race_run",  # the id of the session's latest run / race (ui/train_common.py: lost_run_note)
}
UNKNOWN_CHECKED_KEY = "state.unknown_checked"


def register_params(*keys: str) -> None:
    """Declare URL parameters a page reads (so links carrying them keep them)."""
    LINK_PARAMS.update(keys)


def drop_unknown_params() -> None:
    """First run of a session (before any widget): name the link's parameters no page reads in one message,
    remove them from the address bar and rerun without them."""
    if st.session_state.get(UNKNOWN_CHECKED_KEY):
        return
    st.session_state[UNKNOWN_CHECKED_KEY] = True
    unknown = [k for k in st.query_params if k not in LINK_PARAMS]
    if not unknown:
        return
    add_message(t("state.link.unknown", params=", ".join(md_code(show(k)) for k in unknown[:12])
                  + (" …" if len(unknown) > 12 else "")))
    for k in unknown:
        del st.query_params[k]
    st.rerun()


# ---- controls -------------------------------------------------------------------------------------------
def control(widget: Callable, label: str, key: str, default: Any, *, kind: str, options: list | None = None,
            lo: int | None = None, hi: int | None = None, format_func: Callable[[Any], str] = str,
            bind: bool = True, **kwargs) -> Any:
    """Draw a keyed control whose own default is the app's ``default``; return its value.

    ``widget`` is the Streamlit function (``st.sidebar.slider``, ``container.toggle``...). ``kind`` says how a
    URL value is checked (see :func:`link_problem`); a slider moves in steps of ``step`` (default 1). Every
    choice (``kind="choice"``: a select box, radio, segmented control or select slider) is drawn by
    :func:`translated_choice`, so that a link names its option by id in either language.
    """
    name = getattr(widget, "__name__", "")
    st.session_state.setdefault(DEFAULTS_KEY, {})[key] = default
    if kind == "choice":  # every choice control: one mechanism, linked by the option's id
        return translated_choice(widget, label, key, default, options, format_func, url=bind, **kwargs)
    if bind:
        check_link(key, label, default, kind, lo=lo, hi=hi, step=kwargs.get("step", 1))
    store = st.session_state.setdefault(VALUES_KEY, {})
    before = st.session_state.get(key, _MISSING)
    seen = st.session_state.setdefault(SEEN_KEY, {})
    where = (st.session_state.get(PAGE_KEY, ""), key)
    # Streamlit keeps each page's own widget value: on the first run of a page opened again, the key holds what
    # this page's widget showed when the page was left. That value is stale (not an edit) when the session's
    # value has changed since on another page; an edit always differs from what the widget last showed.
    stale = before is not _MISSING and seen.get(where, _MISSING) == before and store.get(key, _MISSING) != before
    if before is not _MISSING and not stale:
        store[key] = before  # the user's edit, a callback's or a clamp's: this run's value
    opts = BIND if bind else dict(persist_state="session")
    if name == "multiselect":
        value = widget(label, options, default=default, key=key, format_func=format_func, **opts, **kwargs)
    elif name == "slider":
        value = widget(label, lo, hi, value=default, step=kwargs.pop("step", 1), key=key, **opts, **kwargs)
    else:
        value = widget(label, value=default, key=key, **opts, **kwargs)
    if key not in store:
        store[key] = value
    elif value != store[key]:
        # The widget came back with another value than the session holds, without any edit: Streamlit mounts a
        # widget on a newly opened page with the value its browser side last *sent*, which is its default when
        # the value was set by the server (a link, a preset, a clamp). Put the session's value back.
        repair(key, store[key])
        value = store[key]
        if bind:
            _link_value(key, value, default, name)
    seen[where] = value
    return value


def _link_value(key: str, value: Any, default: Any, widget_name: str) -> None:
    """Put a repaired bound control's value back into the address bar.

    A value the server set (a link's, above all) is not what the browser last sent for the widget, so on a page
    switch the widget mounts at its default and the new page's address is built without the value: the session
    keeps it (the repair above), but a link copied there, or a reload, lost every value of the link it was opened
    from. Streamlit forbids setting a bound parameter through ``st.query_params``, so the value is written the way
    Streamlit itself corrects a clamped link value, in the form the widget writes: ``true``/``false`` for a
    toggle, the number for a slider or number input.
    """
    if value == default:
        return  # absent from the URL is right
    if isinstance(value, bool):
        raw = str(value).lower()
    elif widget_name == "number_input":
        raw = repr(float(value))
    else:
        raw = str(value)
    try:
        from streamlit.runtime.state.session_state_proxy import get_session_state

        with get_session_state().query_params() as qp:
            qp.set_corrected_value(key, raw, "string_value")
    except Exception:  # an internal API of Streamlit 1.67: without it only the address bar is stale, never the view
        pass


def note_page(page: str) -> None:
    """Start of every run (app.py): the page this run draws, so that :func:`control` can tell a page's stale
    widget value from an edit."""
    st.session_state[PAGE_KEY] = page


def current(key: str, default: Any) -> Any:
    """A control's value in this run before its widget is drawn: the session's (also after a page switch
    dropped the widget's key), else the app's ``default``."""
    if key in st.session_state:
        return st.session_state[key]
    return st.session_state.get(VALUES_KEY, {}).get(key, default)


def translated_choice(widget: Callable, label: str, key: str, default: Any, options: list,
                      format_func: Callable[[Any], str] = str, on_pick: Callable[[], None] | None = None,
                      url: bool = False, aliases: dict[str, Any] | None = None, always_linked: bool = False,
                      **kwargs) -> Any:
    """Every choice control (select box, radio, segmented control, select slider); returns its value.

    The browser knows a selection by its label, so after a language switch a widget under the same key has
    no selection (the old label is not among the new ones). The value therefore lives in ``st.session_state[key]``
    (a plain value: code and tests may set it) and the widget, keyed ``"<key>.<lang>"``, only shows it: a new
    language draws a new widget at that value; an edit is copied back by the widget's callback. A click on a
    segmented control's selected segment (which would deselect it) keeps the selection.

    With ``url`` the value is also in the link, as its stable id (:func:`link_id`: the option itself, never a
    label), so a link opens the same view in either language: :func:`link_choice` reads it once per session
    (the option's label in either language, and ``aliases`` such as older links' labels, are read as its id)
    and :func:`sync_url` writes it on every run. A bound widget cannot do this: Streamlit writes a bound
    widget's displayed label into the URL. ``always_linked`` writes the value even when it is the default: for
    a list that grows (the checkpoints), where "absent" would name whichever entry comes first on the server
    that opens the link. ``format_func`` may be a :func:`ui.i18n.labeler` (its labels in every language are
    then read as aliases).
    """
    if url:
        link_choice(key, label, default, options, format_func, aliases or {})
    wkey = f"{key}.{current_lang()}"
    value = st.session_state.get(key, default)
    if value not in options:
        value = default
    st.session_state[key] = value
    if st.session_state.get(wkey, value) != value:  # set by code since the widget was last drawn
        st.session_state[wkey] = value

    def picked() -> None:
        # None: a segmented control's selected segment clicked again (absent: its widget went with a page switch)
        if st.session_state.get(wkey) is None:
            st.session_state[wkey] = st.session_state[key]
            return
        st.session_state[key] = st.session_state[wkey]
        if on_pick:
            on_pick()

    name = getattr(widget, "__name__", "")
    shown = {"index": options.index(value)} if name in ("selectbox", "radio") else \
        {"default": value} if name in ("segmented_control", "pills") else {"value": value}
    widget(label, options, key=wkey, format_func=format_func, on_change=picked, **shown, **kwargs)
    if url:
        sync_url(key, st.session_state[key], _MISSING if always_linked else default)
    return st.session_state[key]


def choice_aliases(options: list, format_func: Callable[[Any], str], aliases: dict[str, Any]) -> dict[str, Any]:
    """Every string a link may write for an option: its id, its label (in every language for a
    :func:`ui.i18n.labeler`) and ``aliases``."""
    found = {link_id(o): o for o in options}
    per_lang = getattr(format_func, "in_lang", None)
    for fmt in [per_lang(lang) for lang in LANGS] if per_lang else [format_func]:
        for o in options:
            found.setdefault(str(fmt(o)), o)
    return {**aliases, **found}


def _numeric(raw: str, options: list) -> Any:
    """The numeric option a link's number names (``4000.0``, ``1e+20`` with its ``+`` decoded as a space)."""
    try:
        x = float(raw.replace(" ", "+"))
    except ValueError:
        return _MISSING
    return next((o for o in options if isinstance(o, (int, float)) and not isinstance(o, bool)
                 and math.isclose(o, x, rel_tol=1e-9, abs_tol=0.0)), _MISSING)


def read_choice(raw: list[str], options: list, format_func: Callable[[Any], str] = str,
                aliases: dict[str, Any] | None = None) -> tuple[Any, str | None]:
    """``(option, None)`` for a link's values ``raw`` of a choice (one id, label or alias), else ``(None, why
    not)`` in the sidebar's words."""
    value = choice_aliases(options, format_func, aliases or {}).get(raw[-1], _MISSING)
    if value is _MISSING:
        value = _numeric(raw[-1], options)
    if len(raw) == 1 and value is not _MISSING:
        return value, None
    ids = [link_id(o) for o in options]
    return None, t("state.link.repeated") if len(raw) > 1 else \
        t("state.link.choice", options=", ".join(ids[:12]) + (" …" if len(ids) > 12 else ""))


def link_choice(key: str, label: str, default: Any, options: list, format_func: Callable[[Any], str],
                aliases: dict[str, Any]) -> None:
    """Once per session: take the link's value for ``key`` (an id or an alias) into the session, or name it and
    drop it."""
    checked = st.session_state.setdefault(CHECKED_KEY, set())
    if key in checked:
        return
    checked.add(key)
    raw = st.query_params.get_all(key)
    if not raw:
        return
    value, problem = read_choice(raw, options, format_func, aliases)
    if problem is None:
        st.session_state[key] = value
        return
    add_message(t("state.link.bad", name=label, param=key, value=md(show(raw[-1])), why=problem,
                  default=md(show(link_id(default)))))
    del st.query_params[key]
    st.rerun()  # the message box is drawn above this control


def sync_url(key: str, value: Any, default: Any) -> None:
    """Keep an unbound value in the URL as a bound widget's would be: present only while it is not the default."""
    if value == default:
        if key in st.query_params:
            del st.query_params[key]
    elif st.query_params.get_all(key) != [link_id(value)]:
        st.query_params[key] = link_id(value)


def unlink(key: str) -> None:
    """Take ``key`` out of the URL: its control is not drawn in this view (the session keeps its value)."""
    if key in st.query_params:
        del st.query_params[key]


def linked_int(key: str, label: str, default: int, lo: int, hi: int) -> int:
    """A whole number no widget owns (a counter that buttons change), in the link like a control's value.

    The link's value is read once per session (a bad one is named and removed, as for a control); the session's
    value is returned. Call :func:`sync_url` once the run has its final value, to write it back.
    """
    fresh = key not in st.session_state.get(CHECKED_KEY, set())
    check_link(key, label, default, "int", lo=lo, hi=hi)
    if fresh and key in st.query_params:
        st.session_state[key] = int(float(st.query_params[key]))
    return st.session_state.setdefault(key, default)


def page_controls_at_default(keep: set[str]) -> None:
    """Every control drawn in this session, except the reader's own (language, presenter mode) and ``keep``, back
    to its own default on the next run; a value stored for a key no control has drawn is forgotten.
    A lesson step calls it, so that no value of the step before (or of the reader's exploring) leaks into it."""
    defaults = st.session_state.get(DEFAULTS_KEY, {})
    store = st.session_state.setdefault(VALUES_KEY, {})
    for key in set(defaults) | set(store):
        if key in keep or key.startswith(SESSION_CONTROLS):
            continue
        if key in defaults:
            repair(key, defaults[key])
            store[key] = defaults[key]
        else:  # a plain session value a step set (the overview's block step): gone, the page sets its default
            store.pop(key, None)
            st.session_state.get(PENDING_KEY, {}).pop(key, None)
            st.session_state.pop(key, None)


def reset(defaults: dict[str, Any], keep: tuple[str, ...] = ()) -> None:
    """Callback of the "reset to defaults" button: every control back to ``defaults``, fixed fields dropped."""
    for key, value in defaults.items():
        if key not in keep:
            st.session_state[key] = value
    st.session_state.pop(FIXED_KEY, None)
    st.session_state.pop(MESSAGES_KEY, None)
