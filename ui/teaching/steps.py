"""The learner's side of the lessons: the banner above a step's page, predict-then-reveal, navigation, progress.

A lesson (``teaching/lessons/*.toml``, loaded by ``teaching.lessons``) is a list of steps; the session's place in it is
``st.session_state[ACTIVE_KEY] = {"lesson": id, "step": n}`` (n = 1..N; N + 1 = the summary on the Lessons page),
and the answers given are in ``PROGRESS_KEY`` (also kept in a session cookie, so a reload of the tab restores
them). Entering a step applies its settings through the same repairs a link uses (``ui.state.repair``: the
values are written before any widget of the next run is drawn) and switches to the step's page.

The address bar carries ``?lesson=<id>&step=<n>``: a link opens that step, and the browser's back button (which
reruns the app with the previous address) goes back to the step that address names. While a question is open,
the chart it is about is replaced by a "predict first" placeholder (:func:`chart_gate`, called by
``ui.widgets.chart``); after the answer it is drawn with the relevant part highlighted. The answer key of a step
is computed once per step settings (:func:`frozen_key`) on the very model the page shows.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote, unquote

import streamlit as st

from teaching import lessons as lesson_files
from teaching.lessons import Key, Lesson, Step, settings_digest
from settings.build import sidebar_values
from teaching.answers.core import NeedsRun, format_option
from ui.caches.steps import step_key
from ui.checkpoint_picker import TRAINED_KEY
from ui.i18n import current_lang, t
from ui.train_common import JOB_KEY, RACE_KEY
from ui.state import (FIXED_KEY, VALUES_KEY, apply_pending, current, page_controls_at_default, register_params,
                      repair)

ACTIVE_KEY = "lessons.active"  # {"lesson": id, "step": n} or absent
PROGRESS_KEY = "lessons.progress"  # {lesson id: {"step": furthest n, "answers": {"n": {"picked", "right", "skipped"}}}}
PREV_KEY = "lessons._prev"  # the step shown before the current one (the back button's target, see lesson_hook)
MOVED_KEY = "lessons._moved"  # set by a button: this run's step is the session's, not the address bar's
COOKIE = "explorer_lessons"
PARAMS = ("lesson", "step")
LESSONS_PAGE = "lessons"
register_params(*PARAMS)  # known link parameters (ui/state.py), not a control's


# ---- state ------------------------------------------------------------------------------------------------
def active() -> tuple[Lesson, int] | None:
    """The open lesson and step number (N + 1 = its summary), or None."""
    a = st.session_state.get(ACTIVE_KEY)
    lesson = lesson_files.by_id(a["lesson"]) if a else None
    return (lesson, a["step"]) if lesson else None


def active_step(page: str | None = None) -> tuple[Lesson, Step] | None:
    """The open step, when the page drawn (``page``: this run's url path, default the current) is its page."""
    a = active()
    if not a or a[1] > len(a[0].steps):
        return None
    step = a[0].step(a[1])
    here = page if page is not None else st.session_state.get("state.page", "")
    return (a[0], step) if step.page == here else None


def progress(lesson_id: str) -> dict:
    return st.session_state.setdefault(PROGRESS_KEY, {}).setdefault(lesson_id, {"step": 0, "answers": {}})


def answered(lesson: Lesson, step: Step) -> dict | None:
    return progress(lesson.id)["answers"].get(str(step.number))


def score(lesson: Lesson) -> tuple[int, int]:
    answers = progress(lesson.id)["answers"]
    right = sum(1 for s in lesson.steps if s.question and answers.get(str(s.number), {}).get("right"))
    return right, lesson.questions


def restore_from_cookie() -> None:
    """First run of a session (a reload): take the progress the tab's session cookie kept."""
    if PROGRESS_KEY in st.session_state:
        return
    try:
        raw = st.context.cookies.get(COOKIE)
        saved = json.loads(unquote(raw)) if raw else {}  # written URL-encoded by save_cookie
    except (ValueError, TypeError, AttributeError):
        saved = {}
    st.session_state[PROGRESS_KEY] = {k: v for k, v in saved.items() if isinstance(v, dict) and "answers" in v}


def save_cookie() -> None:
    """Keep the progress in a session cookie (gone when the browser closes): a reload restores it."""
    data = json.dumps(st.session_state.get(PROGRESS_KEY, {}), separators=(",", ":"))
    if st.session_state.get("lessons._saved") == data:
        return
    st.session_state["lessons._saved"] = data
    st.html(f"<script>document.cookie = '{COOKIE}=' + {json.dumps(quote(data))} + '; path=/; SameSite=Lax';</script>",
            unsafe_allow_javascript=True)


# ---- entering a step --------------------------------------------------------------------------------------------
def step_values(step: Step) -> tuple[dict, dict]:
    """``(control values, fixed config fields)`` the step sets: every sidebar control (the app's default unless the
    preset or the step names it) and the step's page controls."""
    values, fixed = sidebar_values(step.settings)
    values["cfg.seed"] = float(values["cfg.seed"])  # the seed is a float number input (ui/sidebar.py)
    return values, fixed


def apply_settings(step: Step) -> None:
    """Write the step's settings as repairs: applied before any widget of the next run (or of this one, when no
    widget has been drawn yet: :func:`lesson_hook` applies them at once)."""
    values, fixed = step_values(step)
    page_controls_at_default(keep=set(values))  # a step is its declaration: nothing of the step before stays
    store = st.session_state.setdefault(VALUES_KEY, {})
    for key, value in values.items():
        repair(key, value)
        store[key] = value
    if fixed:
        repair(FIXED_KEY, fixed)
    else:
        st.session_state.pop(FIXED_KEY, None)


def go(lesson_id: str, n: int) -> None:
    """Open step ``n`` of a lesson (a button's callback): its settings, its page on the next run."""
    lesson = lesson_files.by_id(lesson_id)
    if lesson is None:
        return
    n = min(max(1, int(n)), len(lesson.steps) + 1)
    st.session_state[PREV_KEY] = st.session_state.get(ACTIVE_KEY)
    st.session_state[ACTIVE_KEY] = {"lesson": lesson.id, "step": n}
    st.session_state[MOVED_KEY] = True
    p = progress(lesson.id)
    p["step"] = max(p["step"], min(n, len(lesson.steps)))
    if n > len(lesson.steps):
        p["done"] = True  # the summary was reached: the list says so
    if n <= len(lesson.steps):
        apply_settings(lesson.step(n))


def leave() -> None:
    st.session_state.pop(ACTIVE_KEY, None)
    st.session_state[MOVED_KEY] = True


def restart(lesson_id: str) -> None:
    st.session_state.setdefault(PROGRESS_KEY, {}).pop(lesson_id, None)
    go(lesson_id, 1)


def _page_of(lesson_id: str, n: int) -> str | None:
    lesson = lesson_files.by_id(lesson_id)
    if lesson is None:
        return None
    return LESSONS_PAGE if n > len(lesson.steps) else lesson.step(n).page


def _url_step() -> tuple[str, int] | None:
    raw_id, raw_n = st.query_params.get("lesson"), st.query_params.get("step")
    if not raw_id or lesson_files.by_id(raw_id) is None:
        return None
    try:
        return raw_id, int(raw_n or 1)
    except ValueError:
        return raw_id, 1


def lesson_hook(pages: dict[str, Any], here: str) -> None:
    """app.py, after the navigation is built and before the page runs: follow the address bar (a link, the back
    button) or the session (a button), switch to the step's page, and keep ``lesson``/``step`` in the address."""
    restore_from_cookie()
    first = not st.session_state.get("lessons._ran")
    st.session_state["lessons._ran"] = True
    moved = st.session_state.pop(MOVED_KEY, False)
    url = _url_step()
    a = st.session_state.get(ACTIVE_KEY)
    if not moved and url and (a is None or (a["lesson"], a["step"]) != url):
        go(*url)  # a link or the browser's back/forward button: that step, its settings
        st.session_state.pop(MOVED_KEY, None)
        apply_pending()  # no widget is drawn yet in this run
        moved = True
    elif not moved and url and a and (a["lesson"], a["step"]) == url and _page_of(*url) != here:
        # Back from a step on another page: Streamlit wrote the new step's number into the old page's address
        # before it switched pages, so that entry names the new step on the previous step's page.
        prev = st.session_state.get(PREV_KEY)
        if prev and prev["lesson"] == url[0] and _page_of(prev["lesson"], prev["step"]) == here:
            go(prev["lesson"], prev["step"])
            st.session_state.pop(MOVED_KEY, None)
            apply_pending()
            moved = True
    found = active()
    if found is None:
        if moved:
            for p in PARAMS:
                if p in st.query_params:
                    del st.query_params[p]
        return
    lesson, n = found
    page = LESSONS_PAGE if n > len(lesson.steps) else lesson.step(n).page
    if moved and page != here and page in pages:
        params = {"lesson": lesson.id, "step": str(n)}
        if first:  # a link's other values (language, presenter mode) go along: no widget has bound them yet
            params = {**st.query_params.to_dict(), **params}
        # later only the lesson's own (Streamlit refuses bound ones): the controls write theirs as they are drawn
        st.switch_page(pages[page], query_params=params)
    if page == here and (moved or url):
        if st.query_params.get("lesson") != lesson.id or st.query_params.get("step") != str(n):
            st.query_params["lesson"] = lesson.id
            st.query_params["step"] = str(n)


# ---- the answer key ---------------------------------------------------------------------------------------
# The Training lab's jobs in the session: the lab's lesson asks about the run on screen
# (teaching/answers/training.py), named as the answer functions read them.
RUN_JOBS = {"train.job": JOB_KEY, "race.job": RACE_KEY}


def finished_runs() -> dict:
    """``{"train.job": job | None, "race.job": job | None}``: the session's training run and race when they ended
    with at least one step and no error (an answer function raises ``NeedsRun`` on None)."""
    out = {}
    for name, state_key in RUN_JOBS.items():
        job = st.session_state.get(state_key)
        res = getattr(job, "result", None)
        steps = getattr(res, "steps_done", None) if name == "train.job" else getattr(getattr(res, "post", None),
                                                                                   "steps_done", None)
        out[name] = job if job is not None and job.done and job.error is None and steps else None
    return out


def frozen_key(lesson: Lesson, step: Step) -> Key:
    """The step's key; raises ``NeedsRun`` on the Training lab while the run it is about has not finished."""
    trained = st.session_state.get(TRAINED_KEY) if step.settings.get("model.source") == "trained" else None
    session: dict = {"trained": trained} if trained else {}
    runs: tuple = ()
    if step.page == "train":
        done = finished_runs()
        session.update(done)
        runs = tuple((k, getattr(j, "id", None)) for k, j in done.items())
    return step_key(lesson.id, step.number, settings_digest(step.settings), trained["id"] if trained else None,
                    runs, session)


def drifted(step: Step) -> list[str]:
    """The controls whose value is no longer the step's (the learner moved a slider mid-question)."""
    values, _ = step_values(step)
    source = values.get("model.source", "random")
    out = []
    for key, want in values.items():
        if source == "checkpoint" and key.startswith("cfg."):
            continue
        if key.startswith("input.") and key not in ("input.mode",) and (
                (values["input.mode"] == "random") != (key == "input.random_len")):
            continue
        if key == "model.checkpoint" and source != "checkpoint":
            continue
        have = current(key, want)
        if have != want and not (isinstance(want, (int, float)) and isinstance(have, (int, float)) and float(have) == float(want)):
            out.append(key)
    return out


# ---- the banner -------------------------------------------------------------------------------------------
def _pick(lesson_id: str, n: int, picked: Any, right: bool | None, skipped: bool = False, text: str | None = None) -> None:
    """Record an answer; ``right`` None with the option's ``text``: picked before the run it is graded on."""
    progress(lesson_id)["answers"][str(n)] = {"picked": picked, "right": None if right is None else bool(right),
                                              "skipped": skipped, "text": text}
    st.session_state.pop(f"lessons._shown.{lesson_id}.{n}", None)


def nav_buttons(lesson: Lesson, n: int, box) -> None:
    """Back / Next (PageUp / PageDown: a presentation clicker drives the lesson across pages)."""
    row = box.container(horizontal=True, vertical_alignment="center")
    row.button(t("lessons.back"), key="lessons.back", on_click=go, args=(lesson.id, n - 1), shortcut="PageUp",
               disabled=n <= 1)
    last = n >= len(lesson.steps)
    row.button(t("lessons.finish") if last else t("lessons.next"), key="lessons.next", on_click=go,
               args=(lesson.id, n + 1), shortcut="PageDown", type="primary")
    row.button(t("lessons.leave"), key="lessons.leave", on_click=leave, type="tertiary")


# One browser history entry per step: Streamlit pushes an entry whenever the query string changes, and the controls
# a step sets write theirs one after the other, so the back button would first walk through the same step's
# entries. While the address names the same lesson, step and page, a push replaces the current entry instead.
HISTORY_JS = """<script>(() => { if (window.__lessonHistory) return; window.__lessonHistory = true;
  const push = history.pushState.bind(history);
  const same = (url) => { try { const a = new URL(url, location.href), b = new URL(location.href);
    const la = a.searchParams.get('lesson');
    return !!la && la === b.searchParams.get('lesson') && a.searchParams.get('step') === b.searchParams.get('step')
      && a.pathname === b.pathname; } catch (e) { return false; } };
  history.pushState = (state, title, url) => same(url) ? history.replaceState(state, title, url) : push(state, title, url);
})();</script>"""


def banner(here: str) -> None:
    """Above the page: the open step's progress, text, question and result (or a way back to the lesson)."""
    found = active()
    if found is None:
        return
    if not st.session_state.get("lessons._history"):
        st.session_state["lessons._history"] = True
        st.html(HISTORY_JS, unsafe_allow_javascript=True)
    lesson, n = found
    lang = current_lang()
    if n > len(lesson.steps):
        if here != LESSONS_PAGE:
            _paused(lesson, n)
        return
    step = lesson.step(n)
    if step.page != here:
        _paused(lesson, n)
        return
    box = st.container(border=True, key="lessons.banner")
    box.progress(n / len(lesson.steps), text=t("lessons.progress", title=lesson.title[lang], n=n, total=len(lesson.steps)))
    box.markdown(step.text[lang])
    q = step.question
    if q is not None:
        _question(box, lesson, step, lang)
    nav_buttons(lesson, n, box)


def _paused(lesson: Lesson, n: int) -> None:
    lang = current_lang()
    box = st.container(border=True, key="lessons.paused")
    row = box.container(horizontal=True, vertical_alignment="center")
    what = t("lessons.summary_title") if n > len(lesson.steps) else t("lessons.step_of", n=n, total=len(lesson.steps))
    row.markdown(t("lessons.paused", title=lesson.title[lang], what=what))
    row.button(t("lessons.resume"), key="lessons.resume", on_click=go, args=(lesson.id, n), type="primary")
    row.button(t("lessons.leave"), key="lessons.leave", on_click=leave, type="tertiary")


def _pending(box, lesson: Lesson, step: Step, lang: str, err: NeedsRun) -> None:
    """A question about a run that has not happened: the options now (the learner predicts), the grade after."""
    box.markdown(f"**{step.question.prompt[lang]}**")
    if answered(lesson, step) is not None:
        box.info(t(f"lessons.needs_run.{err.what}"), icon="⏳")
        return
    opts = err.options
    if all(isinstance(o, (int, float)) and not isinstance(o, bool) for o in opts):
        opts = sorted(opts)
    shown = [{k: format_option(o, k, err.option_labels) for k in ("en", "zh")} for o in opts]
    row = box.container(horizontal=True)
    for i, opt in enumerate(shown):
        row.button(opt[lang], key=f"lessons.option.{i}", on_click=_pick, args=(lesson.id, step.number, i, None),
                   kwargs={"text": opt["en"]})
    row.button(t("lessons.skip"), key="lessons.skip", type="tertiary", on_click=_pick,
               args=(lesson.id, step.number, None, None, True))


def _question(box, lesson: Lesson, step: Step, lang: str) -> None:
    q = step.question
    try:
        key = frozen_key(lesson, step)
    except NeedsRun as err:
        _pending(box, lesson, step, lang, err)
        return
    except Exception as err:  # noqa: BLE001 -- a broken key must not hide the page; the lesson check names it
        box.error(t("lessons.key_failed", error=str(err)))
        return
    done = answered(lesson, step)
    if done is not None and done.get("right") is None and not done.get("skipped"):  # predicted before the run
        _pick(lesson.id, step.number, done["picked"], key.kind == "choice" and done.get("text") ==
              key.options[key.correct]["en"], text=done.get("text"))
        done = answered(lesson, step)
    box.markdown(f"**{q.prompt[lang]}**")
    moved = drifted(step)
    if moved:
        warn = box.container(horizontal=True, vertical_alignment="center")
        warn.warning(t("lessons.drifted", n=len(moved)))
        warn.button(t("lessons.restore"), key="lessons.restore", on_click=apply_settings, args=(step,))
    if done is None:
        box.caption(t("lessons.page_waits"))
        if key.kind == "choice":
            row = box.container(horizontal=True)
            for i, opt in enumerate(key.options):
                row.button(opt[lang], key=f"lessons.option.{i}", on_click=_pick,
                           args=(lesson.id, step.number, i, i == key.correct))
        else:
            row = box.container(horizontal=True, vertical_alignment="bottom")
            guess = row.number_input(t("lessons.estimate_within", within=q.within), key="lessons.estimate", value=None,
                                     format="%g")
            row.button(t("lessons.check"), key="lessons.check", disabled=guess is None, on_click=lambda: _pick(
                lesson.id, step.number, st.session_state.get("lessons.estimate"),
                key.grade(q, st.session_state.get("lessons.estimate"))))
        row.button(t("lessons.skip"), key="lessons.skip", type="tertiary", on_click=_pick,
                   args=(lesson.id, step.number, None, False, True))
        return
    shown = key.options[key.correct][lang] if key.kind == "choice" else key.values[lang]["answer"]
    if done.get("skipped"):
        box.info(t("lessons.skipped", answer=shown))
    elif done.get("right"):
        box.success(t("lessons.right", answer=shown))
    else:
        box.error(t("lessons.wrong", answer=shown, picked=_picked_text(key, done, lang)))
    box.markdown(key.explanation(q, lang))
    scroll_to_chart(lesson, step)


def _picked_text(key: Key, done: dict, lang: str) -> str:
    """What the learner answered, as the question showed it: the option's words, or the number typed."""
    picked = done.get("picked")
    if key.kind == "choice":
        return key.options[picked][lang] if isinstance(picked, int) and 0 <= picked < len(key.options) else "?"
    return f"{picked:g}" if isinstance(picked, (int, float)) else "?"


def scroll_to_chart(lesson: Lesson, step: Step) -> None:
    """Once per answer: bring the revealed chart into view (on a 1280 × 720 projector it sits below the banner)."""
    flag = f"lessons._shown.{lesson.id}.{step.number}"
    if not step.chart or st.session_state.get(flag):
        return
    st.session_state[flag] = True
    css = "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", f"{step.chart[0]}.chart")
    st.html(f"""<script>(() => {{ let n = 0; const t = setInterval(() => {{
      const el = document.querySelector('.{css}');
      if (el || ++n > 60) {{ clearInterval(t); if (el) el.scrollIntoView({{behavior: 'smooth', block: 'center'}}); }}
    }}, 250); }})();</script>""", unsafe_allow_javascript=True)


