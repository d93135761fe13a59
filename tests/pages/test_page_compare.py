"""Compare side by side (ui/compare.py) under AppTest: each side's chart is the single view of the same settings,
the difference panel is the difference of the two single views, the link reopens both sides, bad B values in a
link get the sidebar's messages, and mismatched shapes get a sentence, never an exception."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import compare
from analysis.trace import run_trace
from tests.page_helpers import open_compared, open_page, recording_charts, reference, texts
from ui.figures.attention import attention_heatmap
from ui.figures.compare import ratio_by_depth
from ui.figures.norms import residual_norm_lines

HEADS_8 = {"cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 8}


def _heatmaps(calls) -> dict[str, pd.DataFrame]:
    """The attention heatmaps of a run by the start of their title: "A ·", "B ·", "A −" (the difference) or the
    single view's."""
    found = {}
    for call in calls.all(attention_heatmap):
        title = call.arguments["title"]
        found[title[:3] if title[:3] in ("A ·", "B ·", "A −") else "single"] = call.data
    return found


def _single(page: str, builder, **state) -> pd.DataFrame:
    with recording_charts() as calls:
        open_page(page, **state)
    if builder is attention_heatmap:
        return _heatmaps(calls)["single"]
    return calls.data(builder)


def _within(shown: pd.DataFrame, single: pd.DataFrame) -> pd.DataFrame:
    """The single view's cells at the positions a compared map shows (comparing, each half-width map shows a square
    window of the positions, ``ui.window.COMPARE_HEATMAP_W``): the same rows and columns, by position."""
    rows = [single.index.get_loc(i) for i in shown.index]
    cols = [single.columns.get_loc(c) for c in shown.columns]
    assert rows == list(range(rows[0], rows[0] + len(rows))) and cols == rows  # a square window, in order
    return single.iloc[rows, cols]


def _compare_with(b_state: dict):
    """The Attention page: "Compare", then ``b_state`` in the sidebar (which edits B); the page and its charts."""
    return open_compared("attention", b_state)


@pytest.fixture(scope="module")
def attention():
    """B's heads 8."""
    return _compare_with(HEADS_8)


def test_each_side_is_its_single_view_and_the_panel_their_difference(attention):
    at, calls = attention
    assert not at.exception and at.session_state["compare.side"] == "b"
    shown = _heatmaps(calls)
    single_a, single_b = _single("attention", attention_heatmap), _single("attention", attention_heatmap, **HEADS_8)
    pd.testing.assert_frame_equal(shown["A ·"], _within(shown["A ·"], single_a), check_exact=True)
    pd.testing.assert_frame_equal(shown["B ·"], _within(shown["B ·"], single_b), check_exact=True)
    a, b = _within(shown["A −"], single_a), _within(shown["A −"], single_b)
    assert np.array_equal(shown["A −"].to_numpy(), a.to_numpy() - b.to_numpy(), equal_nan=True)


def test_the_sentence_names_the_largest_change_of_fresh_models(attention):
    at, _ = attention
    outs = [run_trace(model, ids) for model, ids, _ in (reference(), reference(**HEADS_8))]
    change = compare.largest_attention_change(outs[0].attentions, outs[1].attentions)
    said = texts(at)
    assert f"layer {change.layer + 1} head {change.head + 1}, query {change.query} → key {change.key}" in said
    assert "A has 4 heads per layer, B 8: heads past 4 have no counterpart." in said


def test_the_link_reopens_both_sides_in_a_fresh_session(attention):
    at, calls = attention
    query = dict(at.query_params)
    assert query["compare"] == "b" and query["cfg.num_attention_heads"] == "8"
    with recording_charts() as again:
        fresh = open_page("attention", via="switch", query=query, defaults=False, lang=None)
    assert not fresh.exception
    assert fresh.session_state["compare.other"]["cfg.num_attention_heads"] == 4
    for side in ("A ·", "B ·", "A −"):
        pd.testing.assert_frame_equal(_heatmaps(again)[side], _heatmaps(calls)[side], check_exact=True)


