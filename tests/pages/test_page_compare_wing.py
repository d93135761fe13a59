"""Compare side by side on Head roles, RoPE, Interventions and Experts (ui/compare.py, ui/compare_views.py) under AppTest: each side's chart is
the single view of the same settings, the difference panel is the difference of the two single views, and
mismatched shapes get a sentence, never an exception."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from settings.schema import preset_values
from tests.page_helpers import open_compared, open_page, recording_charts, texts
from ui.figures.compare import difference_grid, difference_line, ratio_by_depth
from ui.figures.experts import load_bar
from ui.figures.heads import role_map
from ui.figures.interventions import effect_map
from ui.figures.rope import distance_chart, wavelength_chart
from ui.format import percent
from ui.state import FIXED_KEY

HEADS_8 = {"cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 8}
SEED_1 = {"cfg.seed": 1.0}


def _single(page: str, builder, **state):
    """The call of ``builder`` in the single view of ``state`` (one chart of that builder on the page)."""
    with recording_charts() as calls:
        open_page(page, **state)
    return calls(builder)


def _sides(calls, builder) -> dict:
    """The calls of ``builder`` whose title starts with a side's letter ("A ·", "B ·"), by letter."""
    return {c.arguments["title"][0]: c for c in calls.all(builder) if c.arguments["title"][1:3] == " ·"}


def _grid(roles: pd.DataFrame, column: str) -> np.ndarray:
    """``[L, nh]`` of a single view's roles table (rows in layer, head order), by hand."""
    L, nh = roles["layer"].max() + 1, roles["head"].max() + 1
    return roles.sort_values(["layer", "head"])[column].to_numpy().reshape(L, nh)


# ---- head roles ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def heads_seed():
    """B: the same shapes, another seed; the previous-token score (on the sidebar text)."""
    return open_compared("heads", SEED_1, **{"heads.score": "prev_token"})


@pytest.fixture(scope="module")
def heads_single():
    return {side: _single("heads", role_map, **{"heads.score": "prev_token", **state}).data
            for side, state in (("A", {}), ("B", SEED_1))}


def test_heads_sides_are_their_single_views_and_the_grid_their_difference(heads_seed, heads_single):
    at, calls = heads_seed
    assert not at.exception
    maps = _sides(calls, role_map)
    for side in "AB":
        pd.testing.assert_frame_equal(maps[side].data, heads_single[side], check_exact=True)
        assert maps[side].arguments["zmax"] == 1.0  # one colour scale: 0..1 on both
    want = _grid(heads_single["A"], "prev_token") - _grid(heads_single["B"], "prev_token")
    diff = calls(difference_grid)
    assert np.array_equal(diff.arguments["diff"], want) and diff.arguments["row_labels"] == ["1", "2"]
    heatmap = diff.figure.data[0]
    m = float(np.abs(want).max())
    assert (heatmap.zmin, heatmap.zmid, heatmap.zmax) == pytest.approx((-m, 0.0, m))


def test_heads_sentence_names_the_largest_change(heads_seed, heads_single):
    at, _ = heads_seed
    a, b = (_grid(heads_single[s], "prev_token") for s in "AB")
    layer, head = np.unravel_index(int(np.abs(a - b).argmax()), a.shape)
    said = texts(at)
    assert (f"The previous token score changes most at layer {layer + 1} head {head + 1}: "
            f"{a[layer, head]:.3f} in A → {b[layer, head]:.3f} in B.") in said
    assert "Below: side B only" in said


def test_heads_other_head_counts_get_a_sentence_and_no_difference():
    at, calls = open_compared("heads", {**HEADS_8, "cfg.num_hidden_layers": 3})
    assert not at.exception and len(_sides(calls, role_map)) == 2
    assert not calls.all(difference_grid)
    said = texts(at)
    assert "A has 4 heads per layer, B 8: heads of layers this different have no order in common" in said
    assert "Highest in A: layer" in said


def test_heads_other_depths_pair_by_relative_depth_on_one_entropy_scale():
    """B: 3 layers and a five-token text. The maps share the entropy scale's top (the larger of the two
    uniform entropies); A − B pairs A's layers 1, 2 with B's 1, 3."""
    b_state = {"cfg.num_hidden_layers": 3, "input.text": "白日依山尽"}
    at, calls = open_compared("heads", b_state, **{"heads.score": "entropy"})
    assert not at.exception
    single = {side: _single("heads", role_map, **{"heads.score": "entropy", **state}).data
              for side, state in (("A", {}), ("B", b_state))}
    top = max(float(single[s]["max_entropy"].iloc[0]) for s in "AB")
    maps = _sides(calls, role_map)
    assert [maps[s].arguments["zmax"] for s in "AB"] == [top, top]
    a, b = _grid(single["A"], "entropy"), _grid(single["B"], "entropy")
    diff = calls(difference_grid)
    assert diff.arguments["row_labels"] == ["1", "2 / 3"]
    assert np.array_equal(diff.arguments["diff"], np.stack([a[0] - b[0], a[1] - b[2]]))
    assert "A has 2 layers, B 3: the A − B map pairs each layer" in texts(at)