def chart_gate(key: str) -> tuple[bool, dict | None]:
    """``(hide, highlight)`` for the chart (or the sentence, table or metric) ``key`` of this run.

    While the open step's question is unanswered, *everything* the page draws from the model waits: every chart
    and every element gated by :func:`hidden` / ``ui.widgets.revealed``, whatever its key, except the ones the
    step lists under ``show`` (drawn while the learner predicts). The rule does not depend on which chart a page
    author thought the question was about, so a caption, a title or another chart that reads the same numbers
    out cannot give the answer away. After the answer, the first chart of the step's ``chart`` list is drawn
    with the part the key names highlighted. A question about a Training-lab run that has not finished
    (``NeedsRun``) hides nothing: the run is drawn as it goes.
    """
    found = active_step()
    if not found:
        return False, None
    lesson, step = found
    if _later_question(lesson, step, key) is not None:  # a later step asks about it: it waits for that question
        return True, None
    if step.question is None:
        return False, None
    if answered(lesson, step) is None:
        if key in step.show:
            return False, None
        try:
            frozen_key(lesson, step)
        except NeedsRun:  # the key comes from the run on screen: the chart shows it running
            return False, None
        except Exception:  # noqa: BLE001 -- the banner says so
            pass
        return True, None
    if not step.chart or key != step.chart[0]:
        return False, None
    try:
        return False, frozen_key(lesson, step).highlight or None
    except Exception:  # noqa: BLE001 -- the banner says so
        return False, None