def test_both_sides_share_one_colour_scale_and_the_difference_is_centred(attention):
    """Raw scores: A's and B's heatmaps span -m..m with m the largest |score| of the two single views; A − B is
    centred at 0 on its own largest |difference|."""
    at, _ = attention
    at.session_state["attn.stage"] = "raw"
    with recording_charts() as calls:
        at.run()
    shown = {side: call for side, call in zip(("A ·", "B ·", "A −"), [
        next(c for c in calls.all(attention_heatmap) if c.arguments["title"].startswith(p)) for p in ("A ·", "B ·", "A −")])}
    singles = [_single("attention", attention_heatmap, **{"attn.stage": "raw", **s}).to_numpy() for s in ({}, HEADS_8)]
    m = max(float(np.abs(x).max()) for x in singles)
    for side in ("A ·", "B ·"):
        heatmap = shown[side].figure.data[0]
        assert (heatmap.zmin, heatmap.zmax) == pytest.approx((-m, m))
    diff = shown["A −"].figure.data[0]
    d = float(np.abs(singles[0] - singles[1]).max())
    assert (diff.zmin, diff.zmax) == pytest.approx((-d, d)) and d > 0


def test_swap_and_stop(attention):
    at, _ = attention
    at.button(key="compare.swap").click().run()  # the sidebar still edits B, which is now the 4-head view
    assert at.session_state["cfg.num_attention_heads"] == 4
    assert at.query_params["a.cfg.num_attention_heads"] == "8" and at.query_params["compare"] == "b"
    at.segmented_control(key="compare.side.en").set_value("a").run()  # edit A: the sidebar shows A's 8 heads
    assert at.session_state["cfg.num_attention_heads"] == 8 and at.query_params["compare"] == "a"
    assert "b.cfg.num_attention_heads" not in at.query_params  # B is the default (4 heads)
    at.button(key="compare.stop").click().run()
    assert "compare.other" not in at.session_state and "compare" not in at.query_params
    assert at.session_state["cfg.num_attention_heads"] == 8 and not at.exception


def test_hostile_b_values_in_a_link_get_the_usual_messages():
    query = {"compare": "a", "b.cfg.num_hidden_layers": "999", "b.cfg.norm_type": "bogus",
             "b.model.source": "trained", "b.cfg.num_attention_heads": "7", "b.cfg.seed": "inf",
             "a.cfg.seed": "3", "b.input.mode": ["text", "random"]}
    at = open_page("attention", via="switch", query=query, defaults=False, lang=None)
    assert not at.exception
    said = texts(at)
    for param in ("b.cfg.num_hidden_layers", "b.cfg.norm_type", "b.cfg.seed", "b.input.mode"):
        assert f"(`{param}`)" in said
    assert "it must be a whole number from 1 to 48." in said and "it must be one of layernorm" in said
    assert "trained in another browser session" in said and "`a.cfg.seed`" in said
    assert "Side B: Attention heads was 7, which is not valid now; it is set to 8." in said
    other = at.session_state["compare.other"]
    assert (other["cfg.num_hidden_layers"], other["cfg.norm_type"], other["cfg.num_attention_heads"]) == (
        2, "layernorm", 8)
    assert not any(k in at.query_params for k in ("b.cfg.num_hidden_layers", "b.cfg.norm_type", "a.cfg.seed"))
    assert at.query_params["compare"] == "a"


def test_a_bad_side_letter_a_path_and_a_long_text_are_named():
    query = {"compare": "z", "b.model.checkpoint": "../../etc/passwd",
             "b.input.text": "x" * 20_001}
    at = open_page("attention", via="switch", query=query, defaults=False, lang=None)
    assert not at.exception
    said = texts(at)
    assert "(`compare`) = “z”" in said and "(`b.model.checkpoint`) = “\\.\\.\\/" in said
    assert "Side B: The text had 20,001 characters; only the first 20,000 are kept." in said
    other = at.session_state["compare.other"]
    assert other["model.checkpoint"] == "" and len(other["input.text"]) == 20_000


