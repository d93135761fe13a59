"""What a student's phone shows of a class, as plain JSON: the step's text, its question and options, and after the
reveal the answer, the explanation, the class's answers and the lesson's chart.

The class-wide part (:func:`class_view`) is the same for every phone of a class at a step; it is built once per
(class, step, reveal, end, language, chart) in this process and kept with its version string, the ``ETag`` the
phone polls with: an idle phone's poll is one dictionary lookup and a ``304``. The student's own part
(:func:`my_part`: their answer, graded by the lesson's one grader) is read from the store only when that version
changes. This module knows no HTTP (``ui.teaching.phone.routes`` does) and draws nothing: markdown becomes HTML
here (raw HTML in a text is escaped, never passed through).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from typing import Any

from markdown_it import MarkdownIt

from teaching import lessons as lesson_files
from teaching.classroom.tables import choice_table, estimate_table, summary
from teaching.lessons import settings_digest
from ui.caches.classroom import store
from ui.caches.steps import step_key
from ui.format import significant
from ui.i18n import t
from ui.teaching.class_mode import class_state, seat

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})


def html(text: str) -> str:
    """A lesson's or a message's markdown as HTML (raw HTML escaped)."""
    return _md.render(text or "").strip()


# ---- the lesson step's chart, as the lecturer's screen drew it ----------------------------------------------------
_figures: dict[tuple[str, str], tuple[float, str | None]] = {}  # (code, question) -> (when read, the JSON or None)
_figures_lock = threading.Lock()
MAX_FIGURES = 500
MISS_TTL_S = 1.0  # a chart not drawn yet is asked of the store again after this


def figure(code: str, question: str) -> str | None:
    """The revealed question's chart (Plotly JSON) from the class store (any replica's lecturer may have drawn
    it), kept in this process once found; a miss is asked again after :data:`MISS_TTL_S`."""
    now = time.monotonic()
    with _figures_lock:
        hit = _figures.get((code, question))
    if hit is not None and (hit[1] is not None or now - hit[0] < MISS_TTL_S):
        return hit[1]
    found = store().figure(code, question)
    with _figures_lock:
        if len(_figures) >= MAX_FIGURES:
            _figures.clear()
        _figures[(code, question)] = (now, found)
    return found


# ---- the view ------------------------------------------------------------------------------------------------
def step_of(step: dict):
    """``(lesson, its step)`` a class step names, or None (a poll, a page, a summary)."""
    lesson = lesson_files.by_id(step.get("lesson", "")) if step.get("kind") == "lesson" else None
    try:
        n = int(step.get("step", 0))
    except (TypeError, ValueError):
        return None
    return (lesson, lesson.step(n)) if lesson is not None and 1 <= n <= len(lesson.steps) else None


def key_of(lesson, s):
    """The step's answer key on the lesson's own settings (the cache every session shares); None when it cannot be
    computed without a session (a Training-lab run)."""
    try:
        return step_key(lesson.id, s.number, settings_digest(s.settings), None, (), {})
    except Exception:  # noqa: BLE001 -- the phone says the question is answered on the lecturer's screen
        return None


def _question(step: dict, lang: str) -> dict | None:
    """``{id, kind, prompt, options | within}`` of the step's open question (a lesson's or a poll's), or None."""
    if step.get("kind") == "poll":
        return {"id": step["question"], "kind": "choice", "prompt": html(t("class.poll_line", lang,
                                                                            prompt=step.get("prompt", ""))),
                "options": [str(o) for o in step.get("options", [])]}
    found = step_of(step)
    if not found or found[1].question is None:
        return None
    lesson, s = found
    key = key_of(lesson, s)
    q = {"id": f"{lesson.id}:{s.number}", "prompt": html(f"**{s.question.prompt[lang]}**")}
    if key is None:
        return {**q, "kind": "none"}
    if key.kind == "choice":
        return {**q, "kind": "choice", "options": [o[lang] for o in key.options]}
    return {**q, "kind": "estimate", "within": str(s.question.within)}


def _table(step: dict, counts: dict, lang: str):
    if step.get("kind") == "poll":
        return choice_table([str(o) for o in step.get("options", [])], counts["distribution"])
    lesson, s = step_of(step)
    key = key_of(lesson, s)
    if key is None:
        return None
    if key.kind == "choice":
        return choice_table([o[lang] for o in key.options], counts["distribution"], key.correct)
    return estimate_table(counts["distribution"], key.correct, lambda v: key.grade(s.question, v),
                          {"too_low": t("class.dist_too_low", lang), "within": t("class.dist_within", lang,
                                                                                  within=s.question.within),
                           "too_high": t("class.dist_too_high", lang)})


