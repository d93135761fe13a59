"""analysis/compare.py: each comparison number against the two single views it compares (the functions a single
page calls on each side) or a brute-force reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import analysis
from analysis import compare
from analysis.trace import run_trace
from engine import CausalLM, ModelConfig

BASE = dict(vocab_size=64, hidden_size=16, intermediate_size=32, num_attention_heads=4, num_hidden_layers=2)


def _trace(ids: list[int], seed: int = 0, **config):
    torch.manual_seed(seed)
    model = CausalLM(ModelConfig(**{**BASE, **config})).eval()
    return run_trace(model, torch.tensor([ids]))


@pytest.fixture(scope="module")
def sides():
    """A (LayerNorm, 2 layers of 4 heads, 6 tokens) and three Bs: same shapes (RMSNorm), deeper with more heads
    and a longer input, and another seed."""
    ids = [3, 9, 27, 17, 51, 2]
    return {"a": _trace(ids), "same": _trace(ids, norm_type="rmsnorm"),
            "other": _trace(ids + [5, 7, 11], num_hidden_layers=3, num_attention_heads=8),
            "seed": _trace(ids, seed=1)}


def test_the_difference_is_the_difference_of_the_single_views(sides):
    for stage in analysis.ATTENTION_STAGES:
        a = analysis.attention_stage(sides["a"], 1, 2, stage)
        b = analysis.attention_stage(sides["same"], 1, 2, stage)
        assert np.array_equal(compare.attention_difference(a, b), a - b, equal_nan=True)
    a = analysis.attention_stage(sides["a"], 0, 1, "softmax")  # 6 tokens against 9: the first 6 are aligned
    b = analysis.attention_stage(sides["other"], 0, 1, "softmax")
    diff = compare.attention_difference(a, b)
    assert diff.shape == (6, 6) and np.array_equal(diff, a - b[:6, :6], equal_nan=True)
    assert np.isnan(diff[0, 1]) and diff[1, 0] == a[1, 0] - b[1, 0]  # masked future stays empty


def _brute_force(out_a, out_b):
    """Every (layer, head, query, key) both have, by loops over the single view's matrices."""
    best = (-1.0, None)
    for layer in range(min(len(out_a.attentions), len(out_b.attentions))):
        for head in range(min(out_a.attentions[layer].shape[1], out_b.attentions[layer].shape[1])):
            a = analysis.attention_stage(out_a, layer, head, "softmax")
            b = analysis.attention_stage(out_b, layer, head, "softmax")
            n = min(len(a), len(b))
            for q in range(n):
                for k in range(q + 1):
                    d = abs(float(a[q, k]) - float(b[q, k]))
                    if d > best[0]:
                        best = (d, (layer, head, q, k, float(a[q, k]), float(b[q, k])))
    return best[1]


@pytest.mark.parametrize("other", ["same", "other", "seed"])
def test_the_largest_change_is_the_brute_force_one(sides, other):
    change = compare.largest_attention_change(sides["a"].attentions, sides[other].attentions)
    assert tuple(change) == pytest.approx(_brute_force(sides["a"], sides[other]))
    assert change.layer < 2 and change.head < 4 and change.query < 6  # only what both have


def test_a_view_against_itself_changes_nothing(sides):
    change = compare.largest_attention_change(sides["a"].attentions, sides["a"].attentions)
    assert change.a == change.b


def test_norms_by_depth_are_the_single_views_means(sides):
    res_a = analysis.residual_norms(sides["a"], ["t"] * 6)
    res_b = analysis.residual_norms(sides["other"], ["t"] * 9)
    table = compare.norms_by_depth(res_a, res_b)
    assert list(table["stage"]) == ["embed", "block 1", "block 2", "block 3", "final norm"]
    # A: the mean over its 6 positions of the L2 norm of its hidden states, by hand
    acts = sides["a"].activations
    states = [acts["blocks.0.hook_resid_pre"], acts["blocks.0.hook_resid_post"], acts["blocks.1.hook_resid_post"]]
    by_hand = [float(h[0].norm(dim=-1).mean()) for h in states]
    assert table["a"].iloc[:3].tolist() == pytest.approx(by_hand[:3], rel=1e-6)
    assert math.isnan(table["a"].iloc[3])  # A has no block 3
    b_mean = res_b.groupby("depth")["norm"].mean()
    assert table["b"].tolist() == pytest.approx(b_mean.tolist())
    assert table["ratio"].iloc[4] == pytest.approx(b_mean.iloc[4] / table["a"].iloc[4])
    a_last, b_last = compare.last_block_norms(res_a, res_b)
    assert (a_last, b_last) == pytest.approx((by_hand[2], b_mean.iloc[3]), rel=1e-6)  # block 2 of A, block 3 of B


def test_unaligned_names_only_what_differs():
    assert compare.unaligned({"layers": 2, "heads": 4, "tokens": 6}, {"layers": 3, "heads": 4, "tokens": 9}) == {
        "layers": (2, 3), "tokens": (6, 9)}
    assert compare.unaligned({"layers": 2}, {"layers": 2}) == {}


def test_one_scale_spans_both_sides():
    a, b = np.array([[1.0, np.nan], [-3.0, 0.5]]), np.array([[2.5, np.inf], [0.0, -0.1]])
    assert compare.symmetric_limit(a, b) == 3.0
    assert compare.symmetric_limit(np.full((2, 2), np.nan)) == 0.0
