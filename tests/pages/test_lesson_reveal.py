"""While a lesson's question is open, the page's sentences that read its chart out wait with the chart (they would
give the answer away): lesson 4's logit-lens step on SmolLM2, before and after the answer."""

from __future__ import annotations

import pytest

from teaching.lessons import ROOT, load
from tests.page_helpers import open_page
from ui.strings.lesson_steps import EN
from teaching.course import Pointer
from ui.teaching.steps import SEAT_KEY, LessonSeat

pytestmark = pytest.mark.smollm2

LENS_STEP = 10  # lessons/040_smollm2_inside.toml: "from which depth on is the final answer the lens's top token?"


def test_lens_sentences_wait_for_the_answer():
    step = load(ROOT / "teaching/lessons/040_smollm2_inside.toml").step(LENS_STEP)
    model = {k: step.settings[k] for k in ("model.source", "model.checkpoint", "input.text")}
    at = open_page("lens", **{SEAT_KEY: LessonSeat(active=Pointer("smollm2_inside", LENS_STEP))}, **model, timeout=600)
    assert not at.exception
    assert any("from which depth on" in m.value for m in at.markdown)  # the banner's question
    assert EN["lessons.predict_first"] in [i.value for i in at.info]
    page_says = ("At the last position (input", "Over all ")  # lens.last_sentence, lens.median_sentence
    assert not any(m.value.startswith(page_says) for m in at.markdown)  # they would name the depth
    [b for b in at.button if str(b.key) == "lessons.option.0"][0].click().run()
    assert not at.exception
    assert EN["lessons.predict_first"] not in [i.value for i in at.info]
    # the lesson's 19 tokens fit the heatmap's window: every cell is drawn, so the median needs no button
    assert sum(m.value.startswith(page_says) for m in at.markdown) == 2
    assert "lens.all_run" not in [b.key for b in at.button]


def test_a_moved_slider_is_named_the_key_stays_frozen_and_the_answer_is_outlined():
    """Lesson 1, step 5 (Layer norms: which depth has the largest residual norm?). Moving the layer slider
    mid-question is said, with a button back; the question is still graded on the lesson's model (its key was
    frozen for the step's settings); after the answer the chart is drawn with the answer's depth outlined."""
    from teaching.lessons import by_id, check_lesson
    from tests.page_helpers import shown_chart
    from ui.teaching.highlight import HIGHLIGHT_LINE
    from ui.teaching.steps import step_values

    lesson = by_id("minimind_block")
    step = lesson.step(5)
    key = check_lesson(lesson)[1][4]  # the key the lesson check computes outside the app, on a fresh model
    values, fixed = step_values(step)
    at = open_page("norms", **{**values, "cfg.fixed": fixed, SEAT_KEY: LessonSeat(active=Pointer(lesson.id, 5))})
    assert not at.exception
    assert EN["lessons.predict_first"] in [i.value for i in at.info]  # no chart yet
    at.sidebar.slider(key="cfg.num_hidden_layers").set_value(values["cfg.num_hidden_layers"] + 2).run()
    assert not at.exception
    drift = EN["lessons.drifted"].split("{n}")[0]
    assert any(w.value.startswith(drift) for w in at.warning)  # said, not silently graded on another model
    [b for b in at.button if str(b.key) == "lessons.restore"][0].click().run()
    at.run()  # the restored values are applied before the next run's widgets
    assert at.session_state["cfg.num_hidden_layers"] == values["cfg.num_hidden_layers"]
    assert not any(w.value.startswith(drift) for w in at.warning)
    at.sidebar.slider(key="cfg.num_hidden_layers").set_value(values["cfg.num_hidden_layers"] + 2).run()
    [b for b in at.button if str(b.key) == f"lessons.option.{key.correct}"][0].click().run()  # the lesson's answer
    assert not at.exception
    assert any(m.value.startswith(EN["lessons.right"].split("{")[0]) for m in at.success), [e.value for e in at.error]
    at.sidebar.slider(key="cfg.num_hidden_layers").set_value(values["cfg.num_hidden_layers"]).run()  # the lesson's model
    fig = shown_chart(at, "norms.residual")
    outlined = [s for s in fig["layout"].get("shapes", []) if s.get("line", {}).get("color") == HIGHLIGHT_LINE]
    assert len(outlined) == 1, fig["layout"].get("shapes")
    # the answer, after the final norm, is the right panel's one point: outlined there, not in the gap beside it
    assert key.options[key.correct]["en"] == "after the final norm" and outlined[0]["xref"] == "x2", outlined
