"""The lesson gate: while a step's question is open, the page's charts and the sentences that read them out wait
(:func:`chart_gate`); a chart a later question asks about waits for that question; the placeholders."""

from __future__ import annotations

import streamlit as st

from teaching.lessons import Lesson, Step
from teaching.answers.core import NeedsRun
from settings.schema import DEFAULTS
from ui.i18n import t
from ui.state import DEFAULTS_KEY
from ui.teaching.steps import active_step, answered, frozen_key, seat


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
    about). Only when the chart shows here what it will show there: every setting the later step declares has the
    same value on this step (lesson 4's head map scored by previous-token heads on step 5 does not answer step 6's
    question about induction scores, and stays)."""
    if key in step.chart or key in step.show:
        return None
    def same_view(later: Step) -> bool:
        defaults = st.session_state.get(DEFAULTS_KEY, {})  # a step sets what it does not declare to these
        return all(step.settings.get(k, defaults.get(k, DEFAULTS.get(k))) == v for k, v in later.settings.items())

    for later in lesson.steps[step.number:]:
        if (later.question is not None and key in later.chart and answered(lesson, later) is None
                and same_view(later)):
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


GATE_TEXT_KEY = "lessons.gate_text"  # a class (ui/teaching/class_banner.py) sets it: charts wait for the reveal


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
    return None if seat().active else shortcut
