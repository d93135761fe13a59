"""Compare side by side on Loss, Next token, Overview and Logit lens (ui/compare.py) under AppTest: each side's
chart is the single view of the same settings, the difference panel is the difference (or ratio) of the two single
views, and mismatched shapes (another depth, text or vocabulary) get a sentence, never an exception."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import lens as lens_module
from tests.page_helpers import open_compared, open_page, recording_charts, texts
from ui.figures.compare import change_bars, ratio_by_position, relative_depth_lines
from ui.figures.generate import cache_bars
from ui.figures.lens import lens_heatmap
from ui.figures.loss import contribution_bar
from ui.figures.next_token import topk_bar
from ui.figures.overview import parameter_bar
from ui.format import percent, scientific

HEADS_8 = {"cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 8}
DEEPER_SHORTER = {"cfg.num_hidden_layers": 3, "input.text": "白日依山尽，黄河入海流。"}


def single(page: str, builder, **state) -> pd.DataFrame:
    """The data ``builder`` draws on ``page``'s single view of ``state``."""
    with recording_charts() as calls:
        open_page(page, **state)
    return calls.data(builder)


def sides(calls, builder) -> dict[str, pd.DataFrame]:
    """The data of ``builder``'s compared charts by side ("A", "B"): their titles start "A ·" and "B ·"."""
    return {c.arguments["title"][0]: c.data for c in calls.all(builder) if c.arguments["title"][1:3] == " ·"}


def each_side_is_its_single_view(calls, page: str, builder, a_state: dict, b_state: dict):
    """Assert that the compared charts of ``builder`` draw exactly the single views' data of ``a_state`` and
    ``b_state`` on ``page``; returns those two single views' data."""
    shown = sides(calls, builder)
    singles = single(page, builder, **a_state), single(page, builder, **b_state)
    for side, want in zip("AB", singles):
        pd.testing.assert_frame_equal(shown[side], want, check_exact=True)
    return singles


# ---- Loss ----------------------------------------------------------------------------------------------------
LOSS_MASK = {"loss.prompt_len": 3}


@pytest.fixture(scope="module")
def loss():
    """B's heads 8 (the same tokens), the first 3 tokens masked as a prompt on both sides."""
    return open_compared("loss", HEADS_8, **LOSS_MASK)


def test_loss_sides_are_their_single_views_and_the_panel_their_ratio(loss):
    at, calls = loss
    assert not at.exception
    single_a, single_b = each_side_is_its_single_view(calls, "loss", contribution_bar, LOSS_MASK, LOSS_MASK | HEADS_8)
    assert single_a["masked"].tolist()[:2] == [True, True]  # the page's mask reaches both sides
    panel = calls.data(ratio_by_position)
    ratio = single_b["loss"].to_numpy() / single_a["loss"].to_numpy()
    assert np.array_equal(panel["ratio"].to_numpy(), ratio, equal_nan=True)
    bars = [c.figure for c in calls.all(contribution_bar) if c.arguments["title"][1:3] == " ·"]
    assert bars[0].layout.yaxis.range == bars[1].layout.yaxis.range  # one y range
    mean = [df["loss"][~df["masked"]].mean() for df in (single_a, single_b)]
    delta = np.abs(single_b["loss"] - single_a["loss"]).to_numpy()
    p = int(np.nanargmax(delta))
    said = texts(at)
    assert f"B's mean loss is {mean[1] / mean[0]:#.3g}× A's ({mean[1]:#.4g} vs {mean[0]:#.4g} nats)." in said
    assert f"The largest change is at position {p} (" in said
    assert f"{single_a['loss'][p]:#.4g} nats in A → {single_b['loss'][p]:#.4g} in B" in said


def test_loss_of_a_deeper_side_on_a_shorter_text_is_aligned_and_said():
    at, calls = open_compared("loss", DEEPER_SHORTER)
    assert not at.exception
    shown = sides(calls, contribution_bar)
    pd.testing.assert_frame_equal(shown["B"], single("loss", contribution_bar, **DEEPER_SHORTER), check_exact=True)
    n = len(shown["B"])
    assert len(calls.data(ratio_by_position)) == n < len(shown["A"])
    said = texts(at)
    assert "A has 2 layers, B 3: the layers past 2 have no counterpart." in said
    assert f"The ratio covers positions 0–{n - 1}, the ones both sides predict" in said
    assert "read different tokens" in said and "B's mean loss is" in said


