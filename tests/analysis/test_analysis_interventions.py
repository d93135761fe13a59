"""analysis/interventions.py on a tiny seeded model: each number of a frame and summary against an independent
computation (one plain or intervened forward, the cross-entropy formula, the attention scores of analysis.heads)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from analysis import heads
from analysis import interventions as iv
from engine import CausalLM, ModelConfig
from engine.interventions import ActivationPatch, HeadAblation

V, L, NH, PERIOD = 50, 3, 4, 6


@pytest.fixture(scope="module")
def model() -> CausalLM:
    torch.manual_seed(0)
    return CausalLM(ModelConfig(vocab_size=V, hidden_size=32, num_hidden_layers=L, num_attention_heads=NH,
                                num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64))


class WordTokenizer:
    """One token per word (id = its place in a fixed word list), a leading space kept with the word."""

    WORDS = ["the", "capital", "of", "France", "Italy", "is", "Paris", "Rome", "big", "New", "York"]

    def encode(self, text: str) -> list[int]:
        return [self.WORDS.index(w) for w in text.split()]


PAIR = iv.PromptPair("the capital of France is", "the capital of Italy is", " Paris", " Rome")


def test_fraction_restored_formula():
    assert iv.fraction_restored(2.0, clean=3.0, corrupted=-1.0) == pytest.approx(0.75)
    np.testing.assert_allclose(iv.fraction_restored(np.array([-1.0, 3.0]), 3.0, -1.0), [0.0, 1.0])
    assert np.isnan(iv.fraction_restored(1.0, 2.0, 2.0))
    assert np.isnan(iv.fraction_restored(np.array([1.0, 2.0]), 2.0, 2.0)).all()


def test_loss_metric_is_the_cross_entropy_of_the_next_tokens(model):
    ids = iv.induction_ids(model, period=PERIOD)
    positions = iv.second_copy_positions(PERIOD)
    assert positions == list(range(PERIOD, 2 * PERIOD - 1))
    with torch.no_grad():
        out = model(ids, labels=ids)
    want = out.token_losses[0, positions].mean()  # token_losses[t] = loss of predicting ids[t+1] from t
    assert float(iv.loss_metric(ids, positions)(out.logits[:, positions])[0]) == pytest.approx(float(want), rel=1e-6)


def test_induction_ablation_numbers(model):
    ids = iv.induction_ids(model, period=PERIOD, seed=1)
    seen = []
    frame, summary = iv.induction_ablation(model, ids, PERIOD, progress=lambda d, t: seen.append(d / t))
    assert len(frame) == L * NH and seen[-1] == pytest.approx(1.0)
    base = iv.induction_loss(model, ids, PERIOD)
    assert summary["base_loss"] == pytest.approx(base, rel=1e-5)
    for l, h in [(0, 0), (1, 3), (2, 2)]:
        row = frame[(frame.layer == l) & (frame["head"] == h)].iloc[0]
        assert row.loss == pytest.approx(iv.induction_loss(model, ids, PERIOD, [(l, h)]), rel=1e-5)
        assert row.increase == pytest.approx(row.loss - base, abs=1e-9)
    with torch.no_grad():
        att = model(ids, output_attentions=True).attentions
    np.testing.assert_allclose(frame.prev_token.to_numpy(), heads.previous_token_scores(att).reshape(-1))
    np.testing.assert_allclose(frame.induction.to_numpy(), heads.induction_scores(att, PERIOD).reshape(-1))
    top = frame.loc[frame.increase.idxmax()]
    assert (summary["top"]["layer"], summary["top"]["head"]) == (top.layer, top["head"])
    assert summary["runner_up_increase"] == pytest.approx(frame.increase.nlargest(2).iloc[1])
    prev = frame.loc[frame.prev_token.idxmax()]
    assert (summary["prev_head"]["layer"], summary["prev_head"]["head"]) == (prev.layer, prev["head"])
    assert summary["prev_head"]["increase"] == pytest.approx(prev.increase)
    pair = iv.top_heads(frame, 2)
    assert pair[0] == (summary["top"]["layer"], summary["top"]["head"])
    with torch.no_grad():
        together = model(ids, interventions=[HeadAblation(l, h) for l, h in pair]).logits
    positions = iv.second_copy_positions(PERIOD)
    assert iv.induction_loss(model, ids, PERIOD, pair) == pytest.approx(
        float(iv.loss_metric(ids, positions)(together[:, positions])[0]))


@pytest.mark.parametrize("pair, error", [
    (iv.PromptPair("the capital of France is", "the capital of France is big", " Paris", " Rome"), "length"),
    (iv.PromptPair("the capital of France is", "the capital of France is", " Paris", " Rome"), "same_prompt"),
    (iv.PromptPair("the capital of France is", "the capital of Italy is", " New York", " Rome"), "answer_tokens"),
    (iv.PromptPair("the capital of France is", "the capital of Italy is", " Rome", " Rome"), "same_answer"),
    (iv.PromptPair("", "the", " Rome", " Paris"), "empty"),
    (PAIR, None),
])
def test_check_pair(pair, error):
    check = iv.check_pair(WordTokenizer(), pair)
    assert check.error == error
    if error == "length":
        assert (check.clean_length, check.corrupt_length) == (5, 6)
    if error == "answer_tokens":
        assert (check.correct_length, check.wrong_length) == (2, 1)


def test_residual_patching_numbers(model):
    check = iv.check_pair(WordTokenizer(), PAIR)
    frame, summary = iv.residual_patching(model, check)
    assert len(frame) == L * 5 and summary["changed_positions"] == [3]
    metric = iv.logit_diff_metric(check.correct_id, check.wrong_id)
    with torch.no_grad():
        clean = model(check.clean_ids, output_activations=True)
        corrupted = float(metric(model(check.corrupt_ids).logits)[0])
        name = "blocks.1.hook_resid_pre"
        patched = model(check.corrupt_ids, interventions=[ActivationPatch(name, 3, clean.activations[name])]).logits
    cleand = float(metric(clean.logits)[0])
    assert summary["clean_diff"] == pytest.approx(cleand, rel=1e-5)
    assert summary["corrupted_diff"] == pytest.approx(corrupted, rel=1e-5)
    row = frame[(frame.layer == 1) & (frame.position == 3)].iloc[0]
    assert row.logit_diff == pytest.approx(float(metric(patched)[0]), rel=1e-5, abs=1e-6)
    assert row.restored == pytest.approx((row.logit_diff - corrupted) / (cleand - corrupted), rel=1e-5)
    # layer 0: only the changed token differs, so patching it gives the clean run; the others change nothing
    layer0 = frame[frame.layer == 0].set_index("position").restored
    assert layer0[3] == pytest.approx(1.0, abs=1e-5)
    np.testing.assert_allclose(layer0.drop(3).to_numpy(), 0.0, atol=1e-5)
    assert summary["carried_until"] is not None and summary["carried_until"] >= 0
    assert iv.layers_that_matter(frame, 2) == sorted(iv.layers_that_matter(frame, 2))


def test_head_patching_numbers(model):
    check = iv.check_pair(WordTokenizer(), PAIR)
    frame, summary = iv.head_patching(model, check, layers=[1, 2])
    assert len(frame) == 2 * NH
    metric = iv.logit_diff_metric(check.correct_id, check.wrong_id)
    with torch.no_grad():
        z = model(check.clean_ids, output_activations=True).activations["blocks.2.attn.hook_z"]
        got = model(check.corrupt_ids, interventions=[ActivationPatch("blocks.2.attn.hook_z", None, z, head=1)]).logits
    row = frame[(frame.layer == 2) & (frame["head"] == 1)].iloc[0]
    assert row.logit_diff == pytest.approx(float(metric(got)[0]), rel=1e-5, abs=1e-6)
    best = frame.loc[frame.restored.idxmax()]
    assert (summary["best"]["layer"], summary["best"]["head"]) == (best.layer, best["head"])


def test_before_after(model):
    ids = iv.induction_ids(model, period=PERIOD)
    same = iv.before_after(model, ids, [], 1, lambda xs: [str(x) for x in xs])
    assert torch.equal(same["patterns"][0], same["patterns"][1])
    np.testing.assert_array_equal(same["tokens"].before, same["tokens"].after)
    cut = iv.before_after(model, ids, [HeadAblation(1, 2)], 1, lambda xs: [str(x) for x in xs], k=3)
    assert torch.equal(cut["patterns"][1][2], cut["patterns"][0][2])  # its own pattern is unchanged: z is zeroed after
    assert set(cut["tokens"].columns) == {"rank", "token_id", "token", "before", "after"}
    assert cut["tokens"].before.is_monotonic_decreasing


def test_experiment_cost(model):
    T = 5
    assert iv.experiment_cost(model, T, "residual") == pytest.approx((L * (L + 1) / 2) * (T * (T + 1) / 2) / (L * T))
    assert iv.experiment_cost(model, T, "induction") == pytest.approx(NH * (L + 1) / 2)