def _later_question(lesson: Lesson, step: Step, key: str) -> int | None:
    """The first later step of ``lesson`` whose question is about chart ``key`` (its ``chart`` list) and is not
    answered yet, unless ``step`` itself draws the chart (its ``chart`` or ``show``). Such a chart waits on the
    steps before that question, asked or not: a reading step or an earlier reveal never answers a later question
    (lesson 1: step 1 would show the parameter count step 6 asks about; step 2's reveal, the norms step 3 asks
    about)."""
    if key in step.chart or key in step.show:
        return None
    for later in lesson.steps[step.number:]:
        if later.question is not None and key in later.chart and answered(lesson, later) is None:
            return later.number
    return None


def placeholder_for(key: str) -> str | None:
    """The placeholder a hidden chart draws, or None: the charts the step's question is about (its ``chart`` list)
    say "predict first" where they will appear; a chart a later step asks about says which step; the rest of the
    page's hidden charts leave no gap (the banner says that the page waits for the answer)."""
    found = active_step()
    if not found:
        return None
    later = _later_question(*found, key)
    if later is not None:
        return t("lessons.later_question", n=later)
    return t(st.session_state.get(GATE_TEXT_KEY, "lessons.predict_first")) if key in found[1].chart else None


GATE_TEXT_KEY = "lessons.gate_text"  # a class (ui/teaching/class_mode.py) sets it: its charts wait for the lecturer's reveal


def predict_first(text: str | None = None) -> None:
    """The placeholder of a chart (or table) that the open question hides: answer first, or in a class, wait for
    the reveal (``text``: another reason, :func:`placeholder_for`)."""
    st.info(text or t(st.session_state.get(GATE_TEXT_KEY, "lessons.predict_first")), icon="🤔")


def hidden(key: str) -> bool:
    """Whether a page element that reads the model's numbers out (a table, a sentence, a metric; ``key``: the
    chart it describes) waits for the answer to the question open on this page (:func:`chart_gate`)."""
    return chart_gate(key)[0]


def page_shortcut(shortcut: str) -> str | None:
    """A page's own PageDown / PageUp button gives its shortcut up while a lesson is open (the clicker moves the
    lesson)."""
    return None if st.session_state.get(ACTIVE_KEY) else shortcut