# ---- RoPE ----------------------------------------------------------------------------------------------------
ROPE = {"cfg.position_embedding": "rope"}


@pytest.fixture(scope="module")
def rope_seed():
    """A and B both with RoPE, B another seed: the same planes, other heads."""
    return open_compared("rope", SEED_1, **ROPE)


@pytest.fixture(scope="module")
def rope_single():
    out = {}
    for side, state in (("A", ROPE), ("B", {**ROPE, **SEED_1})):
        with recording_charts() as calls:
            open_page("rope", **state)
        out[side] = {"waves": calls.data(wavelength_chart), "head": calls.data(distance_chart)}
    return out


def test_rope_sides_are_their_single_views_on_shared_axes(rope_seed, rope_single):
    at, calls = rope_seed
    assert not at.exception
    for builder, name in ((wavelength_chart, "waves"), (distance_chart, "head")):
        drawn = _sides(calls, builder)
        for side in "AB":
            pd.testing.assert_frame_equal(drawn[side].data, rope_single[side][name], check_exact=True)
        for axis in ("xaxis", "yaxis"):
            assert drawn["A"].layout[axis]["range"] == drawn["B"].layout[axis]["range"], (name, axis)
    ratio = calls.data(ratio_by_depth)["ratio"].to_numpy()
    assert np.array_equal(ratio, rope_single["B"]["waves"]["wavelength"] / rope_single["A"]["waves"]["wavelength"])


def test_rope_difference_is_the_single_views_difference_and_said(rope_seed, rope_single):
    at, calls = rope_seed
    a, b = rope_single["A"]["head"]["mean"].to_numpy(), rope_single["B"]["head"]["mean"].to_numpy()
    assert np.array_equal(calls.data(difference_line)["difference"].to_numpy(), a - b)
    said = texts(at)
    assert f"the mean score at distance 0 is {a[0]:.3f} in A and {b[0]:.3f} in B" in said
    assert f"it is highest at distance {int(a.argmax())} in A ({a.max():.3f})" in said


def test_rope_a_side_without_rope_and_other_planes_get_sentences():
    """A with learned positions (the default), B with RoPE and 8 heads (4 planes, A's chart 8)."""
    at, calls = open_compared("rope", {**ROPE, **HEADS_8})
    assert not at.exception
    said = texts(at)
    assert "Side A does not use RoPE (positions: Learned table): its chart shows base θ = 10,000 at its head width d = 16" in said
    assert "A has 8 planes, B 4 (other head widths)" in said and not calls.all(ratio_by_depth)
    assert "its q and k carry no rotation" in said and not calls.all(difference_line)
    assert len(_sides(calls, distance_chart)) == 1 and len(_sides(calls, wavelength_chart)) == 2


# ---- Interventions (the induction experiment) -----------------------------------------------------------------
@pytest.fixture(scope="module")
def interv_seed():
    return open_compared("interventions", SEED_1)


@pytest.fixture(scope="module")
def interv_single():
    return {side: _single("interventions", effect_map, **state).data for side, state in (("A", {}), ("B", SEED_1))}


def test_interventions_sides_are_their_single_views_on_one_scale(interv_seed, interv_single):
    at, calls = interv_seed
    assert not at.exception
    maps = _sides(calls, effect_map)
    top = max(float(interv_single[s]["increase"].abs().max()) for s in "AB")
    for side in "AB":
        pd.testing.assert_frame_equal(maps[side].data, interv_single[side], check_exact=True)
        heatmap = maps[side].figure.data[0]
        assert (heatmap.zmin, heatmap.zmax) == pytest.approx((-top, top))
    want = _grid(interv_single["A"], "increase") - _grid(interv_single["B"], "increase")
    assert np.array_equal(calls(difference_grid).arguments["diff"], want)


def test_interventions_sentence_names_each_sides_top_head_and_the_largest_change(interv_seed, interv_single):
    at, _ = interv_seed
    tops = {s: interv_single[s].loc[interv_single[s]["increase"].idxmax()] for s in "AB"}
    a, b = (_grid(interv_single[s], "increase") for s in "AB")
    layer, head = np.unravel_index(int(np.abs(a - b).argmax()), a.shape)
    said = texts(at)
    assert (f"Removing one head raises the loss most at layer {int(tops['A']['layer']) + 1} head "
            f"{int(tops['A']['head']) + 1} in A") in said
    assert f"and at layer {int(tops['B']['layer']) + 1} head {int(tops['B']['head']) + 1} in B" in said
    assert f"The loss rise changes most at layer {layer + 1} head {head + 1}: {a[layer, head]:.3f} in A" in said