def test_a_b_over_the_budget_gets_the_refusal_and_a_is_still_drawn():
    query = {"b.cfg.vocab_size": "50257", "b.cfg.hidden_size": "768", "b.cfg.num_hidden_layers": "48",
             "b.cfg.intermediate_size": "3072"}
    with recording_charts() as calls:
        at = open_page("attention", via="switch", query=query, defaults=False, lang=None)
    assert not at.exception
    assert any(e.value.startswith("Side B: Not started: building this model would need") for e in at.error)
    pd.testing.assert_frame_equal(_heatmaps(calls)["single"], _single("attention", attention_heatmap),
                                  check_exact=True)  # A, the sidebar's side, as a single view


def test_mismatched_shapes_are_aligned_and_said():
    """B deeper, with 8 heads and another text; the sidebar (B) shows head 6, which A lacks."""
    at, _ = _compare_with({"cfg.num_hidden_layers": 3, **HEADS_8, "input.text": "白日依山尽"})
    at.session_state["attn.head"] = 6
    at.run()
    assert not at.exception
    said = texts(at)
    assert "Side A has no layer 1 head 6 (it has 2 layers of 4 heads)." in said and "No difference panel" in said
    assert "A has 2 layers, B 3: the layers past 2 have no counterpart." in said
    ta = reference()[1].shape[1]  # the default text's tokens, by a fresh tokenizer
    assert "A has 4 heads per layer, B 8" in said and f"A reads {ta} tokens, B 5: positions past 4" in said
    at.session_state["attn.head"] = 2  # a head both have: the difference covers the 5 positions both have
    at.run()
    assert f"The difference covers positions 0–4, the ones both sides have (A {ta} tokens, B 5)." in texts(at)


def test_norms_sides_are_their_single_views_and_the_ratio_theirs():
    at = open_page("norms")
    with recording_charts() as calls:
        at.button(key="compare.preset.norm").click().run()
    assert not at.exception and at.session_state["cfg.norm_type"] == "rmsnorm"  # B, the sidebar's
    drawn = {c.arguments["title"][:1]: c for c in calls.all(residual_norm_lines) if c.arguments["title"][1:3] == " ·"}
    lines = {side: call.data for side, call in drawn.items()}
    for axis in ("xaxis", "yaxis", "yaxis2"):  # shared axes: equal values at the same place on both sides
        assert drawn["A"].layout[axis]["range"] == drawn["B"].layout[axis]["range"], axis
    top = max(float(df[df["depth"] < df["depth"].max()]["norm"].max()) for df in lines.values())
    assert drawn["A"].layout["yaxis"]["range"][1] >= top
    single = {"A": _single("norms", residual_norm_lines), "B": _single("norms", residual_norm_lines,
                                                                       **{"cfg.norm_type": "rmsnorm"})}
    for side in "AB":
        pd.testing.assert_frame_equal(lines[side], single[side], check_exact=True)
    means = [single[s].groupby("depth")["norm"].mean().to_numpy() for s in "AB"]
    ratio = calls.data(ratio_by_depth)["ratio"].to_numpy()
    assert np.array_equal(ratio, means[1] / means[0])
    assert f"{means[1][2] / means[0][2]:.3g}× A's" in texts(at)


def test_the_repeated_half_agrees_where_both_sides_read_the_same_tokens():
    """Causal attention: B's first half reads exactly A's tokens, so every weight both have agrees (exactly, or to
    rounding where the longer input is computed in other blocks)."""
    at = open_page("attention")
    at.button(key="compare.preset.repeat").click().run()
    assert not at.exception
    ta = reference()[1].shape[1]
    said = texts(at)
    assert ("agree to the digits shown" in said or "is the same in A and B" in said) and f"A reads {ta} tokens, B {2 * ta}" in said


