"""No lesson question is answered by its own page: every question step, opened by its link in a fresh session, in
English and Chinese, shows none of the numbers its explanation uses before the learner answers (at their printed
precision; numbers the step's own text, prompt or options print, the model's settings and one-digit integers are
allowed), and once it is answered the page does not print a later question's answer; nor does a step without a
question.

Sampled for time: lesson 6 (SmolLM2 interventions: a head sweep per step) runs one step of each experiment, in
English (steps 3, 5 and 8); lesson 4 (SmolLM2) runs in English only; lesson 5 (the Training lab: its keys are read
from a training run of the session, which a fresh session opened by a link has not made) is left out. Their pages
share the gate of every other page (``ui.teaching.steps.chart_gate``: while a question is open every chart and every gated
sentence waits, whatever its key).
"""

from __future__ import annotations

import re

import pytest

from teaching import lessons
from teaching.lessons import by_id, compute_key, inputs_for
from tests.lesson_scan import leaks, open_step, page_text, printed_numbers, shown_in
from ui.strings.common import EN as EN_COMMON, ZH as ZH_COMMON
from ui.strings.lesson_steps import EN, ZH

PAGES = dict(lessons._pages_list())
RUNS = [("minimind_block", ("en", "zh"), None), ("numpy_decoder", ("en", "zh"), None),
        ("gpt2_pre_ln", ("en", "zh"), None), ("variants", ("en", "zh"), None), ("smollm2_inside", ("en",), None),
        ("interventions", ("en",), (3, 5, 8))]  # a sample: both experiments (induction, facts)
SMOLLM2 = {"smollm2_inside", "interventions"}


def _cases():
    for lesson_id, langs, sample in RUNS:
        lesson = by_id(lesson_id)
        for step in lesson.steps:
            if step.question is not None and (sample is None or step.number in sample):
                for lang in langs:
                    yield pytest.param(lesson_id, step.number, lang, id=f"{lesson_id}-{step.number}-{lang}",
                                       marks=[pytest.mark.smollm2] if lesson_id in SMOLLM2 else [])


@pytest.fixture(scope="module")
def keys():
    """Each step's key and allowed numbers, computed outside the app once (the lesson check's own path)."""
    cache = {}

    def get(lesson_id: str, n: int):
        if (lesson_id, n) not in cache:
            lesson = by_id(lesson_id)
            step = lesson.step(n)
            inputs = inputs_for(step)
            key = compute_key(lesson, step, inputs)
            config = inputs.config
            allowed = {str(v) for v in (*config.to_dict().values(), inputs.input_ids.shape[1], len(lesson.steps))
                       if isinstance(v, int) and not isinstance(v, bool)}
            cache[lesson_id, n] = (lesson, step, key, allowed)
        return cache[lesson_id, n]

    return get


CITATION = re.compile(r"et al\.?,?\s*\(?\d{4}")  # a paper's year ("Xiao et al. 2023"): the page cites it too


def _numbers(step, key, allowed: set[str], lang: str, text: str) -> set[str]:
    text = CITATION.sub(" ", text)
    own = printed_numbers(" ".join([step.text[lang], step.question.prompt[lang], *(o[lang] for o in key.options),
                                    *map(str, step.settings.values())]))
    return {n for n in printed_numbers(text) - allowed if not shown_in(n, own)}


@pytest.mark.parametrize("lesson_id, n, lang", list(_cases()))
def test_a_question_step_does_not_give_its_answer_away(keys, lesson_id, n, lang):
    lesson, step, key, allowed = keys(lesson_id, n)
    at = open_step(lesson_id, n, lang, PAGES[step.page])
    assert not at.exception, at.exception[0].value
    explained = _numbers(step, key, allowed, lang, key.explanation(step.question, lang))
    text = page_text(at)
    found = leaks(explained, text)
    assert not found, f"{lesson_id} step {n} ({lang}) shows before the answer: {found}"
    # the page's "what to look for" boxes (a page may have one per section) say what its charts show: they wait too
    hints = [m.value for box in at.expander if box.label == {"en": EN_COMMON, "zh": ZH_COMMON}[lang]["common.what_to_look_for"]
             for m in box.markdown]
    assert hints and set(hints) == {{"en": EN, "zh": ZH}[lang]["lessons.hint_waits"]}, f"{lesson_id} step {n}: {hints}"

    [skip] = [b for b in at.button if str(b.key) == "lessons.skip"]  # reveal: the answer, the chart, its sentences
    skip.click().run()
    assert not at.exception, at.exception[0].value
    _no_later_answer(keys, lesson_id, n, lang, at, allowed, f"step {n}'s reveal")


def _later_questions(lesson_id: str, n: int) -> list[int]:
    sample = next(s for i, _, s in RUNS if i == lesson_id)
    return [s.number for s in by_id(lesson_id).steps[n:]
            if s.question is not None and (sample is None or s.number in sample)]


def _no_later_answer(keys, lesson_id: str, n: int, lang: str, at, allowed: set[str], what: str) -> None:
    """No later question of the lesson has its answer printed on this page (its charts wait: ui.teaching.steps.chart_gate).

    A later step with other settings than this one's (another score on the same head map) is checked against the
    page's words without the cells its charts print: 270 two-decimal cells of another quantity hold most two-digit
    numbers by chance."""
    now = by_id(lesson_id).step(n).settings
    texts = {True: page_text(at), False: page_text(at, cells=False)}
    for m in _later_questions(lesson_id, n):
        _, later, key, later_allowed = keys(lesson_id, m)
        text = texts[all(now.get(k) == v for k, v in later.settings.items())]
        # a reading (480, "8.08 MiB"), even when it is one of the options (the later page prints them, this one must
        # not); an answer in words ("almost evenly: no weight is 10 % above 1/T") is not printed by a chart
        if not re.match(r"[-−]?\d", key.values[lang]["answer"]):
            continue
        own = printed_numbers(" ".join([later.text[lang], later.question.prompt[lang], *map(str, later.settings.values())]))
        answer = {n for n in printed_numbers(key.values[lang]["answer"]) - later_allowed - allowed if not shown_in(n, own)}
        found = leaks(answer, text)
        assert not found, f"{lesson_id} {what} ({lang}) states step {m}'s answer: {found}"


def _reading_steps():
    for lesson_id, _, sample in RUNS:
        for step in by_id(lesson_id).steps:
            if step.question is None and sample is None and _later_questions(lesson_id, step.number):
                yield pytest.param(lesson_id, step.number, id=f"{lesson_id}-{step.number}",
                                   marks=[pytest.mark.smollm2] if lesson_id in SMOLLM2 else [])


@pytest.mark.parametrize("lesson_id, n", list(_reading_steps()))
def test_a_reading_step_does_not_answer_a_later_question(keys, lesson_id, n):
    """A step without a question (English: the numbers are the same in both languages) prints no later answer."""
    step = by_id(lesson_id).step(n)
    at = open_step(lesson_id, n, "en", PAGES[step.page])
    assert not at.exception, at.exception[0].value
    _no_later_answer(keys, lesson_id, n, "en", at, set(), f"step {n}")