def test_interventions_other_head_counts_get_a_sentence_and_no_difference():
    at, calls = open_compared("interventions", HEADS_8)
    assert not at.exception and len(_sides(calls, effect_map)) == 2 and not calls.all(difference_grid)
    assert "A has 4 heads per layer, B 8: heads of layers this different have no order in common" in texts(at)


# ---- Experts (MoE) -------------------------------------------------------------------------------------------
MOE = {**preset_values("minimind_moe"), "cfg.preset": "minimind_moe"}


@pytest.fixture(scope="module")
def experts_seed():
    """A and B on the MiniMind-MoE preset, B another seed."""
    return open_compared("experts", SEED_1, **MOE)


def test_experts_sides_are_their_single_views_and_the_bars_their_difference(experts_seed):
    at, calls = experts_seed
    assert not at.exception
    single = {side: _single("experts", load_bar, **{**MOE, **state}).data for side, state in (("A", {}), ("B", SEED_1))}
    drawn = _sides(calls, load_bar)
    for side in "AB":
        pd.testing.assert_frame_equal(drawn[side].data, single[side], check_exact=True)
    assert drawn["A"].layout["yaxis"]["range"] == drawn["B"].layout["yaxis"]["range"]
    want = (single["A"]["share"] - single["B"]["share"]).to_numpy() * 100
    assert np.array_equal(calls.data(difference_line)["difference"].to_numpy(), want)
    busiest = {s: single[s].loc[single[s]["share"].idxmax()] for s in "AB"}
    assert (f"The busiest expert gets {percent(busiest['A']['share'])} of the tokens in A (expert "
            f"{int(busiest['A']['expert']) + 1}") in texts(at)


def test_experts_a_dense_side_says_so_and_the_other_is_drawn():
    """A on the MoE preset, B (the sidebar's) dense: B's page says it has no router, A's load is still drawn."""
    at, calls = open_compared("experts", {FIXED_KEY: {}, "cfg.preset": ""}, **MOE)
    assert not at.exception
    assert "Side B has a dense FFN: no router, so no load per expert." in texts(at)
    assert list(_sides(calls, load_bar)) == ["A"] and not calls.all(difference_line)


def test_heads_a_one_token_side_has_no_score_and_no_map():
    at, calls = open_compared("heads", {"input.text": "x"}, **{"heads.score": "prev_token"})
    assert not at.exception and not calls.all(difference_grid)
    assert "Side B has no previous token score: its text is one token long." in texts(at)


OWN = {"interv.experiment": "own", "interv.own.clean": "床前明月光", "interv.own.corrupt": "床前明月霜",
       "interv.own.correct": "，", "interv.own.wrong": "。"}
RES_TITLE = "Fraction of the logit difference restored by patching"


def test_interventions_patching_sides_are_their_single_views_and_the_map_their_difference():
    """The learner's own pair, B another seed: each side's residual map is its single view's, A − B theirs."""
    at, calls = open_compared("interventions", SEED_1, **OWN)
    assert not at.exception
    single = {}
    for side, state in (("A", OWN), ("B", {**OWN, **SEED_1})):
        with recording_charts() as one:
            open_page("interventions", **state)
        single[side] = next(c.data for c in one.all(effect_map) if c.arguments["title"].startswith(RES_TITLE))
    drawn = _sides(calls, effect_map)
    for side in "AB":
        pd.testing.assert_frame_equal(drawn[side].data, single[side], check_exact=True)
    grids = [single[s].pivot(index="layer", columns="position", values="restored").to_numpy() for s in "AB"]
    assert np.array_equal(calls(difference_grid).arguments["diff"], grids[0] - grids[1], equal_nan=True)
    best = {s: single[s].loc[single[s]["restored"].idxmax()] for s in "AB"}
    assert (f"Patching restores most at layer {int(best['A']['layer']) + 1} position {int(best['A']['position'])} "
            f"in A") in texts(at)


def test_interventions_patching_on_another_depth_pairs_layers_by_depth():
    at, calls = open_compared("interventions", {"cfg.num_hidden_layers": 3}, **OWN)
    assert not at.exception and len(_sides(calls, effect_map)) == 2
    assert calls(difference_grid).arguments["row_labels"] == ["1", "2 / 3"]
    assert "A has 2 layers, B 3: the A − B map pairs each layer" in texts(at)
