"""A lesson step that compares two views (its ``compare`` table: side B's settings over the step's own, A's): the
step opens comparing, with A in the sidebar and B beside it; while its question is open the compared sentence
waits; after the answer, the sentence and the B / A chart say the key's numbers, and the key equals the mean
residual norm after the last block of the two models built independently (a forward hook on the last block).

Two such steps: lesson 1 (Pre-Norm A vs Post-Norm B) and lesson 3 (LayerNorm A vs RMSNorm B, Post-LN)."""

from __future__ import annotations

import re

import pytest
import torch

from settings.build import build_parts
from teaching.lessons import by_id
from tests.lesson_scan import open_step
from tests.page_helpers import recording_charts, texts
from ui.figures.compare import ratio_by_depth
from ui.teaching.steps import SEAT_KEY, frozen_key

STEPS = {"minimind_block": ("cfg.norm_position", "pre", "post"), "gpt2_pre_ln": ("cfg.norm_type", "layernorm", "rmsnorm")}


def _compare_step(lesson_id: str):
    lesson = by_id(lesson_id)
    return lesson, next(s for s in lesson.steps if s.compare)


def _last_block_mean_norm(settings: dict) -> float:
    """Mean over positions of the L2 norm of the last block's output (before the final norm): a hook on the module."""
    _, model, ids, _, _ = build_parts(settings)
    got = []
    handle = model.layers[-1].register_forward_hook(lambda _m, _i, out: got.append(out.detach()))
    with torch.no_grad():
        model(ids)
    handle.remove()
    return float(got[0][0].double().norm(dim=-1).mean())  # (T,) norms -> mean


@pytest.fixture(scope="module", params=list(STEPS))
def opened(request):
    lesson, step = _compare_step(request.param)
    at = open_step(lesson.id, step.number, "en", "app_pages/norms.py")
    before = texts(at)
    with recording_charts() as calls:
        at.button(key="lessons.skip").click().run()
    return lesson, step, at, before, calls


def test_the_step_opens_comparing_with_a_in_the_sidebar(opened):
    lesson, step, at, _, _ = opened
    key, a_value, b_value = STEPS[lesson.id]
    assert not at.exception
    assert at.session_state["compare.side"] == "a" and at.session_state[key] == a_value
    assert at.session_state["compare.other"][key] == b_value


def test_the_sentence_waits_for_the_answer_and_then_says_the_keys_numbers(opened):
    lesson, step, at, before, calls = opened
    assert "after the last block is" not in before  # the sentence reads the answer out: it waited
    assert at.session_state[SEAT_KEY].active.step == step.number
    said = texts(at)
    found = re.search(r"B's residual norm after the last block is ([\d.]+)× A's", said)
    assert found, said
    assert frozen_key(lesson, step).values["en"]["la"] == str(step_key_raw(lesson, step)["la"])
    key = step_key_raw(lesson, step)  # the key's numbers, computed on fresh models of the step's two sides
    assert float(found.group(1)) == pytest.approx(key["ratio"], rel=5e-3)  # printed to 3 significant digits
    table = calls.data(ratio_by_depth)  # the B / A chart: block L's ratio is the key's
    assert table["ratio"].iloc[key["la"]] == pytest.approx(key["ratio"], rel=1e-6)


def step_key_raw(lesson, step) -> dict:
    from teaching.lessons import compute_key, inputs_for

    return compute_key(lesson, step, inputs_for(step)).raw.values


@pytest.mark.parametrize("lesson_id", list(STEPS))
def test_the_key_is_the_two_models_last_block_norms(lesson_id):
    from teaching.lessons import compute_key, inputs_for

    lesson, step = _compare_step(lesson_id)
    key = compute_key(lesson, step, inputs_for(step))
    a, b = _last_block_mean_norm(step.settings), _last_block_mean_norm(step.compare)
    assert key.raw.values["a"] == pytest.approx(a, rel=1e-5) and key.raw.values["b"] == pytest.approx(b, rel=1e-5)
    reading = "larger" if b / a > 1.1 else "smaller" if b / a < 0.9 else "about the same"
    assert reading in key.options[key.correct]["en"]