def test_a_lesson_step_is_one_view_again():
    """Comparing, then Next in a lesson: the step's own settings, and no second side left from before it."""
    from tests.lesson_scan import open_step
    from ui.teaching.steps import SEAT_KEY

    at = open_step("minimind_block", 7, "en", "app_pages/overview.py")
    at.button(key="compare.start").click().run()
    assert "compare.other" in at.session_state
    at.button(key="lessons.next").click().run()
    assert not at.exception and at.session_state[SEAT_KEY].active.step == 8
    assert "compare.other" not in at.session_state


def test_a_checkpoint_side_is_its_single_view_and_travels_under_its_letter():
    """B on the Tang-poem model (another vocabulary, depth and tokens), then Swap: A is the checkpoint, its link
    names it under ``a.``, and a fresh session opens both again."""
    poem = {"model.source": "checkpoint", "model.checkpoint": "tang-poems-small"}
    at, calls = _compare_with(poem)
    assert not at.exception
    b_shown = _heatmaps(calls)["B ·"]
    pd.testing.assert_frame_equal(b_shown, _within(b_shown, _single("attention", attention_heatmap, **poem)),
                                  check_exact=True)
    said = texts(at)
    assert "A's vocabulary has 4,000 tokens, B's 2,579" in said and "read different tokens" in said
    at.button(key="compare.swap").click().run()
    query = dict(at.query_params)
    assert query["a.model.source"] == "checkpoint" and query["a.model.checkpoint"] == "tang-poems-small"
    with recording_charts() as again:
        fresh = open_page("attention", via="switch", query=query, defaults=False, lang=None)
    assert not fresh.exception
    pd.testing.assert_frame_equal(_heatmaps(again)["A ·"], _heatmaps(calls)["B ·"], check_exact=True)



def test_the_presets_the_lessons_need_are_both_sides_in_one_click():
    """The preset list's pairs of models and texts: SmolLM2 vs the Tang-poem model on one Chinese line, an English
    line vs its Chinese translation on SmolLM2; the model trained in this session is offered only once one exists."""
    from settings.sides import POEM_LINE, SIDE_DEFAULTS, TRANSLATION, preset_sides

    a, b = preset_sides("models", dict(SIDE_DEFAULTS))
    assert (a["model.checkpoint"], b["model.checkpoint"]) == ("smollm2-135m", "tang-poems-small")
    assert a["input.text"] == b["input.text"] == POEM_LINE and a["model.source"] == b["model.source"] == "checkpoint"
    a, b = preset_sides("translation", dict(SIDE_DEFAULTS))
    assert a["model.checkpoint"] == b["model.checkpoint"] == "smollm2-135m"
    assert (a["input.text"], b["input.text"]) == TRANSLATION
    a, b = preset_sides("trained", dict(SIDE_DEFAULTS))
    assert (a["model.source"], b["model.source"]) == ("random", "trained")
    at = open_page("norms")
    trained = at.button(key="compare.preset.trained")
    assert trained.disabled and "Train a model in the Training lab first" in trained.help


@pytest.mark.smollm2
def test_smollm2_against_the_poem_model_on_one_line():
    """The preset on Layer norms: A is SmolLM2 (30 blocks), B the Tang-poem model, on the same line; both drawn, the
    sentence says their depths differ, and each side's ratio is the single view's."""
    at = open_page("norms", timeout=300)
    with recording_charts() as calls:
        at.button(key="compare.preset.models").click().run(timeout=300)
    assert not at.exception
    assert at.session_state["compare.other"]["model.checkpoint"] == "smollm2-135m"
    assert at.session_state["model.checkpoint"] == "tang-poems-small"
    said = texts(at)
    assert "A has 30 layers" in said and "B's residual norm after the last block is" in said
    assert len(calls.all(residual_norm_lines)) >= 2 and len(calls.all(ratio_by_depth)) == 1
