"""The lesson banner above a step's page: the step's text, its question (options, an estimate, Skip), the verdict
and explanation after the answer, Back / Next (PageUp / PageDown)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from teaching.lessons import Key, Lesson, Step
from teaching.answers.core import NeedsRun, format_option
from ui.i18n import current_lang, t
from ui.presenter import css_class
from teaching.course import LESSONS_PAGE
from ui.teaching.steps import active, answered, apply_settings, drifted, frozen_key, go, leave, progress, seat


# ---- the banner -------------------------------------------------------------------------------------------
def _pick(lesson_id: str, n: int, picked: Any, right: bool | None, skipped: bool = False, text: str | None = None) -> None:
    """Record an answer; ``right`` None with the option's ``text``: picked before the run it is graded on."""
    progress(lesson_id).answers[str(n)] = {"picked": picked, "right": None if right is None else bool(right),
                                           "skipped": skipped, "text": text}
    seat().shown.discard((lesson_id, n))


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
    if not seat().history:
        seat().history = True
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
    scroll_to_step(lesson, step)
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
        # the option picked by its words (the run's options may come in another order), graded by the one grader
        picked = (next((i for i, o in enumerate(key.options) if o["en"] == done.get("text")), None)
                  if key.kind == "choice" else done["picked"])
        _pick(lesson.id, step.number, done["picked"], key.grade(q, picked), text=done.get("text"))
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
                           args=(lesson.id, step.number, i, key.grade(q, i)))
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


def _chart_css(step: Step) -> str:
    return "." + css_class(f"{step.chart[0]}.chart")


def scroll_to_chart(lesson: Lesson, step: Step) -> None:
    """Once per answer: bring the revealed chart into view (on a 1280 × 720 projector it sits below the banner)."""
    flag = (lesson.id, step.number)
    if not step.chart or flag in seat().shown:
        return
    seat().shown.add(flag)
    _scroll_into_view(_chart_css(step), "center")


def scroll_to_step(lesson: Lesson, step: Step) -> None:
    """Once per step entered: what the step is about into view. A question: the page's top, so the step's text
    and question are on the first screen (the next step on the same page would otherwise open where the last
    reveal scrolled to, its question above the screen); no question: the step's chart, as little scrolled as
    shows it (it may sit below the first screen)."""
    if seat().topped == (lesson.id, step.number):
        return
    seat().topped = (lesson.id, step.number)
    if step.question is None and step.chart:
        _scroll_into_view(_chart_css(step), "nearest")
    else:
        _scroll_into_view('[data-testid="stMainBlockContainer"]', "start")


def scroll_script(selector: str, block: str) -> str:
    """A script that scrolls the first element matching ``selector`` into view once it is drawn, a chart in it
    included (tried for 60 s), and keeps it there while the page around it is still being laid out (15 s), until the
    reader scrolls, types, clicks or touches. A chart's box is there before its figure, and a figure is drawn before it
    takes its responsive height: scrolled once, "nearest" left a small box inside the screen where it was, and the
    figure then grew past the screen's foot (a loaded server: 40 % of the chart on screen). So each time the box moves
    or changes size, it is scrolled again. A newer scroll (the reveal's chart after the step's top) stops an older
    one."""
    return f"""<script>(() => {{ let n = 0, last = null, left = 60; const quit = new AbortController();
      const done = () => {{ clearInterval(t); quit.abort(); }};
      window.__lessonScrollDone?.(); window.__lessonScrollDone = done;  // the newest scroll (a reveal's) wins
      const scroller = (e) => {{ for (let p = e.parentElement; p; p = p.parentElement) {{
        const o = getComputedStyle(p).overflowY;
        if ((o === 'auto' || o === 'scroll') && p.scrollHeight > p.clientHeight) return p; }}
        return document.scrollingElement; }};
      const t = setInterval(() => {{
        const el = document.querySelector({selector!r});
        const drawing = el && el.querySelector('[data-testid="stPlotlyChart"]') && !el.querySelector('.main-svg');
        if (!el || drawing) {{ if (++n > 240) done(); return; }}
        if (!last) ['wheel', 'touchstart', 'keydown', 'pointerdown'].forEach(e => addEventListener(e, done,
          {{signal: quit.signal, passive: true}}));
        const r = el.getBoundingClientRect();
        const at = [Math.round(r.top + scroller(el).scrollTop), Math.round(r.height)].join();
        if (at !== last) {{ el.scrollIntoView({{behavior: last ? 'auto' : 'smooth', block: {block!r}}}); last = at; }}
        if (--left < 0) done();
      }}, 250); }})();</script>"""


def _scroll_into_view(selector: str, block: str) -> None:
    """Bring ``selector`` into view (see :func:`scroll_script`)."""
    st.html(scroll_script(selector, block), unsafe_allow_javascript=True)
