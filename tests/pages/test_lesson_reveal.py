"""While a lesson's question is open, the page's sentences that read its chart out wait with the chart (they would
give the answer away): lesson 4's logit-lens step on SmolLM2, before and after the answer."""

from __future__ import annotations

import pytest

from lessons import ROOT, load
from tests.page_helpers import open_page
from ui.strings.lessons import EN

pytestmark = pytest.mark.smollm2

LENS_STEP = 10  # lessons/040_smollm2_inside.toml: "from which depth on is the final answer the lens's top token?"


def test_lens_sentences_wait_for_the_answer():
    step = load(ROOT / "lessons/040_smollm2_inside.toml").step(LENS_STEP)
    model = {k: step.settings[k] for k in ("model.source", "model.checkpoint", "input.text")}
    at = open_page("lens", **{"lessons.active": {"lesson": "smollm2_inside", "step": LENS_STEP}}, **model, timeout=600)
    assert not at.exception
    assert any("from which depth on" in m.value for m in at.markdown)  # the banner's question
    assert EN["lessons.predict_first"] in [i.value for i in at.info]
    page_says = ("At the last position (input", "Over all ")  # lens.last_sentence, lens.median_sentence
    assert not any(m.value.startswith(page_says) for m in at.markdown)  # they would name the depth
    [b for b in at.button if str(b.key) == "lessons.option.0"][0].click().run()
    assert not at.exception
    assert EN["lessons.predict_first"] not in [i.value for i in at.info]
    assert sum(m.value.startswith(page_says) for m in at.markdown) == 2