def _reveal(step: dict, question: dict, code: str, lang: str) -> dict:
    """After the reveal: the answer, the explanation, the class's answers (rows and a sentence), the chart's id."""
    out: dict[str, Any] = {}
    counts = store().counts(code, question["id"])
    table = _table(step, counts, lang)
    if table is not None:
        rows = [{"answer": a, "students": int(n), "right": r} for a, n, r in
                zip(table["answer"], table["students"], table["right"])]
        s = summary(table, counts["joined"])
        words = [t("class.dist_sentence", lang, answered=s["answered"], joined=s["joined"])]
        if s["right"] is not None:
            words.append(t("class.dist_right", lang, right=s["right"], answered=s["answered"],
                           share=f"{s['right_share']:.0%}"))
        out.update(distribution=rows, sentence=html(" ".join(words)))
    found = step_of(step)
    if found:
        lesson, s = found
        key = key_of(lesson, s)
        if key is not None:
            out["answer"] = key.options[key.correct][lang] if key.kind == "choice" else key.values[lang]["answer"]
            out["explanation"] = html(key.explanation(s.question, lang))
    return out


_views: dict[tuple, dict] = {}
_views_lock = threading.Lock()


def version_of(code: str, fresh: bool = False) -> tuple:
    """What a phone's view of the class depends on: ``(step_seq, revealed, ended, chart)``, ``chart`` whether the
    revealed lesson step's chart has been drawn (``fresh``: the store read now, not the process's shared state of
    the last half second)."""
    return _version(code, class_state(code, fresh=fresh))


def _version(code: str, state: dict) -> tuple:
    chart = bool(state["revealed"] and state["question"] is not None and step_of(state["step"] or {}) is not None
                 and figure(code, state["question"]) is not None)
    return state["step_seq"], bool(state["revealed"]), bool(state["ended"]), chart


def version_in(view: dict) -> tuple:
    """:func:`version_of` as a view shows it."""
    return view["step_seq"], view["revealed"], view["ended"], view["chart"]


def class_view(code: str, lang: str) -> dict:
    """The class-wide view of class ``code`` in ``lang``, with its version ``v``. Raises the store's errors
    (:mod:`teaching.classroom.errors`)."""
    state = class_state(code)
    step = state["step"] or {}
    found = step_of(step)
    seq, revealed, ended, chart = _version(code, state)
    version = (code, seq, revealed, ended, chart, lang)
    with _views_lock:
        hit = _views.get(version)
    if hit is not None:
        return hit
    view: dict[str, Any] = {"code": code, "ended": ended, "step_seq": seq, "revealed": revealed, "chart": chart,
                            "kind": step.get("kind")}
    if found is not None:
        lesson, s = found
        view.update(lesson=lesson.id, step=s.number, progress=t("lessons.progress", lang, title=lesson.title[lang], n=s.number,
                               total=len(lesson.steps)),
                    text=html(s.text[lang]),
                    explore=f"/{s.page}?lesson={lesson.id}&step={s.number}&ui.lang={lang}")  # the full app
    question = _question(step, lang) if not ended else None
    view["question"] = question
    if question is not None and revealed:
        view.update(_reveal(step, question, code, lang))
    view["v"] = hashlib.sha1(json.dumps([version, view], sort_keys=True, default=str).encode()).hexdigest()[:16]
    with _views_lock:
        if len(_views) > 4000:
            _views.clear()
        _views[version] = view
    return view


def my_part(code: str, student_id: str, view: dict, lang: str) -> dict:
    """This student's answer to the open question (``value``, its ``label`` in ``lang``) and, after the reveal,
    whether it is ``right`` (the lesson's one grader; None for a poll)."""
    question = view.get("question")
    if question is None:
        return {}
    mine = store().my_answer(code, student_id, question["id"])
    if mine is None:
        return {"value": None}
    options = question.get("options")
    label = (options[mine] if options and isinstance(mine, int) and 0 <= mine < len(options)
             else significant(mine) if isinstance(mine, (int, float)) else str(mine))
    out = {"value": mine, "label": label}
    if view["revealed"]:
        found = step_of({"kind": view["kind"], "lesson": view.get("lesson"), "step": view.get("step")})
        key = key_of(*found) if found else None
        out["right"] = None if key is None else bool(key.grade(found[1].question, mine))
    return out


def share_chart(key: str, fig) -> None:
    """``ui.widgets.chart``, for every chart drawn: in a lecturer's session, the class step's chart after the reveal
    becomes the phones' (once per question; the lesson's highlight is already drawn on it)."""
    s = seat()
    if s.role != "lecturer" or s.code is None:
        return
    try:
        state = class_state(s.code)
    except Exception:  # noqa: BLE001 -- the class bar says what is wrong with the store
        return
    found = step_of(state["step"] or {})
    question = state["question"]
    if (found is None or not state["revealed"] or question is None or key not in found[1].chart
            or (s.code, question) in _shared):
        return
    try:
        if figure(s.code, question) is None:
            store().put_figure(s.code, s.secret, question, fig.to_json())
    except Exception:  # noqa: BLE001 -- the phones say the chart waits; the lecturer's page goes on
        return
    _shared.add((s.code, question))


_shared: set[tuple[str, str]] = set()  # (code, question) whose chart this process has put or found in the store