# ---- Next token ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def next_token():
    """B's heads 8: one vocabulary, the same text."""
    return open_compared("next_token", HEADS_8)


def test_next_token_sides_are_their_single_views_and_the_panel_their_difference(next_token):
    at, calls = next_token
    assert not at.exception
    single_a, single_b = each_side_is_its_single_view(calls, "next_token", topk_bar, {}, HEADS_8)
    panel = calls.data(change_bars)
    assert panel["token_id"].tolist()[:len(single_a)] == single_a["token_id"].tolist()  # A's top k, then B's new ones
    assert set(panel["token_id"]) == set(single_a["token_id"]) | set(single_b["token_id"])
    for side, table in (("a", single_a), ("b", single_b)):
        p = dict(zip(table["token_id"], table["probability"]))
        assert [v for i, v in zip(panel["token_id"], panel[side]) if i in p] == [p[i] for i in panel["token_id"] if i in p]
    assert np.array_equal(panel["change"].to_numpy(), panel["a"].to_numpy() - panel["b"].to_numpy())
    said = texts(at)
    assert f"A's top next token is “{single_a['token'].iloc[0]}” ({percent(single_a['probability'].iloc[0])}), " \
           f"B's is “{single_b['token'].iloc[0]}” ({percent(single_b['probability'].iloc[0])})." in said
    row = int(np.argmax(np.abs(panel["change"].to_numpy())))
    a, b = percent(panel["a"].iloc[row]), percent(panel["b"].iloc[row])
    assert (f": {a} in A → {b} in B." if a != b else  # a random init: changes below the digits shown
            f"the largest change is {scientific(abs(panel['change'].iloc[row]) * 100)} percentage points") in said


def test_next_token_of_another_vocabulary_and_length_compares_by_text():
    b_state = {"cfg.vocab_size": 2000, **DEEPER_SHORTER}
    at, calls = open_compared("next_token", b_state)
    assert not at.exception
    shown = sides(calls, topk_bar)
    pd.testing.assert_frame_equal(shown["B"], single("next_token", topk_bar, **b_state), check_exact=True)
    said = texts(at)
    assert "The two sides have different vocabularies: their top tokens are compared by text" in said
    assert "A's vocabulary has 4,000 tokens, B's 2,000" in said and "A predicts after its position" in said


# ---- Overview ------------------------------------------------------------------------------------------------
def _totals_said(at, a: pd.DataFrame, b: pd.DataFrame) -> None:
    ta, tb = int(a["params"].sum()), int(b["params"].sum())
    assert f"B has {tb / ta:.3g}× A's parameters ({tb:,} vs {ta:,})." in texts(at)


def test_overview_sides_are_their_single_views_on_one_y_range():
    at, calls = open_compared("overview", HEADS_8 | {"cfg.num_hidden_layers": 3})
    assert not at.exception
    single_a, single_b = each_side_is_its_single_view(calls, "overview", parameter_bar, {},
                                                      HEADS_8 | {"cfg.num_hidden_layers": 3})
    bars = [c.figure for c in calls.all(parameter_bar) if c.arguments["title"][1:3] == " ·"]
    assert bars[0].layout.yaxis.range == bars[1].layout.yaxis.range
    assert bars[0].layout.yaxis.range[1] >= max(single_a["params"].max(), single_b["params"].max())
    _totals_said(at, single_a, single_b)
    change = (single_b.set_index("component")["params"] - single_a.set_index("component")["params"]).abs()
    part = change.idxmax()  # a third block: its attention and MLP; the embeddings stay
    a, b = (int(s.set_index("component")["params"][part]) for s in (single_a, single_b))
    assert f"The largest difference is {part}: {a:,} in A → {b:,} in B." in texts(at)
    assert "A has 2 layers, B 3" in texts(at)


