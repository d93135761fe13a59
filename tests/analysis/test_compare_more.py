"""analysis/compare.py's numbers for Loss, Next token, Overview and Logit lens against hand-computed values and the
single views' own functions (loss_table, next_token_table, parameter_table, logit_lens)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

import analysis
from analysis import compare

NAN = float("nan")


def _loss(losses: list[float]) -> pd.DataFrame:
    """A loss table as ``analysis.loss.loss_table`` makes it (the columns these functions read): NaN = masked."""
    loss = np.array(losses, dtype=float)
    return pd.DataFrame({"position": np.arange(len(loss)), "masked": np.isnan(loss), "loss": loss})


def test_losses_are_aligned_by_position_and_divided():
    a, b = _loss([2.0, NAN, 4.0, 1.0]), _loss([1.0, 3.0, 6.0])
    table = compare.loss_by_position(a, b)
    assert table["position"].tolist() == [0, 1, 2]  # the positions both predict
    assert np.array_equal(table["ratio"].to_numpy(), [0.5, NAN, 1.5], equal_nan=True)
    assert compare.mean_loss(a) == pytest.approx(7 / 3) and compare.mean_loss(b) == pytest.approx(10 / 3)
    assert math.isnan(compare.mean_loss(_loss([NAN, NAN])))
    change = compare.largest_loss_change(table)  # |B − A|: 1, —, 2
    assert change == (2, 4.0, 6.0)
    assert compare.largest_loss_change(compare.loss_by_position(_loss([NAN]), _loss([1.0]))) is None


def test_the_loss_helpers_read_the_single_view_table():
    """On a real loss_table: the mean is the model's own loss (sum over N)."""
    from analysis.trace import run_trace
    from engine import CausalLM, ModelConfig
    from engine.loss import mask_prompt

    torch.manual_seed(0)
    model = CausalLM(ModelConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_attention_heads=4,
                                 num_hidden_layers=2)).eval()
    ids = torch.tensor([[3, 9, 27, 17, 51, 2]])
    labels = mask_prompt(ids, 2)
    out = run_trace(model, ids, labels)
    table = analysis.loss_table(out, ids, labels, [str(i) for i in ids[0].tolist()])
    assert compare.mean_loss(table) == pytest.approx(float(out.loss), rel=1e-6)
    ratio = compare.loss_by_position(table, table)["ratio"].to_numpy()
    assert np.isnan(ratio[0]) and (ratio[1:] == 1.0).all()  # masked first target; itself elsewhere


def test_same_tokens_needs_both_long_enough():
    assert compare.same_tokens(["a", "b", "c"], ["a", "b"], 2)
    assert not compare.same_tokens(["a", "b", "c"], ["a", "b"], 3)
    assert not compare.same_tokens(["a", "x"], ["a", "b"], 2)


def _top(ids, probs, tokens) -> pd.DataFrame:
    return pd.DataFrame({"rank": np.arange(1, len(ids) + 1), "token_id": ids, "token": tokens, "probability": probs})


def test_probability_change_is_the_single_views_probabilities():
    logits_a, logits_b = torch.tensor([0.0, 1.0, 2.0, 0.5]), torch.tensor([2.0, 0.0, 1.0, 0.0])
    for temperature in (1.0, 0.5):
        top_a = analysis.next_token_table(logits_a, lambda c: [str(i) for i in c], k=2, temperature=temperature)
        top_b = analysis.next_token_table(logits_b, lambda c: [str(i) for i in c], k=2, temperature=temperature)
        ids = compare.top_ids(top_a, top_b)
        assert ids == [2, 1, 0]  # A's top 2 (2, 1), then B's that A lacks (0; B's 2 is A's already)
        table = compare.probability_change(logits_a, logits_b, ids, temperature)
        assert table["a"].tolist()[:2] == top_a["probability"].tolist()  # exactly the single view's numbers
        assert table.set_index("token_id").loc[top_b["token_id"], "b"].tolist() == top_b["probability"].tolist()
        by_hand = np.exp(np.array([0.0, 1.0, 2.0, 0.5]) / temperature)
        assert table["a"].iloc[2] == pytest.approx(by_hand[0] / by_hand.sum())
        assert np.array_equal(table["change"], table["a"] - table["b"])


def test_top_tokens_of_two_vocabularies_meet_by_text():
    top_a = _top([5, 9, 7], [0.5, 0.2, 0.1], ["the", "a", "cat"])
    top_b = _top([1, 2, 3], [0.3, 0.25, 0.05], ["cat", "dog", "the"])
    table = compare.topk_by_text(top_a, top_b)
    assert table["token"].tolist() == ["the", "cat"]
    assert table["change"].tolist() == pytest.approx([0.45, -0.2])
    assert compare.largest_change(table) == 0
    twice = _top([1, 2], [0.3, 0.1], ["cat", "cat"])  # two ids shown as one text add up
    assert compare.topk_by_text(top_a, twice)["b"].tolist() == pytest.approx([0.4])
    assert compare.largest_change(compare.topk_by_text(top_a, _top([4], [0.9], ["x"]))) is None


def test_parameters_are_aligned_by_component():
    a = pd.DataFrame({"component": ["embed_tokens", "self_attn", "mlp"], "params": [100, 40, 80]})
    b = pd.DataFrame({"component": ["embed_tokens", "embed_positions", "self_attn", "mlp"], "params": [100, 10, 60, 80]})
    table = compare.parameter_change(a, b)
    assert table["component"].tolist() == ["embed_tokens", "self_attn", "mlp", "embed_positions"]
    assert table["a"].tolist() == [100, 40, 80, 0] and table["b"].tolist() == [100, 60, 80, 10]
    assert table["change"].tolist() == [0, 20, 0, 10] and compare.largest_change(table) == 1


def _lens(ranks: list[list[int]], p: list[list[float]]) -> pd.DataFrame:
    """A ``logit_lens`` table by hand: ``ranks[depth][position]`` of the final prediction and its probability."""
    rows = [(d, q, r, pf) for d, (rr, pp) in enumerate(zip(ranks, p)) for q, (r, pf) in enumerate(zip(rr, pp))]
    return pd.DataFrame(rows, columns=["depth", "position", "rank_final", "p_final"])


def test_the_lens_of_two_depths_meets_at_relative_depth():
    a = _lens([[3, 0], [0, 2], [0, 0]], [[0.1, 0.5], [0.3, 0.2], [0.6, 0.7]])  # 2 blocks, 2 positions
    b = _lens([[5], [0], [4], [0], [0]], [[0.01], [0.2], [0.05], [0.4], [0.9]])  # 4 blocks, 1 position
    assert compare.first_top_depth_at(a, 0) == 1 and compare.first_top_depth_at(a, 1) == 2  # top for good from
    assert compare.first_top_depth_at(b, 0) == 3  # top at 1, lost at 2, top again from 3
    table = compare.lens_by_relative_depth(a, b, 1, 0)
    assert table["side"].tolist() == ["a"] * 3 + ["b"] * 5
    assert table["relative"].tolist() == [0, 0.5, 1, 0, 0.25, 0.5, 0.75, 1]
    assert table["p_final"].tolist() == [0.5, 0.2, 0.7, 0.01, 0.2, 0.05, 0.4, 0.9]
    assert table["top"].tolist() == [True, False, True, False, True, False, True, True]


def test_two_generations_share_their_start():
    assert compare.shared_start([5, 7, 9], [5, 7, 8, 1]) == 2
    assert compare.shared_start(["a"], ["b"]) == 0 and compare.shared_start([], [1]) == 0
    assert compare.shared_start(["x", "y"], ["x", "y"]) == 2