def test_overview_of_another_vocabulary_and_depth_is_said():
    """B with another vocabulary and one block: its single view, the totals and the embedding's change said."""
    b_state = {"cfg.vocab_size": 2000, "cfg.num_hidden_layers": 1}
    at, calls = open_compared("overview", b_state)
    assert not at.exception
    shown = sides(calls, parameter_bar)
    pd.testing.assert_frame_equal(shown["B"], single("overview", parameter_bar, **b_state), check_exact=True)
    _totals_said(at, shown["A"], shown["B"])
    said = texts(at)
    assert "A's vocabulary has 4,000 tokens, B's 2,000" in said and "A has 2 layers, B 1" in said
    assert "The largest difference is embed_tokens:" in said  # 2,000 fewer rows of the embedding


# ---- Logit lens ----------------------------------------------------------------------------------------------
def _cells(df: pd.DataFrame) -> pd.DataFrame:
    return df.set_index(["depth", "position"]).sort_index()


def test_lens_sides_are_their_single_views_aligned_by_relative_depth():
    """B deeper (3 blocks) on a shorter text."""
    at, calls = open_compared("lens", DEEPER_SHORTER)
    assert not at.exception
    shown = sides(calls, lens_heatmap)
    singles = {"A": single("lens", lens_heatmap), "B": single("lens", lens_heatmap, **DEEPER_SHORTER)}
    for side in "AB":  # every cell drawn is the single view's (the compared heatmap draws the last 6 positions)
        got, want = _cells(shown[side]), _cells(singles[side])
        assert len(got) and got.index.isin(want.index).all()
        pd.testing.assert_frame_equal(got, want.loc[got.index], check_exact=True)
    curves = calls.data(relative_depth_lines)
    for side, depths in (("A", 2), ("B", 3)):
        last = singles[side][singles[side]["position"] == singles[side]["position"].max()].sort_values("depth")
        rows = curves[curves["side"] == side.lower()]
        assert rows["p_final"].tolist() == last["p_final"].tolist()
        assert rows["relative"].tolist() == [d / depths for d in range(depths + 1)]
        first = lens_module.first_top_depth(last)["depth"].iloc[0]
        block = "embed" if first == 0 else f"block {first}"
        assert f"at {block} of {depths} (relative depth {first / depths:.2f})" in texts(at)
    assert "A has 2 layers, B 3: the layers past 2 have no counterpart." in texts(at)


# ---- Generate ------------------------------------------------------------------------------------------------
STEPS = {"gen.steps": 3}
GQA = {"cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 2}  # 8 heads sharing 2 KV heads


def _compared_run(b_state: dict):
    """Generate, "Compare", B's ``b_state`` (a new run: the page goes back to step 0), then 3 steps: each side's."""
    at, _ = open_compared("generate", b_state)
    at.session_state["gen.steps"] = 3
    with recording_charts() as calls:
        at.run()
    return at, calls


def test_generate_sides_are_their_single_views_at_the_same_step():
    at, calls = _compared_run(GQA)
    assert not at.exception
    single_a, single_b = each_side_is_its_single_view(calls, "generate", cache_bars, STEPS, STEPS | GQA)
    assert (single_a["kv_heads"] == 4).all() and (single_b["kv_heads"] == 2).all()
    # bytes = 2 (K and V) x layers x KV heads x head_dim x positions x 4 (float32)
    sizes = [2 * 4 * int(df.groupby("layer")["positions"].sum().sum()) * int(df["kv_heads"].iloc[0])
             * int(df["head_dim"].iloc[0]) for df in (single_a, single_b)]
    assert f"A's KV cache holds {sizes[0]:,} bytes and B's {sizes[1]:,} (0.25× A's)." in texts(at)  # 2 x 8 / (4 x 16)
    assert "After 3 decode steps in A and 3 in B" in texts(at) and "of 3 new tokens." in texts(at)


def test_generate_of_another_vocabulary_compares_the_text():
    at, calls = _compared_run({"cfg.vocab_size": 2000, **DEEPER_SHORTER})
    assert not at.exception
    said = texts(at)
    assert "After 3 decode steps in A and 3 in B" in said and "A's vocabulary has 4,000 tokens, B's 2,000" in said
    assert len(sides(calls, cache_bars)["B"]["layer"].unique()) == 3
